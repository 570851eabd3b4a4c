"""`metanim tournament --dry-run` names one log for every spelling of one run, and
another log for another run (the path it prints carries the run identity's hash)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from metanim.cli import main

R1, R2 = "http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"

SAME = {
    "aliases": [
        ["--method", "sc"],
        ["--method", "self_consistency"],
        ["--method", "sc:n=5"],
        ["--method", "sc", "--param", "n=5"],
        ["--method", "sc:n=5,temperature=0.7"],
        ["--method", "sc:temperature=0.7,n=5"],
    ],
    "long names": [
        ["--method", "dreamad-"],
        ["--method", "dreamad_minus"],
        ["--method", "dreamad", "--param", "variant=minus"],
    ],
    "games": [["--games", "fibonacci"], ["--games", "fibonacci-20"]],
    "simulated models": [
        ["--model", "sim-biased:heuristic=min_take,p=0.8"],
        ["--model", "sim-biased:p=0.8,heuristic=min_take"],
    ],
    "replicas": [["--model", f"m@{R1}|{R2}"], ["--model", f"m@{R2}|{R1}"]],
}
DIFFERENT = [
    ["--method", "sc:n=5"],
    ["--method", "sc:n=6"],
    ["--model", "sim-random"],
    ["--games", 'fibonacci:{"n":21}'],
    ["--model", f"m@{R1}"],
]


def _log(args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    settings = ["--structured-output", "off", "--results-dir", str(tmp_path), "--dry-run"]
    code = main(["tournament", *args, *settings])
    out = capsys.readouterr().out
    assert code == 0, out
    (name,) = re.findall(r"tournament-[0-9a-f]{12}\.jsonl", out)
    return name


@pytest.mark.parametrize("spellings", SAME.values(), ids=SAME.keys())
def test_every_spelling_names_one_log(
    spellings: list[list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert len({_log(args, tmp_path, capsys) for args in spellings}) == 1


def test_different_runs_name_different_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = [_log(args, tmp_path, capsys) for args in DIFFERENT]
    assert len(set(names)) == len(DIFFERENT)
    assert not list(tmp_path.iterdir())  # a dry run writes nothing
