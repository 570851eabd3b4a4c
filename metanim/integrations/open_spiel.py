"""Every game as an OpenSpiel Python game (optional extra `open_spiel`).

Importing this module registers one OpenSpiel game per game in `metanim.games.GAMES`
(`metanim_nim`, `metanim_fibonacci`, `metanim_kayles`, `metanim_chomp`,
`metanim_corner_queen`, and any family added there later), so that

    import metanim.integrations.open_spiel
    game = pyspiel.load_game("metanim_nim(heaps=3;4;5,max_take=0,misere=True)")

works with every OpenSpiel algorithm, bot and harness (google-deepmind/game_arena loads
its games through `pyspiel.load_game`). The games follow OpenSpiel's own Python games
(open_spiel/python/games/tic_tac_toe.py): a `pyspiel.Game` and `pyspiel.State` pair,
`GameType`/`GameInfo` records, and Python observers for the observation tensor
(perfect_recall=False) and the information-state tensor (perfect_recall=True).

Parameters are the game's constructor arguments, typed from its signature, because
OpenSpiel refuses a parameter whose type differs from its default's:

- a bool, int, float or str argument keeps its type (`misere=True`, `n=20`);
- a list of whole numbers is a string of `;`-separated numbers, OpenSpiel's own form
  (its `nim(pile_sizes=1;3;5;7)`); a one-element list ends with `;` (`heaps=31;`), since
  OpenSpiel reads a bare `31` as an int;
- an optional whole number (Nim's `max_take`) takes 0 for None, an optional list ""
  (Corner Queen's `start`).

`game_string(game)` writes any configuration in that form and `load_game(game)` loads it,
so a preset is `load_game(make_game("nim-31-k3-misere"))`. `SolverBot` is an OpenSpiel
bot that plays the solver's moves and `SolverEvaluator` an MCTS evaluator that returns the
solver's exact values. See docs/integrations.md.
"""

from __future__ import annotations

import inspect
import json
import types
import typing
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import mcts

from metanim.games import GAMES, Game, make_game
from metanim.integrations._positions import move_prompt
from metanim.solver import solver_for

#: OpenSpiel short names start with this, then the game's name: `metanim_nim`.
PREFIX = "metanim_"

#: The information-state tensor holds every move of the longest game as a one-hot row
#: (max_game_length x num_actions floats); larger configurations refuse it by name.
MAX_HISTORY_TENSOR = 10_000_000


def short_name(name: str) -> str:
    """The OpenSpiel short name of a game: `short_name("nim") == "metanim_nim"`."""
    return PREFIX + name


# ------------------------------------------------------------------ parameters
def _to_spiel(kind: str, value: Any) -> bool | int | float | str:
    """A constructor argument as the OpenSpiel value of a parameter of `kind`."""
    if value is None:
        return 0 if kind == "int" else ""
    if kind == "ints":
        items = [int(v) for v in (value if isinstance(value, list | tuple) else [value])]
        text = ";".join(str(v) for v in items)
        return text + ";" if len(items) == 1 else text
    return value  # type: ignore[no-any-return]


@dataclass(frozen=True)
class _Param:
    """One constructor argument as an OpenSpiel parameter (see the module docstring)."""

    name: str
    kind: str  # "bool", "int", "float", "str" or "ints" (a ;-separated string)
    optional: bool  # None is allowed: 0 for an int, "" for a list
    default: bool | int | float | str

    def to_spiel(self, value: Any) -> bool | int | float | str:
        return _to_spiel(self.kind, value)

    def from_spiel(self, value: Any) -> Any:
        if self.optional and value in (0, "") and not isinstance(value, bool):
            return None
        if self.kind != "ints":
            return value
        parts = [p.strip() for p in str(value).split(";") if p.strip()]
        try:
            return [int(p) for p in parts]
        except ValueError:
            raise ValueError(
                f"{self.name} is a list of whole numbers separated by ';' (e.g. 3;4;5, "
                f"or 31; for one), got {value!r}"
            ) from None


