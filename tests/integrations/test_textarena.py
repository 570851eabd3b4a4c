"""Every game and play rule as a TextArena env, played through TextArena's own protocol.

Optional extra `textarena`; CI installs it and sets `METANIM_REQUIRE`. Games are played
the way TextArena's examples play them (`make`, `reset(num_players=2)`, then
`get_observation` / agent / `step` until done, `close`), with TextArena's wrappers, by
two offline agents written to TextArena's `Agent` protocol (a string in, a string out).
"""

from __future__ import annotations

from typing import Any

import pytest

from metanim.games import GAMES, make_game
from metanim.games.reply import with_format
from metanim.solver import outcome
from tests.conftest import need

need("textarena")
import textarena as ta  # noqa: E402

from metanim.integrations import textarena as mta  # noqa: E402


def play(
    env: Any, agents: dict[int, Any], seed: int
) -> tuple[dict[int, int], dict[int, Any], list[dict[str, Any]]]:
    """TextArena's game loop; returns the rewards, the game info and every step's grade."""
    env.reset(num_players=2, seed=seed)
    done, grades = False, []
    while not done:
        player_id, observation = env.get_observation()
        done, info = env.step(action=agents[player_id](observation))
        if "grade" in info:
            grades.append(info["grade"])
    rewards, game_info = env.close()
    return rewards, game_info, grades


def test_ids_cover_every_game_and_play_rule() -> None:
    assert len(mta.ENV_IDS) == 2 * len(GAMES)
    for env_id in mta.ENV_IDS:
        for suffix in ("", "-train", "-raw"):
            env = ta.make(env_id + suffix)
            env.reset(num_players=2, seed=0)
            player_id, observation = env.get_observation()
            assert player_id == 0
            assert env.game.misere == env_id.endswith("-misere")
            assert env.game == make_game(env.game.name, misere=env.game.misere)
            if suffix == "-raw":  # TextArena's raw list of (sender, message, type)
                assert [kind for _, _, kind in observation] == [
                    ta.ObservationType.PROMPT,
                    ta.ObservationType.GAME_BOARD,
                ]
            else:
                assert observation.strip().startswith(("[GAME] #Game Role", "#Game Role"))


@pytest.mark.parametrize("env_id", mta.ENV_IDS)
@pytest.mark.parametrize("wrappers", ["", "-train"], ids=["default", "train"])
def test_a_full_game_between_textarena_agents(env_id: str, wrappers: str) -> None:
    """SolverAgent against RandomAgent, both seats: the winner is who the play rule names
    for the moves made (replayed by the rules), the solver's side wins exactly when it was
    ever to move in an N-position, and there every move it made was graded winning."""
    for solver_seat in (0, 1):
        env = ta.make(env_id + wrappers)
        agents = {solver_seat: mta.SolverAgent(seed=1), 1 - solver_seat: mta.RandomAgent(seed=2)}
        rewards, game_info, grades = play(env, agents, seed=solver_seat)
        game, moves = env.game, env.state.game_state["moves"]
        position = env.state.game_state["start"]
        for move in moves:
            position = game.apply(position, game.parse_move(move, position))
        assert game.is_terminal(position)
        last = (len(moves) - 1) % 2
        winner = 1 - last if game.misere else last
        assert rewards == {winner: 1, 1 - winner: -1}
        mine = game_info[solver_seat]
        assert (winner == solver_seat) == (mine["n_positions"] > 0)
        assert mine["winning_moves"] == mine["n_positions"]
        assert [g["move"] for g in grades] == moves
        assert (
            sum(g["winning"] for g in grades if g["player"] == solver_seat) == mine["n_positions"]
        )


def test_observation_is_metanim_prompt_of_the_position() -> None:
    """The first message and the last board (TextArena's board-game wrapper puts the
    move messages between them) are exactly the prompt of the position, and
    `observed_position` reads back the env's own state."""
    env = ta.make("MetaNIM-Chomp-v0-train", rows=3, cols=4)
    env.reset(num_players=2, seed=0)
    env.step(action='{"action": [2, 3]}')
    player_id, observation = env.get_observation()
    position = env.state.game_state["position"]
    expected = with_format(
        env.game.prompt(position, f"Player {player_id}"), "react", env.game.action_schema(position)
    )
    cut = expected.index("#Current State:")
    assert observation.startswith(expected[:cut].rstrip("\n"))  # the first message
    assert observation.endswith(expected[cut:])  # the board: state, task, output format
    assert mta.observed_position(observation) == (env.game, position)


def test_invalid_replies_use_textarena_error_allowance() -> None:
    env = ta.make("MetaNIM-Nim-v0", heaps=[5, 6], max_take=None)
    env.reset(num_players=2, seed=0)
    done, _ = env.step(action="I take a few")
    assert not done
    player_id, observation = env.get_observation()
    assert player_id == 0 and "attempted an invalid move. Reason: unparsable" in observation
    done, _ = env.step(action='{"action": [0, 9]}')  # only 5 in heap 0: illegal, second error
    assert done
    rewards, game_info = env.close()
    assert rewards == {0: -1, 1: 1} and game_info[0]["invalid_move"]
    assert "illegal" in game_info[0]["reason"]


def test_parameters_and_seeded_random_start() -> None:
    env = ta.make("MetaNIM-Kayles-v0-misere", rows=[4, 7], start="random_n")
    assert env.game == make_game("kayles", rows=[4, 7], misere=True)
    starts = []
    for seed in (5, 5, 6):
        env.reset(num_players=2, seed=seed)
        starts.append(env.state.game_state["position"])
    assert starts[0] == starts[1]
    assert all(outcome(env.game, s) == "N" for s in starts)
    with pytest.raises(ValueError, match="output format"):
        ta.make("MetaNIM-Nim-v0", style="haiku")
