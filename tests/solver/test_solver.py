"""The numba solver against an independent brute force and against known mathematics.

The brute force here (`brute_*`) is written from the rules in the textbooks, not
from `metanim.games`, so a rule bug in a game module cannot hide a solver bug.
"""

from __future__ import annotations

import math
from functools import cache, reduce
from itertools import pairwise, product
from operator import xor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metanim.games import (
    Chomp,
    CornerQueen,
    FibonacciNim,
    InvalidStateError,
    Kayles,
    Nim,
    SizeLimitError,
)
from metanim.solver import (
    KAYLES_MISERE_LIMIT,
    KAYLES_MISERE_WORK,
    grundy,
    method,
    optimal_move,
    outcome,
    winning_moves,
)
from metanim.solver.reference import mex
from tests.oracles import fibonacci_numbers, smallest_zeckendorf_part

# ----------------------------------------------------------------- brute forces


@cache
def brute_nim_heap(h: int, k: int | None) -> int:
    limit = h if k is None else min(h, k)
    return mex({brute_nim_heap(h - x, k) for x in range(1, limit + 1)})


@cache
def brute_nim_misere(heaps: tuple[int, ...], k: int | None) -> bool:
    """Mover wins misère NIM (heaps sorted)."""
    moves = [
        tuple(sorted((*heaps[:i], h - x, *heaps[i + 1 :])))
        for i, h in enumerate(heaps)
        for x in range(1, (h if k is None else min(h, k)) + 1)
    ]
    return not moves or any(not brute_nim_misere(m, k) for m in moves)


@cache
def brute_fib(n: int, k: int) -> int:
    return mex({brute_fib(n - x, min(2 * x, n - x)) for x in range(1, k + 1)})


@cache
def brute_fib_misere(n: int, k: int) -> bool:
    if n == 0:
        return True
    return any(not brute_fib_misere(n - x, min(2 * x, n - x)) for x in range(1, k + 1))


@cache
def brute_kayles_run(n: int) -> int:
    options = set()
    for take in (1, 2):
        for left in range(0, n - take + 1):
            options.add(brute_kayles_run(left) ^ brute_kayles_run(n - take - left))
    return mex(options)


@cache
def brute_kayles_misere(runs: tuple[int, ...]) -> bool:
    children = set()
    for i, n in enumerate(runs):
        rest = runs[:i] + runs[i + 1 :]
        for take in (1, 2):
            for left in range(0, n - take + 1):
                parts = (left, n - take - left)
                children.add(tuple(sorted(x for x in rest + parts if x)))
    return not children or any(not brute_kayles_misere(c) for c in children)


@cache
def brute_chomp(shape: tuple[int, ...], misere: bool) -> bool:
    """Mover wins; shape = row lengths; the poison (0, 0) is never bitten."""
    children = [
        shape[:r] + tuple(min(x, c) for x in shape[r:])
        for r in range(len(shape))
        for c in range(shape[r])
        if (r, c) != (0, 0)
    ]
    if not children:
        return misere
    return any(not brute_chomp(ch, misere) for ch in children)


@cache
def brute_chomp_grundy(shape: tuple[int, ...]) -> int:
    return mex(
        {
            brute_chomp_grundy(shape[:r] + tuple(min(x, c) for x in shape[r:]))
            for r in range(len(shape))
            for c in range(shape[r])
            if (r, c) != (0, 0)
        }
    )


@cache
def brute_wythoff(x: int, y: int) -> int:
    options = {brute_wythoff(x - d, y) for d in range(1, x + 1)}
    options |= {brute_wythoff(x, y - d) for d in range(1, y + 1)}
    options |= {brute_wythoff(x - d, y - d) for d in range(1, min(x, y) + 1)}
    return mex(options)


@cache
def brute_wythoff_misere(x: int, y: int) -> bool:
    children = [(x - d, y) for d in range(1, x + 1)] + [(x, y - d) for d in range(1, y + 1)]
    children += [(x - d, y - d) for d in range(1, min(x, y) + 1)]
    return not children or any(not brute_wythoff_misere(*c) for c in children)


# ------------------------------------------------------------- property tests

heaps_st = st.lists(st.integers(0, 7), min_size=1, max_size=4)
take_st = st.one_of(st.none(), st.integers(1, 4))


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, None])
def test_misere_nim_closed_form_matches_brute_force_on_every_small_position(k) -> None:
    # The misère rule on residues (closed_forms.nim_misere_lost) against a search from
    # the rules: every position of 2 heaps up to 11 and 3 heaps up to 8, every max take.
    sizes = [(2, 11), (3, 8)]
    for count, top in sizes:
        game = Nim([top] * count, max_take=k, misere=True)
        for state in product(range(top + 1), repeat=count):
            mover_wins = brute_nim_misere(tuple(sorted(state)), k)
            assert outcome(game, state) == ("N" if mover_wins else "P"), state
            want = [
                m for m in game.legal_moves(state)
                if not brute_nim_misere(tuple(sorted(game.child(state, m))), k)
            ]  # fmt: skip
            assert winning_moves(game, state) == want, state


