"""Octal games: a vectorized direct kernel and periodicity certified by Guy–Smith.

Digit d_k of a code such as "0.77" (Kayles), "0.07" (Dawson's Kayles) or "0.137"
(Dawson's chess): bit 1 = remove k tokens taking the whole heap, bit 2 = removing k
leaves one heap, bit 4 = removing k leaves two non-empty heaps.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from metanim.games import SizeLimitError
from metanim.solver.kernels import parse_octal
from metanim.util.jit import njit, run

#: Largest heap the direct O(n^2) method computes (its cost: docs/benchmarks.md).
OCTAL_DIRECT_LIMIT = 1_000_000
#: Values are computed up to this heap size while looking for a certified period.
OCTAL_PERIOD_SEARCH = 1 << 16
#: The first values the period search computes, run by Python (about 0.04 s, less than
#: numba takes to compile or load the kernel): Kayles' period is certified within them.
_FIRST_SEARCH = 256


@njit(cache=True, nogil=True)
def _lowest_zero(mask):  # pragma: no cover - numba
    if mask == -1:
        return 64
    m = 0
    while (mask >> m) & 1:
        m += 1
    return m


#: Values below this are kept as uint16 copies for the block scans of `_extend_fast`.
_COMPACT_CAP = 1 << 16
#: Pairs of a two-heap split scanned as one block (a min-reduction LLVM vectorizes).
_BLOCK = 1024


@njit(cache=True, nogil=True)
def octal_extend(digits, g, start):  # pragma: no cover - numba
    """Fill g[start:] (int32) given g[:start], in place.

    `_extend_fast` computes every value while they stay below 2^16 (its uint16
    copies); past that, the byte-flag kernel `_extend_flags` goes on (none of the
    codes we know of gets there: Officers peaks at 285 by heap 100,000).
    """
    n = _extend_fast(digits, g, start, 64, _COMPACT_CAP)
    if n < len(g):
        _extend_flags(digits, g, n)


@njit(inline="never", nogil=True)
def _block_hits(left, right, c):  # pragma: no cover - numba
    """Whether some left[i] ^ right[i] == c: a min over uint16 lanes, vectorized."""
    lowest = np.uint16(65535)
    target = np.uint16(c)
    for i in range(len(left)):
        v = np.uint16(left[i] ^ right[i] ^ target)
        if v < lowest:
            lowest = v
    return lowest == 0


@njit(cache=True, nogil=True)
def _extend_fast(digits, g, start, small_bound, cap):  # pragma: no cover - numba
    """Fill g[start:] while values stay below `cap` (<= 2^16); returns the first n not filled.

    While every value is below `small_bound` (64; smaller only in tests), the
    two-heap options of a heap of `rest` are one OR-reduction of
    `1 << (g[a] ^ g[rest-a])` over a contiguous slice and a reversed copy of g.

    Past that, a full scan of the ~n/2 splits per heap would scatter every XOR into
    a flag array. Instead: flag only a prefix of the splits, take the least
    unflagged value c as the candidate mex, and look for c in the rest of the
    splits with a vectorized block scan (about 15x cheaper per split than a
    scatter). If a block holds c, flag every split up to that block's end and take
    the next candidate; if no split yields c, c is the mex, exactly. Every value
    below the mex of a long heap turns up among the first few thousand splits
    (Officers, 0.6), so most splits are only scanned, never scattered. Flags are
    stamped with n, so nothing is reset between heaps.
    """
    end = len(g)
    if end == 0:
        return 0
    top = end - 1
    t = len(digits) - 1
    small = np.zeros(end, np.uint8)  # g as bytes, while values stay below small_bound
    rev = np.zeros(end, np.uint8)  # rev[top - i] = g[i]
    g16 = np.zeros(end, np.uint16)  # g as uint16, for the block scans
    rev16 = np.zeros(end, np.uint16)
    bound = small_bound  # a power of two above every value so far
    for i in range(start):
        if g[i] >= cap:
            return i  # cannot happen from _extend_fast's own output
        while g[i] >= bound:
            bound *= 2
        small[i] = min(g[i], 255)
        rev[top - i] = min(g[i], 255)
        g16[i] = g[i]
        rev16[top - i] = g[i]
    flags = np.zeros(bound + 1, np.int32)
    scanned = np.zeros(t + 1, np.int64)  # per take k: splits flagged so far
    for n in range(max(start, 1), end):
        big = bound > small_bound
        m = 0
        if not big:
            mask = np.int64(0)
            for k in range(1, min(t, n) + 1):
                d = digits[k]
                rest = n - k
                if rest == 0:
                    if d & 1:
                        mask |= 1
                    continue
                if d & 2:
                    mask |= np.int64(1) << small[rest]
                if d & 4 and rest >= 2:
                    half = rest // 2
                    lo = top - rest + 1
                    left = small[1 : half + 1]
                    right = rev[lo : lo + half]
                    acc = np.int64(0)
                    for i in range(half):
                        acc |= np.int64(1) << (left[i] ^ right[i])
                    mask |= acc
            m = _lowest_zero(mask)
        else:
            stamp = n + 1  # flags[v] == stamp: v is an option of n
            for k in range(1, min(t, n) + 1):
                d = digits[k]
                rest = n - k
                scanned[k] = 0
                if rest == 0:
                    if d & 1:
                        flags[0] = stamp
                    continue
                if d & 2:
                    flags[g16[rest]] = stamp
                if d & 4 and rest >= 2:
                    half = rest // 2
                    lo = top - rest + 1
                    left = g16[1 : half + 1]
                    right = rev16[lo : lo + half]
                    p = min(_BLOCK, half)
                    for i in range(p):
                        flags[left[i] ^ right[i]] = stamp
                    scanned[k] = p
            while True:
                while flags[m] == stamp:
                    m += 1
                found = False
                for k in range(1, min(t, n) + 1):
                    rest = n - k
                    if not (digits[k] & 4) or rest < 2:
                        continue
                    half = rest // 2
                    lo = top - rest + 1
                    left = g16[1 : half + 1]
                    right = rev16[lo : lo + half]
                    i = scanned[k]
                    while i < half:
                        e = min(i + _BLOCK, half)
                        if _block_hits(left[i:e], right[i:e], m):
                            for j in range(scanned[k], e):
                                flags[left[j] ^ right[j]] = stamp
                            scanned[k] = e
                            found = True
                            break
                        i = e
                    if found:
                        break
                if not found:
                    break
        g[n] = m
        small[n] = min(m, 255)
        rev[top - n] = min(m, 255)
        if m >= cap:
            return n + 1
        g16[n] = m
        rev16[top - n] = m
        # Keep every value below `bound` minus one, so that the 64-bit mask (or the
        # flag array) holds every option's XOR and the mex.
        if m + 1 >= bound:
            while m + 1 >= bound:
                bound *= 2
            if bound > cap:
                return n + 1
            if len(flags) < bound + 1:
                grown = np.zeros(bound + 1, np.int32)
                grown[: len(flags)] = flags
                flags = grown
    return end


@njit(cache=True, nogil=True)
def _extend_flags(digits, g, start):  # pragma: no cover - numba
    """Fill g[start:] (int32) given g[:start], in place: the fallback for values >= 2^16.

    While every value is below 64, the two-heap options of a heap of `rest` are
    one OR-reduction of `1 << (g[a] ^ g[rest-a])` over a contiguous slice and a
    reversed copy of g, which LLVM vectorizes. Past 63, the options are flagged in
    a byte array sized to the next power of two above the largest value (an XOR of
    values below 2^b stays below 2^b), so it stays in L1.
    """
    end = len(g)
    if end == 0:
        return
    top = end - 1
    small = np.zeros(end, np.uint8)  # g as bytes, while values stay below 64
    rev = np.zeros(end, np.uint8)  # rev[top - i] = g[i]
    rev32 = np.zeros(end, np.uint32)
    g32 = g.view(np.uint32)  # unsigned indexes skip numba's negative-index wraparound
    bound = 64  # a power of two above every value so far
    for i in range(start):
        while g[i] >= bound:
            bound *= 2
        small[i] = min(g[i], 255)
        rev[top - i] = min(g[i], 255)
        rev32[top - i] = g[i]
    flags = np.zeros(bound + 1, np.uint8)
    t = len(digits) - 1
    for n in range(max(start, 1), end):
        big = bound > 64
        mask = np.int64(0)
        if big:
            flags[:] = 0
        for k in range(1, min(t, n) + 1):
            d = digits[k]
            rest = n - k
            if rest == 0:
                if d & 1:
                    mask |= 1
                    flags[0] = 1
                continue
            if d & 2:
                if big:
                    flags[g[rest]] = 1
                else:
                    mask |= np.int64(1) << small[rest]
            if d & 4 and rest >= 2:
                half = rest // 2
                lo = top - rest + 1
                if big:
                    left32 = g32[1 : half + 1]
                    right32 = rev32[lo : lo + half]
                    for i in range(half):
                        flags[left32[i] ^ right32[i]] = 1
                else:
                    left = small[1 : half + 1]
                    right = rev[lo : lo + half]
                    acc = np.int64(0)
                    for i in range(half):
                        acc |= np.int64(1) << (left[i] ^ right[i])
                    mask |= acc
        if big:
            m = 0
            while flags[m]:
                m += 1
        else:
            m = _lowest_zero(mask)
        g[n] = m
        small[n] = min(m, 255)
        rev[top - n] = min(m, 255)
        rev32[top - n] = m
        # Keep every value below `bound` minus one, so that the 64-bit mask (or the
        # flag array) holds every option's XOR and the mex.
        if m + 1 >= bound:
            while m + 1 >= bound:
                bound *= 2
            flags = np.zeros(bound + 1, np.uint8)


@njit(cache=True, nogil=True)
def find_period(g, t):  # pragma: no cover - numba
    """Smallest certified (preperiod, period) of g, or (-1, -1).

    Guy–Smith periodicity theorem (Winning Ways, ch. 4): for an octal game whose
    last non-zero digit is d_t, if G(n + p) = G(n) for all n0 <= n < 2 n0 + p + t,
    then G(n + p) = G(n) for every n >= n0. For each p the least n0 consistent
    with the computed values is one past the last mismatch.
    """
    top = len(g) - 1
    for p in range(1, top // 2 + 1):
        n0 = 0
        for n in range(top - p, -1, -1):
            if g[n] != g[n + p]:
                n0 = n + 1
                break
        if 2 * n0 + 2 * p + t - 1 <= top:
            return n0, p
    return -1, -1


def octal_digits(code: str) -> np.ndarray:
    """Digits of an octal code, [0, d_1, ..., d_t] with d_t != 0."""
    digits = parse_octal(code)
    nonzero = np.nonzero(digits)[0]
    if len(nonzero) == 0:
        return digits[:1]
    return digits[: nonzero[-1] + 1]


def octal_values(code: str, n_max: int) -> np.ndarray:
    """Grundy values of heaps 0..n_max computed directly (no periodicity)."""
    if n_max > OCTAL_DIRECT_LIMIT:
        raise SizeLimitError(
            f"direct octal values go up to a heap of {OCTAL_DIRECT_LIMIT:,} "
            f"(metanim.solver._octal.OCTAL_DIRECT_LIMIT); got {n_max:,}"
        )
    g = np.zeros(n_max + 1, np.int32)
    run(octal_extend, octal_digits(code), g, 0, compiled=n_max >= _FIRST_SEARCH)
    return g


@cache
def _period_search(code: str) -> tuple[np.ndarray, int, int]:
    digits = octal_digits(code)
    t = len(digits) - 1
    size = _FIRST_SEARCH
    g = np.zeros(size, np.int32)
    run(octal_extend, digits, g, 0, compiled=False)
    while True:
        n0, p = run(find_period, g, t, compiled=size > _FIRST_SEARCH)
        if p > 0 or size >= OCTAL_PERIOD_SEARCH:
            return g, int(n0), int(p)
        grown = np.zeros(min(2 * size, OCTAL_PERIOD_SEARCH), np.int32)
        grown[:size] = g
        octal_extend(digits, grown, size)
        g, size = grown, len(grown)


def octal_period(code: str) -> tuple[int, int] | None:
    """(preperiod n0, period p) certified by the Guy–Smith theorem, or None.

    None means no period was certified among heaps below OCTAL_PERIOD_SEARCH.
    """
    _, n0, p = _period_search(code)
    return (n0, p) if p > 0 else None


def octal_table(code: str, n_max: int) -> np.ndarray:
    """Grundy values of heaps 0..n_max: by the certified period when there is one."""
    g, n0, p = _period_search(code)
    if n_max < len(g):
        return g[: n_max + 1].copy()
    if p == 0:
        return octal_values(code, n_max)
    return np.concatenate([g[:n0], np.resize(g[n0 : n0 + p], n_max + 1 - n0)])


def octal_grundy(code: str, n: int) -> int:
    """Grundy value of a single heap of n under the octal game `code`."""
    if n < 0:
        raise ValueError(f"a heap size is non-negative, got {n}")
    g, n0, p = _period_search(code)
    if n < len(g):
        return int(g[n])
    if p > 0:
        return int(g[n0 + (n - n0) % p])
    return int(octal_values(code, n)[n])
