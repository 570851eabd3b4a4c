"""Whole games in inspect_ai (`metanim/<game>_game`): played through the `move` tool
against the simulated server and scripted models, every grade checked against a
brute force from the rules (no solver), and the log read back by inspect itself.

Optional extra `inspect`; CI installs it and sets `METANIM_REQUIRE`.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest

import metanim
from metanim.llm.sim import SimServer
from tests.conftest import need

need("inspect_ai")
from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402
from inspect_ai.tool import ToolCall  # noqa: E402

from metanim.integrations.inspect_ai import (  # noqa: E402
    GAME_GAME_TASKS,
    game_samples,
    metanim_game,
    nim_game,
)

ROOT = Path(metanim.__file__).resolve().parents[1]


# ------------------------------------------------------- brute force from the rules
@functools.cache
def mover_wins(heaps: tuple[int, ...], k: int, misere: bool) -> bool:
    """Whether the player to move wins NIM with takes of 1..k, by exhaustive search: with
    no move left, the mover wins under misère play (the other player moved last)."""
    moves = [(i, t) for i, h in enumerate(heaps) for t in range(1, min(h, k) + 1)]
    if not moves:
        return misere
    return any(not mover_wins(after(heaps, m), k, misere) for m in moves)


def after(heaps: tuple[int, ...], move: tuple[int, int]) -> tuple[int, ...]:
    i, take = move
    return (*heaps[:i], heaps[i] - take, *heaps[i + 1 :])


def take(text: str) -> tuple[int, int]:
    """A one-heap NIM move text ("3": take 3) as (heap, count)."""
    return (0, int(text))


def check_game(moves: list[dict[str, Any]], start: list[int], k: int, misere: bool) -> str:
    """Replay a game's recorded moves by the rules, check every grade, return the winner
    (a game left unfinished is forfeited by the model's rejected answers)."""
    heaps, last = tuple(start), None
    for entry in moves:
        if entry["player"] == "model":
            assert list(heaps) == entry["state"]
            n_position = mover_wins(heaps, k, misere)
            assert entry["outcome"] == ("N" if n_position else "P")
            if entry.get("error"):
                continue
            move = take(entry["move"])
            assert entry["winning"] == (
                n_position and not mover_wins(after(heaps, move), k, misere)
            )
        else:
            move = take(entry["move"])
        assert 1 <= move[1] <= min(heaps[0], k)
        heaps, last = after(heaps, move), entry["player"]
    if heaps != (0,):  # a forfeit: three rejected answers in a row
        assert all(m.get("error") for m in moves[-3:])
        return "opponent"
    # Normal play: the last mover wins; misère: the last mover loses.
    return "agent" if (last == "model") != misere else "opponent"


@pytest.fixture()
def openai_sim():
    """The plain simulated server (chat completions and the Responses API)."""
    with SimServer(seed=0) as server:
        yield server


def sim_model(server: SimServer, name: str) -> Any:
    """`openai/<name>` on `server`. inspect keeps a model per name and base URL: one
    read from OPENAI_BASE_URL would be another test's server, closed since."""
    return get_model(f"openai/{name}", base_url=server.base_url, api_key="sim")


def metrics(log) -> dict[str, float]:
    assert log.status == "success", log.error
    return {s.name: s.metrics["mean"].value for s in log.results.scores}


# ---------------------------------------------------------------------- fast
def test_every_game_has_a_whole_game_task() -> None:
    assert set(GAME_GAME_TASKS) == set(metanim.GAMES)


@pytest.mark.parametrize("misere", [False, True])
def test_starts_are_seeded_n_positions(misere: bool) -> None:
    game = metanim.make_game("nim", heaps=[9], max_take=3, misere=misere)
    samples = game_samples(game, 12, seed=5)
    starts = [tuple(s.metadata["state"]) for s in samples]
    assert all(mover_wins(s, 3, misere) for s in starts)
    assert len(set(starts)) > 1  # a random N-position per game, not one start
    assert starts == [tuple(s.metadata["state"]) for s in game_samples(game, 12, seed=5)]
    assert [s.metadata["seed"] for s in samples] == list(range(5, 17))


# -------------------------------------------------------------- simulated server
@pytest.mark.slow
def test_responses_api_forced_function_call_and_its_output_item(openai_sim: SimServer) -> None:
    """The Responses API's function calling, as the openai SDK reads it: a forced call
    comes back as a `function_call` item; its `function_call_output` is read back."""
    from openai import OpenAI

    from metanim.integrations.inspect_ai import position_text

    game = metanim.make_game("nim")
    client = OpenAI(base_url=openai_sim.base_url, api_key="sim")
    tool = {
        "type": "function",
        "name": "move",
        "parameters": {"type": "object", "properties": {"action": {"type": "integer"}}},
    }
    first = client.responses.create(
        model="sim-optimal",
        input=position_text(game, (10,)),
        tools=[tool],
        tool_choice={"type": "function", "name": "move"},
    )
    (call,) = first.output
    assert call.type == "function_call" and call.name == "move"
    assert json.loads(call.arguments)["action"] == 2  # 10 -> 8, a multiple of 4
    second = client.responses.create(
        model="sim-optimal",
        input=[
            {"role": "user", "content": position_text(game, (10,))},
            {"type": "function_call", "call_id": call.call_id, "name": "move",
             "arguments": call.arguments},
            {"type": "function_call_output", "call_id": call.call_id,
             "output": "Your opponent took 1.\n" + position_text(game, (7,))},
        ],
        tools=[tool],
        tool_choice={"type": "function", "name": "move"},
    )  # fmt: skip
    assert json.loads(second.output[0].arguments)["action"] == 3  # the position read last
    assert openai_sim.log[-1]["messages"][-1]["role"] == "tool"


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["normal", "misere"])
def test_optimal_model_wins_every_game_and_random_does_not(
    openai_sim: SimServer, variant: str, tmp_path: Path
) -> None:
    misere = variant == "misere"
    runs = {}
    for model in ("sim-optimal", "sim-random"):
        # Temperature 0: the simulator's draw is a function of the prompt alone.
        (log,) = inspect_eval(
            nim_game(variant=variant, games=8),
            model=sim_model(openai_sim, model),
            log_dir=str(tmp_path),
            display="none",
            temperature=0.0,
        )
        runs[model] = metrics(log)
        log = read_eval_log(log.location)  # what inspect's own reader sees
        assert len(log.samples) == 8
        for sample in log.samples:
            score = sample.scores["game_score"]
            moves = score.metadata["moves"]
            assert moves == sample.store["metanim_game:moves"]
            winner = check_game(moves, sample.metadata["state"], 3, misere)
            assert score.value["win"] == (winner == "agent")
            mine = [m for m in moves if m["player"] == "model"]
            n_turns = sum(m["outcome"] == "N" for m in mine)
            assert score.value["optimal_share"] == sum(m["winning"] for m in mine) / n_turns
            # The transcript shows each move with its grade (one info event per move).
            shown = [e.data for e in sample.events if e.event == "info"]
            assert shown == moves
            assert sum(m.role == "tool" for m in sample.messages) == len(mine)
    assert runs["sim-optimal"] == {"win": 1.0, "optimal_share": 1.0, "illegal": 0.0}
    assert runs["sim-random"]["win"] < 1.0 and runs["sim-random"]["optimal_share"] < 1.0
    assert runs["sim-random"]["illegal"] == 0.0


