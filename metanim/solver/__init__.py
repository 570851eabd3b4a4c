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

from metanim.games import Game, InvalidStateError, SizeLimitError, make_game
from metanim.solver._misere import (
    KAYLES_MISERE_LIMIT,
    KAYLES_MISERE_WORK,
    kayles_misere_outcomes,
    kayles_misere_work,
)
from metanim.solver._octal import octal_grundy, octal_period
from metanim.solver._solvers import (
    CHOMP_TABLE_WORK,
    CLOSED_FORM,
    FIBONACCI_SCAN_LIMIT,
    MAX_TABLE_BYTES,
    MAX_TABLE_STATES,
    NIM_TABLE_WORK,
    SEARCH,
    TABLE,
    Solver,
    fibonacci_table_limit,
    solver_for,
)
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


def method(game: Game[Any, Any], state: Any, query: str = "outcome") -> str:
    """Which path answers `query` ("grundy", "outcome" or "winning_moves") for `state`.

    Returns "table", "closed-form" or "search"; raises `SizeLimitError` naming the
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


def describe_solution(name: str, state: Any, *, misere: bool = False, **params: Any) -> str:
    """Human-readable solution of a state, for `metanim solve` (sizes fitted to the state)."""
    state, fitted = _fit_params(name, state, params)
    game = make_game(name, misere=misere, **fitted)
    state = game.validate_state(state)
    solver = solver_for(game)
    moves = solver.winning_moves(state)
    try:
        value = f"{solver.grundy(state)} (by {solver.method(state, 'grundy')})"
    except SizeLimitError as exc:
        value = f"not available ({exc})"
    lines = [
        f"game: {game!r}",
        f"state: {game.to_json(state)}",
        f"grundy (normal play): {value}",
        f"outcome ({'misère' if misere else 'normal'} play): {solver.outcome(state)}"
        + (" (terminal)" if game.is_terminal(state) else "")
        + f" (by {solver.method(state, 'outcome')})",
        "winning moves: " + (", ".join(game.move_text(m) for m in moves) if moves else "none"),
    ]
    return "\n".join(lines)


def _fit_params(name: str, state: Any, params: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The state and the game sizes for a state typed on the command line.

    Sizes come from the state unless given; a bare number is a Fibonacci pile at its
    start. Corner Queen keeps the paper's 20x20 board, because a [row, col] position
    means a different game on a board of another height.
    """
    from metanim.games import PRESETS, game_class

    if name in PRESETS:
        return state, params
    cls = game_class(name)
    fitted: dict[str, Any] = {}
    try:
        if cls.name == "nim":
            if not isinstance(state, int | list | tuple):
                raise InvalidStateError(
                    f"cannot read {state!r} as a NIM state: give heap sizes as a number or a "
                    "JSON list such as [3, 4, 5]"
                )
            heaps = [state] if isinstance(state, int) else list(state)
            for h in heaps:
                if isinstance(h, bool) or not isinstance(h, int) or h < 0:
                    raise InvalidStateError(
                        f"NIM heap sizes are whole numbers >= 0, got {h!r} in {state!r}"
                    )
            fitted = {"heaps": [max(h, 1) for h in heaps], "max_take": None}
        elif cls.name == "fibonacci":
            if isinstance(state, int) and not isinstance(state, bool):
                if state < 2:
                    raise InvalidStateError(
                        f"a Fibonacci Nim pile at its start needs at least 2 stones (the first "
                        f"move may take any number but the whole pile), got {state}; give "
                        "[remaining, max_take] for a later position"
                    )
                state = [state, state - 1]
            fitted = {"n": max(int(state[0]) + 1, 2)}
        elif cls.name == "kayles":
            if isinstance(state, int):
                raise InvalidStateError(
                    f"Kayles pins are a string per row; write them as JSON, e.g. '[\"{state}\"]'"
                )
            rows = [state] if isinstance(state, str) else [str(r) for r in state]
            fitted = {"rows": [max(len(r), 1) for r in rows]}
        elif cls.name == "chomp":
            fitted = {"rows": len(state), "cols": max(max(int(x) for x in state), 2)}
        elif cls.name == "corner_queen":
            height, width = int(params.get("height", 20)), int(params.get("width", 20))
            row, col = (int(x) for x in state)
            if not (0 <= row < height and 0 <= col < width):
                raise InvalidStateError(
                    f"[{row}, {col}] is off the {height}x{width} board; give the board with "
                    "-p height=H -p width=W (row 0 is the top row, the target is [H-1, 0])"
                )
            fitted = {"height": height, "width": width, "start": [0, width - 1]}
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InvalidStateError):
            raise
        raise InvalidStateError(f"cannot read {state!r} as a {cls.title} state ({exc})") from exc
    return state, {**fitted, **params}


__all__ = [
    "CHOMP_TABLE_WORK",
    "CLOSED_FORM",
    "FIBONACCI_SCAN_LIMIT",
    "KAYLES_MISERE_LIMIT",
    "KAYLES_MISERE_WORK",
    "MAX_TABLE_BYTES",
    "MAX_TABLE_STATES",
    "NIM_TABLE_WORK",
    "SEARCH",
    "TABLE",
    "CheckReport",
    "GameCheckError",
    "ReferenceSolver",
    "Solver",
    "check_game",
    "describe_solution",
    "fibonacci_table_limit",
    "grundy",
    "is_critical",
    "kayles_misere_outcomes",
    "kayles_misere_work",
    "method",
    "octal_grundy",
    "octal_period",
    "optimal_move",
    "outcome",
    "solver_for",
    "winning_moves",
]
