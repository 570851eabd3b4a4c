"""The one reply parser (games layer): games, envs and agents read a model's reply alike."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import metanim  # noqa: F401  (registers the env ids)
from metanim.agents import GameTask, parse_reply
from metanim.envs import ImpartialGameEnv
from metanim.games import (
    PRESETS,
    IllegalMoveError,
    Kayles,
    MoveError,
    Nim,
    TruncatedReplyError,
    UnparsableMoveError,
    make_game,
)
from metanim.games.reply import (
    STAGE_CHAIN,
    STAGES,
    Found,
    Reply,
    ReplyParser,
    extract_action,
)


def prose_reply(action: Any) -> str:
    """An ordinary LLM reply: prose, then the fenced JSON block the Output Format asks for."""
    body = json.dumps({"reasoning": "Leave a losing position.", "action": action})
    return f"Let me look at the position first.\nI think this is best.\n```json\n{body}\n```\nDone."


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_legal_move_is_read_from_an_ordinary_reply(preset: str) -> None:
    game = make_game(preset)
    rng = np.random.default_rng(0)
    state = game.initial_state()
    for _ in range(3):  # the start and two random positions after it
        for move in game.legal_moves(state):
            # The JSON value a model writes: the canonical text as JSON (3 or [0, 3]).
            assert game.parse_move(prose_reply(json.loads(game.move_text(move))), state) == move
        moves = game.legal_moves(state)
        nxt = game.apply(state, moves[int(rng.integers(len(moves)))])
        if game.is_terminal(nxt):
            break
        state = nxt


# issue #9's strict-stage rule: text counts only when it *is* a number.
STRICT_CASES = [
    (Nim([3, 4, 5], max_take=None), (3, 4, 5), "take 2 from heap 1"),
    (Kayles([6]), ("111111",), "pin 3 (the 4th pin)"),
    (Nim([31]), (31,), "I take 2 items"),
]


@pytest.mark.parametrize(("game", "state", "text"), STRICT_CASES)
def test_free_text_in_the_action_is_never_read_as_numbers(game, state, text) -> None:
    reply = prose_reply(text)
    with pytest.raises(UnparsableMoveError, match="text"):
        game.parse_move(reply, state)
    with pytest.raises(UnparsableMoveError):
        game.parse_move({"action": text}, state)
    parsed = parse_reply(GameTask(game, state), reply)
    assert (parsed.stage, parsed.error, parsed.answer) == ("strict", "unparsable", None)
    # A number written as text is still a number.
    numeric = "[1, 2]" if game.name == "nim" and len(state) > 1 else "2"
    assert game.parse_move(prose_reply(numeric), state)


def test_heap_text_would_have_been_a_legal_move() -> None:
    # The case the rule exists for: reading the digits of "take 2 from heap 1" gives
    # [2, 1], a legal move here, so a loose reader plays the wrong heap silently.
    game, state = Nim([3, 4, 5], max_take=None), (3, 4, 5)
    assert (2, 1) in game.legal_moves(state)
    assert (0, 3, 2) in Kayles([6]).legal_moves(("111111",))  # "pin 3 ... 4th" as [3, 4]


REPLIES = [
    prose_reply(2),
    prose_reply(9),
    prose_reply("two"),
    'so {"action": 1} it is',
    "action: 3",
    "  2 ",
    "[0, 1]",
    "I would take a few.",
    '```json\n{"reasoning": "r"}\n```',
    '{"move": 1}',
]


@pytest.mark.parametrize("text", REPLIES)
def test_game_and_agents_give_the_same_answer_or_error(text: str) -> None:
    game, state = Nim([31]), (31,)
    parsed = parse_reply(GameTask(game, state), text)
    try:
        move = game.parse_move(text, state)
    except MoveError as err:
        assert (parsed.ok, type(err).kind) == (False, parsed.error)
        if parsed.stage is not None:  # a value was found: the same reason
            assert err.reason == parsed.reason
    else:
        assert parsed.answer == move


def test_env_step_plays_an_ordinary_reply_and_names_errors() -> None:
    env = ImpartialGameEnv("nim", heaps=[10], max_take=3, opponent="random", illegal="penalize")
    env.reset(seed=0, options={"state": [10]})
    info = env.step(prose_reply(2))[4]
    assert info["agent_move"] == "2" and not info["illegal_action"]
    info = env.step(prose_reply("take two"))[4]
    assert (info["illegal_action"], info["illegal_kind"]) == (True, "unparsable")
    info = env.step(prose_reply(7))[4]
    assert (info["illegal_kind"], "at most 3" in info["error"]) == ("illegal", True)


def test_a_truncated_reply_is_its_own_status() -> None:
    game, state = Nim([31]), (31,)
    cut = 'Thinking... {"action": 2} and then I would also consider'
    assert extract_action(cut) == (2, "json_object")  # complete replies read loosely
    with pytest.raises(TruncatedReplyError):
        game.parse_move(cut, state, finish_reason="length")
    parsed = parse_reply(GameTask(game, state), cut, finish_reason="length")
    assert (parsed.error, parsed.answer) == ("truncated", None)
    # A complete strict block before the cut still counts.
    assert game.parse_move(prose_reply(2) + " and more", state, finish_reason="length") == (0, 2)
    with pytest.raises(IllegalMoveError):
        game.parse_move(prose_reply(5), state, finish_reason="length")


# Numbers JSON can write but no move is: infinities, NaN, past Python's int(str) digit
# limit, and exponents in the text stages (where "1e2" once read as 1).
ODD_NUMBERS = [
    '{"action": 1e400}',
    '{"action": -1e400}',
    '{"action": NaN}',
    '{"action": Infinity}',
    "1e400",
    "[1e400, 2]",
    '{"action": [NaN, 1]}',
    '{"action": ' + "9" * 5000 + "}",
    "9" * 5000,
    "action: " + "9" * 5000,
    "action: 1e2",
    "action: 3e400",
    "action: 2e0",
    "action: 1.5e2",
    "action: 2.0e1",
    "action: 3rd",
]


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("text", ODD_NUMBERS, ids=range(len(ODD_NUMBERS)))
def test_odd_numbers_are_unparsable_or_illegal_never_a_crash(preset: str, text: str) -> None:
    game = make_game(preset)
    state = game.initial_state()
    with pytest.raises(MoveError):  # the model's mistake, counted; never OverflowError
        game.parse_move(text, state)
    env = ImpartialGameEnv(PRESETS[preset][0], preset=preset)
    env.reset(seed=0)
    *_, info = env.step(text)
    assert info["illegal_action"] and info["error"]


def test_an_exponent_in_a_key_is_never_its_leading_digits() -> None:
    game = make_game("nim-31-k3")
    state = game.initial_state()
    for text in ("action: 1e2", "action: 3e400", "action: 2E1", "action: 1.5e2", "action: 3rd"):
        with pytest.raises(UnparsableMoveError):
            game.parse_move(text, state)
    assert game.parse_move("action: 2.", state) == (0, 2)  # a sentence's full stop is fine
    # The JSON stages read an exponent as the number it is: 100 items, too many here.
    with pytest.raises(IllegalMoveError, match="not 100"):
        game.parse_move('{"action": 1e2}', state)


# Issue 24 item 6: one number rule for every stage. A move number is an ASCII decimal
# integer; only the JSON stages read a JSON number with an integral value (2.0).
BROKEN_NUMBERS = [
    "1e2",
    "2.0",
    "３",
    "1/2",
    "[0, 2.0]",
    "action: 2.0",
    "action: ３",
    "action: 1/2",
    "action: 1e2",
    '{"action": "1e2"}',
    '{"action": "２"}',
    prose_reply("2.0"),
    prose_reply("３"),
]


@pytest.mark.parametrize("text", BROKEN_NUMBERS)
def test_a_move_number_is_an_ascii_integer_in_every_stage(text: str) -> None:
    game, state = Nim([31], max_take=3), (31,)
    with pytest.raises(UnparsableMoveError, match=r"ASCII digits \(0-9\)"):
        game.parse_move(text, state)
    parsed = parse_reply(GameTask(game, state), text)
    assert (parsed.error, parsed.answer) == ("unparsable", None)
    assert "ASCII digits (0-9)" in (parsed.reason or "")


def test_an_integral_json_number_counts_only_inside_the_json_stages() -> None:
    game, state = Nim([31], max_take=3), (31,)
    for text in ('{"action": 2.0}', prose_reply(2.0), 'I pick {"action": 2.0}.'):
        assert game.parse_move(text, state) == (0, 2)
        assert parse_reply(GameTask(game, state), text).answer == (0, 2)
    with pytest.raises(UnparsableMoveError, match=r"as integers, got 2\.5"):
        game.parse_move('{"action": 2.5}', state)


@pytest.mark.parametrize("text", ["[0, 3, 4]", "0 3", '"[1, 0]"', "[0, 3, 4].", "1e2", "１"])
def test_the_game_and_the_agents_read_a_bare_reply_alike(text: str) -> None:
    # Game.parse_move once read the whole text as JSON when no stage matched, so it
    # accepted replies the agents called unparsable ("[0, 3, 4]", and "1e2" as 100).
    game, state = make_game("kayles-2rows"), ("11111", "111111")
    parsed = parse_reply(GameTask(game, state), text)
    try:
        move = game.parse_move(text, state)
    except MoveError as err:
        assert (parsed.error, parsed.reason) == (type(err).kind, err.reason)
    else:
        assert (parsed.stage, parsed.answer) == ("bare", move)


class FinalAnswerStage:
    """A stage written for the test: "Final answer: N" (game_arena's action tag)."""

    name = "final_answer"
    reads_truncated = False

    def extract(self, reply: Reply) -> Found | None:
        marker = "Final answer:"
        if marker not in reply.text:
            return None
        return Found(reply.text.rsplit(marker, 1)[1].strip())


def test_a_stage_is_added_by_listing_it() -> None:
    # Issue 25 item 7: the stages are a chain of one small protocol, run in order.
    assert tuple(stage.name for stage in STAGE_CHAIN) == STAGES
    assert STAGES == ("strict", "json_object", "key", "bare")
    parser = ReplyParser([*STAGE_CHAIN, FinalAnswerStage()])
    text = "Let me think. Taking two leaves a multiple of four. Final answer: 2"
    with pytest.raises(UnparsableMoveError):
        extract_action(text)
    assert parser.extract(text) == ("2", "final_answer")
    assert parser.extract('{"action": 3} Final answer: 2') == (3, "json_object")  # order wins
    with pytest.raises(TruncatedReplyError):
        parser.extract(text, finish_reason="length")
    # The number rule is the game's, whichever stage found the value.
    with pytest.raises(UnparsableMoveError, match="ASCII digits"):
        Nim([31], max_take=3).move_from_value(parser.extract("Final answer: 2.0")[0], (31,))
