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

import numba as nb
import numpy as np

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
# The words of a stream are computed in blocks, the first one small (a stream often
# serves one episode of a few moves, or a single move), then doubling up to the cap.
FIRST_BLOCK = 16
MAX_BLOCK = 256

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


@nb.njit(cache=True, inline="always")
def _mix(z: np.uint64) -> np.uint64:  # pragma: no cover - compiled
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@nb.njit(cache=True, inline="always")
def _episode_key(seed: np.uint64, episode: np.int64) -> np.uint64:  # pragma: no cover
    return _mix(_mix(seed + _G) + np.uint64(episode + 1) * _G)


@nb.njit(cache=True, inline="always")
def _integers(key: np.uint64, count: np.int64, n: np.int64) -> np.int64:  # pragma: no cover
    word = _mix(key + np.uint64(count) * _G)
    return np.int64(((word >> _S32) * np.uint64(n)) >> _S32)


@nb.njit(cache=True, inline="always")
def _random(key: np.uint64, count: np.int64) -> float:  # pragma: no cover
    word = _mix(key + np.uint64(count) * _G)
    return float(word >> _S11) * (1.0 / 9007199254740992.0)


@nb.njit(cache=True)
def _block(key: np.uint64, first: np.int64, size: np.int64) -> np.ndarray:  # pragma: no cover
    """`word(k) >> 11` for the draws `k = first .. first + size - 1` (53-bit values)."""
    out = np.empty(size, dtype=np.int64)
    for j in range(size):
        out[j] = np.int64(_mix(key + np.uint64(first + j) * _G) >> _S11)
    return out


class EpisodeStream:
    """Draws of one episode; has the two `np.random.Generator` methods opponents use.

    The words come from `_block` a block at a time, kept as a list of Python ints: a
    draw is then a list index and two shifts, where the 64-bit arithmetic of `mix` in
    Python costs several big-integer operations per draw.
    """

    __slots__ = ("_first", "_words", "count", "key")

    def __init__(self, seed: int, episode: int) -> None:
        self.key = episode_key(seed & MASK, episode)
        self.count = 0
        self._first = 1  # the draw number of `_words[0]`
        self._words: list[int] = []

    def _word53(self, count: int) -> int:
        """`word(count) >> 11`, from the current block or a new one starting at `count`."""
        j = count - self._first
        words = self._words
        if j >= len(words):
            size = min(MAX_BLOCK, max(FIRST_BLOCK, 2 * len(words)))
            words = self._words = _block(np.uint64(self.key), count, size).tolist()
            self._first, j = count, 0
        return words[j]

    def integers(self, n: int) -> int:
        """A draw in `[0, n)` (the only form of `Generator.integers` the envs call)."""
        count = self.count = self.count + 1
        if n == 1:  # the only possible answer; the draw is still counted
            return 0
        j = count - self._first
        words = self._words
        # The block read inline: one draw per opponent move is on the env's step path.
        word = words[j] if j < len(words) else self._word53(count)
        return ((word >> 21) * int(n)) >> 32

    def random(self) -> float:
        """A float in `[0, 1)`."""
        self.count += 1
        return self._word53(self.count) * (1.0 / (1 << 53))
