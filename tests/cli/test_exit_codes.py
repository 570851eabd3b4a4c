"""Exit codes and the one line that says why: a user's mistake exits 2 with one error line
and nothing run; a run stopped by forfeits exits 3 with one hint line."""

from __future__ import annotations

import subprocess
from pathlib import Path

from metanim import cli


def _one_line_error(result: subprocess.CompletedProcess[str], command: str) -> str:
    """The run failed as a user error: exit code 2, one error line, no traceback."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"metanim {command}: error: "), lines
    return lines[0]


SOLVER_PLAYERS = ["--method", "optimal", "--opponent", "random", "--no-progress"]


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


def test_user_errors_are_one_line_with_exit_code_2(tmp_path: Path, run_metanim) -> None:
    for args, message in USER_ERRORS:
        result = run_metanim(*args, cwd=tmp_path)
        assert message in _one_line_error(result, args[0]), args
    assert not list(tmp_path.iterdir())  # nothing was run, nothing written


def test_a_forfeit_run_exits_3_with_one_hint_line(tmp_path, capsys):
    code = cli.main(
        ["evaluate", "--dataset", "samples/mc.jsonl", "--method", "standard",
         "--model", "sim-faulty:malformed=1", "--repeats", "2", "--concurrency", "1",
         "--results-dir", str(tmp_path), "--no-progress"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 3
    hints = [line for line in err.splitlines() if line.startswith("hint: ")]
    assert len(hints) == 1 and hints[0].startswith("hint: stopped after 5 forfeits: ")
