"""The `metanim` command as a process: `python -m metanim` runs the CLI and prints, byte
for byte, what `main` prints in process; on a full disk (a 300 KB tmpfs where the test
may mount one, else a file-size limit on the process) a run keeps whole lines and says
what was saved."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from metanim.cli import main


def test_python_dash_m_metanim_runs_the_cli() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "metanim", "solve", "fibonacci", "[20, 19]"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0 and "winning moves" in result.stdout, result.stderr


@pytest.mark.slow
def test_a_full_disk_keeps_whole_lines_and_says_what_was_saved(tmp_path: Path) -> None:
    """A real full disk: a 300 KB tmpfs where the test may mount one, else a file-size
    limit on the process (EFBIG: the same path through the code)."""
    results = tmp_path / "results"
    results.mkdir()
    mounted = os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(results)], capture_output=True
    ).returncode == 0  # fmt: skip
    limit = None if mounted else 300_000

    def fsize_limit() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if limit is not None:
            import resource

            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write fails instead of a kill
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    args = ["tournament", "--episodes", "400", "--concurrency", "4", "--no-progress",
            "--method", "react", "--model", "sim-optimal", "--opponent", "random"]  # fmt: skip
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "metanim", *args], capture_output=True, text=True,
            cwd=tmp_path, timeout=600, preexec_fn=fsize_limit,
        )  # fmt: skip
        (log,) = results.glob("*.jsonl")
        saved = [json.loads(x) for x in log.read_text().splitlines()]  # whole lines only
    finally:
        if mounted:
            subprocess.run(["umount", str(results)], check=True)
    assert proc.returncode == 3, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert f"cannot write {Path('results') / log.name}" in line or "cannot write" in line
    assert ("No space left on device" if mounted else "File too large") in line
    assert f"{len(saved)} of 400 episodes finished and saved in" in line
    assert "make room, then run the same command to resume" in line
    assert 0 < len(saved) < 400 and len({r["id"] for r in saved}) == len(saved)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_command_line_prints_what_main_prints(capsys) -> None:
    cases = [
        ["solve", "nim-31-k3-misere", "[5]", "--json"],
        ["solve", "nim", "[5, 6, 7]"],
        ["solve", "fibonacci", "10952", "--misere", "--json"],
    ]

    def command_line(argv: list[str]) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "metanim", *argv]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)

    with ThreadPoolExecutor(len(cases)) as pool:  # the interpreter start-ups overlap
        results = list(pool.map(command_line, cases))
    for argv, result in zip(cases, results, strict=True):
        assert (result.returncode, result.stdout, result.stderr) == run(argv, capsys), argv