def _param(name: str, default: Any, hint: Any) -> _Param:
    """The parameter of one constructor argument, from its default and type hint."""
    args = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    optional = default is None or type(None) in args
    if isinstance(default, bool):
        return _Param(name, "bool", optional, default)
    if isinstance(default, list | tuple) or any(
        typing.get_origin(a) in (list, tuple) for a in args
    ):
        return _Param(name, "ints", optional, _to_spiel("ints", default))
    for kind, typ in (("int", int), ("float", float), ("str", str)):
        if isinstance(default, typ) or (default is None and typ in args):
            return _Param(name, kind, optional, _to_spiel(kind, default))
    raise TypeError(f"no OpenSpiel parameter type for {name}={default!r} ({hint})")


def parameters(cls: type[Game[Any, Any]]) -> dict[str, _Param]:
    """The OpenSpiel parameters of a game class, from its constructor's signature."""
    hints = typing.get_type_hints(cls.__init__)
    return {
        p.name: _param(p.name, p.default, hints.get(p.name))
        for p in inspect.signature(cls.__init__).parameters.values()
        if p.name != "self"
    }


def spiel_params(game: Game[Any, Any]) -> dict[str, bool | int | float | str]:
    """A game configuration's parameters as OpenSpiel values (see the module docstring)."""
    specs = parameters(type(game))
    return {name: specs[name].to_spiel(value) for name, value in game.params.items()}


def game_string(game: Game[Any, Any]) -> str:
    """The OpenSpiel game string of a configuration (parameters sorted, as OpenSpiel
    writes them: `str(load_game(game)) == game_string(game)`); `pyspiel.load_game` reads
    it back.

    >>> game_string(make_game("nim-31-k3-misere"))
    'metanim_nim(disguise=False,heaps=31;,max_take=3,misere=True)'
    """
    # OpenSpiel writes every parameter of the game's specification, a default too.
    defaults = {name: spec.default for name, spec in parameters(type(game)).items()}
    values = ",".join(f"{k}={v}" for k, v in sorted({**defaults, **spiel_params(game)}.items()))
    return f"{short_name(game.name)}({values})"


def load_game(game: Game[Any, Any] | str, **params: Any) -> pyspiel.Game:
    """The OpenSpiel game of a configuration, or of a game or preset name and its parameters.

    `load_game("nim-31-k4")`, `load_game("kayles", rows=[5, 6], misere=True)` and
    `load_game(make_game("chomp", rows=3, cols=4))` all work; the result's string
    (`str(game)`) loads the same game with `pyspiel.load_game`.
    """
    if isinstance(game, str):
        game = make_game(game, **params)
    elif params:
        raise TypeError("parameters go with a game name, not with a Game")
    return pyspiel.load_game(short_name(game.name), spiel_params(game))


def metanim_game(game: pyspiel.Game) -> Game[Any, Any]:
    """The metanim `Game` behind a registered OpenSpiel game."""
    if not isinstance(game, MetaNimGame):
        raise TypeError(f"{game} is not a MetaNIM OpenSpiel game")
    return game.rules


# ------------------------------------------------------------------ game, state
def _game_type(cls: type[Game[Any, Any]]) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=short_name(cls.name),
        long_name=f"MetaNIM {cls.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={n: p.default for n, p in parameters(cls).items()},
    )


class MetaNimGame(pyspiel.Game):
    """One configuration of a metanim game as an OpenSpiel game (two players, zero sum).

    Player 0 moves first; the winner scores +1 and the loser -1 (normal play: whoever
    makes the last move wins; misère: whoever makes it loses). An action is the game's
    flat action id (`Game.action_id`), and its string the move's canonical text
    (`Game.move_text`), which `State.string_to_action` reads back.
    """

    #: The metanim game class; each registered game is a subclass that sets it.
    rules_class: type[Game[Any, Any]]

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        cls = self.rules_class
        params = params or {}
        specs = parameters(cls)
        self.rules: Game[Any, Any] = cls(
            **{name: specs[name].from_spiel(value) for name, value in params.items()}
        )
        info = self.rules.info
        super().__init__(
            _game_type(cls),
            pyspiel.GameInfo(
                num_distinct_actions=info.num_actions,
                max_chance_outcomes=0,
                num_players=2,
                min_utility=-1.0,
                max_utility=1.0,
                utility_sum=0.0,
                max_game_length=info.max_game_length,
            ),
            params,
        )

    def new_initial_state(self) -> MetaNimState:
        return MetaNimState(self)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        # Pickled as its game string, loaded back through this module's registration.
        return _load_registered, (str(self),)

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: Any = None
    ) -> StateObserver | HistoryObserver:
        """The observation (no recall) or the information state (perfect recall)."""
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        if iig_obs_type is not None and iig_obs_type.perfect_recall:
            return HistoryObserver(self.rules)
        return StateObserver(self.rules)


