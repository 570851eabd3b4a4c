"""The PettingZoo AEC view: API conformance and a game between two external agents."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

import functools

from pettingzoo.test import api_test, render_test, seed_test

from metanim import solver
from metanim.envs.pettingzoo import MODULES, nim_v0
from metanim.envs.pettingzoo_env import env, raw_env
from metanim.envs.registration import ENV_GAMES
from metanim.games import IllegalMoveError


@pytest.mark.filterwarnings("ignore::UserWarning")  # api_test's notes on dict observations
@pytest.mark.parametrize("game", ENV_GAMES.values())
@pytest.mark.parametrize("misere", [False, True])
def test_api_test(game: str, misere: bool) -> None:
    aec = MODULES[game].env(misere=misere)
    api_test(aec, num_cycles=300)  # raises AssertionError on any API violation
    assert set(aec.possible_agents) == {"player_0", "player_1"}
    assert aec.metadata["name"] == f"{game}_v0"


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("game", ENV_GAMES.values())
def test_seed_test_and_render_test(game: str, capsys: pytest.CaptureFixture[str]) -> None:
    seed_test(MODULES[game].env, num_cycles=50)  # same seed, same observations and rewards
    render_test(MODULES[game].env)  # every mode in metadata, "human" included
    board = capsys.readouterr().out
    assert "to move" in board  # "human" printed the ansi board
    # Resized boards and several heaps take the same tests.
    sizes = {
        "nim": {"heaps": [3, 4, 5], "max_take": None},
        "corner_queen": {"height": 8, "width": 12},
    }
    if game in sizes:
        seed_test(functools.partial(MODULES[game].env, **sizes[game]), num_cycles=50)


def test_classic_module_loading() -> None:
    aec = nim_v0.env(preset="nim-31-k3", render_mode="ansi")
    aec.reset(seed=0)
    assert aec.agent_selection == "player_0"
    assert "There are 31 items remaining" in aec.render()
    assert isinstance(nim_v0.raw_env(), type(aec.unwrapped))


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


@pytest.mark.filterwarnings("ignore::UserWarning")  # PettingZoo warns on an illegal move
def test_illegal_action_loses_for_its_player() -> None:
    # PettingZoo's TerminateIllegalWrapper: -1 to the player of the illegal move, 0 to
    # the other, and the game is over for both.
    aec = env(game="nim", start=[2])
    aec.reset(seed=0)
    aec.step(2)  # player_0 takes 3 from a heap of 2
    assert all(aec.terminations.values())
    assert aec._cumulative_rewards == {"player_0": -1.0, "player_1": 0.0}
    with pytest.raises(AssertionError, match="action space"):  # AssertOutOfBoundsWrapper
        fresh = env(game="nim", start=[2])
        fresh.reset(seed=0)
        fresh.step(99)
    for strict in (raw_env(game="nim", start=[2]), env(game="nim", start=[2], illegal="raise")):
        strict.reset()
        with pytest.raises(IllegalMoveError, match="only 2"):
            strict.step(2)


def test_text_view_and_misere_rewards() -> None:
    aec = raw_env(game="nim", start=[2], misere=True)
    aec.reset(seed=0)
    assert "There are 2 items remaining" in aec.prompt()
    aec.step(aec.parse_action("2"))  # player_0 takes the last item: loses in misère
    assert aec._cumulative_rewards == {"player_0": -1.0, "player_1": 1.0}


def test_the_docs_pettingzoo_example_runs_to_the_end_of_a_game() -> None:
    """The example of docs/envs.md ("Two external agents: PettingZoo") as it stands: every
    name it uses is defined, and its loop plays one game to its end."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "envs.md").read_text()
    section = text[text.index("## Two external agents: PettingZoo") :]
    code = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)[0]
    namespace: dict = {}
    exec(compile(code, "docs/envs.md[pettingzoo]", "exec"), namespace)
    aec = namespace["aec"]
    assert not aec.agents  # the game ended: every agent is done
