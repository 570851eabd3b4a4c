"""Proven closed forms: the implementation beyond the tables, a cross-check within them.

Everything here is exact integer arithmetic in plain Python, O(1) or O(log n) per
query, so it answers for heaps, boards and rows far past any table:

* NIM (Bouton 1901): one heap of h with max take k has Grundy value h mod (k+1)
  (h when takes are unbounded); a sum's value is the XOR (the Nim-sum). Misère,
  any heaps and any max take: Bouton's misère rule on the residues h mod (k+1)
  (play as normal unless every residue is 0 or 1, where the mover loses iff the
  number of 1s is odd); `nim_misere_lost` writes out the proof.
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
        rest = _heap_with_residue(h, nim_heap_grundy(h, k) ^ total, k)
        if rest is not None:
            moves.append((i, h - rest))
    return moves


def nim_misere_lost(heaps: tuple[int, ...], k: int) -> bool:
    """Whether the mover loses misère NIM with max take k (0 = unbounded), any heaps.

    With residues r_i = h_i mod (k+1) (h_i when unbounded), the mover loses iff every
    residue is 0 or 1 and an odd number of them are 1, or some residue is at least 2
    and their XOR is 0: Bouton's misère rule (1901) played on the residues. Proof: the
    empty position has all residues 0, so it is a win for the mover, as misère play
    says; a move changes exactly one residue, so it leaves the set above (a position
    of the first kind goes to an even count of 1s or to a residue >= 2 with XOR != 0;
    one of the second kind to XOR != 0, and not to all residues <= 1, since the one
    residue >= 2 it lowers could not have been the only one with XOR 0); and from any
    other non-empty position a move enters it: with all residues <= 1, take 1 from a
    heap of residue 1 or k from a non-empty heap of residue 0 to fix the parity; with
    one residue >= 2, lower it to 0 or 1 so the count of 1s is odd; with two or more,
    the Nim move on the residues (any residue below r_i is reachable by taking at
    most r_i <= k) keeps one residue >= 2. `tests/solver/test_solver.py` checks this against
    a brute force from the rules on every position of up to four small heaps.
    """
    residues = [nim_heap_grundy(h, k) for h in heaps]
    total = 0
    for r in residues:
        total ^= r
    if max(residues, default=0) <= 1:
        return total == 1
    return total == 0


def nim_misere_winning_moves(heaps: tuple[int, ...], k: int) -> list[tuple[int, int]]:
    """Misère winning moves (heap, take) by `nim_misere_lost`'s rule, in action-id order.

    A child is lost iff its residues fit the rule, so for each heap exactly one target
    residue works: the XOR of the other residues when one of them is >= 2, else the
    residue that makes the count of 1s odd. O(heaps).
    """
    residues = [nim_heap_grundy(h, k) for h in heaps]
    total = 0
    for r in residues:
        total ^= r
    big = sum(1 for r in residues if r >= 2)
    moves = []
    for i, h in enumerate(heaps):
        others = total ^ residues[i]
        target = others if big - (residues[i] >= 2) > 0 else others ^ 1
        rest = _heap_with_residue(h, target, k)
        if rest is not None:
            moves.append((i, h - rest))
    return moves


def _heap_with_residue(h: int, target: int, k: int) -> int | None:
    """The heap size one move below h (take 1..k, or any when k = 0) whose residue is
    `target`, or None (the k sizes h-k..h-1 hold every residue but h's own, once)."""
    if k == 0:
        return target if target < h else None
    if target > k or h == 0:
        return None
    rest = h - 1 - ((h - 1 - target) % (k + 1))
    return rest if max(0, h - k) <= rest <= h - 1 else None


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