@settings(max_examples=150, deadline=None)
@given(heaps=heaps_st, k=take_st, misere=st.booleans())
def test_nim_matches_brute_force(heaps: list[int], k: int | None, misere: bool) -> None:
    game = Nim([max([*heaps, 1])] * len(heaps), max_take=k, misere=misere)
    state = tuple(heaps)
    assert grundy(game, state) == reduce(xor, (brute_nim_heap(h, k) for h in heaps), 0)
    expected = (
        brute_nim_misere(tuple(sorted(heaps)), k)
        if misere
        else reduce(xor, (brute_nim_heap(h, k) for h in heaps), 0) != 0
    )
    assert outcome(game, state) == ("N" if expected else "P")


@settings(max_examples=150, deadline=None)
@given(data=st.data(), misere=st.booleans())
def test_fibonacci_matches_brute_force(data: st.DataObject, misere: bool) -> None:
    n = data.draw(st.integers(2, 40))
    remaining = data.draw(st.integers(0, n - 1))
    k = 0 if remaining == 0 else data.draw(st.integers(1, remaining))
    game = FibonacciNim(n, misere=misere)
    assert grundy(game, (remaining, k)) == brute_fib(remaining, k)
    wins = brute_fib_misere(remaining, k) if misere else brute_fib(remaining, k) != 0
    assert outcome(game, (remaining, k)) == ("N" if wins else "P")


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(st.text("01", min_size=1, max_size=12), min_size=1, max_size=3),
    misere=st.booleans(),
)
def test_kayles_matches_brute_force(rows: list[str], misere: bool) -> None:
    game = Kayles([len(r) for r in rows], misere=misere)
    runs = [len(run) for row in rows for run in row.split("0") if run]
    state = tuple(rows)
    assert grundy(game, state) == reduce(xor, (brute_kayles_run(n) for n in runs), 0)
    wins = (
        brute_kayles_misere(tuple(sorted(runs)))
        if misere
        else reduce(xor, (brute_kayles_run(n) for n in runs), 0) != 0
    )
    assert outcome(game, state) == ("N" if wins else "P")


@st.composite
def chomp_shapes(draw: st.DrawFn) -> tuple[int, int, tuple[int, ...]]:
    rows, cols = draw(st.integers(1, 5)), draw(st.integers(1, 6))
    lengths = sorted(
        draw(st.lists(st.integers(0, cols), min_size=rows, max_size=rows)), reverse=True
    )
    lengths[0] = max(lengths[0], 1)
    return rows, max(cols, 2), tuple(lengths)


@settings(max_examples=150, deadline=None)
@given(case=chomp_shapes(), misere=st.booleans())
def test_chomp_matches_brute_force(case: tuple[int, int, tuple[int, ...]], misere: bool) -> None:
    rows, cols, shape = case
    game = Chomp(rows, cols, misere=misere)
    assert grundy(game, shape) == brute_chomp_grundy(shape)
    assert outcome(game, shape) == ("N" if brute_chomp(shape, misere) else "P")


@settings(max_examples=150, deadline=None)
@given(h=st.integers(1, 14), w=st.integers(2, 14), data=st.data(), misere=st.booleans())
def test_corner_queen_matches_brute_force(
    h: int, w: int, data: st.DataObject, misere: bool
) -> None:
    game = CornerQueen(h, w, start=(0, w - 1), misere=misere)
    r, c = data.draw(st.integers(0, h - 1)), data.draw(st.integers(0, w - 1))
    x, y = c, h - 1 - r
    assert grundy(game, (r, c)) == brute_wythoff(x, y)
    wins = brute_wythoff_misere(x, y) if misere else brute_wythoff(x, y) != 0
    assert outcome(game, (r, c)) == ("N" if wins else "P")


@pytest.mark.parametrize("misere", [False, True])
def test_every_small_chomp_shape(misere: bool) -> None:
    """Exhaustive: every shape inside a 4x5 box."""
    game = Chomp(4, 5, misere=misere)
    for lengths in product(range(6), repeat=4):
        if lengths[0] == 0 or any(a < b for a, b in pairwise(lengths)):
            continue
        assert outcome(game, lengths) == ("N" if brute_chomp(lengths, misere) else "P"), lengths
        bites = [(r, c) for r, n in enumerate(lengths) for c in range(n) if (r, c) != (0, 0)]
        child = [lengths[:r] + tuple(min(x, c) for x in lengths[r:]) for r, c in bites]
        lost = [b for b, shape in zip(bites, child, strict=True) if not brute_chomp(shape, misere)]
        assert winning_moves(game, lengths) == lost, lengths