@pytest.mark.slow
def test_illegal_moves_are_refused_counted_and_retried(openai_sim: SimServer, tmp_path) -> None:
    (log,) = inspect_eval(
        metanim_game("nim", games=6, opponent="random"),
        model=sim_model(openai_sim, "sim-faulty:illegal=0.3"),
        log_dir=str(tmp_path),
        display="none",
    )
    found = metrics(log)
    rejected = 0
    for sample in read_eval_log(log.location).samples:
        moves = sample.scores["game_score"].metadata["moves"]
        winner = check_game(moves, sample.metadata["state"], 3, False)
        assert sample.scores["game_score"].value["win"] == (winner == "agent")
        refused = [m for m in sample.messages if m.role == "tool" and "unchanged" in m.text]
        assert len(refused) == sample.scores["game_score"].value["illegal"]
        rejected += len(refused)
    assert rejected > 0 and found["illegal"] == rejected / 6


def scripted(*outputs: ModelOutput) -> Any:
    for output in outputs:  # with usage, inspect never downloads a tokenizer to count
        output.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
    return get_model("mockllm/model", custom_outputs=list(outputs))


def call(arguments: dict[str, Any]) -> ModelOutput:
    return ModelOutput.for_tool_call("mockllm/model", "move", arguments)


@pytest.mark.slow
def test_scripted_model_forfeits_after_three_invalid_answers(tmp_path: Path) -> None:
    """An illegal take, a malformed argument and a reply without the call: three
    rejected answers in a row forfeit the game at its first (N-position) turn."""
    model = scripted(
        call({"action": 7}),
        call({"action": "three"}),
        ModelOutput.from_content("mockllm/model", "I take 2."),
    )
    (log,) = inspect_eval(nim_game(games=1), model=model, log_dir=str(tmp_path), display="none")
    assert metrics(log) == {"win": 0.0, "optimal_share": 0.0, "illegal": 3.0}
    moves = log.samples[0].scores["game_score"].metadata["moves"]
    assert [m["error"] for m in moves] == ["illegal", "unparsable", "no_call"]
    assert all(m["outcome"] == "N" and m["turn"] == 0 for m in moves)


