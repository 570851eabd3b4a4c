"""The `metanim` command run as users run it: a subprocess, its exit code and its output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.mark.parametrize(
    ("start", "message"),
    [("[5,9]", "max take 9 outside [1, 5]"), ("five", "random_n, initial or a state as JSON")],
)
def test_tournament_refuses_a_bad_start(tmp_path: Path, start: str, message: str) -> None:
    result = _metanim(
        "tournament", "--game", "fibonacci-20", "--start", start, "--episodes", "1",
        "--results-dir", str(tmp_path), *SOLVER_PLAYERS,
    )  # fmt: skip
    assert message in _one_line_error(result, "tournament")
    assert not list(tmp_path.glob("*.jsonl"))
