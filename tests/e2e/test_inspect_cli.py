"""The `inspect` command finds metanim's tasks through the entry point pyproject.toml
declares (in a throwaway dist-info), runs one against the simulator, and says on one
line what the question task needs without its file."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

import metanim
from metanim.integrations.inspect_ai import (
    questions,
)
from metanim.llm.sim import SimServer

ROOT = Path(metanim.__file__).resolve().parents[1]


def accuracy(log) -> float:
    assert log.status == "success", log.error
    return log.results.scores[0].metrics["accuracy"].value


def _entry_point_env(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The inspect CLI, and an environment where it finds the tasks through the entry point
    exactly as pyproject.toml declares it (in a throwaway dist-info), so a test does not
    depend on how (or whether) metanim itself is installed."""
    inspect_cli = Path(sys.executable).with_name("inspect")
    if not inspect_cli.exists():
        pytest.skip("the inspect CLI is not installed next to this Python")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    points = project["project"]["entry-points"]["inspect_ai"]
    site = tmp_path / "site" / "metanim_ep_test-0.0.dist-info"
    site.mkdir(parents=True)
    (site / "METADATA").write_text("Metadata-Version: 2.1\nName: metanim-ep-test\nVersion: 0.0\n")
    lines = "".join(f"{name} = {value}\n" for name, value in points.items())
    (site / "entry_points.txt").write_text("[inspect_ai]\n" + lines)
    return inspect_cli, {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site.parent), str(ROOT)]),
    }


def test_inspect_cli_finds_the_tasks_through_the_entry_point(tmp_path: Path) -> None:
    inspect_cli, base = _entry_point_env(tmp_path)
    with SimServer() as server:
        env = {**base, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sim"}
        logs = tmp_path / "logs"
        run = subprocess.run(
            [str(inspect_cli), "eval", "metanim/nim", "--model", "openai/sim-optimal",
             "-T", "limit_n=3", "-T", "variant=misere", "--log-dir", str(logs),
             "--display", "plain"],
            env=env, capture_output=True, text=True, timeout=240, check=False,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr[-2000:]
        assert server.log, "the eval never reached the simulated server"
    (path,) = logs.glob("*.eval")
    log = read_eval_log(str(path))
    assert accuracy(log) == 1.0 and len(log.samples) == 3
    assert log.eval.task.endswith("nim-misere")


def test_the_question_task_without_a_file_is_a_one_line_error(tmp_path: Path) -> None:
    inspect_cli, env = _entry_point_env(tmp_path)
    run = subprocess.run(
        [str(inspect_cli), "eval", "metanim/questions", "--model", "mockllm/model",
         "--log-dir", str(tmp_path / "logs"), "--display", "plain"],
        env={**env, "COLUMNS": "80"}, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    out = [line for line in (run.stdout + run.stderr).splitlines() if line.strip()]
    assert run.returncode != 0
    assert out == ["metanim/questions needs a question file: -T path=FILE.jsonl"], out
    with pytest.raises(ValueError, match="-T path="):
        questions()
