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

from metanim.games import Game
from metanim.solver._misere import (
    KAYLES_MISERE_LIMIT,
    KAYLES_MISERE_WORK,
    kayles_misere_outcomes,
    kayles_misere_work,
)
from metanim.solver._octal import octal_grundy, octal_period
from metanim.solver._query import (
    SOLVE_SCHEMA,
    Solution,
    describe_solution,
    fit_params,
    solve_state,
)
from metanim.solver._solvers import (
    CHOMP_TABLE_WORK,
    CLOSED_FORM,
    FIBONACCI_SCAN_LIMIT,
    MAX_TABLE_BYTES,
    MAX_TABLE_STATES,
    NIM_TABLE_WORK,
    OCTAL_MISERE_POSITIONS,
    TABLE,
    Solver,
    fibonacci_table_limit,
    solver_for,
)
from metanim.solver.check import CheckReport, GameCheckError, check_game
from metanim.solver.generate import sample_game
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


def method(game: Game[Any, Any], state: Any, query: str = "outcome") -> str:
    """Which path answers `query` ("grundy", "outcome" or "winning_moves") for `state`.

    Returns "table" or "closed-form"; raises `SizeLimitError` naming the
    limit when none can, before anything is allocated. Nothing is computed.

    >>> from metanim.games import Nim
    >>> method(Nim([10_000_000, 12345, 3], max_take=None), (10_000_000, 12345, 3))
    'closed-form'
    """
    if query not in ("grundy", "outcome", "winning_moves"):
        raise ValueError(f"query is 'grundy', 'outcome' or 'winning_moves', got {query!r}")
    return solver_for(game).method(game.validate_state(state), query)


def is_critical(game: Game[Any, Any], state: Any) -> bool:
    """Whether `state` is an N-position with exactly one winning move."""
    return len(winning_moves(game, state)) == 1


__all__ = [
    "CHOMP_TABLE_WORK",
    "CLOSED_FORM",
    "FIBONACCI_SCAN_LIMIT",
    "KAYLES_MISERE_LIMIT",
    "KAYLES_MISERE_WORK",
    "MAX_TABLE_BYTES",
    "MAX_TABLE_STATES",
    "NIM_TABLE_WORK",
    "OCTAL_MISERE_POSITIONS",
    "SOLVE_SCHEMA",
    "TABLE",
    "CheckReport",
    "GameCheckError",
    "ReferenceSolver",
    "Solution",
    "Solver",
    "check_game",
    "describe_solution",
    "fibonacci_table_limit",
    "fit_params",
    "grundy",
    "is_critical",
    "kayles_misere_outcomes",
    "kayles_misere_work",
    "method",
    "octal_grundy",
    "octal_period",
    "optimal_move",
    "outcome",
    "sample_game",
    "solve_state",
    "solver_for",
    "winning_moves",
]
