"""The solver at every size: past every encoding boundary, beyond every table.

Oracles here are the proven closed forms written out again from the literature
(Bouton, Wythoff's Beatty pairs, two-row Chomp, Zeckendorf, Kayles' period 12)
and moves enumerated from the game's rules, never the solver's own shortcuts.
Each test also asserts WHICH path answered (`method`): table, closed form, or a
`SizeLimitError` naming the limit before anything is allocated.
"""

from __future__ import annotations

import json
import math
from functools import cache, reduce
from operator import xor

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
    make_game,
)
from metanim.solver import (
    NIM_TABLE_WORK,
    describe_solution,
    grundy,
    method,
    outcome,
    winning_moves,
)
from metanim.solver import closed_forms as cf
from metanim.solver.reference import mex
from tests.oracles import smallest_zeckendorf_part

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)


def rule_winning_moves(game, state, child_lost) -> list:
    """Every legal move (from the game's rules) whose child the oracle says is lost."""
    return [m for m in game.legal_moves(state) if child_lost(game.child(state, m))]


# ----------------------------------------------------------------------------- Chomp


def two_row_p(shape: tuple[int, ...]) -> bool:
    """Two-row Chomp (normal play): (a, b) is P iff b = a - 1 (a 1-row shape has b = 0)."""
    a, b = shape[0], (shape[1] if len(shape) > 1 else 0)
    return b == a - 1


@pytest.mark.parametrize(
    ("state", "expected"), [((300, 295), [(0, 296)]), ((300, 300), [(1, 299)])]
)
def test_chomp_moves_past_column_255_are_decoded_right(state, expected) -> None:
    """Reproducer: moves were packed r*256+c; (300, 295) answered [1, 40], a losing bite."""
    game = Chomp(2, 300)
    assert method(game, state, "winning_moves") == "table"
    assert winning_moves(game, state) == expected
    assert expected == rule_winning_moves(game, state, two_row_p)


@SETTINGS
@given(a=st.integers(1, 300), data=st.data())
def test_two_row_chomp_table_matches_closed_form_past_256(a: int, data) -> None:
    b = data.draw(st.integers(0, a))
    game = Chomp(2, 300)
    state = (a, b)
    assert method(game, state) == "table"
    assert (outcome(game, state) == "P") == two_row_p(state)
    assert winning_moves(game, state) == rule_winning_moves(game, state, two_row_p)
    assert winning_moves(game, state) == cf.chomp_two_row_winning_moves(a, b)


