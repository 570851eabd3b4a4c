"""Misère Kayles by a whole-position search over multisets of runs, in numba.

Misère play does not decompose into a XOR of components, so a position is the
multiset of its runs (a partition). Every partition is ranked densely: with
P(n, m) the number of partitions of n into parts <= m, the parts l_1 >= l_2 >= ...
of a partition of s have rank sum_i P(s - l_1 - ... - l_{i-1}, l_i - 1). A move
removes 1 or 2 pins, so totals fall and one pass over totals 0, 1, ... settles
every position bottom-up; no hash table is needed.

Only positions reachable from one row of at most `n_max` pins are solved: a
position with parts summing to s in k runs needs at least k - 1 removed pins
between its runs, so s + k - 1 <= n_max, and moves keep that bound.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from metanim.games import SizeLimitError
from metanim.util.jit import INTERPRET_WORK, Tiered, njit, run

#: Most work a misère Kayles table may cost: positions x moves scanned at each.
KAYLES_MISERE_WORK = 1_500_000_000


@cache
def _partition_numbers(n_max: int) -> tuple[int, ...]:
    """p(0), ..., p(n_max): partitions of each total, counted part size by part size."""
    counts = [1] + [0] * n_max
    for part in range(1, n_max + 1):
        for total in range(part, n_max + 1):
            counts[total] += counts[total - part]
    return tuple(counts)


def kayles_misere_work(n_max: int) -> int:
    """Work of the table for rows up to n_max: its positions (every partition of at most
    n_max pins) times the most moves one position scans (a move per pin, at most n_max)."""
    return sum(_partition_numbers(n_max)) * n_max


def _largest_within_work() -> int:
    counts = _partition_numbers(256)  # p(s) does not depend on the table's size
    n, positions = 1, counts[0] + counts[1]
    while (positions + counts[n + 1]) * (n + 1) <= KAYLES_MISERE_WORK:
        n, positions = n + 1, positions + counts[n + 1]
    return n


#: Largest position (pins + runs - 1) the misère Kayles table covers within the work bound.
KAYLES_MISERE_LIMIT = _largest_within_work()


@njit(cache=True, nogil=True)
def _partition_counts(n_max):  # pragma: no cover - numba
    """P[n, m] = partitions of n into parts <= m."""
    table = np.zeros((n_max + 1, n_max + 1), np.int64)
    for m in range(n_max + 1):
        table[0, m] = 1
    for n in range(1, n_max + 1):
        for m in range(1, n_max + 1):
            table[n, m] = table[n, m - 1] + (table[n - m, m] if m <= n else 0)
    return table


@njit(cache=True, nogil=True)
def _index(parts, count, counts, offsets):  # pragma: no cover - numba
    """Dense index of the partition parts[:count] (non-increasing, no zeros)."""
    s = 0
    for i in range(count):
        s += parts[i]
    rank = offsets[s]
    left = s
    for i in range(count):
        rank += counts[left, parts[i] - 1]
        left -= parts[i]
    return rank


@njit(cache=True, nogil=True)
def kayles_misere_table(n_max, counts, offsets):  # pragma: no cover - numba
    """mover_wins[index] (1 = the player to move wins misère, 0 = loses, 2 = unsolved)."""
    wins = np.full(offsets[n_max + 1], 2, np.uint8)
    wins[0] = 1  # no pins: the player to move has no move and wins (misère)
    parts = np.zeros(n_max + 2, np.int64)
    rest = np.zeros(n_max + 3, np.int64)
    suffix = np.zeros(n_max + 3, np.int64)
    shifted = np.zeros((3, n_max + 3), np.int64)
    for s in range(1, n_max + 1):
        # Partitions of s in reverse lexicographic order (the classic successor rule).
        parts[0] = s
        k = 1
        while True:
            if s + k - 1 <= n_max:
                index = _prepare(parts, k, counts, rest, suffix, shifted) + offsets[s]
                wins[index] = _solve(parts, k, s, wins, counts, offsets, rest, suffix, shifted)
            # Next partition: drop trailing ones, decrement the last part > 1, refill.
            ones = 0
            while k > 0 and parts[k - 1] == 1:
                ones += 1
                k -= 1
            if k == 0:
                break
            parts[k - 1] -= 1
            left = ones + 1
            v = parts[k - 1]
            while left > v:
                parts[k] = v
                k += 1
                left -= v
            parts[k] = left
            k += 1
    return wins


@njit(cache=True, nogil=True)
def _prepare(parts, k, counts, rest, suffix, shifted):  # pragma: no cover - numba
    """Per-position sums that make each child's index O(parts it moves past), not O(k).

    rest[t] = parts[t] + ... + parts[k-1] (the sum still to place before part t);
    suffix[t] = the index terms of parts t.. (unchanged in a child past its new runs);
    shifted[take][t] = the index terms of parts before t with `take` pins fewer in
    total (the parts before the bitten run keep their values, their rests shrink).
    Returns suffix[0], the position's own index within its total.
    """
    rest[k] = 0
    suffix[k] = 0
    for t in range(k - 1, -1, -1):
        rest[t] = rest[t + 1] + parts[t]
        suffix[t] = suffix[t + 1] + counts[rest[t], parts[t] - 1]
    shifted[1, 0] = 0
    shifted[2, 0] = 0
    for t in range(k):
        shifted[1, t + 1] = shifted[1, t] + counts[rest[t] - 1, parts[t] - 1]
        if rest[t] >= 2:
            shifted[2, t + 1] = shifted[2, t] + counts[rest[t] - 2, parts[t] - 1]
    return suffix[0]


@njit(cache=True, nogil=True)
def _solve(parts, k, s, wins, counts, offsets, rest, suffix, shifted):  # pragma: no cover
    """1 if some move leaves a lost position, else 0 (a non-empty position).

    A move takes 1 or 2 pins from a run p, leaving runs b >= a >= 0. The child's
    parts are: the parts before p's block (index terms `shifted`), the parts after
    it that exceed b (their rest grows by b + a), b, the parts in (a, b] (rest grows
    by a), a, then the unchanged tail (`suffix`). Only the middle is summed, and the
    parts above b are carried over from one split to the next (b only falls).
    """
    for j in range(k):
        p = parts[j]
        if j + 1 < k and parts[j + 1] == p:
            continue  # equal runs give equal children: bite the last of the block
        for take in (1, 2):
            if take > p:
                break
            base = offsets[s - take] + shifted[take, j]
            left = p - take  # pins of the run that stay, as b + a
            if left == 0:
                if wins[base + suffix[j + 1]] == 0:
                    return 1
                continue
            u = j + 1  # first part after the block that is <= b
            above = 0  # index terms of parts j+1 .. u-1 (those > b), rest grown by b + a
            for a in range(left // 2 + 1):
                b = left - a
                while u < k and parts[u] > b:
                    above += counts[rest[u] + left, parts[u] - 1]
                    u += 1
                index = base + above + counts[rest[u] + left, b - 1]
                t = u
                if a > 0:
                    while t < k and parts[t] > a:
                        index += counts[rest[t] + a, parts[t] - 1]
                        t += 1
                    index += counts[rest[t] + a, a - 1]
                if wins[index + suffix[t]] == 0:
                    return 1
    return 0


@cache
def _tables(n_max: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not 0 <= n_max <= KAYLES_MISERE_LIMIT:
        raise SizeLimitError(kayles_misere_refusal(n_max))
    # A unit of work is about 0.3 µs in Python: up to 200,000 interpreted (24 pins).
    compiled = kayles_misere_work(n_max) > 4 * INTERPRET_WORK
    counts = run(_partition_counts, n_max, compiled=compiled)
    offsets = np.zeros(n_max + 2, np.int64)
    for s in range(n_max + 1):
        offsets[s + 1] = offsets[s] + counts[s, s]
    return run(kayles_misere_table, n_max, counts, offsets, compiled=compiled), counts, offsets


#: A position's index, run by Python for the first queries of a process, compiled after.
_position = Tiered(_index, 2_000)


def kayles_misere_refusal(need: int) -> str:
    """Why a misère Kayles position needing the table up to `need` is refused."""
    return (
        f"misère Kayles with pins + runs - 1 = {need} needs a table costing "
        f"{kayles_misere_work(need):,} (positions x moves scanned); the limit is "
        f"{KAYLES_MISERE_WORK:,} (metanim.solver.KAYLES_MISERE_WORK), which covers "
        f"pins + runs - 1 <= {KAYLES_MISERE_LIMIT}; no closed form is known"
    )


def kayles_misere_mover_wins(runs: list[int] | tuple[int, ...], n_max: int) -> bool | None:
    """Misère outcome of a multiset of runs from the table for rows up to n_max, or None
    when the position lies outside it (sum + runs - 1 > n_max)."""
    parts = sorted((r for r in runs if r), reverse=True)
    if sum(parts) + len(parts) - 1 > n_max:
        return None
    wins, counts, offsets = _tables(n_max)
    value = wins[_position(np.array(parts, dtype=np.int64), len(parts), counts, offsets)]
    return bool(value == 1)


def kayles_misere_outcomes(n_max: int) -> np.ndarray:
    """mover_wins[n] (uint8) of a single row of n pins under misère Kayles, n <= n_max."""
    wins, counts, offsets = _tables(n_max)
    out = np.zeros(n_max + 1, np.uint8)
    for n in range(n_max + 1):
        parts = np.array([n] if n else [], dtype=np.int64)
        out[n] = wins[_position(parts, len(parts), counts, offsets)]
    return out
