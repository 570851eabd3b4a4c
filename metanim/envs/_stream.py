"""The envs' per-episode random stream: counter-based, so numba can reproduce it.

Draw `k` of episode `e` under seed `s` is a pure function of `(s, e, k)`:

    G = 0x9E3779B97F4A7C15                    (all arithmetic mod 2**64)
    key = mix(mix(s + G) + (e + 1) * G)
    word(k) = mix(key + (k + 1) * G)

with `mix` the SplitMix64 finalizer. `integers(n)` is `((word >> 32) * n) >> 32`
(n < 2**32) and `random()` is `(word >> 11) * 2**-53`. The single env
(`ImpartialGameEnv`) uses it for its built-in opponents and its start sampling;
the batched env (`metanim.envs.vector`) computes the same words with the numba
functions below, so the same seeds give the same episodes in both.
"""

from __future__ import annotations

import math

import numpy as np

from metanim.util.jit import Tiered, njit

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
# A stream computes its words in blocks, the first one small (a stream often serves one
# episode of a few moves, or a single move), the next ones larger.
FIRST_BLOCK = 16
MAX_BLOCK = 256
_LOW32 = 0xFFFFFFFF

_G = np.uint64(GOLDEN)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S32, _S11 = (np.uint64(v) for v in (30, 27, 31, 32, 11))