@SETTINGS
@given(a=st.integers(20_000, 10**6), data=st.data())
def test_two_row_chomp_beyond_the_table_uses_the_closed_form(a: int, data) -> None:
    b = data.draw(st.sampled_from([0, a - 1, a, a - 2, a // 2]))
    game = Chomp(2, a)
    state = (a, b)
    assert method(game, state) == "closed-form"
    if b:  # a two-row Grundy table this long is out of reach (one row still fits)
        with pytest.raises(SizeLimitError, match=r"MAX_TABLE_STATES|CHOMP_TABLE_WORK"):
            method(game, state, "grundy")
    assert (outcome(game, state) == "P") == two_row_p(state)
    if a <= 30_000:  # the rule enumeration lists every bite
        assert winning_moves(game, state) == rule_winning_moves(game, state, two_row_p)


def test_three_row_chomp_beyond_the_table_names_the_limit() -> None:
    game = Chomp(3, 2000)
    with pytest.raises(SizeLimitError, match="two rows in normal play"):
        outcome(game, game.initial_state())
    with pytest.raises(SizeLimitError, match="MAX_TABLE_STATES"):
        outcome(Chomp(2, 20_000, misere=True), (20_000, 5))


@pytest.mark.parametrize("misere", [False, True])
def test_chomp_is_bounded_by_work_and_the_refusal_names_it(misere: bool, capsys) -> None:
    # Issue 24 item 7: a full 14x14 board took 36 s through the CLI on shared cores. The
    # bound is successor visits (shapes x cells), counted here apart: C(28, 14) x 196.
    from metanim.cli import main

    game = Chomp(14, 14, misere=misere)
    work = math.comb(28, 14) * 14 * 14
    with pytest.raises(SizeLimitError, match="CHOMP_TABLE_WORK") as err:
        method(game, game.initial_state())
    assert f"needs {work:,} successor visits" in str(err.value)
    assert main(["solve", "chomp", json.dumps([14] * 14), *(["--misere"] if misere else [])]) == 2
    assert "CHOMP_TABLE_WORK" in capsys.readouterr().err
    # 13x13 (C(26, 13) x 169 = 1.8e9 visits) is within the bound: a table, not computed here.
    assert method(Chomp(13, 13, misere=misere), (13,) * 13) == "table"


# ------------------------------------------------------------------------------- NIM


def bouton_lost(heaps: tuple[int, ...], k: int | None) -> bool:
    """Normal play: P iff the XOR of h mod (k+1) (h unbounded) is 0."""
    return reduce(xor, (h if k is None else h % (k + 1) for h in heaps), 0) == 0


def bouton_misere_lost(heaps: tuple[int, ...]) -> bool:
    """Bouton's misère rule (unbounded takes)."""
    if max(heaps) <= 1:
        return sum(heaps) % 2 == 1
    return reduce(xor, heaps, 0) == 0


SIZE_CLASSES = [(0, 9), (10, 5_000), (5_001, 10**6), (10**6, 10**15)]


@SETTINGS
@given(
    data=st.data(),
    k=st.one_of(st.none(), st.integers(1, 9)),
    cls=st.sampled_from(SIZE_CLASSES),
    count=st.integers(1, 4),
)
def test_nim_at_every_size(data, k: int | None, cls, count: int) -> None:
    heaps = tuple(data.draw(st.integers(*cls)) for _ in range(count))
    game = Nim([max(*heaps, 1)] * count, max_take=k)
    cap = max(*heaps, 1)
    work = cap * (cap + 1) // 2 if k is None else cap * min(k, cap)  # the documented rule
    expected = "table" if work <= NIM_TABLE_WORK else "closed-form"
    assert method(game, heaps, "winning_moves") == expected
    assert (outcome(game, heaps) == "P") == bouton_lost(heaps, k)
    moves = winning_moves(game, heaps)
    if k is not None or max(heaps) <= 20_000:
        assert moves == rule_winning_moves(game, heaps, lambda c: bouton_lost(c, k))
    else:  # too many legal moves to list: each move wins, and Bouton counts them
        assert all(bouton_lost(game.child(heaps, m), k) for m in moves)
        total = reduce(xor, heaps, 0)
        assert len(moves) == sum(1 for h in heaps if total and h ^ total < h)


def test_nim_reproducer_huge_heap_answers_by_the_closed_form() -> None:
    game = Nim([10_000_000, 12345, 3], max_take=None)
    state = (10_000_000, 12345, 3)
    assert method(game, state, "winning_moves") == "closed-form"
    assert grundy(game, state) == 10_000_000 ^ 12345 ^ 3
    assert winning_moves(game, state) == [(0, 10_000_000 - (12345 ^ 3))]


def test_nim_table_and_closed_form_agree_where_both_exist() -> None:
    for k in (0, 1, 3, 4, 7):
        game = Nim([400], max_take=k or None)
        assert method(game, (400,), "grundy") == "table"
        for h in range(401):
            assert grundy(game, (h,)) == cf.nim_heap_grundy(h, k)
        misere = Nim([400], max_take=k or None, misere=True)
        for h in range(401):
            assert (outcome(misere, (h,)) == "P") == cf.nim_misere_lost((h,), k)


@SETTINGS
@given(heaps=st.lists(st.integers(0, 3000), min_size=1, max_size=4))
def test_misere_nim_unbounded_by_bouton_rule(heaps: list[int]) -> None:
    state = tuple(heaps)
    game = Nim([max(*heaps, 1)] * len(heaps), max_take=None, misere=True)
    if sum(1 for h in heaps if h) > 1:
        assert method(game, state) == "closed-form"
    if not any(heaps):
        assert outcome(game, state) == "N"  # no move: the opponent took the last item
        return
    assert (outcome(game, state) == "P") == bouton_misere_lost(state)
    lost = lambda c: any(c) and bouton_misere_lost(c)  # noqa: E731 - an all-zero child is won
    assert winning_moves(game, state) == rule_winning_moves(game, state, lost)


@SETTINGS
@given(h=st.integers(0, 10**12), k=st.integers(1, 9))
def test_misere_single_heap_with_max_take_at_any_size(h: int, k: int) -> None:
    game = Nim([max(h, 1)], max_take=k, misere=True)
    assert method(game, (h,)) == ("table" if max(h, 1) * k <= 20_000_000 else "closed-form")
    lost = lambda c: c[0] > 0 and c[0] % (k + 1) == 1  # noqa: E731
    if h:
        assert (outcome(game, (h,)) == "P") == lost((h,))
        assert winning_moves(game, (h,)) == rule_winning_moves(game, (h,), lost)


class CountingNim(Nim):
    """NIM that counts the moves any caller scans through its rules (listed or applied)."""

    scanned = 0

    def legal_moves(self, state):
        moves = super().legal_moves(state)
        CountingNim.scanned += len(moves)
        return moves

    def child(self, state, move):
        CountingNim.scanned += 1
        return super().child(state, move)

    def take_limit(self, heap: int) -> int:
        CountingNim.scanned += 1
        return super().take_limit(heap)


def residue_misere_lost(heaps: tuple[int, ...], k: int) -> bool:
    """Bouton's misère rule on the residues h mod (k+1), written out again."""
    residues = [h % (k + 1) for h in heaps]
    nim_sum = reduce(xor, residues, 0)
    return nim_sum == 1 if max(residues) <= 1 else nim_sum == 0


@pytest.mark.parametrize(
    ("heaps", "k"),
    [((499, 499), 400), ((300, 300), 250), ((300, 300, 300), 3), ((10_000_000, 12345, 3), 3),
     ((10**30, 7, 5), 6)],
)  # fmt: skip
def test_misere_nim_several_heaps_with_a_max_take_scans_no_move(heaps, k) -> None:
    # Issue 24 item 2: misère NIM [499, 499] with max take 400 searched ~250,000 positions
    # x 800 moves. Bouton's misère rule on the residues answers it (proven in
    # `closed_forms.nim_misere_lost`, checked against a brute force in test_solver.py),
    # and the work done is counted: no move is listed, applied or bounded by the solver.
    game = CountingNim([max(heaps)] * len(heaps), max_take=k, misere=True)
    CountingNim.scanned = 0
    assert method(game, heaps) == "closed-form"
    lost = residue_misere_lost(heaps, k)
    assert (outcome(game, heaps) == "P") == lost
    moves = winning_moves(game, heaps)
    assert CountingNim.scanned == 0
    assert (moves == []) == lost
    for heap, take in moves:  # each named move leaves a lost position, by the rule
        child = (*heaps[:heap], heaps[heap] - take, *heaps[heap + 1 :])
        assert 1 <= take <= k and residue_misere_lost(child, k)


# --------------------------------------------------------------- Wythoff / Corner Queen


def beatty_pairs(limit: int) -> set[tuple[int, int]]:
    """Wythoff's P-positions (⌊kφ⌋, ⌊kφ²⌋) and mirrors, from the definition (floats are
    exact enough below 10^7)."""
    phi = (1 + math.sqrt(5)) / 2
    pairs = set()
    for k in range(limit):
        a, b = math.floor(k * phi), math.floor(k * phi * phi)
        pairs |= {(a, b), (b, a)}
    return pairs


def test_corner_queen_reproducer_long_thin_board_does_not_allocate() -> None:
    """2 x 1,000,000 crashed inside numba: Wythoff's bitsets grow with the long side."""
    game = CornerQueen(2, 1_000_000, start=(0, 999_999))
    state = (0, 999_999)
    assert method(game, state) == "closed-form"
    with pytest.raises(SizeLimitError, match="MAX_TABLE_BYTES"):
        grundy(game, state)
    moves = winning_moves(game, state)
    assert moves  # (0, 999999) is no Beatty pair, so a winning move exists
    for r, c in moves:
        x, y = sorted((c, game.height - 1 - r))
        phi = (1 + math.sqrt(5)) / 2
        assert x == math.floor((y - x) * phi)  # a Beatty pair (a_k, a_k + k)
    assert "not available" in describe_solution(
        "corner_queen", [0, 999_999], height=2, width=1_000_000
    )


def test_corner_queen_2x100000_moves_match_the_beatty_pairs() -> None:
    game = CornerQueen(2, 100_000, start=(0, 99_999))
    pairs = beatty_pairs(70_000)
    for state in [(0, 99_999), (0, 3), (1, 61_803), (0, 2)]:
        assert method(game, state) == "closed-form"
        x, y = game.wythoff(state)
        assert (outcome(game, state) == "P") == ((x, y) in pairs)
        expected = rule_winning_moves(game, state, lambda s: game.wythoff(s) in pairs)
        assert winning_moves(game, state) == expected


def test_wythoff_just_past_the_table_is_a_beatty_p_position() -> None:
    """(6150, 9951) is (a_k, b_k) for k = 3801: it raised SizeLimitError."""
    game = CornerQueen(9952, 6151, start=(0, 6150))
    assert method(game, (0, 6150)) == "closed-form"
    assert outcome(game, (0, 6150)) == "P"
    assert winning_moves(game, (0, 6150)) == []
    assert (6150, 9951) in beatty_pairs(3802)


@pytest.mark.parametrize("misere", [False, True])
def test_wythoff_closed_form_matches_the_table(misere: bool) -> None:
    size = 60
    game = CornerQueen(size, size, start=(0, size - 1), misere=misere)
    for row in range(size):
        for col in range(size):
            assert method(game, (row, col)) == "table"
            x, y = game.wythoff((row, col))
            assert (outcome(game, (row, col)) == "P") == cf.wythoff_is_p(x, y, misere=misere)
            targets = cf.wythoff_winning_targets(x, y, misere=misere)
            moves = sorted(((size - 1 - ty, tx) for tx, ty in targets), key=game.action_id)
            assert winning_moves(game, (row, col)) == moves


@SETTINGS
@given(x=st.integers(0, 10**18), y=st.integers(0, 10**18), misere=st.booleans())
def test_wythoff_partners_hold_at_any_size(x: int, y: int, misere: bool) -> None:
    """Exactly one P-position per coordinate, and P-positions are not one move apart."""
    p = cf.wythoff_partner(x, misere=misere)
    assert cf.wythoff_partner(p, misere=misere) == x
    if x >= 3 and not misere:
        k = abs(p - x)
        a = (k + math.isqrt(5 * k * k)) // 2  # ⌊kφ⌋
        assert min(x, p) == a
    for tx, ty in cf.wythoff_winning_targets(x, y, misere=misere):
        assert cf.wythoff_is_p(tx, ty, misere=misere)
        assert (tx, ty) != (x, y) and (tx == x or ty == y or x - tx == y - ty)


# -------------------------------------------------------------------------- Kayles


@cache
def kayles_value(n: int) -> int:
    """Kayles run values: brute force below 84, then period 12 from 71 (Guy & Smith)."""
    if n >= 84:
        return kayles_value(71 + (n - 71) % 12)
    options = {
        kayles_value(a) ^ kayles_value(n - take - a)
        for take in (1, 2)
        for a in range(0, n - take + 1)
    }
    return mex(options)


def kayles_lost(state: tuple[str, ...]) -> bool:
    runs = [len(r) for row in state for r in row.split("0") if r]
    return reduce(xor, (kayles_value(n) for n in runs), 0) == 0


@SETTINGS
@given(data=st.data(), length=st.sampled_from([20, 300, 3000]))
def test_kayles_long_rows_winning_moves(data, length: int) -> None:
    bits = data.draw(st.lists(st.booleans(), min_size=length, max_size=length))
    row = "".join("1" if b else "0" for b in bits)
    if length == 3000:
        row = "1" * 2500 + row[2500:]  # a run past the directly computed values
    game = Kayles([length])
    state = (row,)
    assert method(game, state) == ("closed-form" if length == 3000 else "table")
    assert (outcome(game, state) == "P") == kayles_lost(state)
    assert winning_moves(game, state) == rule_winning_moves(game, state, kayles_lost)


@pytest.mark.slow
def test_kayles_ten_million_pins() -> None:
    game = Kayles([10**7])
    state = ("1" * 10**7,)
    assert method(game, state, "winning_moves") == "closed-form"
    assert grundy(game, state) == kayles_value(10**7)
    moves = winning_moves(game, state)
    assert moves and all(m[2] in (1, 2) for m in moves)
    for _, pin, take in moves[:50] + moves[-50:]:
        left, right = pin, 10**7 - take - pin
        assert kayles_value(left) ^ kayles_value(right) == 0


# ---------------------------------------------------------------------- Fibonacci Nim


def test_fibonacci_beyond_the_table() -> None:
    game = FibonacciNim(20_000)
    for state in [(19_999, 300), (17_711, 500), (15_000, 1000), (12_000, 40)]:
        assert method(game, state) == "closed-form"
        z = smallest_zeckendorf_part(state[0])
        assert (outcome(game, state) == "N") == (z <= state[1])

        def lost(c: tuple[int, int]) -> bool:
            return c[0] == 0 or smallest_zeckendorf_part(c[0]) > c[1]

        assert winning_moves(game, state) == rule_winning_moves(game, state, lost)
    with pytest.raises(SizeLimitError, match="10,952 stones"):
        grundy(game, (19_999, 300))
    with pytest.raises(SizeLimitError, match="misère"):
        outcome(FibonacciNim(20_000, misere=True), (19_999, 300))
    assert method(FibonacciNim(10_952), (10_000, 3)) == "table"


@SETTINGS
@given(r=st.integers(10_953, 10**12), data=st.data())
def test_a_p_position_beyond_the_scan_limit_has_no_winning_move(r: int, data) -> None:
    # Issue 24 item 4: `outcome` said P and `winning_moves` raised SizeLimitError. A
    # P-position (smallest Zeckendorf part above the max take, Whinihan 1963) has none.
    z = smallest_zeckendorf_part(r)
    if z <= 200_001:
        r, z = 832_040, 832_040  # a Fibonacci number: its own Zeckendorf form
    k = data.draw(st.integers(200_001, min(z - 1, r)))
    game = FibonacciNim(r + 1)
    assert outcome(game, (r, k)) == "P"
    assert winning_moves(game, (r, k)) == []
    assert winning_moves(make_game("fibonacci", n=832_040), (832_040, 832_039)) == []
    # An N-position that allows more takes than the scan limit still names the limit.
    with pytest.raises(SizeLimitError, match="FIBONACCI_SCAN_LIMIT"):
        winning_moves(FibonacciNim(832_041), (832_041, 832_040))


# ------------------------------------------------------------------- strict inputs


@pytest.mark.parametrize(
    ("game", "state"),
    [
        (make_game("nim-31-k3"), (3.7,)),
        (make_game("nim-31-k3"), (True,)),
        (make_game("nim-31-k3"), ("3",)),
        (make_game("corner-queen"), "47"),
        (make_game("corner-queen"), (4.0, 7)),
        (make_game("chomp-5x5"), "55555"),
        (make_game("fibonacci-20"), (10, 2.5)),
        (make_game("kayles-20"), (11111,)),
    ],
)
def test_states_keep_their_types(game, state) -> None:
    with pytest.raises(InvalidStateError, match=r"whole numbers|pin strings"):
        grundy(game, state)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("nim", {"max_take": 2.5}),
        ("nim", {"heaps": [31.0]}),
        ("nim", {"heaps": True}),
        ("chomp", {"rows": "5"}),
        ("fibonacci", {"n": 20.5}),
        ("corner_queen", {"start": [4.5, 16]}),
        ("kayles", {"rows": [True]}),
        ("nim", {"misere": "yes"}),
    ],
)
def test_game_parameters_keep_their_types(name: str, params: dict) -> None:
    with pytest.raises(ValueError, match=r"whole number|true or false"):
        make_game(name, **params)


def test_moves_keep_their_types() -> None:
    game = Nim([5, 5], max_take=None)
    with pytest.raises(ValueError, match="whole numbers"):
        game.apply((5, 5), (0, 2.0))


def test_messages_say_what_was_given_and_what_is_allowed() -> None:
    with pytest.raises(InvalidStateError, match=r"at least 2 stones.*got 1"):
        describe_solution("fibonacci", 1)
    with pytest.raises(InvalidStateError, match=r"whole numbers >= 0, got -3"):
        describe_solution("nim", [-3])
    with pytest.raises(InvalidStateError, match="heaps hold 0 to 31"):
        grundy(make_game("nim-31-k3"), (32,))


def test_misere_wythoff_beyond_the_table_keeps_the_corner_exception() -> None:
    """Misère Wythoff: (0, 1), (1, 0), (2, 2) replace (0, 0) and (1, 2); far from the
    corner the P-positions are the normal Beatty pairs (checked against the table above)."""
    game = CornerQueen(3, 10**6, start=(0, 999_999), misere=True)
    h = game.height
    for (x, y), p in [((1, 0), True), ((0, 1), True), ((2, 2), True), ((2, 1), False)]:
        state = (h - 1 - y, x)
        assert method(game, state) == "closed-form"
        assert (outcome(game, state) == "P") == p, (x, y)
    # From (5, 2) the only misère winning move is to (2, 2); the rules enumerate every move.
    misere_p = {(0, 1), (1, 0), (2, 2), (3, 5), (5, 3)}
    state = (h - 1 - 2, 5)
    expected = rule_winning_moves(game, state, lambda s: game.wythoff(s) in misere_p)
    assert winning_moves(game, state) == expected == [(0, 2)]


@pytest.mark.parametrize(("rows", "cols"), [(2, 130), (3, 86), (1, 300)])
def test_wide_chomp_kernel_matches_the_generic_engine_past_256_cells(rows, cols) -> None:
    """Boxes over 256 cells pack value | lost << 31 into 32 bits (no byte field)."""
    import numpy as np

    from metanim.solver import kernels
    from metanim.solver._engine import solve_dag
    from metanim.solver._solvers import _chomp

    params = kernels.chomp_params(rows, cols)
    states = kernels.chomp_states(rows, cols)
    grundy, wins = _chomp(params, states)
    g2, w2 = solve_dag()(states, kernels.chomp_successors(), params, rows * cols)
    assert np.array_equal(grundy, g2) and np.array_equal(wins, w2)


def test_fibonacci_values_fit_their_int16_table() -> None:
    """The Fibonacci kernel stores values (at most the max take) as int16: the state
    limit must bind first."""
    from metanim.solver import fibonacci_table_limit

    assert fibonacci_table_limit() == 10_952 < 32_767


@pytest.mark.parametrize(
    "name", ["nim-31-k3", "fibonacci-20", "kayles-2rows", "chomp-5x5", "corner-queen"]
)
def test_counted_legal_moves_match_the_listed_ones(name: str) -> None:
    from metanim.solver.check import reachable_states

    game = make_game(name)
    for state in reachable_states(game, max_states=3000):
        assert game.num_legal_moves(state) == len(game.legal_moves(state)), state
