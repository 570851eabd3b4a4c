"""Proven closed forms: the implementation beyond the tables, a cross-check within them.

Everything here is exact integer arithmetic in plain Python, O(1) or O(log n) per
query, so it answers for heaps, boards and rows far past any table:

* NIM (Bouton 1901): one heap of h with max take k has Grundy value h mod (k+1)
  (h when takes are unbounded); a sum's value is the XOR (the Nim-sum). Misère:
  one heap is lost for the mover iff h mod (k+1) == 1 (h == 1 unbounded); several
  unbounded heaps follow Bouton's misère rule (play as normal unless every heap is
  0 or 1, where the mover loses iff the number of 1-heaps is odd).
* Wythoff / Corner Queen (Wythoff 1907): the P-positions are the Beatty pairs
  (a_k, b_k) = (⌊kφ⌋, ⌊kφ²⌋) = (a_k, a_k + k) and their mirrors. Misère Wythoff
  keeps every pair with k >= 2 and replaces (0, 0) and (1, 2) by (0, 1), (1, 0)
  and (2, 2) (Winning Ways ch. 13; checked against the tables in the tests).
* Two-row Chomp: the shape (a, b) is a P-position iff b == a - 1 (normal play).

Each function validates nothing: the solvers call them with valid states.
"""

from __future__ import annotations

from math import isqrt

# ----------------------------------------------------------------------------- NIM


def nim_heap_grundy(h: int, k: int) -> int:
    """Grundy value of one NIM heap of h with max take k (0 = unbounded)."""
    return h if k == 0 else h % (k + 1)


def nim_grundy(heaps: tuple[int, ...], k: int) -> int:
    total = 0
    for h in heaps:
        total ^= nim_heap_grundy(h, k)
    return total


def nim_winning_moves(heaps: tuple[int, ...], k: int) -> list[tuple[int, int]]:
    """Normal-play winning moves (heap, take), in action-id order, in O(heaps)."""
    total = nim_grundy(heaps, k)
    if total == 0:
        return []
    moves = []
    for i, h in enumerate(heaps):
        target = nim_heap_grundy(h, k) ^ total
        if k == 0:
            if target < h:
                moves.append((i, h - target))
            continue
        # The k heaps h-k..h-1 hold every residue mod k+1 except h's own once.
        if target > k:
            continue
        rest = h - 1 - ((h - 1 - target) % (k + 1))
        if max(0, h - k) <= rest <= h - 1:
            moves.append((i, h - rest))
    return moves


def nim_misere_single_lost(h: int, k: int) -> bool:
    """Whether the mover loses misère NIM with one non-empty heap h (or none: h = 0)."""
    if h == 0:
        return False  # no move: the previous player took the last item and lost
    return h % (k + 1) == 1 if k else h == 1


def nim_misere_unbounded_lost(heaps: tuple[int, ...]) -> bool:
    """Bouton's misère rule for unbounded takes."""
    if max(heaps, default=0) <= 1:
        return sum(heaps) % 2 == 1
    return nim_grundy(heaps, 0) == 0


def nim_misere_winning_moves(heaps: tuple[int, ...], k: int) -> list[tuple[int, int]]:
    """Misère winning moves when a closed form covers every child: unbounded takes, or
    a bounded take with at most one non-empty heap. O(heaps)."""
    moves = []
    for i, h in enumerate(heaps):
        others = heaps[:i] + heaps[i + 1 :]
        low = 0 if k == 0 else max(0, h - k)
        candidates: set[int] = set()
        if k == 0:
            om, ox, ones = max(others, default=0), nim_grundy(others, 0), sum(others)
            if max(om, ox) > 1 and ox < h:
                candidates.add(ox)  # the child keeps a heap above 1: Nim-sum 0 loses
            if om <= 1:
                candidates.update(v for v in (0, 1) if v < h and (ones + v) % 2 == 1)
        else:
            if any(others):
                raise ValueError("bounded misère NIM with several heaps has no closed form")
            # Lost children: v >= 1 with v mod (k+1) == 1 in [h-k, h-1].
            v = h - 1 - ((h - 2) % (k + 1)) if h >= 2 else -1
            if v >= max(low, 1):
                candidates.add(v)
        moves += [(i, h - v) for v in sorted(candidates, reverse=True) if low <= v < h]
    return moves


# ---------------------------------------------------------------- Wythoff / Corner Queen


def beatty_a(k: int) -> int:
    """a_k = ⌊kφ⌋ = ⌊(k + √(5k²)) / 2⌋, exactly (√(5k²) is irrational for k > 0)."""
    return (k + isqrt(5 * k * k)) // 2


def wythoff_partner(n: int, *, misere: bool = False) -> int:
    """The unique m with (n, m) a P-position (every n >= 0 is in exactly one pair)."""
    if misere and n <= 2:
        return (1, 0, 2)[n]
    if n == 0:
        return 0
    # n is a_k for k ≈ n/φ, or b_k = a_k + k for k ≈ n/φ²; test the neighbours.
    guess = (isqrt(5 * n * n) - n) // 2  # ⌊n/φ⌋ up to rounding
    for k in range(max(guess - 2, 1), guess + 3):
        if beatty_a(k) == n:
            return n + k
    guess = (3 * n - isqrt(5 * n * n)) // 2  # ≈ n/φ²
    for k in range(max(guess - 2, 1), guess + 3):
        if beatty_a(k) + k == n:
            return beatty_a(k)
    raise AssertionError(f"no Beatty partner for {n}")  # pragma: no cover - a theorem


def wythoff_diagonal_p(d: int, *, misere: bool = False) -> tuple[int, int]:
    """The P-position (x, y) with y - x = d >= 0."""
    if misere and d <= 1:
        return (2, 2) if d == 0 else (0, 1)
    a = beatty_a(d)
    return (a, a + d)


def wythoff_is_p(x: int, y: int, *, misere: bool = False) -> bool:
    return wythoff_partner(x, misere=misere) == y


def wythoff_winning_targets(x: int, y: int, *, misere: bool = False) -> list[tuple[int, int]]:
    """The P-positions one move from (x, y) (at most three: left, down, diagonal)."""
    out = []
    p = wythoff_partner(y, misere=misere)
    if p < x:
        out.append((p, y))
    p = wythoff_partner(x, misere=misere)
    if p < y:
        out.append((x, p))
    d = y - x
    tx, ty = wythoff_diagonal_p(abs(d), misere=misere)
    if d < 0:
        tx, ty = ty, tx
    if tx < x:
        out.append((tx, ty))
    return out


# -------------------------------------------------------------------------- Chomp


def chomp_two_row_is_p(a: int, b: int) -> bool:
    """Normal-play outcome of the two-row shape (a, b), a >= b >= 0, a >= 1."""
    return b == a - 1


def chomp_two_row_winning_moves(a: int, b: int) -> list[tuple[int, int]]:
    """Bites (row, col) from (a, b) to a shape (c, c - 1), in action-id order."""
    moves = []
    if b + 1 < a:
        moves.append((0, b + 1))  # leaves (b + 1, b)
    if b == a:
        moves.append((1, a - 1))  # leaves (a, a - 1)
    return moves
