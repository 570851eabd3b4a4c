"""The envs' per-episode random stream: counter-based, so numba can reproduce it.

Draw `k` of episode `e` under seed `s` is a pure function of `(s, e, k)`:

    G = 0x9E3779B97F4A7C15                    (all arithmetic mod 2**64)
    key = mix(mix(s + G) + (e + 1) * G)
    word(k) = mix(key + (k + 1) * G)

with `mix` the SplitMix64 finalizer. `integers(n)` is `((word >> 32) * n) >> 32`
(n < 2**32) and `random()` is `(word >> 11) * 2**-53`. The single env
(`ImpartialGameEnv`) uses it for its built-in opponents and its start sampling;
the batched env (`metanim.envs.vector`) computes the same words in numba, so the
same seeds give the same episodes in both.
"""

from __future__ import annotations

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def mix(z: int) -> int:
    """The SplitMix64 finalizer (a bijection of 64-bit words)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def episode_key(seed: int, episode: int) -> int:
    """The key of episode `episode` (0, 1, ... after a seeded reset) under `seed`."""
    return mix((mix((seed + GOLDEN) & MASK) + (episode + 1) * GOLDEN) & MASK)


class EpisodeStream:
    """Draws of one episode; has the two `np.random.Generator` methods opponents use."""

    __slots__ = ("count", "key")

    def __init__(self, seed: int, episode: int) -> None:
        self.key = episode_key(seed & MASK, episode)
        self.count = 0

    def _word(self) -> int:
        self.count += 1
        return mix((self.key + self.count * GOLDEN) & MASK)

    def integers(self, n: int) -> int:
        """A draw in `[0, n)` (the only form of `Generator.integers` the envs call)."""
        # `_word` and `mix` inlined: one draw per opponent move is on the env's step path.
        self.count += 1
        if n == 1:  # the only possible answer; the draw is still counted
            return 0
        z = (self.key + self.count * GOLDEN) & MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return (((z ^ (z >> 31)) >> 32) * int(n)) >> 32

    def random(self) -> float:
        """A float in `[0, 1)`."""
        return (self._word() >> 11) * (1.0 / (1 << 53))
