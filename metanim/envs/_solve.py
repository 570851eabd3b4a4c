"""The env layer's one door to the solver: the cached solver object of a game.

Every query the envs make (outcome of a start state, winning moves for the
optimal opponent, solver facts for `info`) goes through `solver(game)`, so the
envs never re-implement game theory.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from metanim.games import Game
from metanim.solver import Solver, solver_for

# Keyed by object identity: `solver_for` is cached by the game's hash, and hashing a
# Game serializes its params, which would cost more than the query on every move.
_CACHE: OrderedDict[int, tuple[Game[Any, Any], Solver]] = OrderedDict()
_CACHE_SIZE = 64


def solver(game: Game[Any, Any]) -> Solver:
    """The cached solver of `game`."""
    hit = _CACHE.get(id(game))
    if hit is not None and hit[0] is game:
        return hit[1]
    made = solver_for(game)
    _CACHE[id(game)] = (game, made)
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return made


def optimal_move(game: Game[Any, Any], state: Any, rng: np.random.Generator) -> Any:
    """A winning move chosen uniformly, or a uniformly random legal move in a P-position."""
    return solver(game).optimal_move(state, rng)
