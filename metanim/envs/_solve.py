"""The env layer's one door to the solver: a per-game cached solver object.

Every query the envs make (outcome of a start state, winning moves for the
optimal opponent, solver facts for `info`) goes through `solver(game)`, so the
envs never re-implement game theory and pick up the fast solver automatically.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Protocol

import numpy as np

from metanim.games import Game


class GameSolver(Protocol):
    """What the envs need from a solver bound to one game."""

    def outcome(self, state: Any) -> str: ...

    def winning_moves(self, state: Any) -> list[Any]: ...

    def grundy(self, state: Any) -> int: ...


# Keyed by object identity: hashing a Game serializes its params, which would cost
# more than the solver lookup itself on every opponent move.
_CACHE: OrderedDict[int, tuple[Game[Any, Any], GameSolver]] = OrderedDict()
_CACHE_SIZE = 64


def solver(game: Game[Any, Any]) -> GameSolver:
    """The cached solver of `game` (the numba-backed facade when it is available)."""
    hit = _CACHE.get(id(game))
    if hit is not None and hit[0] is game:
        return hit[1]
    made = _make_solver(game)
    _CACHE[id(game)] = (game, made)
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return made


def _make_solver(game: Game[Any, Any]) -> GameSolver:
    try:
        from metanim.solver import solver_for
    except ImportError:  # the fast facade is not installed yet: fall back to brute force
        from metanim.solver.reference import ReferenceSolver

        return ReferenceSolver(game)
    return solver_for(game)  # type: ignore[no-any-return]


def optimal_move(game: Game[Any, Any], state: Any, rng: np.random.Generator) -> Any:
    """A winning move chosen uniformly, or a uniformly random legal move in a P-position."""
    moves = solver(game).winning_moves(state) or game.legal_moves(state)
    return moves[int(rng.integers(len(moves)))]
