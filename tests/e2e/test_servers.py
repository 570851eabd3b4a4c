"""Serving commands as processes: `serve-sim` answers over HTTP (question files too) and
`report --serve` serves the viewer on loopback, each until it is terminated."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

from metanim.agents import QuestionTask, build_method, make_client
from metanim.datasets.questions import (
    SAMPLES_DIR,
    load_questions,
)
from metanim.games import (
    make_game,
)
from metanim.llm import OpenAIChatClient
from metanim.solver import winning_moves
from tests.replies import FORMAT, move


def test_serve_sim_cli_answers_over_http(tmp_path):
    log = tmp_path / "log.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "metanim.cli", "serve-sim", "--port", "0", "--log", str(log)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://\S+/v1", line).group(0)
        game = make_game("kayles-20")
        c = OpenAIChatClient("sim-optimal", base_url=url, api_key="sk-test")
        state = game.initial_state()
        text = asyncio.run(c.chat([{"role": "user", "content": game.prompt(state) + FORMAT}])).text
        assert move(game, state, text) in winning_moves(game, state)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert json.loads(log.read_text().splitlines()[0])["task"]["game"] == "kayles"


def test_serve_sim_cli_takes_question_files(tmp_path: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "metanim.cli", "serve-sim", "--port", "0", "--questions",
         "samples/math.jsonl", "--questions", str(SAMPLES_DIR / "mc.jsonl")],
        stdout=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert "answering 22 questions" in line, line
        url = re.search(r"http://\S+/v1", line).group(0)  # type: ignore[union-attr]
        task = QuestionTask(load_questions(SAMPLES_DIR / "math.jsonl")[1])  # 2\sqrt{3}

        async def go():
            client = make_client(f"sim-optimal@{url}", api_key="sim")
            try:
                return await build_method(
                    "cot", "sim-optimal", client_factory=lambda _: client
                ).decide(task, seed=0)
            finally:
                await client.aclose()

        decision = asyncio.run(go())
        assert task.is_correct(decision.move) and decision.answer == r"2\sqrt{3}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_report_serve_shows_the_page_on_loopback(demo: Path):
    import subprocess
    import sys
    import urllib.request

    proc = subprocess.Popen(
        [sys.executable, "-m", "metanim", "report", str(demo), "--serve", "--no-browser", "--no-plots"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        url = ""
        for line in proc.stdout:
            if line.startswith("serving "):
                url = re.search(r"http://127\.0\.0\.1:\d+/viewer\.html", line).group(0)
                break
        assert url, "the server never said where it listens"
        with urllib.request.urlopen(url, timeout=10) as reply:
            assert reply.status == 200
            assert reply.read() == (demo / "viewer.html").read_bytes()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
