"""`metanim play` is episode 0 of `metanim tournament`: the same loop, seeds and players.

Both commands run through the CLI entry point, `metanim.cli.main`; the transcript `play`
prints is compared move by move with the tournament's log. A real Ctrl-C to a `play`
process is in tests/e2e/test_signals.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from metanim.cli import main

# Players that draw: sampled moves make a seed's game differ from the next seed's.
PLAYERS = [
    "--model", "sim-biased:heuristic=max_take,p=0.5",
    "--opponent", "react", "--opponent-model", "sim-random",
]  # fmt: skip
MOVE = re.compile(r"^ +-> (.+?)  \[")


def _played(out: str) -> list[str]:
    return [m.group(1) for line in out.splitlines() if (m := MOVE.match(line))]


@pytest.mark.parametrize(
    ("seed", "game", "seat"),
    [(0, "nim-31-k3", "first"), (1, "fibonacci-20", "first"), (2, "kayles-20", "second"),
     (3, "chomp-5x5", "second")],
)  # fmt: skip
def test_play_plays_episode_0_of_the_tournament(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: int, game: str, seat: str
) -> None:
    common = [*PLAYERS, "--seed", str(seed)]
    second = ["--second"] if seat == "second" else []
    assert main(["play", "--game", game, "--agent", "react", *common, *second]) == 0
    transcript = _played(capsys.readouterr().out)
    tournament = [
        "tournament", "--games", game, "--method", "react", "--episodes", "1",
        "--seat", seat, "--results-dir", str(tmp_path), "--no-progress", *common,
    ]  # fmt: skip
    assert main(tournament) == 0
    capsys.readouterr()
    (log,) = tmp_path.glob("*.jsonl")
    (episode,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert episode["index"] == 0 and episode["seat"] == seat
    assert transcript == [move["move"] for move in episode["moves"]]
    assert len(transcript) >= 2


def test_seeds_give_different_games(run_metanim) -> None:
    """The comparison above can fail: another seed plays another game."""
    outs = []
    for seed in (0, 1):
        proc = run_metanim(
            "play", "--game", "nim-31-k3", "--agent", "react", *PLAYERS, "--seed", str(seed)
        )
        assert proc.returncode == 0, proc.stderr
        outs.append(_played(proc.stdout))
    assert outs[0] != outs[1]
