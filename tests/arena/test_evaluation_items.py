"""An evaluation's items: one id, one item, across every file it is given."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from metanim.arena import EvaluationConfig, run_evaluation
from metanim.datasets import build, write_jsonl


def test_the_same_ids_in_two_files_are_refused_before_anything_runs(tmp_path: Path) -> None:
    one = write_jsonl(build("nim", 6, seed=0), tmp_path / "nim.jsonl")
    copy = tmp_path / "copy.jsonl"
    shutil.copy(one, copy)
    config = EvaluationConfig(
        dataset=[str(one), str(copy)], method="react", model="sim-optimal",
        results_dir=str(tmp_path / "r"), progress=False,
    )  # fmt: skip
    with pytest.raises(ValueError, match=f"is already an item of {one}"):
        run_evaluation(config)
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").glob("*.jsonl"))


def test_files_with_different_ids_are_all_graded(tmp_path: Path) -> None:
    nim = write_jsonl(build("nim", 4, seed=0), tmp_path / "nim.jsonl")
    fib = write_jsonl(build("fibonacci", 4, seed=0), tmp_path / "fib.jsonl")
    config = EvaluationConfig(
        dataset=[str(nim), str(fib)], method="react", model="sim-optimal",
        results_dir=str(tmp_path / "r"), progress=False, repeats=1,
    )  # fmt: skip
    result = run_evaluation(config)
    assert len({r.record_id for r in result.records}) == len(result.records) == 8
