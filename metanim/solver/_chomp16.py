"""Outcome-only Chomp tables: which shapes are P-positions, for boxes up to 16×16.

A Grundy table needs every child of every shape (the mex); an outcome needs only
one P child to settle an N shape, and P-positions are rare. So this kernel keeps
one bit per shape (set = P, the mover loses under normal play), indexed by the
same rank as `kernels.chomp_rank` / `_fast.chomp_packed`, and stops at the first
P child. A 16×16 box has C(32, 16) = 601,080,390 shapes: 75 MB of bits.

Shapes are visited in rank order by the odometer of `_fast.chomp_packed`, so every
child (a lower rank) is settled first. Which bite is tried first decides the speed:

* the bite that won for the previous shape: consecutive shapes mostly differ by one
  cell in the last row, and a bite at (r, c) with c no longer than that row leaves
  the very same child, so it still wins (once a shape (..., s) is P, every
  (..., s') with s' > s wins by the same bite);
* then every bite from the bottom-right corner back to the top-left: their
  children have ranks just below the shape's own, which are in cache.

With C[i][c] = sum_{i' < i} T(i', c), a bite (r, c) on a shape whose column c has
height h has rank prefix[r] + C[h][c] - C[r][c] + (rank - prefix[h]): O(1).
"""

from __future__ import annotations

import numpy as np

# Numba's cache tracks this file only: after editing these helpers in _fast.py, clear
# __pycache__ (or touch this file) so that chomp_p_bits is compiled again.
from metanim.games import SizeLimitError
from metanim.solver import kernels
from metanim.solver._fast import chomp_terms, next_shape, shape_prefix
from metanim.util.jit import njit

#: Largest box side the outcome kernel accepts (rows, cols <= 16: ranks < 2**30).
CHOMP_OUTCOME_LIMIT = 16


@njit(cache=True, nogil=True)
def chomp_p_bits(params, n_states, stats):  # pragma: no cover - numba
    """Bit `rank` of the result is set when that shape is a P-position (normal play).

    `stats` (int64[4]) receives: P-positions, children probed, shapes settled by
    the previous shape's winning bite, shapes whose bites were all probed.
    """
    rows, cols = params[0], params[1]
    terms = chomp_terms(params)  # T(i, s), with T(i, 0) = 0
    cum = np.zeros((rows + 1, cols + 1), np.int64)  # cum[i, c] = sum_{i' < i} T(i', c)
    for i in range(rows):
        for c in range(cols + 1):
            cum[i + 1, c] = cum[i, c] + terms[i, c]
    bits = np.zeros((n_states + 7) // 8, np.uint8)
    lengths = np.zeros(rows, np.int64)
    prefix = np.zeros(rows + 1, np.int64)
    n_p = 0
    probes = 0
    hint_hits = 0
    full_scans = 0
    win_r = -1
    win_c = -1
    for rank in range(n_states):
        shape_prefix(terms, lengths, prefix)
        found = False
        if win_r >= 0 and lengths[win_r] > win_c:
            h = win_r + 1
            while h < rows and lengths[h] > win_c:
                h += 1
            child = prefix[win_r] + cum[h, win_c] - cum[win_r, win_c] + rank - prefix[h]
            probes += 1
            if (bits[child >> 3] >> (child & 7)) & 1:
                found = True
                hint_hits += 1
        if not found:
            h = 0
            c = lengths[0] - 1
            while c >= 0 and not found:
                while h < rows and lengths[h] > c:
                    h += 1
                acc = rank - prefix[h]
                low = 1 if c == 0 else 0  # (0, 0) is the poisoned square
                r = h - 1
                while r >= low:
                    acc += terms[r, c]
                    child = prefix[r] + acc
                    probes += 1
                    if (bits[child >> 3] >> (child & 7)) & 1:
                        found = True
                        win_r = r
                        win_c = c
                        break
                    r -= 1
                c -= 1
        if not found:
            bits[rank >> 3] |= np.uint8(1 << (rank & 7))
            n_p += 1
            full_scans += 1
        next_shape(lengths, cols)
    stats[0] = n_p
    stats[1] = probes
    stats[2] = hint_hits
    stats[3] = full_scans
    return bits


def chomp_outcomes(rows: int, cols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P bits, stats, params) for every shape within a rows × cols box.

    Bit `rank` of the uint8 array (little-endian within a byte, as
    `np.unpackbits(..., bitorder="little")`) is set when the shape of that rank is
    a P-position; `outcome = grundy != 0` of the Grundy tables on the same box.
    """
    if not (1 <= rows <= CHOMP_OUTCOME_LIMIT and 1 <= cols <= CHOMP_OUTCOME_LIMIT):
        raise SizeLimitError(
            f"the Chomp outcome kernel covers boxes up to {CHOMP_OUTCOME_LIMIT}×"
            f"{CHOMP_OUTCOME_LIMIT} (metanim.solver._chomp16.CHOMP_OUTCOME_LIMIT); "
            f"got {rows}×{cols}"
        )
    params = kernels.chomp_params(rows, cols)
    stats = np.zeros(4, np.int64)
    bits = chomp_p_bits(params, kernels.chomp_states(rows, cols), stats)
    return bits, stats, params


def is_p(bits: np.ndarray, params: np.ndarray, lengths: list[int] | tuple[int, ...]) -> bool:
    """Whether the shape (row lengths, padded with zeros to the box) is a P-position."""
    padded = np.zeros(int(params[0]), np.int64)
    padded[: len(lengths)] = lengths
    rank = int(kernels.chomp_rank(params, padded))
    return bool((bits[rank >> 3] >> (rank & 7)) & 1)