# --------------------------------------------------------------- known results


def test_bouton_nim_sum_and_misere_rule() -> None:
    """Bouton (1901): P iff the Nim-sum is 0; misère: the same unless all heaps <= 1,
    where P iff the number of 1-heaps is odd."""
    for heaps in product(range(5), repeat=3):
        normal = Nim([4, 4, 4], max_take=None)
        misere = Nim([4, 4, 4], max_take=None, misere=True)
        nim_sum = heaps[0] ^ heaps[1] ^ heaps[2]
        assert outcome(normal, heaps) == ("P" if nim_sum == 0 else "N")
        expected_p = sum(heaps) % 2 == 1 if max(heaps) <= 1 else nim_sum == 0
        assert outcome(misere, heaps) == ("P" if expected_p else "N"), heaps


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_single_heap_modular_rule(k: int) -> None:
    normal, misere = Nim([60], max_take=k), Nim([60], max_take=k, misere=True)
    for n in range(61):
        assert grundy(normal, (n,)) == n % (k + 1)
        assert outcome(misere, (n,)) == ("P" if n % (k + 1) == 1 else "N")


def test_fibonacci_losing_piles_and_zeckendorf_rule() -> None:
    """Whinihan (1963): the first player loses iff n is a Fibonacci number; (n, k) is an
    N-position iff the smallest Zeckendorf part of n is at most k, and taking it wins."""
    n_max = 120
    game = FibonacciNim(n_max)
    fibs = set(fibonacci_numbers(n_max))
    for n in range(2, n_max):
        start = FibonacciNim(n)
        assert (outcome(start, start.initial_state()) == "P") == (n in fibs), n
        part = smallest_zeckendorf_part(n)
        for k in range(1, n + 1):
            assert outcome(game, (n, k)) == ("N" if part <= k else "P"), (n, k)
            if part <= k:
                assert part in winning_moves(game, (n, k))


def test_wythoff_beatty_pairs() -> None:
    """Wythoff (1907): P-positions are (⌊kφ⌋, ⌊kφ²⌋) and mirrors."""
    phi = (1 + math.sqrt(5)) / 2
    size = 200
    pairs = {(math.floor(k * phi), math.floor(k * phi * phi)) for k in range(size)}
    pairs |= {(b, a) for a, b in pairs}
    game = CornerQueen(size, size, start=(0, size - 1))
    for x in range(size):
        for y in range(size):
            state = (size - 1 - y, x)
            assert (outcome(game, state) == "P") == ((x, y) in pairs), (x, y)


def test_kayles_sequence_and_period_12_after_70() -> None:
    """Guy & Smith (1956): Kayles values are periodic with period 12 from n = 71 on,
    and n = 70 is the last exception."""
    n = 400
    game = Kayles([n])
    values = [grundy(game, ("1" * m + "0" * (n - m),)) for m in range(n + 1)]
    assert values[:90] == [brute_kayles_run(m) for m in range(90)]
    assert all(values[m] == values[m + 12] for m in range(71, n - 11))
    assert values[70] != values[82]


@pytest.mark.parametrize(
    "rows",
    [
        ("1" * 20,),
        ("11011101111",),
        ("1101", "0111011"),  # several rows
        ("1" * 9 + "0" + "1" * 4 + "00" + "1" * 2,),
        ("1" * 255 + "0" + "1" * 6,),  # the last run length of the direct table
        ("1" * 280,),  # a run past it: values read through the period
        ("1" * 260 + "0" + "1" * 3 + "0" + "1" * 17,),
    ],
)
def test_kayles_winning_moves_match_brute_force(rows: tuple[str, ...]) -> None:
    """Every move, pin by pin, whose child has brute-force XOR 0, in action-id order."""
    game = Kayles([len(r) for r in rows])

    def value(state: tuple[str, ...]) -> int:
        runs = [len(run) for row in state for run in row.split("0") if run]
        return reduce(xor, (brute_kayles_run(n) for n in runs), 0)

    expected = []
    for r, row in enumerate(rows):
        for i in range(len(row)):
            for take in (1, 2):
                if row[i : i + take] == "1" * take:
                    child = (*rows[:r], row[:i] + "0" * take + row[i + take :], *rows[r + 1 :])
                    if value(child) == 0:
                        expected.append((r, i, take))
    assert winning_moves(game, rows) == expected
    assert (expected == []) == (value(rows) == 0)


