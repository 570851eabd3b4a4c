"""The start law (`metanim.envs.start_law`) against every playout enumerated from the
rules, and the envs drawing their random starts from it."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import metanim  # noqa: F401  (registers the env ids)
from metanim.envs import EpisodeStream, start_law
from metanim.envs._starts import LAW_STATES
from metanim.games import Game, make_game
from metanim.solver import ReferenceSolver


def _enumerated(game: Game[Any, Any], mover_wins: bool) -> dict[Any, float]:
    """The documented law by walking every playout: each path's chance split evenly over
    its wanted states (non-terminal N-positions; for the opponent, P-positions from which
    no move ends the game), divided by the chance that a playout has one."""
    reference = ReferenceSolver(game)
    law: dict[Any, float] = {}
    met = [0.0]

    def wanted(state: Any) -> bool:
        if (reference.outcome(state) == "N") != mover_wins:
            return False
        moves = game.legal_moves(state)
        return mover_wins or all(game.legal_moves(game.child(state, m)) for m in moves)

    def walk(state: Any, trail: list[Any], chance: float) -> None:
        moves = game.legal_moves(state)
        if not moves:
            picks = [s for s in trail if wanted(s)]
            if picks:
                met[0] += chance
            for s in picks:
                law[s] = law.get(s, 0.0) + chance / len(picks)
            return
        for move in moves:
            walk(game.child(state, move), [*trail, state], chance / len(moves))

    walk(game.initial_state(), [], 1.0)
    return {s: p / met[0] for s, p in law.items()}


GAMES = [
    ("nim", {"heaps": [10], "max_take": 3}),
    ("nim", {"heaps": [3, 4], "max_take": None}),
    ("nim", {"heaps": [7], "max_take": 2, "misere": True}),
    ("fibonacci", {"n": 9}),
    ("fibonacci", {"n": 8, "misere": True}),
    ("kayles", {"rows": [3, 4]}),
    ("kayles", {"rows": [6], "misere": True}),
    ("chomp", {"rows": 3, "cols": 3}),
    ("corner_queen", {"height": 5, "width": 5, "start": [0, 4]}),
]


@pytest.mark.parametrize("mover_wins", [True, False], ids=["agent first", "opponent first"])
@pytest.mark.parametrize(("name", "params"), GAMES, ids=lambda v: str(v))
def test_the_law_is_every_playout_enumerated(name: str, params: dict, mover_wins: bool) -> None:
    game = make_game(name, **params)
    expected = _enumerated(game, mover_wins)
    law = start_law(game, mover_wins)
    assert law is not None
    got = dict(zip(law.states, law.chance.tolist(), strict=True))
    assert set(got) == set(expected)
    assert all(abs(got[s] - expected[s]) < 1e-12 for s in got)
    # The alias table draws the law: each column keeps itself or hands the rest of its
    # 1/k share to its alias.
    k = len(law.states)
    mass = np.zeros(k)
    for column in range(k):
        mass[column] += law.keep[column] / k
        mass[law.alias[column]] += (1.0 - law.keep[column]) / k
    assert np.allclose(mass, law.chance, atol=1e-12)


def test_the_envs_draw_their_random_starts_from_the_law() -> None:
    # Episode e of seed s starts where the law's two draws of that episode's stream say.
    env = gym.make("MetaNIM/Nim-v0", heaps=[13], max_take=3, start="random_n")
    law = start_law(env.unwrapped.game, True)
    assert law is not None
    obs, _ = env.reset(seed=5)
    for episode in range(1, 40):
        assert (int(obs[0]),) == law.draw(EpisodeStream(5, episode - 1))
        obs, _ = env.reset()


def test_a_game_past_the_table_plays_its_playouts() -> None:
    game = make_game("kayles", rows=[20])  # 2**20 states
    assert start_law(game, True) is None
    assert LAW_STATES < 2**20


def test_a_game_with_no_wanted_start_is_refused() -> None:
    # One heap of 1: the opponent, moving first, has no P-position to start from.
    with pytest.raises(
        ValueError, match="cannot start this seat: no reachable state is a P-position"
    ):
        start_law(make_game("nim", heaps=[1], max_take=1), False)
