"""The PettingZoo AEC view: API conformance and a game between two external agents."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test

from metanim import solver
from metanim.envs.pettingzoo_env import env, raw_env
from metanim.envs.registration import ENV_GAMES
from metanim.games import IllegalMoveError


@pytest.mark.filterwarnings("ignore::UserWarning")  # api_test's notes on dict observations
@pytest.mark.parametrize("game", ENV_GAMES.values())
@pytest.mark.parametrize("misere", [False, True])
def test_api_test(game: str, misere: bool) -> None:
    aec = env(game=game, misere=misere)
    api_test(aec, num_cycles=300)  # raises AssertionError on any API violation
    assert set(aec.possible_agents) == {"player_0", "player_1"}


def test_optimal_first_player_beats_random_second_player() -> None:
    aec = raw_env(game="nim", preset="nim-31-k3")
    game = aec.game
    rng = np.random.default_rng(0)
    for seed in range(5):
        aec.reset(seed=seed)
        totals = {"player_0": 0.0, "player_1": 0.0}
        for agent in aec.agent_iter():
            obs, reward, terminated, truncated, _ = aec.last()
            totals[agent] += reward
            if terminated or truncated:
                aec.step(None)
                continue
            if agent == "player_0":
                action = game.action_id(solver.optimal_move(game, aec._state, rng))
            else:
                action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            aec.step(action)
        assert totals == {"player_0": 1.0, "player_1": -1.0}


def test_illegal_action_loses_for_its_player() -> None:
    aec = raw_env(game="nim", start=[2])
    aec.reset(seed=0)
    aec.step(2)  # player_0 takes 3 from a heap of 2
    _, reward, terminated, _, _ = aec.last()
    assert aec.agent_selection == "player_1" and terminated and reward == 1.0
    assert aec.infos["player_0"]["illegal_action"] and "only 2" in aec.infos["player_0"]["error"]
    strict = raw_env(game="nim", start=[2], illegal="raise")
    strict.reset()
    with pytest.raises(IllegalMoveError):
        strict.step(2)


def test_text_view_and_misere_rewards() -> None:
    aec = raw_env(game="nim", start=[2], misere=True)
    aec.reset(seed=0)
    assert "There are 2 items remaining" in aec.prompt()
    aec.step(aec.parse_action("2"))  # player_0 takes the last item: loses in misère
    assert aec._cumulative_rewards == {"player_0": -1.0, "player_1": 1.0}
