"""The optimal-move share counts only moves in N-positions, where a choice matters; moves
in P-positions (every move loses, so the solver grades each one optimal) are counted
apart. Recounted from the rules (tests.oracles), never from the solver's grades."""

from __future__ import annotations

import json
from pathlib import Path

from metanim.arena import TournamentConfig, run_tournament
from metanim.records import read_log
from tests.oracles import take_k_winning

K = 3


def test_optimal_share_is_over_n_positions_and_p_position_moves_are_apart(tmp_path: Path):
    result = run_tournament(TournamentConfig(
        games=[f'nim:{{"heaps":[9,6],"max_take":{K}}}'], method="random", opponent="optimal",
        episodes=12, seat="first", start="initial", results_dir=str(tmp_path), progress=False,
    ))  # fmt: skip
    n_moves = n_winning = p_moves = p_graded_optimal = 0
    for record in read_log(result.log_path):
        for move in record.moves:
            if move.actor != "agent" or move.move is None:
                continue
            heaps = tuple(json.loads(json.dumps(move.state)))
            winning = take_k_winning(heaps, K)
            played = tuple(json.loads(move.move))
            if winning:  # an N-position: some move leaves a zero Grundy sum
                n_moves += 1
                n_winning += played in winning
            else:
                p_moves += 1
                p_graded_optimal += bool(move.optimal)
    assert n_moves >= 10 and p_moves >= 10  # both kinds occur against the optimal opponent
    assert p_graded_optimal == p_moves  # a share over every move counts each P move optimal
    (group,) = [g for g in result.summary["groups"] if g["seat"] == "all"]
    agent = group["agent"]
    assert (agent["n_moves"], agent["n_optimal_moves"], agent["p_moves"]) == (
        n_moves, n_winning, p_moves,
    )  # fmt: skip
    assert agent["n_optimal_rate"] == n_winning / n_moves
    # The share over all moves would have counted every P-position move as optimal.
    assert n_winning / n_moves < (n_winning + p_moves) / (n_moves + p_moves)
