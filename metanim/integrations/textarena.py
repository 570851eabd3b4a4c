"""Every game as a two-player TextArena env (optional extra `textarena`).

Importing this module registers, for each game in `metanim.games.GAMES` and each play
rule, a TextArena id the way TextArena registers its own games (`register_with_versions`:
the id with TextArena's default wrappers, `-train` with its board-game wrappers, `-raw`
with none):

    MetaNIM-Nim-v0           MetaNIM-Nim-v0-misere
    MetaNIM-Fibonacci-v0     MetaNIM-Fibonacci-v0-misere
    MetaNIM-Kayles-v0        MetaNIM-Kayles-v0-misere
    MetaNIM-Chomp-v0         MetaNIM-Chomp-v0-misere
    MetaNIM-CornerQueen-v0   MetaNIM-CornerQueen-v0-misere

(and `<id>-train`, `<id>-raw`), so that `textarena.make("MetaNIM-Nim-v0")` gives an env
with TextArena's `reset(num_players=2, seed)` / `get_observation()` / `step(action)` /
`close()` protocol. Keyword arguments of `make` are the game's parameters (`heaps=[31],
max_take=4`), `start` ("auto", "initial", "random_n" or a state) and `error_allowance`.

Each player first sees the game prompt's Game Role, Objective and Game Rule sections;
each turn's board is its Current State, Task and Output Format sections, so the first
message and the last board together are exactly the prompt that the rest of metanim
shows for that position. A reply is read by the game's one reply parser; an unparsable or
illegal one is an invalid move (TextArena's `error_allowance` re-asks). Every legal move
is graded by the solver: `step`'s info holds `grade`, and `close()`'s game info counts,
per player, `n_positions` (turns in an N-position) and `winning_moves` (winning moves
played in them); the env's `state.game_state` holds the `start` and `position` states and
the `moves` played (canonical text). `SolverAgent` and `RandomAgent` are offline TextArena agents.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import textarena as ta
from textarena.envs import BOARDGAME_WRAPPERS, DEFAULT_WRAPPERS
from textarena.envs.registration import ENV_REGISTRY, register_with_versions

from metanim.envs import resolve_start, start_setting
from metanim.games import GAMES, Game, game_from_prompt, make_game
from metanim.games.reply import output_format
from metanim.integrations._grading import grade_reply
from metanim.solver import optimal_move

VERSION = 0
_STATE_SECTION = "#Current State:"


def env_id(name: str, misere: bool = False) -> str:
    """The TextArena id of a game: `env_id("corner_queen", True)` is
    `"MetaNIM-CornerQueen-v0-misere"`."""
    title = "".join(part.title() for part in name.split("_"))
    return f"MetaNIM-{title}-v{VERSION}" + ("-misere" if misere else "")


#: Every registered id without a wrapper suffix (add `-train` or `-raw` for the others).
ENV_IDS: list[str] = [env_id(name, misere) for name in GAMES for misere in (False, True)]


class MetaNimEnv(ta.Env):
    """One game configuration as a two-player TextArena env; player 0 moves first.

    Args:
        game: a game or preset name (`"nim"`, `"kayles-2rows"`).
        start: "auto" (the initial state if the first player can win from it, else a
            random N-position seeded by `reset`'s seed), "initial", "random_n", or a state.
        error_allowance: invalid replies a player may make in a row before losing
            (TextArena's `TwoPlayerState`).
        style: the Output Format shown each turn: "react", "standard" or "cot".
        **params: the game's parameters (`heaps`, `max_take`, `misere`, ...).
    """

    def __init__(
        self,
        game: str = "nim",
        start: Any = "auto",
        error_allowance: int = 1,
        style: str = "react",
        **params: Any,
    ) -> None:
        super().__init__()
        self.game: Game[Any, Any] = make_game(game, **params)
        self.start = start_setting(self.game, start, preset=True)
        self.error_allowance = error_allowance
        output_format(style, "")  # refuses an unknown style here, not at the first turn
        self.style = style

    # ----------------------------------------------------------------- protocol
    def reset(self, num_players: int, seed: int | None = None) -> None:
        self.state = ta.TwoPlayerState(
            num_players=num_players, seed=seed, error_allowance=self.error_allowance
        )
        position = self._start_position(seed)
        self.state.reset(
            game_state={"start": position, "position": position, "moves": []},
            player_prompt_function=self._player_prompt,
        )
        for pid in (0, 1):
            self.state.game_info[pid].update(n_positions=0, winning_moves=0)
        self.state.add_observation(
            message=self._board(position), observation_type=ta.ObservationType.GAME_BOARD
        )

    def step(self, action: str) -> tuple[bool, ta.Info]:
        pid = self.state.current_player_id
        position = self.state.game_state["position"]
        self.state.add_observation(
            from_id=pid, message=action, observation_type=ta.ObservationType.PLAYER_ACTION
        )
        grade = grade_reply(self.game, position, action)
        if grade.error is not None:
            self.state.set_invalid_move(reason=grade.explanation)
            return self.state.step()
        move = self.game.parse_move(grade.answer or "", position)
        after = self.game.child(position, move)
        self.state.game_state["position"] = after
        self.state.game_state["moves"].append(grade.answer)
        info = self.state.game_info[pid]
        info["n_positions"] += grade.outcome == "N"
        info["winning_moves"] += grade.outcome == "N" and grade.correct
        self.state.step_info["grade"] = {
            "player": pid,
            "move": grade.answer,
            "outcome": grade.outcome,
            "winning": grade.outcome == "N" and grade.correct,
            "explanation": grade.explanation,
        }
        self.state.add_observation(
            message=f"Player {pid}: {self.game.move_words(move)}.",
            observation_type=ta.ObservationType.GAME_ACTION_DESCRIPTION,
        )
        if self.game.is_terminal(after):
            # The next player has no move: a win under misère play, a loss otherwise.
            winner = 1 - pid if self.game.mover_wins_at_terminal else pid
            rule = (
                "misère: whoever makes the last move loses"
                if self.game.misere
                else ("normal play: whoever makes the last move wins")
            )
            self.state.set_winner(
                player_id=winner, reason=f"Player {pid} made the last move ({rule})."
            )
        else:
            self.state.add_observation(
                message=self._board(after), observation_type=ta.ObservationType.GAME_BOARD
            )
        return self.state.step()

    # ----------------------------------------------------------------- text
    def _player_prompt(self, player_id: int, game_state: Mapping[str, Any]) -> str:
        """Game Role, Objective and Game Rule: the prompt up to its Current State."""
        full = self.game.prompt(game_state["position"], f"Player {player_id}")
        return full[: full.index(_STATE_SECTION)].rstrip("\n")

    def _board(self, position: Any) -> str:
        """Current State, Task and Output Format: the rest of the prompt."""
        full = self.game.prompt(position)
        rest = full[full.index(_STATE_SECTION) :]
        return f"{rest}\n{output_format(self.style, self.game.action_schema(position))}"

    def _start_position(self, seed: int | None) -> Any:
        if not isinstance(self.start, str):
            return self.start
        if self.start == "initial":
            return self.game.initial_state()
        return resolve_start(self.game, self.start, np.random.default_rng(seed), mover_wins=True)


# ---------------------------------------------------------------------- agents
def observed_position(observation: str) -> tuple[Game[Any, Any], Any]:
    """The game and the current state in a player's observation text: its first game
    prompt sections (role and rules) with the last Current State shown."""
    head = observation[: observation.index(_STATE_SECTION)]
    last = observation[observation.rindex(_STATE_SECTION) :]
    return game_from_prompt(f"{head}\n{last}")


class SolverAgent(ta.Agent):
    """A TextArena agent that reads the position from its observation text and answers
    the solver's move (a seeded choice among the winning moves) in the Output Format."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, observation: str) -> str:
        game, state = observed_position(observation)
        return _reply(game, optimal_move(game, state, self.rng))


class RandomAgent(ta.Agent):
    """A TextArena agent that answers a uniformly random legal move (seeded)."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, observation: str) -> str:
        game, state = observed_position(observation)
        count = game.num_legal_moves(state)
        return _reply(game, game.legal_move_at(state, int(self.rng.integers(count))))


def _reply(game: Game[Any, Any], move: Any) -> str:
    return f'```json\n{{"action": {game.move_text(move)}}}\n```'


# ---------------------------------------------------------------------- registry
def register() -> None:
    """Register every game and play rule with TextArena (idempotent)."""
    for name in GAMES:
        for misere in (False, True):
            if env_id(name, misere) not in ENV_REGISTRY:
                register_with_versions(
                    id=env_id(name, misere),
                    entry_point=MetaNimEnv,
                    wrappers={"default": DEFAULT_WRAPPERS, "-train": BOARDGAME_WRAPPERS},
                    game=name,
                    misere=misere,
                )


register()

__all__ = [
    "ENV_IDS",
    "VERSION",
    "MetaNimEnv",
    "RandomAgent",
    "SolverAgent",
    "env_id",
    "observed_position",
    "register",
]
