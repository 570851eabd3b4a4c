"""The generated families (subtraction sets, octal codes) against brute force from the rules.

The brute force here is plain Python written from the rules as the prompts state them
(a heap loses s items, s in S; a block of k adjacent standing pins goes where digit d_k
allows), searched over whole positions: it uses neither the solver, nor the XOR of
Sprague–Grundy, nor the game classes' move lists.
"""

from __future__ import annotations

import itertools
from functools import cache

import pytest

from metanim.games import InvalidStateError, Octal, SizeLimitError, Subtraction, make_game
from metanim.solver import check_game, grundy, octal_grundy, outcome, winning_moves


def _mex(values: set[int]) -> int:
    m = 0
    while m in values:
        m += 1
    return m


# ---------------------------------------------------------------- subtraction, brute force
def _subtraction_brute(takes: tuple[int, ...]):
    @cache
    def children(heaps: tuple[int, ...]) -> list[tuple[int, ...]]:
        return [
            (*heaps[:i], h - s, *heaps[i + 1 :])
            for i, h in enumerate(heaps)
            for s in takes
            if s <= h
        ]

    @cache
    def value(heaps: tuple[int, ...]) -> int:  # Grundy value of the whole position
        return _mex({value(c) for c in children(heaps)})

    @cache
    def misere_wins(heaps: tuple[int, ...]) -> bool:  # no move: the mover has won
        kids = children(heaps)
        return not kids or any(not misere_wins(c) for c in kids)

    return value, misere_wins


def _all_sets(max_take: int) -> list[tuple[int, ...]]:
    pool = range(1, max_take + 1)
    return [s for r in range(1, max_take + 1) for s in itertools.combinations(pool, r)]


def _check_subtraction(takes: tuple[int, ...], single: int, pair: int) -> int:
    value, misere_wins = _subtraction_brute(takes)
    checked = 0
    for misere in (False, True):
        one = Subtraction([single], subtraction_set=list(takes), misere=misere)
        for n in range(single + 1):
            assert grundy(one, (n,)) == value((n,)), (takes, n)
            want = misere_wins((n,)) if misere else value((n,)) != 0
            assert (outcome(one, (n,)) == "N") == want, (takes, n, misere)
            checked += 1
        two = Subtraction([pair, pair], subtraction_set=list(takes), misere=misere)
        for a in range(pair + 1):
            for b in range(pair + 1):
                state = (a, b)
                assert grundy(two, state) == value(state), (takes, state)
                want = misere_wins(state) if misere else value(state) != 0
                assert (outcome(two, state) == "N") == want, (takes, state, misere)
                # A winning move leaves a position lost for the opponent, and every such
                # move is listed.
                lost = [
                    (i, s)
                    for i, h in enumerate(state)
                    for s in takes
                    if s <= h
                    and not (
                        misere_wins(two.child(state, (i, s)))
                        if misere
                        else value(two.child(state, (i, s)))
                    )
                ]
                assert winning_moves(two, state) == lost, (takes, state, misere)
                checked += 1
    return checked


def test_subtraction_sets_with_small_takes_match_brute_force() -> None:
    # Fast tier: every set with max take <= 3, heaps to 20, pairs to 6.
    assert sum(_check_subtraction(t, 20, 6) for t in _all_sets(3)) == 7 * 2 * (21 + 49)


@pytest.mark.slow
def test_every_subtraction_set_with_max_take_6_matches_brute_force() -> None:
    # 63 sets, normal and misère: one heap 0..30 and every pair of heaps up to 9.
    sets = _all_sets(6)
    assert len(sets) == 63
    assert sum(_check_subtraction(t, 30, 9) for t in sets) == 63 * 2 * (31 + 100)


# --------------------------------------------------------------------- octal, brute force
def _octal_codes(max_digits: int) -> list[str]:
    codes = []
    for t in range(1, max_digits + 1):
        for digits in itertools.product(range(8), repeat=t):
            if digits[-1]:
                codes.append("0." + "".join(map(str, digits)))
    return codes


def _pin_brute(code: str):
    """Grundy value and misère win of a tuple of pin rows, from the rules on pins."""
    digits = [0] + [int(c) for c in code[2:]]

    @cache
    def children(rows: tuple[str, ...]) -> list[tuple[str, ...]]:
        out = []
        for r, row in enumerate(rows):
            for i in range(len(row)):
                for w in range(1, len(digits)):
                    block = row[i : i + w]
                    if len(block) < w or "0" in block or not digits[w]:
                        continue
                    left = i > 0 and row[i - 1] == "1"
                    right = i + w < len(row) and row[i + w] == "1"
                    bit = 4 if left and right else 2 if left or right else 1
                    if digits[w] & bit:
                        out.append((*rows[:r], row[:i] + "0" * w + row[i + w :], *rows[r + 1 :]))
        return out

    @cache
    def value(rows: tuple[str, ...]) -> int:
        return _mex({value(c) for c in children(rows)})

    @cache
    def misere_wins(rows: tuple[str, ...]) -> bool:
        kids = children(rows)
        return not kids or any(not misere_wins(c) for c in kids)

    return value, misere_wins


