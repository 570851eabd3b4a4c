"""inspect_ai integration: `inspect eval` against the simulated server, offline, and the scorer."""

from __future__ import annotations

import json
from functools import reduce
from operator import xor
from pathlib import Path

import pytest
from aiohttp import web
from openai import OpenAI

import metanim
from metanim.games import make_game
from metanim.games.reply import with_format
from metanim.integrations._grading import grade_reply
from metanim.llm.sim import SimServer
from metanim.llm.sim.responses import responses_handler
from metanim.llm.sim.server import SimApp

ROOT = Path(metanim.__file__).resolve().parents[1]


def reply(action: object) -> str:
    return f"Thinking it over.\n```json\n{json.dumps({'reasoning': 'r', 'action': action})}\n```"


# ----------------------------------------------------------- grading (no inspect)
def bouton_winning(heaps: tuple[int, ...]) -> set[tuple[int, int]]:
    """Winning moves of unbounded NIM by Bouton's theorem: leave a Nim-sum of 0."""
    total = reduce(xor, heaps, 0)
    return {(i, h - (h ^ total)) for i, h in enumerate(heaps) if total and (h ^ total) < h}


@pytest.mark.parametrize("heaps", [(1, 2, 4), (3, 4, 5), (1, 2, 3), (2, 2, 6), (5, 5)])
def test_grades_agree_with_bouton_for_every_legal_reply(heaps: tuple[int, ...]) -> None:
    game = make_game("nim", heaps=list(heaps), max_take=None)
    winning = bouton_winning(heaps)
    for move in game.legal_moves(heaps):
        grade = grade_reply(game, heaps, reply(list(move)))
        assert grade.answer == game.move_text(move)
        assert grade.outcome == ("N" if winning else "P")
        assert grade.n_winning == len(winning)
        # P-position: no winning move exists, every legal move is as good as any.
        assert grade.correct == (move in winning or not winning)
        if not winning:
            assert "no winning move exists" in grade.explanation
        elif len(winning) == 1:
            assert grade.explanation.startswith("critical state: the unique winning move")


def test_unreadable_illegal_and_truncated_replies_are_wrong_with_the_reason() -> None:
    game, state = make_game("nim", heaps=[3, 4, 5], max_take=None), (3, 4, 5)
    assert grade_reply(game, state, reply("take 2 from heap 1")).error == "unparsable"
    assert grade_reply(game, state, reply([0, 9])).error == "illegal"
    cut = 'I take {"action": [0, 2]} and then'
    assert grade_reply(game, state, cut).correct  # [0, 2] wins (3^4^5 = 2)
    assert grade_reply(game, state, cut, finish_reason="length").error == "truncated"


# ------------------------------------------------------------- /v1/responses
def test_responses_endpoint_answers_like_chat_completions() -> None:
    game, state = make_game("nim-31-k3"), (10,)
    text = with_format(game.prompt(state), "react", game.action_schema(state))
    with SimServer(api_key="k") as server:
        client = OpenAI(base_url=server.base_url, api_key="k")
        out = client.responses.create(model="sim-optimal", input=text, instructions="Be brief.")
        assert game.parse_move(out.output_text, state) == (0, 2)  # 10 -> 8 = 0 mod 4
        assert out.status == "completed" and out.usage.output_tokens > 0
        record = server.log[-1]
        assert record["messages"][0] == {"role": "system", "content": "Be brief."}
        assert record["task"] is not None  # the policy read the game from the input
        items = [{"role": "user", "content": [{"type": "input_text", "text": text}]}]
        assert game.parse_move(
            client.responses.create(model="sim-optimal", input=items).output_text, state
        ) == (0, 2)
        with pytest.raises(Exception, match="401"):
            OpenAI(base_url=server.base_url, api_key="wrong", max_retries=0).responses.create(
                model="sim-optimal", input=text
            )


# ------------------------------------------------------------------ inspect eval
inspect_ai = pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from metanim.integrations.inspect_ai import (  # noqa: E402
    GAME_TASKS,
    game_task,
    kayles,
    questions,
)