@pytest.mark.parametrize("misere", [False, True])
def test_chomp_shapes_answered_from_a_larger_held_table_match_the_reference(misere) -> None:
    """After `prepare` builds the whole board's table, every shape is looked up in it
    (not in a table of its own extent): answers against the plain-Python reference."""
    from metanim.solver import ReferenceSolver, solver_for

    game = Chomp(6, 7, misere=misere)
    solver = solver_for(game)
    solver.prepare()
    reference = ReferenceSolver(game)
    rng = np.random.default_rng(0)
    for _ in range(300):
        lengths = sorted(rng.integers(0, 8, size=6).tolist(), reverse=True)
        lengths[0] = max(lengths[0], 1)
        state = game.validate_state(tuple(lengths))
        assert solver.winning_moves(state) == reference.winning_moves(state), state
        assert solver.outcome(state) == reference.outcome(state)
        if not misere:
            assert solver.grundy(state) == reference.grundy(state)


def test_two_row_chomp_p_positions() -> None:
    """Two-row Chomp: the P-positions are exactly the shapes (a, a-1)."""
    game = Chomp(2, 12)
    for a in range(1, 13):
        for b in range(0, a + 1):
            assert (outcome(game, (a, b)) == "P") == (b == a - 1), (a, b)


@pytest.mark.parametrize("n", range(2, 9))
def test_square_chomp_winning_bite_is_1_1(n: int) -> None:
    """On a square board, biting (1, 1) leaves a symmetric L that the first player mirrors."""
    game = Chomp(n, n)
    assert winning_moves(game, game.initial_state()) == [(1, 1)]


def test_late_game_chomp_on_a_19x19_board_is_solved_on_its_extent() -> None:
    game = Chomp(19, 19)
    state = (19, 18) + (0,) * 17  # two rows in use: a 2x19 extent, not 19x19
    assert outcome(game, state) == "P"
    assert winning_moves(game, (19, 17) + (0,) * 17) == [(0, 18)]


# ------------------------------------------------------------- queries, errors


def test_optimal_move_is_seeded_and_winning() -> None:
    game = Nim([5, 6, 7], max_take=None)
    state = (5, 6, 7)
    moves = {optimal_move(game, state, np.random.default_rng(s)) for s in range(40)}
    assert moves == set(winning_moves(game, state))
    assert optimal_move(game, state, 3) == optimal_move(game, state, 3)


def test_p_position_has_no_winning_move_but_a_legal_reply() -> None:
    game = FibonacciNim(21)
    state = game.initial_state()
    assert winning_moves(game, state) == []
    assert optimal_move(game, state, 0) in game.legal_moves(state)


@pytest.mark.parametrize(
    ("game", "state"),
    [
        (Nim([5], max_take=3), (6,)),
        (FibonacciNim(10), (5, 6)),
        (Kayles([4]), ("1121",)),
        (Chomp(3, 3), (1, 2, 0)),
        (Chomp(3, 3), (0, 0, 0)),
        (CornerQueen(4, 4, start=(0, 3)), (4, 0)),
    ],
)
def test_invalid_states_raise_clear_errors(game, state) -> None:
    with pytest.raises(InvalidStateError):
        outcome(game, state)


def test_oversized_table_names_the_limit() -> None:
    game = Chomp(19, 19)
    with pytest.raises(SizeLimitError, match="limit"):
        outcome(game, game.initial_state())


def test_misere_kayles_is_bounded_by_work_and_the_refusal_names_it() -> None:
    # Issue 24 item 7: the bound is positions x moves scanned, not pins alone. The work
    # named in the refusal is counted here apart: every partition of at most n pins
    # (sympy's partition function) times n moves.
    from sympy.functions.combinatorial.numbers import partition

    def work(n: int) -> int:
        return sum(int(partition(s)) for s in range(n + 1)) * n

    assert work(72) > KAYLES_MISERE_WORK >= work(KAYLES_MISERE_LIMIT)
    assert work(KAYLES_MISERE_LIMIT + 1) > KAYLES_MISERE_WORK
    for pins in (72, 80):
        game = Kayles([pins], misere=True)
        with pytest.raises(SizeLimitError, match="KAYLES_MISERE_WORK") as err:
            outcome(game, game.initial_state())
        assert f"costing {work(pins):,} (positions x moves scanned)" in str(err.value)
    # Two runs of 30 need pins + runs - 1 = 61: within the bound, answered by the table.
    game = Kayles([61], misere=True)
    state = ("1" * 30 + "0" + "1" * 30,)
    assert method(game, state) == "table"
