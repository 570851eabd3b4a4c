"""Rules, encodings and text round trips of the five games (via the library's check_game)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metanim.games import (
    PRESETS,
    Chomp,
    CornerQueen,
    FibonacciNim,
    IllegalMoveError,
    Kayles,
    Nim,
    UnparsableMoveError,
    game_from_prompt,
    make_game,
)
from metanim.solver import GameCheckError, check_game

SMALL_GAMES = [
    Nim([5], max_take=3),
    Nim([3, 4, 2], max_take=None),
    Nim([3, 3], max_take=2),
    FibonacciNim(13),
    Kayles([7]),
    Kayles([3, 4]),
    Chomp(3, 4),
    Chomp(4, 4),
    CornerQueen(6, 7, start=(0, 6)),
]


@pytest.mark.parametrize("misere", [False, True])
@pytest.mark.parametrize("game", SMALL_GAMES, ids=repr)
def test_check_game_on_every_reachable_state(game, misere: bool) -> None:
    game = type(game)(**{**game.params, "misere": misere})
    report = check_game(game, max_states=3_000)
    assert report.complete and report.states > 5
    assert report.terminal_states >= 1
    assert 0 < report.p_positions < report.states


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_pass_check_game_near_the_start(name: str) -> None:
    report = check_game(make_game(name), max_states=300)
    assert report.states == 300 or report.complete


def test_check_game_catches_a_broken_rule() -> None:
    class BrokenNim(Nim):
        def describe(self, state):  # drops one item from the text
            return super().describe((max(state[0] - 1, 0),))

    with pytest.raises(GameCheckError, match="parse_state"):
        check_game(BrokenNim([4], max_take=2), solver=False)


@pytest.mark.parametrize(
    ("game", "state", "answer", "error", "reason"),
    [
        (Nim([31], max_take=3), (31,), "five", UnparsableMoveError, "no number"),
        (Nim([31], max_take=3), (31,), "7", IllegalMoveError, "at most 3"),
        (Nim([31], max_take=3), (2,), "3", IllegalMoveError, "only 2"),
        (FibonacciNim(20), (10, 4), "5", IllegalMoveError, "at most 4"),
        (FibonacciNim(20), (10, 4), "[1, 2]", UnparsableMoveError, "1 integer"),
        (Kayles([6]), ("110111",), "2", IllegalMoveError, "already been knocked down"),
        (Kayles([6]), ("111111",), "[1, 3]", IllegalMoveError, "adjacent"),
        (Chomp(3, 3), (3, 3, 3), "[0, 0]", IllegalMoveError, "poison"),
        (Chomp(3, 3), (3, 1, 1), "[1, 2]", IllegalMoveError, "already been removed"),
        (Chomp(3, 3), (3, 3, 3), "row two", UnparsableMoveError, "position"),
        (CornerQueen(5, 5, start=(0, 4)), (0, 4), "[0, 4]", IllegalMoveError, "at least one"),
        (CornerQueen(5, 5, start=(0, 4)), (2, 2), "[1, 1]", IllegalMoveError, "never up"),
        (CornerQueen(5, 5, start=(0, 4)), (0, 4), "[2, 3]", IllegalMoveError, "diagonal"),
    ],
)
def test_parse_move_says_exactly_what_is_wrong(game, state, answer, error, reason) -> None:
    with pytest.raises(error, match=reason):
        game.parse_move(answer, state)


def test_parse_move_accepts_json_and_loose_forms() -> None:
    chomp = Chomp(3, 3)
    full = chomp.initial_state()
    assert chomp.parse_move("[1, 1]", full) == (1, 1)
    assert chomp.parse_move("(1,1)", full) == (1, 1)
    assert chomp.parse_move([2, 0], full) == (2, 0)
    kayles = Kayles([5])
    assert kayles.parse_move("[3, 2]", ("11111",)) == (0, 2, 2)
    assert kayles.parse_move(4, ("11111",)) == (0, 4, 1)
    assert kayles.parse_move('{"action": [1, 2]}', ("11111",)) == (0, 1, 2)
    with pytest.raises(UnparsableMoveError, match="'action' key"):
        kayles.parse_move('{"move": 1}', ("11111",))


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(PRESETS)), seed=st.integers(0, 10_000), misere=st.booleans())
def test_random_playouts_round_trip_through_prompts(name: str, seed: int, misere: bool) -> None:
    game = make_game(name, misere=misere)
    rng = np.random.default_rng(seed)
    state = game.initial_state()
    length = 0
    while not game.is_terminal(state):
        rebuilt, parsed = game_from_prompt(game.prompt(state))
        assert parsed == state and rebuilt.misere == misere
        moves = game.legal_moves(state)
        state = game.apply(state, moves[int(rng.integers(len(moves)))])
        length += 1
    assert length <= game.info.max_game_length


def _near_misses(game, state) -> list:
    """Moves around the legal ones: off by one in every coordinate, out of range, negative,
    as numpy ints and bools, of the wrong shape or type."""
    legal = game.legal_moves(state)
    out: list = list(legal)
    for move in legal[:6] + legal[-6:]:
        parts = move if isinstance(move, tuple) else (move,)
        for k in range(len(parts)):
            for d in (-2, -1, 1, 2, 40):
                bent = list(parts)
                bent[k] += d
                out.append(tuple(bent) if isinstance(move, tuple) else bent[0])
        out.append(tuple(np.int64(p) for p in parts) if isinstance(move, tuple) else np.int64(move))
        out.append(parts[:-1] if len(parts) > 1 else (move, move))
        out.append(tuple(float(p) for p in parts) if isinstance(move, tuple) else float(move))
    out += [0, -1, True, (0, 0), (-1, 1), (True, True), None, "1", (0, 1, 1), ()]
    return out


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(PRESETS)), seed=st.integers(0, 10_000), misere=st.booleans())
def test_is_legal_agrees_with_the_list_of_legal_moves(name: str, seed: int, misere: bool) -> None:
    # The fast check games override must say exactly what membership in legal_moves says,
    # for every move a parser or a policy could hand it, at every state of a playout.
    game = make_game(name, misere=misere)
    rng = np.random.default_rng(seed)
    state = game.initial_state()
    while not game.is_terminal(state):
        legal = game.legal_moves(state)
        for move in _near_misses(game, state):
            assert game.is_legal(state, move) == (move in legal), (state, move)
        state = game.child(state, legal[int(rng.integers(len(legal)))])


@pytest.mark.parametrize("misere", [False, True])
@pytest.mark.parametrize(
    "game",
    [*SMALL_GAMES, Nim([9, 1, 4], max_take=3), Nim([300], max_take=None), Nim([40, 9], max_take=7),
     FibonacciNim(60), Kayles([1, 12, 5]), Chomp(1, 5), Chomp(5, 1), Chomp(7, 4), CornerQueen(1, 6),
     CornerQueen(7, 1), CornerQueen(20, 20, start=(4, 16)), CornerQueen(5, 12, start=(0, 11))],
    ids=repr,
)  # fmt: skip
def test_closed_form_masks_and_kth_moves_equal_the_listed_moves(game, misere: bool) -> None:
    """`legal_mask` and `legal_move_at` (closed forms, nothing listed) against the list of
    legal moves, at every state of seeded random playouts."""
    game = type(game)(**{**game.params, "misere": misere})
    rng = np.random.default_rng(0)
    out = np.full(game.info.num_actions, 7, np.int8)  # stale values must be overwritten
    for _ in range(30):
        state = game.initial_state()
        while True:
            legal = game.legal_moves(state)
            expected = np.zeros(game.info.num_actions, np.int8)
            expected[[game.action_id(m) for m in legal]] = 1
            assert np.array_equal(game.legal_mask(state, out), expected), state
            assert np.array_equal(game.action_mask(state), expected)
            assert [game.legal_move_at(state, k) for k in range(len(legal))] == legal
            assert game.num_legal_moves(state) == len(legal)
            assert game.is_terminal(state) == (not legal)
            if not legal:
                break
            state = game.child(state, legal[int(rng.integers(len(legal)))])


@pytest.mark.parametrize("game", [Chomp(3, 5), Chomp(6, 2), Chomp(1, 4), Chomp(3, 300)], ids=repr)
def test_chomp_observation_and_mask_mark_each_remaining_square(game) -> None:
    # Square (r, c) remains exactly when c < the length of row r; every remaining square
    # but the poison (0, 0) is a legal bite. Boards wider than the row tables (256)
    # build their rows directly.
    rng = np.random.default_rng(2)
    cols = np.arange(game.cols)
    for _ in range(40):
        state = game.initial_state()
        for _ in range(6):
            grid = (cols[None, :] < np.array(state)[:, None]).astype(np.int64)
            obs = game.observation(state)
            assert obs.dtype == np.int64 and np.array_equal(obs, grid), state
            obs[0, 0] = 5  # a new, writable array
            mask = grid.reshape(-1).astype(np.int8)
            mask[0] = 0
            assert np.array_equal(game.action_mask(state), mask), state
            if game.is_terminal(state):
                break
            legal = game.legal_moves(state)
            state = game.child(state, legal[int(rng.integers(len(legal)))])


def test_prompt_has_the_paper_sections_in_order() -> None:
    text = make_game("fibonacci-20").prompt((20, 19), agent_name="Alice")
    heads = ["#Game Role: You are Alice", "#Objective:", "#Game Rule:", "#Current State:", "#Task:"]
    positions = [text.index(h) for h in heads]
    assert positions == sorted(positions)
    assert "a simple Fibonacci game" in text


def test_misere_changes_the_objective_text() -> None:
    for name in ("nim", "fibonacci", "kayles", "chomp", "corner_queen"):
        normal, misere = make_game(name), make_game(name, misere=True)
        assert normal.rules_text() != misere.rules_text()


def test_game_params_rebuild_the_game_and_are_json() -> None:
    for name in PRESETS:
        game = make_game(name, misere=True)
        assert type(game)(**json.loads(json.dumps(game.params))) == game


def _kayles_brute(rows: list[int], state: tuple[str, ...]) -> tuple[list, np.ndarray, np.ndarray]:
    """Legal moves, mask and observation of a Kayles state, pin by pin from the rules."""
    width = max(rows)
    moves, mask = [], np.zeros(len(rows) * width * 2, dtype=np.int8)
    obs = np.zeros((len(rows), width), dtype=np.int64)
    for r, row in enumerate(state):
        for i in range(len(row)):
            obs[r, i] = row[i] == "1"
            for w in (1, 2):
                if i + w <= len(row) and all(row[p] == "1" for p in range(i, i + w)):
                    moves.append((r, i, w))
                    mask[(r * width + i) * 2 + w - 1] = 1
    return moves, mask, obs


@pytest.mark.parametrize(
    "rows", [[1], [2], [3], [8], [3, 1, 4], [5, 6], [1, 9], [20], [64], [200, 3]]
)
def test_kayles_moves_mask_and_observation_match_a_pin_by_pin_brute_force(rows) -> None:
    # Every state where there are at most 2**12 of them, else seeded random states with
    # each pin standing with probability 1/4, 1/2 or 3/4 (short and long runs alike).
    game = Kayles(rows)
    total = sum(rows)
    rng = np.random.default_rng(total)
    if total <= 12:
        bits = [format(k, f"0{total}b") for k in range(2**total)]
    else:
        bits = [
            "".join("1" if x < p else "0" for x in rng.random(total))
            for p in (0.25, 0.5, 0.75)
            for _ in range(100)
        ]
        bits += ["1" * total, "0" * total]
    for flat in bits:
        cut = np.cumsum([0, *rows])
        state = tuple(flat[a:b] for a, b in itertools.pairwise(cut))
        moves, mask, obs = _kayles_brute(rows, state)
        assert game.legal_moves(state) == moves
        assert np.array_equal(game.action_mask(state), mask)
        got = game.observation(state)
        assert got.dtype == np.int64 and np.array_equal(got, obs)
        assert game.num_legal_moves(state) == len(moves)


class _MyInt(int):
    pass


@pytest.mark.parametrize(
    ("value", "whole"),
    [
        (3, True), (-2, True), (2**70, True), (_MyInt(4), True), (np.int64(5), True),
        (np.uint8(1), True), (True, False), (np.bool_(True), False), (3.0, False),
        (np.float64(2), False), ("3", False), (None, False), ((3,), False),
    ],
)  # fmt: skip
def test_is_int_accepts_whole_number_types_and_never_a_bool(value, whole: bool) -> None:
    from metanim.games._base import is_int

    assert is_int(value) is whole


@pytest.mark.parametrize(
    ("game", "move", "words"),
    [
        (Nim([5, 6, 7], max_take=None), (0, 4), "take 4 from heap 0"),
        (Nim([31], max_take=3), (0, 2), "take 2"),
        (make_game("fibonacci-20"), 5, "take 5"),
        (Kayles([7]), (0, 5, 1), "knock down pin 5"),
        (Kayles([5, 6]), (1, 2, 2), "knock down pins 2 and 3 of row 1"),
        (make_game("chomp-5x5"), (1, 2), "select row 1, column 2"),
        (make_game("corner-queen"), (4, 9), "move the queen to row 4, column 9"),
    ],
)
def test_moves_read_in_the_game_words(game, move, words: str) -> None:
    # Issue 28: `metanim solve` names moves as a person reads them (heap and take, pin
    # and span, row and column) from the game's own `move_words`, next to `move_text`.
    assert game.move_words(move) == words
    assert game.parse_move(game.move_text(move), game.initial_state()) == move
