"""The solver's on-disk tables (`METANIM_CACHE_DIR`): a process writes them, a fresh one
reads them back without computing any, and both answer as the rules do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from metanim.games import make_game
from metanim.solver import ReferenceSolver

pytestmark = pytest.mark.slow  # two fresh interpreters

#: One game per kind of cached table: a NIM heap, Fibonacci Nim, Chomp, Corner Queen.
GAMES = ("nim-31-k3", "fibonacci-20-misere", "chomp-5x5", "corner-queen-misere")
FILES = {"nim-k3-31.npz", "fibonacci-v2-20.npz", "chomp-5x5.npz", "wythoff-20x20.npz"}

#: Outcome and winning moves of each game's start and of every position one move in.
#: With "load", any table computed rather than read from the folder fails the process.
SCRIPT = """
import json, sys
from metanim.games import make_game
from metanim.solver import _solvers, outcome, winning_moves

if sys.argv[1] == "load":
    def refuse():
        raise AssertionError("a table the cache folder holds was computed again")
    read = _solvers._persisted
    _solvers._persisted = lambda name, compute: read(name, refuse)
answers = {}
for name in sys.argv[2:]:
    game = make_game(name)
    start = game.initial_state()
    states = [start, *(game.child(start, m) for m in game.legal_moves(start))]
    answers[name] = [[outcome(game, s), sorted(map(repr, winning_moves(game, s)))] for s in states]
print(json.dumps(answers))
"""


def _answers(mode: str, folder: Path) -> dict[str, list[list[object]]]:
    env = {**os.environ, "METANIM_CACHE_DIR": str(folder)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, *GAMES],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _reference(name: str) -> list[list[object]]:
    game = make_game(name)
    ref = ReferenceSolver(game)
    start = game.initial_state()
    states = [start, *(game.child(start, m) for m in game.legal_moves(start))]
    return [[ref.outcome(s), sorted(map(repr, ref.winning_moves(s)))] for s in states]


def test_tables_written_by_one_process_answer_in_the_next(tmp_path: Path) -> None:
    folder = tmp_path / "tables"
    first = _answers("compute", folder)
    assert {p.name for p in folder.iterdir()} == FILES  # one file per table, no temp left
    stamps = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    again = _answers("load", folder)  # a fresh process that may only read the tables
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == stamps
    for name in GAMES:
        expected = _reference(name)
        assert len(expected) > 1
        assert first[name] == expected, name
        assert again[name] == expected, name


def test_a_process_with_an_empty_folder_may_not_skip_the_compute(tmp_path: Path) -> None:
    # The "load" guard is live: with nothing cached it stops the process.
    env = {**os.environ, "METANIM_CACHE_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, "load", GAMES[0]],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode != 0
    assert "was computed again" in done.stderr
