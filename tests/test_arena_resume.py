"""Kill a real tournament process with SIGKILL, rerun the command, and check the log.

Nothing finished may be lost, nothing counted twice, and the totals must equal those
of an uninterrupted run of the same command (episodes are seeded end to end).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from metanim.arena.tournament import Tournament, TournamentConfig
from metanim.records import read_records

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