class ResponsesOnly(SimApp):
    """The simulator serving only the Responses API: an eval that used chat completions
    would get 404 and fail."""

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/v1/models", self.models)
        app.router.add_post("/v1/responses", responses_handler(self.chat))
        return app


@pytest.fixture()
def openai_env(monkeypatch: pytest.MonkeyPatch):
    server = SimServer()
    server.handlers = ResponsesOnly(seed=0)
    with server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sim")
        yield server


def accuracy(log) -> float:
    assert log.status == "success", log.error
    return log.results.scores[0].metrics["accuracy"].value


def test_every_game_has_a_task() -> None:
    assert set(GAME_TASKS) == set(metanim.GAMES)


@pytest.mark.slow
def test_inspect_eval_with_the_default_openai_provider(openai_env, tmp_path: Path) -> None:
    log_dir = str(tmp_path / "logs")
    optimal = inspect_eval(
        [game_task(g, v, limit_n=3) for g in ("nim", "corner_queen") for v in ("normal", "misere")],
        model="openai/sim-optimal",
        log_dir=log_dir,
        display="none",
    )
    assert [accuracy(log) for log in optimal] == [1.0] * 4
    # A player that picks legal moves at random is usually wrong on critical states.
    # Temperature 0 makes the simulator's draw a function of the prompt alone (the
    # Responses API carries no seed), so the result is the same on every run.
    (rand,) = inspect_eval(
        kayles(limit_n=10),
        model="openai/sim-random",
        log_dir=log_dir,
        display="none",
        temperature=0.0,
    )
    assert accuracy(rand) < 0.5
    # Self-Consistency as an inspect solver: 3 samples per item, majority vote.
    (sc,) = inspect_eval(
        game_task("fibonacci", limit_n=2, samples=3),
        model="openai/sim-optimal",
        log_dir=log_dir,
        display="none",
    )
    assert accuracy(sc) == 1.0 and len(openai_env.log) >= 3 * 2


@pytest.mark.slow
def test_question_file_task_graded_against_the_gold_answer(tmp_path: Path) -> None:
    path = tmp_path / "qs.jsonl"
    rows = [
        {"id": "q1", "question": "2 + 2?", "choices": ["3", "4"], "answer": "B"},
        {"id": "q2", "question": "Capital of France?", "choices": ["Paris", "Rome"], "answer": "A"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    outputs = [ModelOutput.from_content("mockllm/model", reply("B")) for _ in rows]
    for output in outputs:  # with usage, inspect never downloads a tokenizer to count
        output.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
    model = get_model("mockllm/model", custom_outputs=outputs)
    (log,) = inspect_eval(questions(str(path)), model=model, log_dir=str(tmp_path), display="none")
    assert accuracy(log) == 0.5
    assert [s.scores["solver_grade"].value for s in log.samples] == ["C", "I"]


def test_the_critical_states_task_lists_the_moves_when_asked() -> None:
    from metanim.games import LEGAL_MOVES_HEADING, PROMPT_VERSION
    from metanim.integrations.inspect_ai import metanim as metanim_task
    from metanim.integrations.inspect_ai._tasks import _problem

    plain = metanim_task(game="fibonacci", limit_n=3)
    listed = metanim_task(game="fibonacci", limit_n=3, list_moves=True)
    assert plain.metadata["game_prompt_version"] == PROMPT_VERSION
    assert listed.metadata["game_prompt_version"].startswith(PROMPT_VERSION + "+")
    for off, on in zip(plain.dataset, listed.dataset, strict=True):
        game = make_game("fibonacci", **on.metadata["game_params"])
        state = game.validate_state(on.metadata["state"])
        moves = ", ".join(game.move_text(m) for m in game.legal_moves(state))
        assert f"\n{LEGAL_MOVES_HEADING} {moves}\n" in on.input
        assert LEGAL_MOVES_HEADING not in off.input
        # The solvers re-render the prompt from the metadata: the list stays.
        assert _problem(on.metadata).prompt() == on.metadata["prompt"]
        assert on.metadata["prompt"].startswith(off.metadata["prompt"])
