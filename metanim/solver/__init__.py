"""Exact solutions of every game: Grundy values, outcomes and optimal moves.

The public queries validate the state first, so a bad state raises
`InvalidStateError` and an oversized one `SizeLimitError` (naming the limit),
never a wrong answer or a crash inside numba.

>>> from metanim.games import make_game
>>> from metanim.solver import outcome, winning_moves
>>> game = make_game("nim-31-k3")
>>> outcome(game, (31,)), winning_moves(game, (31,))
('N', [(0, 3)])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from metanim.games import Game, make_game
from metanim.solver._misere import kayles_misere_outcomes
from metanim.solver._octal import octal_grundy, octal_period
from metanim.solver._solvers import MAX_TABLE_STATES, Solver, solver_for
from metanim.solver.check import CheckReport, GameCheckError, check_game
from metanim.solver.reference import ReferenceSolver


def grundy(game: Game[Any, Any], state: Any) -> int:
    """Normal-play Grundy value of `state` (0 means a normal-play P-position)."""
    return solver_for(game).grundy(game.validate_state(state))


def outcome(game: Game[Any, Any], state: Any) -> str:
    """ "N" if the player to move wins with best play under the game's play rule, else "P"."""
    return solver_for(game).outcome(game.validate_state(state))


def winning_moves(game: Game[Any, Any], state: Any) -> list[Any]:
    """All moves that leave the opponent in a P-position (empty when `state` is a P-position)."""
    return solver_for(game).winning_moves(game.validate_state(state))


def optimal_move(
    game: Game[Any, Any], state: Any, rng: np.random.Generator | int | None = None
) -> Any:
    """A seeded uniform choice among the winning moves (any legal move in a P-position)."""
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    return solver_for(game).optimal_move(game.validate_state(state), generator)


def is_critical(game: Game[Any, Any], state: Any) -> bool:
    """Whether `state` is an N-position with exactly one winning move."""
    return len(winning_moves(game, state)) == 1


def describe_solution(name: str, state: Any, *, misere: bool = False, **params: Any) -> str:
    """Human-readable solution of a state, for `metanim solve` (sizes fitted to the state)."""
    game = make_game(name, misere=misere, **_fit_params(name, state, params))
    state = game.validate_state(state)
    solver = solver_for(game)
    moves = solver.winning_moves(state)
    lines = [
        f"game: {game!r}",
        f"state: {game.to_json(state)}",
        f"grundy (normal play): {solver.grundy(state)}",
        f"outcome ({'misère' if misere else 'normal'} play): {solver.outcome(state)}"
        + (" (terminal)" if game.is_terminal(state) else ""),
        "winning moves: " + (", ".join(game.move_text(m) for m in moves) if moves else "none"),
    ]
    return "\n".join(lines)


def _fit_params(name: str, state: Any, params: dict[str, Any]) -> dict[str, Any]:
    """Game sizes that fit a state typed on the command line, unless given explicitly."""
    from metanim.games import PRESETS, game_class

    if name in PRESETS:
        return params
    cls = game_class(name)
    fitted: dict[str, Any] = {}
    if cls.name == "nim":
        heaps = [state] if isinstance(state, int) else list(state)
        fitted = {"heaps": [max(h, 1) for h in heaps], "max_take": None}
    elif cls.name == "fibonacci":
        fitted = {"n": int(state[0]) + 1}
    elif cls.name == "kayles":
        rows = [state] if isinstance(state, str) else list(state)
        fitted = {"rows": [len(r) for r in rows]}
    elif cls.name == "chomp":
        fitted = {"rows": len(state), "cols": max(max(int(x) for x in state), 2)}
    elif cls.name == "corner_queen":
        fitted = {"height": int(state[0]) + 1, "width": int(state[1]) + 1, "start": list(state)}
    return {**fitted, **params}


__all__ = [
    "MAX_TABLE_STATES",
    "CheckReport",
    "GameCheckError",
    "ReferenceSolver",
    "Solver",
    "check_game",
    "describe_solution",
    "grundy",
    "is_critical",
    "kayles_misere_outcomes",
    "octal_grundy",
    "octal_period",
    "optimal_move",
    "outcome",
    "solver_for",
    "winning_moves",
]