class MetaNimState(pyspiel.State):
    """A position and the player to move; `position` is the metanim state value."""

    def __init__(self, game: MetaNimGame) -> None:
        super().__init__(game)
        self.rules = game.rules
        self.position: Any = self.rules.initial_state()
        self.mover = 0
        self._over = self.rules.is_terminal(self.position)

    def current_player(self) -> int:
        return int(pyspiel.PlayerId.TERMINAL) if self._over else self.mover

    def _legal_actions(self, player: int) -> list[int]:
        rules = self.rules
        return sorted(rules.action_id(m) for m in rules.legal_moves(self.position))

    def _apply_action(self, action: int) -> None:
        self.position = self.rules.child(self.position, self.rules.move_from_action(action))
        self.mover = 1 - self.mover
        self._over = self.rules.is_terminal(self.position)

    def _action_to_string(self, player: int, action: int) -> str:
        return self.rules.move_text(self.rules.move_from_action(action))

    def is_terminal(self) -> bool:
        return self._over

    def returns(self) -> list[float]:
        if not self._over:
            return [0.0, 0.0]
        # The player to move at the end has no move: a win under misère, a loss otherwise.
        winner = self.mover if self.rules.mover_wins_at_terminal else 1 - self.mover
        return [1.0 if p == winner else -1.0 for p in (0, 1)]

    def __str__(self) -> str:
        # The player to move is part of the key: value iteration and OpenSpiel's minimax
        # solver store values by this string, and the same position is reached after an
        # odd and an even number of moves.
        to_move = "terminal" if self._over else f"player {self.mover} to move"
        return f"{json.dumps(self.rules.to_json(self.position))}, {to_move}"


# ------------------------------------------------------------------ observers
def _board_and_player(rules: Game[Any, Any]) -> dict[str, tuple[int, ...]]:
    return {"player": (2,), "board": tuple(rules.info.observation_shape)}


class _Observer:
    """A float32 tensor with named views (`dict`), as OpenSpiel's PyObserver interface asks."""

    def __init__(self, shapes: dict[str, tuple[int, ...]]) -> None:
        sizes = {k: int(np.prod(s)) for k, s in shapes.items()}
        self.tensor = np.zeros(sum(sizes.values()), np.float32)
        self.dict: dict[str, np.ndarray] = {}
        start = 0
        for key, shape in shapes.items():
            self.dict[key] = self.tensor[start : start + sizes[key]].reshape(shape)
            start += sizes[key]

    def _set_board(self, state: MetaNimState) -> None:
        self.tensor.fill(0)
        if not state.is_terminal():
            self.dict["player"][state.mover] = 1
        self.dict["board"][...] = state.rules.observation(state.position)


class StateObserver(_Observer):
    """The observation tensor: the player to move (one-hot, zero at the end) and the
    game's own observation (`Game.observation`: heap sizes, pins, squares...)."""

    def __init__(self, rules: Game[Any, Any]) -> None:
        super().__init__(_board_and_player(rules))

    def set_from(self, state: MetaNimState, player: int) -> None:
        self._set_board(state)

    def string_from(self, state: MetaNimState, player: int) -> str:
        return str(state)


class HistoryObserver(_Observer):
    """The information-state tensor (perfect recall): the observation tensor, then one
    one-hot row per move played (`history`: max_game_length x num_actions)."""

    def __init__(self, rules: Game[Any, Any]) -> None:
        info = rules.info
        size = info.max_game_length * info.num_actions
        if size > MAX_HISTORY_TENSOR:
            raise ValueError(
                f"the information-state tensor of {rules!r} would hold {size:,} floats "
                f"(max_game_length x num_actions; the limit is {MAX_HISTORY_TENSOR:,}): "
                "use the observation tensor, which is enough for a perfect-information game"
            )
        super().__init__(
            {**_board_and_player(rules), "history": (info.max_game_length, info.num_actions)}
        )

    def set_from(self, state: MetaNimState, player: int) -> None:
        self._set_board(state)
        history = self.dict["history"]
        for ply, action in enumerate(state.history()):
            history[ply, action] = 1

    def string_from(self, state: MetaNimState, player: int) -> str:
        moves = [state.rules.move_text(state.rules.move_from_action(a)) for a in state.history()]
        return " ".join(moves) or "start"


