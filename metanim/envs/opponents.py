"""Opponents: the policy that replies inside `ImpartialGameEnv.step()`.

An opponent is any callable `policy(game, state, rng)` that returns its choice
for the player to move in `state`. The returned value may be

* a move of the game (what `game.legal_moves(state)` lists),
* an `ActionId` (an action index, unambiguous in every game),
* a plain integer, read as an action id in games whose moves are tuples
  (NIM, Kayles, Chomp, Corner Queen); in Fibonacci Nim, whose moves are
  integers, a plain integer is the number of stones taken,
* a string: an answer text, read with `game.parse_move` (so an LLM policy can
  hand back its raw answer).

`rng` is the env's own seeded generator: a policy that draws its randomness
from it is reproducible under `env.reset(seed=...)`. A policy that cannot
produce a legal move may raise `MoveError` or return an illegal move; the env
then ends the episode as a forfeit of the opponent (a win for the agent) and
says why in `info`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from metanim.envs._solve import optimal_move
from metanim.games import Game, IllegalMoveError, UnparsableMoveError


class ActionId(int):
    """An action index returned by a policy (tells it apart from an integer move)."""

    __slots__ = ()


@runtime_checkable
class Opponent(Protocol):
    """A policy for the player to move: `(game, state, rng) -> move | ActionId | int | str`."""

    def __call__(self, game: Game[Any, Any], state: Any, rng: np.random.Generator) -> Any: ...


@dataclass(frozen=True)
class RandomOpponent:
    """Uniformly random legal move."""

    def __call__(self, game: Game[Any, Any], state: Any, rng: np.random.Generator) -> Any:
        moves = game.legal_moves(state)
        return moves[int(rng.integers(len(moves)))]


@dataclass(frozen=True)
class OptimalOpponent:
    """Solver play: uniform among winning moves; uniform legal move in a P-position."""

    def __call__(self, game: Game[Any, Any], state: Any, rng: np.random.Generator) -> Any:
        return optimal_move(game, state, rng)


@dataclass(frozen=True)
class EpsilonOptimalOpponent:
    """With probability `epsilon` a random legal move, otherwise an optimal one."""

    epsilon: float

    def __post_init__(self) -> None:
        if not 0.0 <= self.epsilon <= 1.0:
            raise ValueError(f"epsilon must lie in [0, 1], got {self.epsilon!r}")

    def __call__(self, game: Game[Any, Any], state: Any, rng: np.random.Generator) -> Any:
        if rng.random() < self.epsilon:
            return RandomOpponent()(game, state, rng)
        return optimal_move(game, state, rng)


OpponentSpec = str | Callable[[Game[Any, Any], Any, np.random.Generator], Any]


def is_solver_player(spec: str) -> bool:
    """Whether `spec` names a solver player ("optimal", "random", "epsilon:<p>") rather
    than a method that calls a model."""
    name = spec.strip().lower()
    return name in ("optimal", "random") or name.startswith("epsilon:")


def make_opponent(spec: OpponentSpec) -> Callable[[Game[Any, Any], Any, np.random.Generator], Any]:
    """An opponent from a name (`"optimal"`, `"random"`, `"epsilon:0.2"`) or a callable."""
    if callable(spec):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"an opponent is a name or a callable, got {type(spec).__name__}")
    name = spec.strip().lower()
    if name == "optimal":
        return OptimalOpponent()
    if name == "random":
        return RandomOpponent()
    if name.startswith("epsilon:"):
        try:
            epsilon = float(name.split(":", 1)[1])
        except ValueError as exc:
            raise ValueError(f"bad epsilon in opponent {spec!r}; write e.g. 'epsilon:0.2'") from exc
        return EpsilonOptimalOpponent(epsilon)
    raise ValueError(
        f"unknown opponent {spec!r}; use 'optimal', 'random', 'epsilon:<p>' or a callable"
    )


def resolve_move(
    game: Game[Any, Any], state: Any, choice: Any, legal: Sequence[Any] | None = None
) -> Any:
    """The legal move a policy's return value names, or the precise `MoveError`.

    `legal` is `game.legal_moves(state)` when the caller already has it.
    """
    if isinstance(choice, str):
        return game.parse_move(choice, state)
    choice = _exact_ints(choice)
    if legal is None:
        legal = game.legal_moves(state)
    if isinstance(choice, ActionId) or (
        isinstance(choice, int)
        and not isinstance(choice, bool)
        and legal
        and not isinstance(legal[0], int)
    ):
        if not 0 <= choice < game.info.num_actions:
            raise UnparsableMoveError(
                f"action id {int(choice)} outside [0, {game.info.num_actions - 1}]"
            )
        choice = game.move_from_action(int(choice))
    if choice not in legal:
        try:
            reason = game.why_illegal(state, choice)
        except Exception:  # a value of the wrong shape cannot even be explained
            raise UnparsableMoveError(f"{choice!r} is not a move of {game.title}") from None
        raise IllegalMoveError(reason, repr(choice))
    return choice


def as_action_index(action: Any) -> int | None:
    """`action` as an int if it is an integer (int, NumPy integer, 0-d integer array), else None.

    A bool, a float (even `2.0`) or anything else is not an action id: it is never
    truncated or rounded into one.
    """
    if isinstance(action, np.ndarray) and action.ndim == 0:
        action = action[()]
    if isinstance(action, (bool, np.bool_)):
        return None
    if isinstance(action, (int, np.integer)):
        return int(action)
    return None


def _exact_ints(choice: Any) -> Any:
    """A policy's choice with NumPy integers made ints; a non-integer number is refused.

    `2.0 == 2`, so without this a float would pass the legality test as a move.
    """
    index = as_action_index(choice)
    if index is not None:
        return ActionId(index) if isinstance(choice, ActionId) else index
    if isinstance(choice, (list, tuple)):
        parts = [as_action_index(x) for x in choice]
        if any(p is None for p in parts):
            raise UnparsableMoveError(f"{choice!r} is not a move: its parts must be integers")
        return tuple(parts)
    raise UnparsableMoveError(
        f"{choice!r} ({type(choice).__name__}) is not a move: "
        "expected an integer, an ActionId, a move tuple or an answer text"
    )


__all__ = [
    "ActionId",
    "EpsilonOptimalOpponent",
    "Opponent",
    "OpponentSpec",
    "OptimalOpponent",
    "RandomOpponent",
    "as_action_index",
    "is_solver_player",
    "make_opponent",
    "resolve_move",
]