@pytest.mark.slow
def test_one_move_per_reply(tmp_path: Path) -> None:
    """A reply with two calls plays the first; the second is told the turn is over and
    is not counted. Three replies without a call then forfeit at the second turn."""
    both = call({"action": 2})
    both.message.tool_calls.append(ToolCall(id="second", function="move", arguments={"action": 1}))
    (log,) = inspect_eval(
        nim_game(games=1, start=[10], opponent="random"),
        model=scripted(both, *(ModelOutput.from_content("mockllm/model", "1") for _ in "abc")),
        log_dir=str(tmp_path),
        display="none",
    )
    sample = log.samples[0]
    moves = sample.scores["game_score"].metadata["moves"]
    assert [(m["player"], m["move"]) for m in moves[:2]] == [("model", "2"), ("opponent", ANY)]
    assert moves[0]["winning"]  # 10 -> 8, a multiple of 4
    assert [m.get("error") for m in moves[2:]] == ["no_call"] * 3
    results = [m.text for m in sample.messages if m.role == "tool"]
    assert results[0].startswith("You played 2.") and "already moved" in results[1]
    assert metrics(log) == {"win": 0.0, "optimal_share": 0.5, "illegal": 3.0}


@pytest.mark.slow
def test_inspect_eval_command_finds_the_task_by_name(openai_sim: SimServer, tmp_path) -> None:
    done = subprocess.run(
        [
            *(sys.executable, "-m", "inspect_ai", "eval", "metanim/kayles_game"),
            *("--model", "openai/sim-optimal", "-T", "games=3", "-T", "variant=misere"),
            *("--log-dir", str(tmp_path), "--display", "none"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "OPENAI_BASE_URL": openai_sim.base_url, "OPENAI_API_KEY": "sim"},
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (path,) = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.eval.task_registry_name == "metanim/kayles_game" and len(log.samples) == 3
    assert log.eval.task_args_passed == {"games": 3, "variant": "misere"}
    assert metrics(log) == {"win": 1.0, "optimal_share": 1.0, "illegal": 0.0}


def test_family_tasks_take_their_presets_only() -> None:
    from metanim.integrations.inspect_ai import kayles_game

    misere = kayles_game(preset="kayles-2rows-misere", games=1)
    assert misere.metadata["params"] == {"rows": [5, 6], "misere": True}
    assert misere.name == "kayles-misere-game"
    with pytest.raises(ValueError, match="not a kayles preset"):
        kayles_game(preset="chomp-2x8")


@pytest.mark.slow
def test_a_game_stopped_by_a_message_limit_keeps_its_graded_moves(
    openai_sim: SimServer, tmp_path: Path
) -> None:
    (log,) = inspect_eval(
        nim_game(games=1, start=[31]),
        model=sim_model(openai_sim, "sim-optimal"),
        log_dir=str(tmp_path),
        display="none",
        message_limit=6,  # a few moves of a game that takes 16 calls
    )
    sample = read_eval_log(log.location).samples[0]
    assert sample.limit is not None and sample.limit.type == "message"
    score = sample.scores["game_score"]
    assert score.value["win"] == 0.0 and score.metadata["winner"] is None  # unfinished
    mine = [m for m in score.metadata["moves"] if m["player"] == "model"]
    assert 0 < len(mine) < 8 and all(m["winning"] for m in mine)
    assert mine[0]["state"] == [31]


@pytest.mark.slow
def test_whole_games_list_the_legal_moves_when_asked(tmp_path: Path) -> None:
    """With `list_moves` the first position and each position after a move end with
    the legal moves of that position (counted here from the state the move record holds)."""
    from metanim.games import LEGAL_MOVES_HEADING, make_game

    task = nim_game(games=1, start=[10], opponent="random", list_moves=True)
    assert task.metadata["game_prompt_version"].endswith("+listed-moves")
    (log,) = inspect_eval(
        task,
        model=scripted(
            call({"action": 2}), *(ModelOutput.from_content("mockllm/model", "1") for _ in "abc")
        ),
        log_dir=str(tmp_path),
        display="none",
    )
    sample = log.samples[0]
    game = make_game("nim-31-k3")
    assert f"\n{LEGAL_MOVES_HEADING} 1, 2, 3\n" in sample.input
    (_, opponent, *_) = sample.scores["game_score"].metadata["moves"]
    left = 8 - int(opponent["move"])  # 10, the model takes 2, the opponent its take
    listed = ", ".join(game.move_text(m) for m in game.legal_moves((left,)))
    (result,) = [m for m in sample.messages if m.role == "tool"]
    assert f"\n{LEGAL_MOVES_HEADING} {listed}\n" in result.text