def _check_octal(code: str, longest: int) -> int:
    value, misere_wins = _pin_brute(code)
    checked = 0
    for n in range(1, longest + 1):
        for misere in (False, True):
            game = Octal([n], code=code, misere=misere)
            # Every pin string of the row: a row with gaps is a sum of groups.
            for bits in itertools.product("01", repeat=n):
                state = ("".join(bits),)
                if not misere:
                    assert grundy(game, state) == value(state), (code, state)
                want = misere_wins(state) if misere else value(state) != 0
                assert (outcome(game, state) == "N") == want, (code, state, misere)
                checked += 1
    return checked


def test_octal_codes_of_two_digits_match_brute_force() -> None:
    # Fast tier: the 56 + 7 codes of one or two digits, every pin string up to 6 pins.
    codes = _octal_codes(2)
    assert len(codes) == 63
    per_code = 2 * sum(2**n for n in range(1, 7))
    assert sum(_check_octal(c, 6) for c in codes) == 63 * per_code


@pytest.mark.slow
def test_every_octal_code_of_three_digits_matches_brute_force() -> None:
    # 511 codes, normal and misère, every pin string of rows up to 8 pins.
    codes = _octal_codes(3)
    assert len(codes) == 511
    per_code = 2 * sum(2**n for n in range(1, 9))
    assert sum(_check_octal(c, 8) for c in codes) == 511 * per_code


@pytest.mark.parametrize("code", ["0.07", "0.137", "0.6", "0.51"])
def test_octal_sums_of_rows_match_brute_force_and_the_game_rules(code: str) -> None:
    value, misere_wins = _pin_brute(code)
    for misere in (False, True):
        game = Octal([4, 5], code=code, misere=misere)
        for a, b in itertools.product(
            itertools.product("01", repeat=4), itertools.product("01", repeat=5)
        ):
            state = ("".join(a), "".join(b))
            want = misere_wins(state) if misere else value(state) != 0
            assert (outcome(game, state) == "N") == want, (code, state, misere)
        # The game's move list against the solver, state by state (ReferenceSolver).
        assert check_game(game, max_states=2_000).complete


def test_dawsons_kayles_values_are_the_published_sequence() -> None:
    # OEIS A002187, typed from the published sequence (a(n), n = 0..52).
    published = [0, 0, 1, 1, 2, 0, 3, 1, 1, 0, 3, 3, 2, 2, 4, 0, 5, 2, 2, 3, 3, 0, 1, 1, 3, 0,
                 2, 1, 1, 0, 4, 5, 2, 7, 4, 0, 1, 1, 2, 0, 3, 1, 1, 0, 3, 3, 2, 2, 4, 4, 5, 5, 2]  # fmt: skip
    kayles_07, _ = _pin_brute("0.07")
    chess_137, _ = _pin_brute("0.137")
    # Offsets, from brute force on pins: a row of n pins in Dawson's Kayles (0.07) has the
    # value a(n); Dawson's chess (0.137) on n files is a row of n + 1 pins of Dawson's Kayles.
    brute_07 = [kayles_07(("1" * n,)) for n in range(15)]
    brute_137 = [chess_137(("1" * n,)) for n in range(14)]
    assert brute_07 == published[:15]
    assert brute_137 == published[1:15]
    assert [octal_grundy("0.07", n) for n in range(53)] == published
    assert [octal_grundy("0.137", n) for n in range(52)] == published[1:]
    game = Octal([52], code="0.07")
    assert [grundy(game, ("1" * n + "0" * (52 - n),)) for n in range(53)] == published


# ------------------------------------------------------------------ rules and refusals
def test_rules_are_data_and_part_of_the_identity() -> None:
    a = make_game("subtraction", heaps=[9], subtraction_set=[1, 3, 4])
    b = make_game("subtraction", heaps=[9], subtraction_set=[4, 3, 1])
    c = make_game("subtraction", heaps=[9], subtraction_set=[1, 2])
    assert a == b and hash(a) == hash(b) and a != c
    assert a.params == {"heaps": [9], "subtraction_set": [1, 3, 4], "misere": False}
    assert Octal(code="0.070").code == "0.07" and Octal(code="0.07") != Octal(code="0.77")
    for bad in ([], [0, 1], [1, 1], [65], "1,2"):
        with pytest.raises(ValueError):
            Subtraction(subtraction_set=bad)
    for bad in ("0.", "0.0", "0.8", "1.07", "07", 7, "0.123456701"):
        with pytest.raises(ValueError):
            Octal(code=bad)
    with pytest.raises(InvalidStateError):
        Subtraction([5]).validate_state((6,))


def test_misere_refuses_beyond_its_search_with_a_clear_error() -> None:
    big = Octal([60], code="0.07", misere=True)
    with pytest.raises(SizeLimitError, match="OCTAL_MISERE_POSITIONS"):
        outcome(big, big.initial_state())
    heaps = Subtraction([80, 80, 80], subtraction_set=[1, 2, 5], misere=True)
    with pytest.raises(SizeLimitError, match="OCTAL_MISERE_POSITIONS"):
        outcome(heaps, heaps.initial_state())
    # Normal play answers at any size through the certified period.
    long = Octal([100_000], code="0.07")
    assert grundy(long, long.initial_state()) == octal_grundy("0.07", 100_000)
