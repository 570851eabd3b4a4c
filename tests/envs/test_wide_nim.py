"""NIM past its heap table: the optimal opponent answers by Bouton's closed forms with
no memo (`Solver.memoize`), and every reply still leaves a P-position, checked here by
the rule itself (plain xor), not by the solver."""

from __future__ import annotations

from functools import reduce
from operator import xor

import gymnasium as gym
import numpy as np
import pytest

import metanim  # noqa: F401  (registers the env ids)
from metanim.envs import _solve


def _p_position(heaps: list[int], misere: bool) -> bool:
    """Bouton: xor 0 in normal play; in misère play xor 1 when no heap exceeds 1."""
    total = reduce(xor, heaps, 0)
    if misere and max(heaps) <= 1:
        return total == 1
    return total == 0


@pytest.mark.parametrize("misere", [False, True])
def test_replies_past_the_table_reach_p_positions_and_keep_no_memo(misere: bool) -> None:
    env = gym.make(
        "MetaNIM/Nim-v0", heaps=[7_000, 9_000], max_take=None, misere=misere, start="initial"
    )
    agent = env.unwrapped
    solver = _solve.solver(agent.game)
    assert not solver.has_table and not solver.memoize and not agent._keep_masks
    game, rng = agent.game, np.random.default_rng(3)
    replies = wins = 0
    _, info = env.reset(seed=0)
    for _ in range(300):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        between = game.child(agent.state, game.move_from_action(action))
        _, _, terminated, _, info = env.step(action)
        if info["opponent_move"] is not None:
            replies += 1
            if not _p_position(list(between), misere):  # the opponent can win: it must
                assert _p_position(list(agent.state), misere), (between, agent.state)
                wins += 1
        if terminated:
            _, info = env.reset()
    assert replies > 50 and wins > 50
    entry = _solve._entry(agent.game)
    assert len(entry.winning) == len(entry.outcome) == 0


def test_a_table_game_keeps_its_memo() -> None:
    env = gym.make("MetaNIM/Nim-v0", heaps=[31], max_take=None)
    env.reset(seed=0)
    env.step(0)
    assert _solve.solver(env.unwrapped.game).memoize
    assert len(_solve._entry(env.unwrapped.game).winning) > 0
