"""Real signals to a real `metanim` process.

SIGINT and SIGTERM to a running tournament: one line, exit 130, what finished saved,
summarized and resumed; a second writer of the same run refused while the first runs.
SIGINT during a dataset build: written whole or not at all. Ctrl-C to `play` in the
middle of a call: one line and no leak report. SIGKILL mid-run, then the same command:
nothing finished lost, nothing counted twice, the totals of an uninterrupted run."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from metanim.arena.tournament import Tournament, TournamentConfig
from metanim.records import read_records

SOLVERS = ["--method", "optimal", "--opponent", "random", "--no-progress"]


def _log_lines(folder: Path) -> list[dict]:
    return [json.loads(x) for p in folder.glob("*.jsonl") for x in p.read_text().splitlines()]


MOVE = re.compile(r"^ +-> (.+?)  \[")


def _popen(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "metanim", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        # A shell that started pytest in the background ignores SIGINT; the child must not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


#: A run that lasts minutes (1 s per model call), so it is surely still running when the
#: second writer starts and when the signal comes, however busy the machine is.
SLOW = [
    "tournament", "--episodes", "200", "--concurrency", "2", "--no-progress",
    "--method", "react", "--model", "sim-optimal:latency=1", "--opponent", "random",
]  # fmt: skip


def _wait_for(predicate, timeout: float = 300.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.2)


def _react_lines(results: Path) -> list[dict]:
    return (
        [r for r in _log_lines(results) if r["agent"].startswith("react")]
        if results.exists()
        else []
    )


@pytest.mark.slow
def test_sigint_saves_and_resumes_and_a_second_writer_is_refused(tmp_path: Path) -> None:
    results = tmp_path / "results"
    first = _popen(SLOW, tmp_path)
    _wait_for(lambda: len(_react_lines(results)) >= 1)
    # The same run again, while the first writes: refused with the writer's PID.
    second = _popen(SLOW, tmp_path)
    # A different run (another seed) may share the folder.
    other = _popen(["tournament", "--episodes", "2", "--seed", "7", *SOLVERS], tmp_path)
    _, err = second.communicate(timeout=300)
    assert second.returncode == 2, err
    assert f"is being written by process {first.pid}" in err and "Traceback" not in err
    assert other.wait(timeout=300) == 0
    assert first.poll() is None  # still running: the refusal was not a race
    # A real Ctrl-C: one line, exit 130, what finished saved and summarized.
    first.send_signal(signal.SIGINT)
    _, err = first.communicate(timeout=300)
    assert first.returncode == 130, err
    assert "Traceback" not in err, err
    (line,) = [x for x in err.splitlines() if "interrupted" in x]
    saved = _react_lines(results)
    assert f"{len(saved)} of 200 episodes finished and saved in" in line
    assert "run the same command to resume" in line
    summaries = [json.loads(p.read_text()) for p in results.glob("*.summary.json")]
    (summary,) = [s for s in summaries if s["config"]["method"] == "react"]
    assert summary["stopped"] == "interrupted" and summary["episodes_logged"] == len(saved)
    assert not list(results.glob("*.lock"))
    # SIGTERM says the same.
    term = _popen(SLOW, tmp_path)
    # Inside the run loop: the lock is held and an episode was appended since it started.
    logged = len(_react_lines(results))
    _wait_for(lambda: any(results.glob("*.lock")) and len(_react_lines(results)) > logged)
    term.send_signal(signal.SIGTERM)
    _, err = term.communicate(timeout=300)
    assert term.returncode == 130 and "Traceback" not in err and "saved in" in err, err
    # The same run with fewer episodes (the count is not part of its identity) finishes
    # its first 12: nothing lost, nothing doubled.
    before = {r["id"]: r for r in _react_lines(results)}
    resume = _popen([*SLOW[:2], "12", *SLOW[3:4], "12", *SLOW[5:]], tmp_path)
    out, err = resume.communicate(timeout=300)
    assert resume.returncode == 0, err
    after = _react_lines(results)
    assert len(after) == len({r["id"] for r in after})  # nothing doubled
    assert all(before[r["id"]] == r for r in after if r["id"] in before)  # nothing rewritten
    assert set(before) <= {r["id"] for r in after}  # nothing lost
    assert {r["index"] for r in after} >= set(range(12))
    new = sum(r["index"] < 12 and r["id"] not in before for r in after)
    assert f"episodes: {new} run now, 12 planned" in out


@pytest.mark.slow
def test_sigint_during_a_dataset_build_says_what_was_written(tmp_path: Path) -> None:
    args = ["dataset", "build", "--out", "ds", "--game", "kayles", "-n", "60000"]
    proc = _popen([*args, "--variant", "misere"], tmp_path)
    seen = ""
    # Wait until records are being found (imports, numba compilation and the solver's
    # tables are done): an interrupt inside a numba compile is out of our hands.
    while not re.search(r"\| *[1-9][0-9]*/60000", seen):
        char = proc.stderr.read(1)
        assert char, f"the build ended early: {seen}"
        seen += char
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, seen + err
    assert "Traceback" not in err
    assert "interrupted: 0 of 1 dataset files written under ds" in err
    assert "run the same command" in err
    # Written whole or not at all: no partial file, no temp file left behind.
    assert not (tmp_path / "ds").exists() or not list((tmp_path / "ds").iterdir())


LEAKS = ("Unclosed client session", "Unclosed connector", "Task was destroyed", "Traceback")


def test_play_prints_each_move_as_made_and_ctrl_c_leaves_no_leak(tmp_path: Path) -> None:
    # The agent answers at once, the opponent after 30 s: the first move is printed
    # while the second is awaited, and Ctrl-C lands in the middle of a call.
    proc = subprocess.Popen(
        [sys.executable, "-m", "metanim", "play", "--game", "nim-31-k3", "--agent", "react",
         "--model", "sim-optimal", "--opponent", "react",
         "--opponent-model", "sim-optimal:latency=30"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONWARNINGS": "default"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    seen = []
    assert proc.stdout is not None
    while not any(MOVE.match(line) for line in seen):
        line = proc.stdout.readline()
        assert line, "play ended before its first move was printed"
        seen.append(line)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert not [leak for leak in LEAKS if leak in out + err], err
    assert len([line for line in err.splitlines() if line.strip()]) == 1, err


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


#: A quick run for the stop signals: 1 s per model call, two in flight.
STOPPABLE = [
    "tournament", "--episodes", "40", "--concurrency", "2", "--no-progress",
    "--method", "react", "--model", "sim-optimal:latency=1", "--opponent", "random",
]  # fmt: skip


def _running(tmp_path: Path) -> subprocess.Popen:
    """STOPPABLE started, returned once its lock is held and an episode is on disk."""
    results = tmp_path / "results"
    proc = _popen(STOPPABLE, tmp_path)
    _wait_for(lambda: any(results.glob("*.lock")) and len(_react_lines(results)) >= 1)
    return proc


def test_sighup_stops_a_run_as_sigterm_does_and_leaves_no_lock(tmp_path: Path) -> None:
    # A closed terminal or a dropped SSH session: what finished is saved, exit 130.
    proc = _running(tmp_path)
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "finished and saved in" in err, err
    assert "run the same command to resume" in err
    assert not list((tmp_path / "results").glob("*.lock"))


def test_ctrl_c_during_the_pre_flight_check_stops_at_once(tmp_path: Path) -> None:
    # A server that accepts and never answers, a 600 s timeout: Ctrl-C ends the check
    # (a blocking GET on the event loop) at once, not when the GET times out.
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    url = f"http://127.0.0.1:{server.getsockname()[1]}/v1"
    proc = _popen(
        ["tournament", "--episodes", "2", "--method", "react", "--model", "m", "--base-url",
         url, "--opponent", "optimal", "--timeout-s", "600", "--no-progress"], tmp_path,
    )  # fmt: skip
    try:
        connection, _ = server.accept()  # the check's GET is in flight
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)  # far less than the GET's 600 s
    finally:
        proc.kill()
        server.close()
    connection.close()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err, err


@pytest.mark.slow
def test_sigterm_to_challenging_says_what_was_saved_as_evaluate_does(tmp_path: Path) -> None:
    from metanim.datasets import build, write_jsonl

    write_jsonl(build("nim", 20, seed=0), tmp_path / "ds.jsonl")
    results = tmp_path / "results"
    proc = _popen(
        ["challenging", "--dataset", "ds.jsonl", "--method", "react", "--model",
         "sim-optimal:latency=1", "--concurrency", "2", "--no-progress"],
        tmp_path,
    )  # fmt: skip
    _wait_for(lambda: any(p.read_text() for p in results.glob("challenging-*.jsonl")))
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    (log,) = results.glob("challenging-*.jsonl")
    saved = len(log.read_text().splitlines())
    assert re.search(rf"interrupted: {saved} of 100 decisions finished and saved in ", err), err
    assert err.rstrip().endswith("run the same command to resume"), err
