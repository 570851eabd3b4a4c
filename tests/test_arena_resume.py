"""Kill a real tournament process with SIGKILL, rerun the command, and check the log.

Nothing finished may be lost, nothing counted twice, and the totals must equal those
of an uninterrupted run of the same command (episodes are seeded end to end).
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metanim.arena.evaluate import EvaluationConfig
from metanim.arena.tournament import Tournament, TournamentConfig, run_tournament
from metanim.datasets import build, write_jsonl
from metanim.llm.sim import SimServer
from metanim.records import read_records
from metanim.util.fastjson import Ready, dumps, dumps_line, fragment, loads

EPISODES = 24


def _command(results_dir: Path) -> list[str]:
    return [
        sys.executable, "-m", "metanim.cli", "tournament",
        "--game", 'nim:{"heaps":[12],"max_take":3}',
        "--method", "react", "--model", "sim-biased:heuristic=max_take,p=0.5,latency=0.02",
        "--opponent", "react", "--opponent-model", "sim-random:latency=0.02",
        "--episodes", str(EPISODES), "--seat", "alternate", "--concurrency", "4",
        "--results-dir", str(results_dir), "--no-progress",
    ]  # fmt: skip


def _totals(records: list[dict]) -> dict:
    return {
        "wins": sum(r["status"] == "win" for r in records),
        "losses": sum(r["status"] == "loss" for r in records),
        "moves": sum(r["plies"] for r in records),
        "calls": sum(r["agent_totals"]["calls"] + r["opponent_totals"]["calls"] for r in records),
        "tokens": sum(r["agent_totals"]["prompt_tokens"] + r["agent_totals"]["completion_tokens"] for r in records),
        "optimal": sum(r["agent_totals"]["optimal_moves"] for r in records),
    }  # fmt: skip


def test_sigkill_then_rerun_loses_nothing_and_counts_nothing_twice(tmp_path: Path) -> None:
    killed_dir, clean_dir = tmp_path / "killed", tmp_path / "clean"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        _command(killed_dir), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    logged_at_kill = 0
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            logs = list(killed_dir.glob("*.jsonl"))
            if logs:
                logged_at_kill = len(read_records(logs[0]))
                if logged_at_kill >= 4:
                    break
            time.sleep(0.02)
        assert proc.poll() is None, (
            f"the run ended before it could be killed: {proc.stderr.read()!r}"
        )
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    (log,) = killed_dir.glob("*.jsonl")
    survived = read_records(log)
    assert 4 <= len(survived) < EPISODES  # killed mid-run, with finished episodes on disk

    rerun = subprocess.run(
        _command(killed_dir), env=env, capture_output=True, text=True, timeout=180
    )
    assert rerun.returncode == 0, rerun.stderr
    assert f"{EPISODES - len(survived)} run now" in rerun.stdout

    lines = read_records(log)
    ids = [r["id"] for r in lines]
    config = TournamentConfig(**json.loads(log.with_suffix(".config.json").read_text()))
    assert sorted(ids) == sorted(
        p.id for p in Tournament(config).planned
    )  # every episode exactly once
    assert [r["id"] for r in lines[: len(survived)]] == [r["id"] for r in survived]
    summary = json.loads(log.with_suffix(".summary.json").read_text())
    (all_seats,) = [g for g in summary["groups"] if g["seat"] == "all"]
    assert all_seats["finished"] == all_seats["planned"] == EPISODES
    assert all_seats["wins"] + all_seats["losses"] == EPISODES

    clean = subprocess.run(
        _command(clean_dir), env=env, capture_output=True, text=True, timeout=180
    )
    assert clean.returncode == 0, clean.stderr
    (clean_log,) = clean_dir.glob("*.jsonl")
    clean_lines = read_records(clean_log)
    assert _totals(lines) == _totals(clean_lines)
    by_id = {r["id"]: r for r in clean_lines}
    for r in lines:
        assert [m["move"] for m in r["moves"]] == [m["move"] for m in by_id[r["id"]]["moves"]]


def test_another_server_is_another_log_and_the_in_process_sim_resumes(
    tmp_path: Path, sim_server: SimServer
) -> None:
    config = TournamentConfig(
        method="react",
        model="sim-optimal",
        opponent="random",
        episodes=1,
        results_dir=str(tmp_path),
        progress=False,
    )
    remote = run_tournament(config.model_copy(update={"base_url": sim_server.base_url + "/"}))
    local = run_tournament(config)  # the simulated server, started in-process
    assert remote.played_now == local.played_now == 1
    assert remote.log_path != local.log_path
    # A trailing slash is the same server; the in-process server's port is not identity.
    again = run_tournament(config.model_copy(update={"base_url": sim_server.base_url}))
    assert again.log_path == remote.log_path and again.played_now == 0
    assert run_tournament(config).played_now == 0
    ds = tmp_path / "ds.jsonl"
    write_jsonl(build("fibonacci", 1, seed=0, params={"n": 20}), ds)
    evaluation = EvaluationConfig(dataset=[str(ds)], model="sim-optimal")
    moved = evaluation.model_copy(update={"base_url": sim_server.base_url})
    assert evaluation.config_hash() != moved.config_hash()


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=6) | st.integers(-5, 5), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(record=st.dictionaries(st.text(max_size=8), _JSON, max_size=6))
def test_a_log_line_reads_back_as_the_standard_library_writes_it(record) -> None:
    # orjson writes log lines and bodies; the stdlib's json is the reference (ints past
    # 64 bits, int keys, any unicode and control characters included), both ways.
    line = dumps_line(record)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == json.loads(json.dumps(record))
    assert json.loads(dumps(record)) == json.loads(json.dumps(record))
    assert loads(json.dumps(record)) == json.loads(json.dumps(record))


def test_a_log_line_with_an_int_past_64_bits_is_still_written() -> None:
    # Both sides of orjson's int range, and floats as large that must stay floats.
    edges = [2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 2**70, -(2**65), 1e19, -1e19, 2.0**64]
    record = {"state": edges, "seed": 2**64 - 1, "nested": [{"x": 2**64}]}
    assert json.loads(dumps_line(record)) == record
    back = loads(json.dumps(record))
    assert back == record
    assert [type(v) for v in back["state"]] == [type(v) for v in edges]


def test_a_line_with_ready_json_and_an_int_orjson_refuses_falls_back_whole() -> None:
    from metanim.llm._types import Usage

    ready = fragment(Usage(prompt_tokens=3, completion_tokens=4))
    assert isinstance(ready, Ready) and fragment({"a": 1}) == {"a": 1}
    # orjson writes the ready text itself (the stdlib's fallback is never needed for it).
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(json, "dumps", None)
        line = dumps({"decision": ready})
    assert json.loads(line) == {"decision": json.loads(ready.text)}
    record = {"big": 2**70, "decision": ready}
    want = {"big": 2**70, "decision": Usage(prompt_tokens=3, completion_tokens=4).model_dump()}
    assert json.loads(dumps(record)) == want


def test_non_finite_floats_go_to_a_server_as_json_writes_them_and_to_a_log_as_null() -> None:
    body = {"temperature": math.nan, "top_p": [1.0, math.inf, -math.inf]}
    # A request body: the stdlib's NaN and Infinity (the server rejects them), not null.
    assert dumps(body) == json.dumps(body, separators=(",", ":")).encode()
    # A log line is strict JSON, as pydantic-core writes the decisions inside it.
    assert json.loads(dumps_line(body)) == {"temperature": None, "top_p": [1.0, None, None]}


def test_json_that_only_the_standard_library_reads_still_reads() -> None:
    assert loads(b'{"x": NaN}')["x"] != loads(b'{"x": NaN}')["x"]  # NaN
    with pytest.raises(json.JSONDecodeError):
        loads(b'{"x": ')
