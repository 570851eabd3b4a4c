"""Runs at sizes past what a setting can hold: a tournament or an evaluation refuses a
state past int64, a game with astronomically many moves, or one too long to play out,
with a one-line reason before any episode; just inside each limit a run plays."""

from __future__ import annotations

import pytest

from metanim.arena.tournament import (
    MAX_EPISODE_MOVES,
    TournamentConfig,
    _check_size,
    run_tournament,
)
from metanim.games import SizeLimitError, make_game


def test_a_tournament_refuses_a_huge_setting_before_any_episode(tmp_path) -> None:
    huge = '{"heaps":[100000000000000000000],"max_take":3}'
    config = TournamentConfig(
        games=[f"nim:{huge}"], method="react", model="sim-optimal", opponent="optimal",
        episodes=2, seat="alternate", start="[18446744073709551617]", progress=False,
        results_dir=str(tmp_path),
    )  # fmt: skip
    with pytest.raises(SizeLimitError, match=r"nim:\{.*no move cap.*the limit is 10,000"):
        run_tournament(config)
    assert not any(p.stat().st_size for p in tmp_path.rglob("*.jsonl"))
    # Just inside the move limit, with few actions: nothing to refuse.
    edge = make_game("nim", heaps=[MAX_EPISODE_MOVES], max_take=3)
    _check_size("k", edge, "initial", simulated=True, solver=True, fallback="random")
    wide = make_game("kayles", rows=[MAX_EPISODE_MOVES])  # 19,999 actions
    _check_size("k", wide, "initial", simulated=True, solver=True, fallback="random")
    wider = make_game("nim", heaps=[MAX_EPISODE_MOVES, 1], max_take=None)  # 10,001 moves
    with pytest.raises(SizeLimitError, match="can last 10,001 moves"):
        _check_size("k", wider, "initial", simulated=False, solver=False, fallback="forfeit")
    many = make_game("nim", heaps=[40] * 200, max_take=None)  # 8,000 moves, 8,000 actions
    _check_size("k", many, "initial", simulated=True, solver=True, fallback="random")
    broad = make_game("nim", heaps=[5000, 1], max_take=None)  # fine: 5,001 actions
    _check_size("k", broad, "initial", simulated=True, solver=True, fallback="random")
    giant = make_game("corner_queen", height=400, width=400)  # 798 moves, 160,000 actions
    for flags, who in (
        ({"simulated": True, "solver": False, "fallback": "forfeit"}, "the simulated model"),
        ({"simulated": False, "solver": True, "fallback": "forfeit"}, "a solver player"),
        ({"simulated": False, "solver": False, "fallback": "random"}, "on_failure='random'"),
        (
            {"simulated": False, "solver": False, "fallback": "forfeit", "listed": True},
            "--list-moves",
        ),
    ):
        with pytest.raises(SizeLimitError, match=who):
            _check_size("k", giant, "initial", **flags)
    _check_size(
        "k", giant, "initial", simulated=False, solver=False, fallback="forfeit"
    )  # a real model


def test_the_tournament_wiring_refuses_listing_and_playouts(tmp_path) -> None:
    def config(game: str, **kw) -> TournamentConfig:
        return TournamentConfig(
            games=[game], method="optimal", opponent="random", episodes=2, progress=False,
            results_dir=str(tmp_path), **kw,
        )  # fmt: skip

    queen = 'corner_queen:{"height":400,"width":400}'  # 160,000 actions, 798 moves
    with pytest.raises(SizeLimitError, match="a solver player"):
        run_tournament(config(queen, start="initial"))
    wide = 'nim:{"heaps":[9000,1,1,1],"max_take":null}'  # 36,000 actions, 9,003 moves
    with pytest.raises(SizeLimitError, match="listing each position's moves"):
        run_tournament(config(wide, start="random_n"))
    assert not any(p.stat().st_size for p in tmp_path.rglob("*.jsonl"))
    result = run_tournament(config(wide, start="[3,1,1,1]"))  # a given start is played
    assert result.summary["groups"][0]["finished"] == 2


def test_huge_plans_are_refused_on_one_line() -> None:
    with pytest.raises(ValueError, match="less than or equal to 1000000"):
        TournamentConfig(games=["nim-31-k3"], method="react", model="m", episodes=10**20)


def test_an_evaluation_refuses_a_foreign_record_too_wide_to_list(tmp_path) -> None:
    from metanim.arena.evaluate import EvaluationConfig, run_evaluation
    from metanim.datasets._build import make_record
    from metanim.datasets._io import write_jsonl

    # A dataset built elsewhere: Fibonacci Nim of 200,001 stones has 200,000 actions,
    # though this late position has only 2 moves (take 1, the winning one, or 2).
    game = make_game("fibonacci", n=200_001)
    state = (4, 2)
    record = make_record(game, state, 1, index=0, seed=0, grundy=1)
    path = write_jsonl([record], tmp_path / "wide.jsonl")
    config = EvaluationConfig(
        dataset=[str(path)], method="react", model="sim-optimal", repeats=1,
        progress=False, results_dir=str(tmp_path / "out"),
    )  # fmt: skip
    with pytest.raises(SizeLimitError, match=r"record fibonacci-normal-000000: the simulated"):
        run_evaluation(config)
