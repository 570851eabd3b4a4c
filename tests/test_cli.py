"""The `metanim` command run as users run it: a subprocess, its exit code and its output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SOLVER_PLAYERS = ["--method", "optimal", "--opponent", "random", "--no-progress"]


def _metanim(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "metanim.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def _one_line_error(result: subprocess.CompletedProcess[str], command: str) -> str:
    """The run failed as a user error: exit code 2, one error line, no traceback."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"metanim {command}: error: "), lines
    return lines[0]


def test_tournament_starts_from_a_json_state(tmp_path: Path) -> None:
    result = _metanim(
        "tournament", "--game", "fibonacci-20", "--start", "[5,4]", "--episodes", "2",
        "--results-dir", str(tmp_path), *SOLVER_PLAYERS,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (log,) = tmp_path.glob("*.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["start_state"] for r in records] == [[5, 4], [5, 4]]
    assert all(r["start_outcome"] == "P" for r in records)  # [5, 4] is a P-position


#: User mistakes: (arguments, the message the one error line must hold).
USER_ERRORS = [
    (["tournament", "--game", 'nim:{"heapz":[12]}', *SOLVER_PLAYERS],
     "unknown parameter(s) heapz for nim; valid: heaps, max_take, misere"),
    (["solve", "nim", "abc"], "as a NIM state"),
    (["solve", "chomp", "[[1,1],[1]]"], "as a Chomp state"),
    (["tournament", "--game", "fibonacci-20", "--start", "[5,9]", *SOLVER_PLAYERS],
     "start [5,9] is not a state of fibonacci-20: max take 9 outside [1, 5]"),
    (["evaluate", "--dataset", "nope.jsonl", "--no-progress"], "No such file or directory: nope.jsonl"),
    (["tournament", "--episodes", "0", "--no-progress"], "episodes: Input should be greater than"),
]  # fmt: skip


def test_user_errors_are_one_line_with_exit_code_2(tmp_path: Path) -> None:
    # Started at once and collected after: the interpreter start-ups overlap.
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "metanim.cli", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        for args, _ in USER_ERRORS
    ]
    for proc, (args, message) in zip(procs, USER_ERRORS, strict=True):
        out, err = proc.communicate(timeout=120)
        result = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        assert message in _one_line_error(result, args[0]), args
    assert not list(tmp_path.iterdir())  # nothing was run, nothing written


def test_solve_reads_a_bare_fibonacci_pile() -> None:
    result = _metanim("solve", "fibonacci", "20")
    assert result.returncode == 0, result.stderr
    assert "winning moves" in result.stdout
