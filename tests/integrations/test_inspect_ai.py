"""inspect_ai integration: `inspect eval` against the simulated server, offline, and the scorer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
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
from inspect_ai.log import read_eval_log  # noqa: E402
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


def _entry_point_env(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The inspect CLI, and an environment where it finds the tasks through the entry point
    exactly as pyproject.toml declares it (in a throwaway dist-info), so a test does not
    depend on how (or whether) metanim itself is installed."""
    inspect_cli = Path(sys.executable).with_name("inspect")
    if not inspect_cli.exists():
        pytest.skip("the inspect CLI is not installed next to this Python")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    points = project["project"]["entry-points"]["inspect_ai"]
    site = tmp_path / "site" / "metanim_ep_test-0.0.dist-info"
    site.mkdir(parents=True)
    (site / "METADATA").write_text("Metadata-Version: 2.1\nName: metanim-ep-test\nVersion: 0.0\n")
    lines = "".join(f"{name} = {value}\n" for name, value in points.items())
    (site / "entry_points.txt").write_text("[inspect_ai]\n" + lines)
    return inspect_cli, {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site.parent), str(ROOT)]),
    }


def test_inspect_cli_finds_the_tasks_through_the_entry_point(tmp_path: Path) -> None:
    inspect_cli, base = _entry_point_env(tmp_path)
    with SimServer() as server:
        env = {**base, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sim"}
        logs = tmp_path / "logs"
        run = subprocess.run(
            [str(inspect_cli), "eval", "metanim/nim", "--model", "openai/sim-optimal",
             "-T", "limit_n=3", "-T", "variant=misere", "--log-dir", str(logs),
             "--display", "plain"],
            env=env, capture_output=True, text=True, timeout=240, check=False,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr[-2000:]
        assert server.log, "the eval never reached the simulated server"
    (path,) = logs.glob("*.eval")
    log = read_eval_log(str(path))
    assert accuracy(log) == 1.0 and len(log.samples) == 3
    assert log.eval.task.endswith("nim-misere")


def test_the_question_task_without_a_file_is_a_one_line_error(tmp_path: Path) -> None:
    inspect_cli, env = _entry_point_env(tmp_path)
    run = subprocess.run(
        [str(inspect_cli), "eval", "metanim/questions", "--model", "mockllm/model",
         "--log-dir", str(tmp_path / "logs"), "--display", "plain"],
        env={**env, "COLUMNS": "80"}, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    out = [line for line in (run.stdout + run.stderr).splitlines() if line.strip()]
    assert run.returncode != 0
    assert out == ["metanim/questions needs a question file: -T path=FILE.jsonl"], out
    with pytest.raises(ValueError, match="-T path="):
        questions()


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
