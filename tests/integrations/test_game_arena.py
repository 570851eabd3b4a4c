"""google-deepmind/game_arena plays a metanim game through OpenSpiel.

game_arena's agent (`ChessLLMAgent`, generic in its prompt builder and response parser)
gets what Kaggle's OpenSpiel environment sends it, `serializedGameAndState` and
`legalActions`, rebuilds the state with `pyspiel.deserialize_game_and_state` (which loads
our registered game by its string), asks its model and submits an action id. The models
here are offline doubles in game_arena's `Model` form that read only the prompt text.
Optional extra `game-arena`; CI installs it and sets `METANIM_REQUIRE`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from metanim.games import game_from_prompt, make_game
from metanim.solver import optimal_move, solver_for
from tests.conftest import need

need("pyspiel")
need("game_arena")
import pyspiel  # noqa: E402
from game_arena.harness import agent as ga_agent  # noqa: E402
from game_arena.harness import tournament_util  # noqa: E402

from metanim.integrations import open_spiel as mos  # noqa: E402


class PromptReadingModel:
    """A game_arena `Model` double: reads the game and state from the prompt alone and
    answers in the prompt's Output Format, with the solver's move or a random legal one."""

    def __init__(self, optimal: bool, seed: int) -> None:
        self.optimal = optimal
        self.rng = np.random.default_rng(seed)
        self.prompts: list[str] = []

    def generate_with_text_input(self, model_input: Any) -> Any:
        self.prompts.append(model_input.prompt_text)
        game, state = game_from_prompt(model_input.prompt_text)
        if self.optimal:
            move = optimal_move(game, state, self.rng)
        else:
            legal = game.legal_moves(state)
            move = legal[int(self.rng.integers(len(legal)))]
        text = f'```json\n{{"reasoning": "...", "action": {game.move_text(move)}}}\n```'
        return tournament_util.GenerateReturn(main_response=text, main_response_and_thoughts=text)


@pytest.mark.parametrize("name", ["nim-31-k3", "kayles-2rows-misere", "chomp-5x5", "corner-queen"])
def test_game_arena_agents_play_a_whole_game(name: str) -> None:
    rules = make_game(name)
    game = mos.load_game(rules)
    solver_seat = 0 if solver_for(rules).outcome(rules.initial_state()) == "N" else 1
    models = [PromptReadingModel(optimal=(seat == solver_seat), seed=seat) for seat in (0, 1)]
    agents = [
        ga_agent.ChessLLMAgent(m, prompt_builder=mos.prompt, response_parser=mos.parse_response)
        for m in models
    ]
    state = game.new_initial_state()
    while not state.is_terminal():
        player = state.current_player()
        observation = {
            "serializedGameAndState": pyspiel.serialize_game_and_state(game, state),
            "legalActions": state.legal_actions(),
        }
        action = agents[player](observation, {})
        assert action["submission"] in state.legal_actions(), action
        assert action["actionString"] == state.action_to_string(player, action["submission"])
        state.apply_action(action["submission"])
    # The solver's side starts in an N-position and keeps it: it wins every time.
    assert state.returns()[solver_seat] == 1.0
    assert all(agent.num_model_calls > 0 for agent in agents) or len(state.history()) == 1
    assert models[0].prompts[0].startswith("#Game Role")
