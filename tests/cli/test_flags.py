"""Flags that reach a run: a JSON --start state, and --structured-output (with the demo's
caps) on every command that calls a model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metanim import cli

pytestmark = pytest.mark.usefixtures("fresh_probes")
SOLVER_PLAYERS = ["--method", "optimal", "--opponent", "random", "--no-progress"]


def test_tournament_starts_from_a_json_state(tmp_path: Path, run_metanim) -> None:
    result = run_metanim(
        "tournament", "--game", "fibonacci-20", "--start", "[5,4]", "--episodes", "2",
        "--results-dir", str(tmp_path), *SOLVER_PLAYERS,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (log,) = tmp_path.glob("*.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["start_state"] for r in records] == [[5, 4], [5, 4]]
    assert all(r["start_outcome"] == "P" for r in records)  # [5, 4] is a P-position


def test_every_command_that_calls_a_model_takes_the_flag():
    parser = cli.build_parser()
    for command in ("tournament", "evaluate", "challenging", "play", "demo"):
        sub = parser._subparsers._group_actions[0].choices[command]
        flags = {s for a in sub._actions for s in a.option_strings}
        assert "--structured-output" in flags, command
    demo = parser.parse_args(
        ["demo", "--structured-output", "off", "--max-calls", "9", "--keep-going",
         "--max-completion-tokens", "32", "--phase-max-tokens", "rewrite=48"]
    )  # fmt: skip
    assert (demo.structured_output, demo.max_calls, demo.keep_going) == ("off", 9, True)
