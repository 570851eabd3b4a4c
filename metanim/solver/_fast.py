"""Whole-table recurrences that beat the generic engine: Fibonacci Nim, Wythoff, Chomp.

Each kernel returns the same tables as `_engine.solve_dag` over the same codes
(normal-play Grundy values and misère "mover wins" flags; Fibonacci Nim's flags
come as one threshold per row, expanded by `fibonacci_mover_wins`), so the simple
successor kernels in `kernels.py` stay the executable specification that tests
compare to.
"""

from __future__ import annotations

import numpy as np

from metanim.util.jit import njit


# ---------------------------------------------------------------------- Fibonacci Nim
@njit(cache=True, nogil=True)
def fibonacci_tables(n):  # pragma: no cover - numba
    """Tables over the triangular code r(r+1)/2 + k of (remaining r, max take k), r <= n.

    Returns (grundy, first_win): the int16 Grundy values, and for each r the least
    max take k >= 1 from which the mover wins misère play (r + 1 when none does);
    `fibonacci_mover_wins` expands it to one flag per state.

    The options of (r, k) are those of (r, k-1) plus one, (r-k, min(2k, r-k)), so a
    row is one incremental mex: a value set only grows, hence its mex only rises,
    and so does "some option is a misère loss". That makes a misère row a threshold,
    one int per row instead of a byte per state, and the only table of n^2/2 entries
    is the Grundy one (95 MiB at 10,000 stones), read in place: children
    (left, 2k) with 2k < left come straight from it, and (left, left), the child of
    every take k >= left / 2, from a contiguous copy of the diagonal.
    """
    states = n * (n + 1) // 2 + n + 1
    grundy = np.zeros(states, np.int16)  # values <= max take <= n < 32768 (caller checks)
    first_win = np.zeros(n + 1, np.int32)
    full = np.zeros(n + 1, np.int16)  # full[r] = G(r, r)
    seen = np.zeros(n + 2, np.int32)
    for r in range(n + 1):
        base = r * (r + 1) // 2
        stamp = r + 1
        m = 0
        won = r + 1  # max take 0 (or no stones): no move, the mover wins misère
        for k in range(1, r + 1):
            left = r - k
            if 2 * k >= left:
                value = full[left]
                child = left
            else:
                child = 2 * k
                value = grundy[left * (left + 1) // 2 + child]
            seen[value] = stamp  # a value is at most its state's max take, < r
            while seen[m] == stamp:
                m += 1
            # The child is a misère loss for its mover unless it has no move
            # (max take 0) or its max take reaches its row's threshold.
            if won > r and child > 0 and child < first_win[left]:
                won = k
            grundy[base + k] = m
        first_win[r] = won
        full[r] = grundy[base + r]
    return grundy, first_win


def fibonacci_mover_wins(first_win: np.ndarray) -> np.ndarray:
    """One uint8 misère "mover wins" flag per state, in the tables' triangular order.

    State (r, k) is a win exactly when k == 0 or k >= first_win[r].
    """
    n = len(first_win) - 1
    wins = np.ones((n + 1) * (n + 2) // 2, np.uint8)
    for r, w in enumerate(first_win.tolist()):
        base = r * (r + 1) // 2
        wins[base + 1 : base + min(w, r + 1)] = 0
    return wins


# ---------------------------------------------------------------- Wythoff / Corner Queen
@njit(cache=True, nogil=True)
def _lowest_zero_bit(word):  # pragma: no cover - numba
    """Index of the lowest 0 bit of an int64 that is not all ones."""
    free = ~word & (word + 1)  # isolates the lowest zero bit
    i = 0
    if free & 0xFFFFFFFF == 0:
        free >>= 32
        i += 32
    if free & 0xFFFF == 0:
        free >>= 16
        i += 16
    if free & 0xFF == 0:
        free >>= 8
        i += 8
    if free & 0xF == 0:
        free >>= 4
        i += 4
    if free & 0x3 == 0:
        free >>= 2
        i += 2
    if free & 0x1 == 0:
        i += 1
    return i


@njit(inline="always")
def _mex_of_union(a, b, c, start):  # pragma: no cover - numba
    """The mex of the union of three value bitsets, given that it holds every value < start."""
    w = start >> 6
    while True:
        word = a[w] | b[w] | c[w]
        if word != -1:
            break
        w += 1
    return (w << 6) + _lowest_zero_bit(word)


@njit(inline="always")
def _next_missing(bits, m):  # pragma: no cover - numba
    """The least value >= m missing from a bitset: a set's mex pointer moved up."""
    while (bits[m >> 6] >> (m & 63)) & 1:
        m += 1
    return m


@njit(cache=True, nogil=True)
def wythoff_tables(width, height):  # pragma: no cover - numba
    """Tables indexed by y * width + x, from row, column and diagonal value bitsets.

    G(x, y) is the mex of the union of three sets (the row to its left, the column
    above, the diagonal); the union's mex is at least each set's own mex, so the
    scan starts at the largest of three monotone pointers and is short.
    """
    nbits = width + height + min(width, height) + 1  # mex <= number of options
    words = nbits // 64 + 2
    col = np.zeros((width, words), np.int64)
    diag = np.zeros((width + height, words), np.int64)
    row = np.zeros(words, np.int64)
    col_mex = np.zeros(width, np.int64)
    diag_mex = np.zeros(width + height, np.int64)
    col_lost = np.zeros(width, np.uint8)
    diag_lost = np.zeros(width + height, np.uint8)
    grundy = np.zeros(width * height, np.int32)
    mover_wins = np.zeros(width * height, np.uint8)
    for y in range(height):
        row[:] = 0
        row_mex = 0
        row_lost = False
        for x in range(width):
            d = x - y + height - 1
            v = _mex_of_union(row, col[x], diag[d], max(row_mex, col_mex[x], diag_mex[d]))
            grundy[y * width + x] = v
            bit = np.int64(1) << (v & 63)
            row[v >> 6] |= bit
            col[x, v >> 6] |= bit
            diag[d, v >> 6] |= bit
            row_mex = _next_missing(row, row_mex)
            col_mex[x] = _next_missing(col[x], col_mex[x])
            diag_mex[d] = _next_missing(diag[d], diag_mex[d])
            # Misère: the mover wins at the terminal corner or with a move to a lost cell.
            wins = (x == 0 and y == 0) or row_lost or col_lost[x] or diag_lost[d]
            mover_wins[y * width + x] = 1 if wins else 0
            if not wins:
                row_lost = True
                col_lost[x] = 1
                diag_lost[d] = 1
    return grundy, mover_wins


@njit(cache=True, nogil=True)
def wythoff_square(size):  # pragma: no cover - numba
    """`wythoff_tables(size, size)` computing only x <= y: G(x, y) = G(y, x) by symmetry.

    Cell (x, y) with x <= y sees its row to the left and its diagonal inside the
    computed half; its column's cells above the diagonal are mirrors, inserted into
    column y's set when (y, x)'s twin is computed (row x < y, or earlier in row y).
    """
    nbits = 3 * size + 1
    words = nbits // 64 + 2
    col = np.zeros((size, words), np.int64)
    diag = np.zeros((size, words), np.int64)  # index y - x >= 0
    row = np.zeros(words, np.int64)
    col_mex = np.zeros(size, np.int64)
    diag_mex = np.zeros(size, np.int64)
    col_lost = np.zeros(size, np.uint8)
    diag_lost = np.zeros(size, np.uint8)
    grundy = np.zeros(size * size, np.int32)
    mover_wins = np.zeros(size * size, np.uint8)
    for y in range(size):
        row[:] = 0
        row_mex = 0
        row_lost = False
        for x in range(y + 1):
            d = y - x
            # col_mex is a lower bound only: mirror insertions may leave it stale.
            m = _next_missing(col[x], col_mex[x])
            col_mex[x] = m
            v = _mex_of_union(row, col[x], diag[d], max(row_mex, m, diag_mex[d]))
            grundy[y * size + x] = v
            grundy[x * size + y] = v
            bit = np.int64(1) << (v & 63)
            vw = v >> 6
            row[vw] |= bit
            col[x, vw] |= bit
            if x < y:
                col[y, vw] |= bit  # the twin (y, x) lies in column y, above row y
            diag[d, vw] |= bit
            row_mex = _next_missing(row, row_mex)
            diag_mex[d] = _next_missing(diag[d], diag_mex[d])
            wins = (x == 0 and y == 0) or row_lost or col_lost[x] or diag_lost[d]
            mover_wins[y * size + x] = 1 if wins else 0
            mover_wins[x * size + y] = 1 if wins else 0
            if not wins:
                row_lost = True
                col_lost[x] = 1
                if x < y:
                    col_lost[y] = 1
                diag_lost[d] = 1
    return grundy, mover_wins


# ------------------------------------------------------------------- Chomp queries
@njit(cache=True, nogil=True)
def chomp_losing_bites(params, lengths, lost, out):  # pragma: no cover - numba
    """Bites (r, c), encoded r * cols + c (cols = params[1], the box's own width, so
    no fixed-width field can overflow) in row-major order, whose shape is lost.

    `lengths` has params[0] entries (a shape inside the table's box), so every
    child shape is ranked in the same table as its parent. The rank of the child of
    bite (r, c) is the parent's rows above r plus sum over rows i >= r of
    term(i, min(lengths[i], c)); that sum is the whole column sum `total[c]` less the
    part above row r, `above[c]`, kept as the rows go down: rows x cols steps in all.
    """
    rows, cols = params[0], params[1]
    stride = cols + 1
    total = np.zeros(cols, dtype=np.int64)
    for i in range(rows):
        base = 1 + (rows - i) * stride  # term(i, s) = params[base + s] for s >= 1
        for c in range(1, cols):
            s = min(lengths[i], c)
            if s > 0:
                total[c] += params[base + s]
    above = np.zeros(cols, dtype=np.int64)
    n = 0
    prefix = 0
    for r in range(rows):
        length = lengths[r]
        for c in range(1 if r == 0 else 0, length):
            if lost[prefix + total[c] - above[c]]:
                out[n] = r * cols + c
                n += 1
        base = 1 + (rows - r) * stride
        for c in range(1, cols):
            s = min(length, c)
            if s > 0:
                above[c] += params[base + s]
        if length > 0:
            prefix += params[base + length]
    return n


# ----------------------------------------------------------------------------- Chomp
@njit(cache=True, nogil=True)
def chomp_terms(params):  # pragma: no cover - numba
    """T(i, s), the rank weight of row i at length s, as a rows × (cols + 1) table (T(i, 0) = 0)."""
    rows, cols = params[0], params[1]
    stride = cols + 1
    terms = np.zeros((rows, cols + 1), np.int64)
    for i in range(rows):
        for v in range(1, cols + 1):
            terms[i, v] = params[2 + (rows - i) * stride + v - 1]
    return terms


@njit(inline="always")
def shape_prefix(terms, lengths, prefix):  # pragma: no cover - numba
    """prefix[i] = the rank weight of rows 0..i-1 of the shape, for i in 0..rows."""
    p = 0
    for i in range(len(lengths)):
        prefix[i] = p
        p += terms[i, lengths[i]]
    prefix[len(lengths)] = p


@njit(inline="always")
def next_shape(lengths, cols):  # pragma: no cover - numba
    """Step the row lengths to the next shape in rank order, like an odometer.

    Returns False, leaving `lengths` as it is, after the last shape (the full box).
    """
    i = len(lengths) - 1
    while i >= 0:
        cap = cols if i == 0 else lengths[i - 1]
        if lengths[i] < cap:
            lengths[i] += 1
            for j in range(i + 1, len(lengths)):
                lengths[j] = 0
            return True
        i -= 1
    return False


@njit(cache=True, nogil=True)
def chomp_packed(params, n_states):  # pragma: no cover - numba
    """Every shape in the box, in rank order (`kernels.chomp_rank`): grundy | lost << 8.

    Needs rows * cols <= 256 so a value (at most the number of bites) fits a byte;
    `chomp_packed_wide` packs any box into 32 bits (value | lost << 31).
    """
    table = np.zeros(n_states, np.uint16)
    _chomp_fill(params, table, 8)
    return table


@njit(cache=True, nogil=True)
def chomp_packed_wide(params, n_states):  # pragma: no cover - numba
    """`chomp_packed` for any box: value in the low 31 bits, lost in bit 31."""
    table = np.zeros(n_states, np.uint32)
    _chomp_fill(params, table, 31)
    return table


@njit(cache=True, nogil=True)
def _chomp_fill(params, table, shift):  # pragma: no cover - numba
    """Fill `table` (one entry per shape, rank order) with value | lost << shift.

    The field widths come from `shift`, sized by the caller to the box (a value is at
    most the number of bites, rows * cols - 1 < 2 ** shift), never a fixed byte.
    Shapes are visited by stepping their row lengths like an odometer (no unranking).
    A bite at (r, c) keeps rows above r and cuts rows r.. to min(length, c); with h
    the height of column c, its rank is prefix[r] + sum_{r<=i<h} T(i, c) + (the
    unchanged tail from row h on), so each successor costs O(1). One packed load per
    successor gives both its Grundy value and its misère outcome.
    """
    rows, cols = params[0], params[1]
    n_states = len(table)
    mask = (np.int64(1) << shift) - 1
    terms = chomp_terms(params)
    lengths = np.zeros(rows, np.int64)
    prefix = np.zeros(rows + 1, np.int64)
    seen = np.zeros(rows * cols + 2, np.int64)
    for rank in range(n_states):
        shape_prefix(terms, lengths, prefix)
        stamp = rank + 1
        lost_child = np.int64(0)
        h = rows
        for c in range(lengths[0]):
            while h > 0 and lengths[h - 1] <= c:
                h -= 1
            acc = rank - prefix[h]
            for r in range(h - 1, 0, -1):
                acc += terms[r, c]
                x = np.int64(table[prefix[r] + acc])
                seen[x & mask] = stamp
                lost_child |= x
            if c > 0:  # (0, 0) is the poisoned square, never bitten
                x = np.int64(table[acc + terms[0, c]])
                seen[x & mask] = stamp
                lost_child |= x
        m = 0
        while seen[m] == stamp:
            m += 1
        # Misère: the mover wins with no bite left (the poisoned square alone) or with
        # a bite to a lost shape; otherwise the shape is lost.
        no_bite = lengths[0] <= 1 and (rows == 1 or lengths[1] == 0)
        lost = 0 if no_bite or (lost_child >> shift) & 1 else 1
        table[rank] = m | (lost << shift)
        next_shape(lengths, cols)
