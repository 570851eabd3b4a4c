"""PettingZoo AEC view: two external agents play one MetaNIM game against each other.

Needs the optional extra `pettingzoo` (`pip install metanim-arena[pettingzoo]`).
Follows PettingZoo's classic board games: the observation of each agent is a
dict with the board (`"observation"`) and its legal actions (`"action_mask"`,
all zeros when it is not that agent's turn).

Loaded the way PettingZoo's classic games are, one module per game:

>>> from metanim.envs.pettingzoo import nim_v0
>>> aec = nim_v0.env(preset="nim-31-k3")
>>> aec.reset(seed=0)
>>> aec.agent_selection
'player_0'

`env()` wraps the raw env exactly as PettingZoo's classic envs do: an illegal action
ends the game with -1 for its player (`TerminateIllegalWrapper`), an action outside the
action space is an assertion error (`AssertOutOfBoundsWrapper`), and calls out of order
are refused (`OrderEnforcingWrapper`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import AgentSelector, wrappers

from metanim.envs import _render
from metanim.envs.env import START_MODES, _as_state, _build_game, resolve_start
from metanim.envs.opponents import as_action_index
from metanim.games import Game, IllegalMoveError

ILLEGAL_POLICIES = ("lose", "raise")
#: PettingZoo's classic games give the player of an illegal move -1 (and the other 0).
ILLEGAL_REWARD = -1.0


class MetaNimAECEnv(AECEnv[str, dict[str, np.ndarray], int]):
    """Two players, `player_0` (moves first) and `player_1`, alternate on one game.

    Rewards: +1 to the winner and -1 to the loser when the game ends. The raw env
    raises `IllegalMoveError` (or `UnparsableMoveError` for an unreadable answer text)
    on a move the rules forbid; `env()` turns an illegal action id into PettingZoo's
    "illegal move loses" with its `TerminateIllegalWrapper`. `step` also takes a
    model's reply text, read by the game's reply parser (`parse_action` gives the id).

    Arguments are those of `ImpartialGameEnv` without the opponent and the seat:
    `game`, `preset`, game sizes or `game_params`, `misere`, `start` ("random_n",
    the default without a preset: an N-position for `player_0`; "initial", the
    default with a preset; or a state), `render_mode` ("ansi", "rgb_array", or
    "human": the ansi board printed). `reset(options={"state": ...})` starts one game
    from a given state.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "metanim_v0",
        "render_modes": ["ansi", "rgb_array", "human"],
        "is_parallelizable": False,
        "render_fps": 4,
    }

    def __init__(
        self,
        game: str | Game[Any, Any] = "nim",
        *,
        preset: str | None = None,
        game_params: Mapping[str, Any] | None = None,
        misere: bool | None = None,
        start: str | Any = None,
        render_mode: str | None = None,
        **params: Any,
    ) -> None:
        super().__init__()
        self.game: Game[Any, Any] = _build_game(game, preset, game_params, misere, params)
        # PettingZoo's classic modules name their env "<game>_v<version>".
        self.metadata = {**self.metadata, "name": f"{self.game.name}_v0"}
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        if start is None:
            start = "initial" if preset is not None else "random_n"
        is_mode = isinstance(start, str) and start in START_MODES
        self._start = start if is_mode else self.game.validate_state(_as_state(start))
        self.render_mode = render_mode

        info = self.game.info
        self.possible_agents = ["player_0", "player_1"]
        board = spaces.Box(0, info.observation_high, info.observation_shape, dtype=np.int64)
        mask = spaces.Box(0, 1, (info.num_actions,), dtype=np.int8)
        self.observation_spaces = {
            a: spaces.Dict({"observation": board, "action_mask": mask})
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(info.num_actions) for a in self.possible_agents}
        self.np_random, _ = seeding.np_random(None)
        self._state: Any = self.game.initial_state()

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        start = self._start
        if options and "state" in options:
            start = self.game.validate_state(_as_state(options["state"]))
        self._state = resolve_start(self.game, start, self.np_random, mover_wins=True)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._selector = AgentSelector(self.agents)
        self.agent_selection = self._selector.reset()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if agent == self.agent_selection and not self.terminations[agent]:
            mask = self.game.action_mask(self._state)
        else:
            mask = np.zeros(self.game.info.num_actions, dtype=np.int8)
        return {"observation": self.game.observation(self._state), "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        other = self.possible_agents[1 - self.possible_agents.index(agent)]
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        move = self._move(action)  # MoveError: the wrappers of env() handle illegal ids
        self._state = self.game.child(self._state, move)
        self.infos[agent] = {"move": self.game.move_text(move)}
        if self.game.is_terminal(self._state):
            # The player to move at a terminal state wins exactly in misère play.
            if self.game.mover_wins_at_terminal:
                self._end(winner=other, loser=agent)
            else:
                self._end(winner=agent, loser=other)
        self.agent_selection = self._selector.next()
        self._accumulate_rewards()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode in ("ansi", "human"):
            text = _render.ansi(self.game, self._state, f"{self.agent_selection} to move")
            if self.render_mode == "human":
                print(text)
                return None
            return text
        if self.render_mode == "rgb_array":
            return _render.rgb(self.game, self._state)
        return None

    def close(self) -> None:
        pass

    # ----------------------------------------------------------------- text view
    def prompt(self, agent_name: str | None = None) -> str:
        """The game prompt of the current state for the agent to move."""
        return self.game.prompt(self._state, agent_name or self.agent_selection)

    def parse_action(self, text: str) -> int:
        """The action id of an answer text; raises `UnparsableMoveError`/`IllegalMoveError`."""
        return self.game.action_id(self.game.parse_move(text, self._state))

    # ----------------------------------------------------------------- internals
    def _move(self, action: Any) -> Any:
        if isinstance(action, str):
            return self.game.parse_move(action, self._state)
        index = as_action_index(action)
        if index is None or not 0 <= index < self.game.info.num_actions:
            raise IllegalMoveError(f"action {action!r} is not an action id of the action space")
        move = self.game.move_from_action(index)
        if not self.game.is_legal(self._state, move):
            raise IllegalMoveError(self.game.why_illegal(self._state, move), str(action))
        return move

    def _end(self, *, winner: str, loser: str) -> None:
        self.rewards[winner], self.rewards[loser] = 1.0, -1.0
        self.terminations = {a: True for a in self.agents}
        for agent in self.agents:
            self.infos[agent]["winner"] = winner


def raw_env(**kwargs: Any) -> MetaNimAECEnv:
    """The unwrapped AEC env (PettingZoo's `raw_env` convention)."""
    return MetaNimAECEnv(**kwargs)


def env(*, illegal: str = "lose", **kwargs: Any) -> AECEnv[str, dict[str, np.ndarray], int]:
    """The AEC env wrapped as PettingZoo's classic envs are.

    Args:
        illegal: "lose" (PettingZoo's `TerminateIllegalWrapper`: an action id outside
            the mask ends the game, -1 to its player, 0 to the other) or "raise" (the
            raw env's `IllegalMoveError` reaches the caller).
        **kwargs: The arguments of `MetaNimAECEnv`.
    """
    if illegal not in ILLEGAL_POLICIES:
        raise ValueError(f"illegal must be one of {ILLEGAL_POLICIES}, got {illegal!r}")
    aec: AECEnv[str, dict[str, np.ndarray], int] = MetaNimAECEnv(**kwargs)
    if illegal == "lose":
        aec = wrappers.TerminateIllegalWrapper(aec, illegal_reward=ILLEGAL_REWARD)
    aec = wrappers.AssertOutOfBoundsWrapper(aec)
    return wrappers.OrderEnforcingWrapper(aec)


__all__ = ["MetaNimAECEnv", "env", "raw_env"]
