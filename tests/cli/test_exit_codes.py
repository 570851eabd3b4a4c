"""Exit codes and the one line that says why: a user's mistake exits 2 with one error line
and nothing run; a run stopped by forfeits exits 3 with one hint line."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from metanim import cli

ROOT = Path(__file__).resolve().parents[2]


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


@pytest.mark.parametrize("concurrency", [1, 8, 64])
def test_a_stop_rule_that_fires_exits_3_whatever_the_concurrency(
    tmp_path, run_metanim, concurrency
):
    # Six episodes, each ended by the agent's first forfeit: the fifth stops the run. At
    # concurrency 1 the sixth is never started; at 8 or 64 all six are in flight and
    # finish, and the run still stopped for a cause: exit 3 either way.
    result = run_metanim(
        "tournament", "--game", 'nim:{"heaps":[7],"max_take":3}', "--method", "react",
        "--opponent", "optimal", "--model", "sim-faulty:malformed=1", "--episodes", "6",
        "--concurrency", str(concurrency), "--results-dir", str(tmp_path), "--no-progress",
    )  # fmt: skip
    assert result.returncode == 3, result.stderr
    assert "hint: stopped after 5 forfeits: " in result.stderr
    assert re.search(r"then (re)?run", result.stderr.splitlines()[-1])  # what to do next


def _commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()):
    """Every command and nested subcommand the parser holds, as the words that name it."""
    yield words
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _commands(child, (*words, name))


def _docs_exit_codes() -> list[tuple[int, str]]:
    """The exit-code table of docs/arena.md, as (code, meaning) rows."""
    text = (ROOT / "docs" / "arena.md").read_text()
    section = text.split("## Exit codes, faults and interrupts", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| (.+) \|$", section, flags=re.M)
    return [(int(code), meaning) for code, meaning in rows]


def test_every_help_and_the_docs_give_the_one_exit_code_table(run_metanim) -> None:
    # The docs' table is the reference: each --help, top level and nested subcommands
    # (`dataset build --help`) included, ends with its every row, in order.
    rows = _docs_exit_codes()
    assert [code for code, _ in rows] == [0, 2, 3, 130]
    words = list(_commands(cli.build_parser()))
    assert ("dataset", "build") in words and len(words) > 15
    for command in words:
        result = run_metanim(*command, "--help")
        assert result.returncode == 0, command
        tail = " ".join(result.stdout.split("exit codes:")[-1].split())
        expected = "; ".join(f"{code} {meaning}" for code, meaning in rows)
        assert tail == expected, command


#: Commands that need an optional extra: (arguments, the module blocked, the extra named).
EXTRAS = [
    (["serve-local", "--gguf", "model.gguf"], "xllamacpp", "metanim-arena[local]"),
    (["dataset", "push", ".", "me/data"], "huggingface_hub", "metanim-arena[hf]"),
    (["ratings", ".", "--plot", "r.png"], "matplotlib", "metanim-arena[plots]"),
]


@pytest.mark.parametrize(("args", "module", "extra"), EXTRAS)
def test_a_missing_extra_is_one_line_with_exit_code_2(
    tmp_path, run_metanim, monkeypatch, args, module, extra
) -> None:
    (tmp_path / "model.gguf").write_bytes(b"GGUF")  # an existing file: the extra is missing
    (tmp_path / "README.md").write_text("a card")
    monkeypatch.setitem(sys.modules, module, None)  # not installed
    line = _one_line_error(run_metanim(*args, cwd=tmp_path), args[0])
    assert f"pip install '{extra}'" in line


def test_a_full_disk_during_a_dataset_build_exits_3_with_what_was_written(
    tmp_path, run_metanim, monkeypatch
) -> None:
    import errno
    import os

    real = os.fdopen

    class Full:
        """The dataset file's handle on a full disk: each write fails with ENOSPC."""

        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fdopen", lambda fd, *a, **k: Full(real(fd, *a, **k)))
    args = ["dataset", "build", "--game", "nim", "-n", "3", "--out", str(tmp_path / "ds"),
            "--no-progress"]  # fmt: skip
    result = run_metanim(*args)
    assert result.returncode == 3, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "No space left on device" in line and str(tmp_path / "ds") in line
    assert "0 of 1 dataset files written" in line
    assert line.endswith("make room, then rerun: metanim " + " ".join(args))
    assert not list((tmp_path / "ds").iterdir())  # no partial or temp file