def mix(z: int) -> int:
    """The SplitMix64 finalizer (a bijection of 64-bit words)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def episode_key(seed: int, episode: int) -> int:
    """The key of episode `episode` (0, 1, ... after a seeded reset) under `seed`."""
    return mix((mix((seed + GOLDEN) & MASK) + (episode + 1) * GOLDEN) & MASK)


# Plain compiled functions on scalars: numba types each once, and LLVM inlines them
# into the kernels that call them (`metanim.envs.vector`).
@njit(cache=True)
def _mix(z: np.uint64) -> np.uint64:  # pragma: no cover - compiled
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True)
def _episode_key(seed: np.uint64, episode: np.int64) -> np.uint64:  # pragma: no cover
    return _mix(_mix(seed + _G) + np.uint64(episode + 1) * _G)


@njit(cache=True)
def _integers(key: np.uint64, count: np.int64, n: np.int64) -> np.int64:  # pragma: no cover
    word = _mix(key + np.uint64(count) * _G)
    return np.int64(((word >> _S32) * np.uint64(n)) >> _S32)


@njit(cache=True)
def _bits53(key: np.uint64, count: np.int64) -> np.int64:  # pragma: no cover
    """`word(count) >> 11`: `random()` is this times 2**-53, so `random() < p` is
    `_bits53(...) < below(p)`, with no float conversion."""
    return np.int64(_mix(key + np.uint64(count) * _G) >> _S11)


def below(p: np.ndarray | float) -> np.ndarray | int:
    """The integer t with `random() < p` exactly when `word >> 11 < t`, for p in [0, 1]:
    `random()` is `(word >> 11) * 2**-53`, both exact in a float, so the test is
    `word >> 11 < p * 2**53` (also exact), that is `< ceil(p * 2**53)`."""
    if isinstance(p, np.ndarray):
        return np.ceil(p * 2.0**53).astype(np.int64)
    return math.ceil(p * 2.0**53)


@njit(cache=True)
def _fill(out, seed_hi, seed_lo, episode, first, size):  # pragma: no cover - compiled
    """`out[2 + j] = word(first + j) >> 11` (53 bits) for `j < size`; `out[0:2]` hold the
    episode key's high and low 32 bits, computed from the seed when `episode >= 0` (the
    first fill), else read back from there."""
    if episode >= 0:
        seed = (np.uint64(seed_hi) << _S32) | np.uint64(seed_lo)
        key = _episode_key(seed, episode)
        out[0] = np.int64(key >> _S32)
        out[1] = np.int64(key & np.uint64(_LOW32))
    else:
        key = (np.uint64(out[0]) << _S32) | np.uint64(out[1])
    for j in range(size):
        out[2 + j] = _bits53(key, first + j)


@njit(cache=True)
def _fill_episodes(out, seed_hi, seed_lo, episode, episodes):  # pragma: no cover - compiled
    """Row i of `out` (width FIRST_BLOCK + 2) = what `_fill` writes for episode
    `episode + i` and its first FIRST_BLOCK draws, for `i < episodes`."""
    seed = (np.uint64(seed_hi) << _S32) | np.uint64(seed_lo)
    width = FIRST_BLOCK + 2
    for i in range(episodes):
        key = _episode_key(seed, episode + i)
        out[i * width] = np.int64(key >> _S32)
        out[i * width + 1] = np.int64(key & np.uint64(_LOW32))
        for j in range(FIRST_BLOCK):
            out[i * width + 2 + j] = _bits53(key, 1 + j)


#: The block kernels, run by Python for a process's first calls (a short run never loads
#: numba: about 16 µs for a first block of 16 words there, 240 µs for a later one of
#: 256), compiled after (under a microsecond).
_fill_block = Tiered(_fill, 2_000)
_fill_ahead = Tiered(_fill_episodes, 16)

#: Episodes whose keys and first words `Starts` computes in one call.
AHEAD = 64


class Starts:
    """The streams of one env's episodes: the key and first words of the next `AHEAD`
    episodes of a seed come from one kernel call, so a new episode's first draw is a
    read, where its own key and block would cost a compiled call (about a microsecond
    with the call's own cost, in an env step of about one). A fresh seed gets one
    episode's worth first: `reset(seed=...)` before each episode computes no more.
    """

    __slots__ = ("_filled", "_first", "_list", "_rows", "_seed")

    def __init__(self) -> None:
        self._seed: int | None = None
        self._first = self._filled = 0
        self._rows = np.empty(AHEAD * (FIRST_BLOCK + 2), dtype=np.int64)
        # The rows as Python ints: a list read costs a draw less than a memoryview's.
        self._list: list[int] = []

    def restart(self, stream: EpisodeStream, seed: int, episode: int) -> None:
        """Make `stream` (the env's one stream object) episode `episode`'s under `seed`."""
        seed &= MASK
        i = episode - self._first
        if seed != self._seed or not 0 <= i < self._filled:
            count = AHEAD if seed == self._seed and i == self._filled else 1
            _fill_ahead(self._rows, seed >> 32, seed & _LOW32, episode, count)
            self._seed, self._first, self._filled, i = seed, episode, count, 0
            self._list = self._rows[: count * (FIRST_BLOCK + 2)].tolist()
        stream.restart(seed, episode, self._list, i * (FIRST_BLOCK + 2))


class EpisodeStream:
    """Draws of one episode; has the two `np.random.Generator` methods opponents use.

    The words come from `_fill` a block at a time (the key with the first block), read
    through a memoryview (or a list): a draw is then an index and two shifts on small
    ints, where the 64-bit arithmetic of `mix` in Python costs several big-integer
    operations. Nothing is computed before the first draw that needs a word. An env
    keeps one stream and `restart`s it each episode from the key and first words
    `Starts` computed ahead, keeping its block buffer.
    """

    __slots__ = (
        "_base", "_buf", "_end", "_episode", "_keyed", "_own", "_seed", "_words", "count",
    )  # fmt: skip

    def __init__(self, seed: int, episode: int) -> None:
        self._seed = seed & MASK
        self._episode = episode
        self.count = 0
        # Draw k's word is `_words[k - _base]` while `k - _base < _end`; once `_keyed`,
        # the key sits in the two entries before draw 1's word (the rows of `Starts`) or
        # in the first two of `_own`, which views `_buf`, the block buffer of this
        # stream's later blocks.
        self._base = self._end = 0
        self._keyed = False
        self._buf: np.ndarray | None = None
        self._own: memoryview | None = None
        self._words: memoryview | list[int] | None = None

    def restart(self, seed: int, episode: int, rows: list[int], at: int) -> None:
        """This stream as episode `episode`'s under `seed`, from its key and first words
        at `rows[at:]` (computed ahead by `Starts`: read in place, not copied), keeping
        its block buffer."""
        self._seed, self._episode, self.count = seed, episode, 0
        self._words, self._keyed = rows, True
        self._base, self._end = -1 - at, at + FIRST_BLOCK + 2

    def __getstate__(self) -> tuple[int, int, int]:
        # The words are a pure function of (seed, episode, count): recomputed, not kept.
        return self._seed, self._episode, self.count

    def __setstate__(self, state: tuple[int, int, int]) -> None:
        self.__init__(*state[:2])  # type: ignore[misc]
        self.count = state[2]

    def _word53(self, count: int) -> int:
        """`word(count) >> 11`, from a new block that starts at draw `count`."""
        if self._own is None:
            self._buf = np.empty(MAX_BLOCK + 2, dtype=np.int64)
            self._own = memoryview(self._buf)
        own = self._own
        if self._keyed:
            size, episode = MAX_BLOCK, -1
            if self._words is not own:  # the key, from the rows computed ahead
                at = -1 - self._base
                own[0], own[1] = self._words[at], self._words[at + 1]  # type: ignore[index]
        else:
            size, episode = FIRST_BLOCK, self._episode
            self._keyed = True
        seed = self._seed
        _fill_block(self._buf, seed >> 32, seed & _LOW32, episode, count, size)
        self._words = own
        self._base, self._end = count - 2, size + 2
        return own[2]

    def integers(self, n: int) -> int:
        """A draw in `[0, n)` (the only form of `Generator.integers` the envs call)."""
        count = self.count = self.count + 1
        if n == 1:  # the only possible answer; the draw is still counted
            return 0
        # The block read inline: one draw per opponent move is on the env's step path.
        j = count - self._base
        word = self._words[j] if j < self._end else self._word53(count)  # type: ignore[index]
        return ((word >> 21) * int(n)) >> 32

    def random(self) -> float:
        """A float in `[0, 1)`."""
        count = self.count = self.count + 1
        j = count - self._base
        word = self._words[j] if j < self._end else self._word53(count)  # type: ignore[index]
        return word * (1.0 / (1 << 53))