# ------------------------------------------------------------------ language models
def prompt(state: MetaNimState, style: str = "react") -> str:
    """The game prompt of a state with its Output Format (style react, standard or cot).

    It has the form of game_arena's `PromptBuilder` (a function of the OpenSpiel state).
    """
    return move_prompt(state.rules, state.position, style)


def reply_action(state: MetaNimState, reply: str) -> int:
    """The action a model's reply names in `state`, read by the game's reply parser.

    Raises `metanim.games.MoveError` (unparsable or illegal, with the reason).
    """
    return int(state.rules.action_id(state.rules.parse_move(reply, state.position)))


def parse_response(response: Any, state: MetaNimState) -> str:
    """game_arena's `ResponseParser`: the action string (what `State.string_to_action`
    reads) of the move in `response.main_response`, read by the game's reply parser."""
    return str(
        state.action_to_string(state.current_player(), reply_action(state, response.main_response))
    )


# ------------------------------------------------------------------ solver
def _mover_wins(state: MetaNimState) -> bool:
    return solver_for(state.rules).outcome(state.position) == "N"


class SolverEvaluator(mcts.Evaluator):
    """An MCTS evaluator with the solver's exact values (and uniform priors).

    `evaluate` returns +1 for the player to move in an N-position and -1 in a
    P-position (the opposite for the other player), as OpenSpiel's MCTSBot expects.
    """

    def evaluate(self, state: MetaNimState) -> np.ndarray:
        if state.is_terminal():
            return np.array(state.returns())
        value = 1.0 if _mover_wins(state) else -1.0
        return np.array([value, -value] if state.current_player() == 0 else [-value, value])

    def prior(self, state: MetaNimState) -> list[tuple[int, float]]:
        legal = state.legal_actions(state.current_player())
        return [(action, 1.0 / len(legal)) for action in legal]


class SolverBot(pyspiel.Bot):
    """An OpenSpiel bot that plays a seeded uniform choice among the solver's winning
    moves (any legal move in a P-position), like `metanim.solver.optimal_move`."""

    def __init__(self, player_id: int, seed: int | None = None) -> None:
        pyspiel.Bot.__init__(self)
        self._player_id = player_id
        self._rng = np.random.default_rng(seed)

    def player_id(self) -> int:
        return self._player_id

    def restart_at(self, state: pyspiel.State) -> None:
        pass

    def step(self, state: MetaNimState) -> int:
        move = solver_for(state.rules).optimal_move(state.position, self._rng)
        return int(state.rules.action_id(move))


def _load_registered(text: str) -> pyspiel.Game:
    return pyspiel.load_game(text)


#: The registered OpenSpiel game class of each game, by OpenSpiel short name.
GAME_CLASSES: dict[str, type[MetaNimGame]] = {}


def register() -> None:
    """Register every game of `metanim.games.GAMES` with OpenSpiel (idempotent).

    OpenSpiel keeps the registered creator until the process exits, after Python has
    shut down; like OpenSpiel's own Python games, the creator is a class (which Python
    never frees before then), not a function that the exit would free without the GIL.
    """
    known = set(pyspiel.registered_names())
    for cls in GAMES.values():
        name = short_name(cls.name)
        if name not in GAME_CLASSES:
            title = "".join(part.title() for part in cls.name.split("_"))
            GAME_CLASSES[name] = type(f"MetaNim{title}Game", (MetaNimGame,), {"rules_class": cls})
        if name not in known:
            pyspiel.register_game(_game_type(cls), GAME_CLASSES[name])


register()

__all__ = [
    "GAME_CLASSES",
    "MAX_HISTORY_TENSOR",
    "PREFIX",
    "HistoryObserver",
    "MetaNimGame",
    "MetaNimState",
    "SolverBot",
    "SolverEvaluator",
    "StateObserver",
    "game_string",
    "load_game",
    "metanim_game",
    "parameters",
    "parse_response",
    "prompt",
    "register",
    "reply_action",
    "short_name",
    "spiel_params",
]
