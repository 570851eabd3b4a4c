"""The env layer's one door to the solver: the cached solver of a game, plus memos.

Every query the envs make (outcome of a start state, winning moves for the
optimal opponent, solver facts for `info`) goes through here, so the envs never
re-implement game theory.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from metanim.games import Game
from metanim.solver import Solver, solver_for


class _Entry:
    """A game's solver and memos of its answers by exact state.

    Training revisits the same states over and over, and a dict hit is far cheaper
    than re-solving every child of a state (Kayles and Chomp have up to ~40). The memos
    stay empty where the solver answers by closed forms (`Solver.memoize` is false).
    """

    __slots__ = ("game", "outcome", "prepared", "solver", "winning")

    def __init__(self, game: Game[Any, Any]) -> None:
        self.game = game
        self.solver: Solver = solver_for(game)
        self.prepared = False
        self.outcome: dict[Any, str] = {}
        # Tuples, not lists: the garbage collector stops tracking them, so a memo of
        # 200,000 states does not make every full collection scan it.
        self.winning: dict[Any, tuple[Any, ...]] = {}


# Keyed by object identity (checked with `is`): hashing a Game serializes its params,
# which would cost more than the query itself on every move.
_CACHE: OrderedDict[int, _Entry] = OrderedDict()
_CACHE_SIZE = 64
_MEMO_LIMIT = 200_000  # states per memo before it is cleared, to bound memory


def _entry(game: Game[Any, Any]) -> _Entry:
    entry = _CACHE.get(id(game))
    if entry is None or entry.game is not game:
        entry = _CACHE[id(game)] = _Entry(game)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return entry


def _memoized(memo: dict[Any, Any] | None, state: Any, compute: Callable[[Any], Any]) -> Any:
    """`memo[state]`, computed on a miss; the memo is cleared when it outgrows its limit.
    No memo (None, see `_memo`): computed."""
    if memo is None:
        return compute(state)
    found = memo.get(state)
    if found is None:
        if len(memo) > _MEMO_LIMIT:
            memo.clear()
        found = memo[state] = compute(state)
    return found


def _memo(entry: _Entry, memo: dict[Any, Any]) -> dict[Any, Any] | None:
    """`memo`, or None where the solver's answers are closed forms (`Solver.memoize`)."""
    return memo if entry.solver.memoize else None


def solver(game: Game[Any, Any]) -> Solver:
    """The cached solver of `game`."""
    return _entry(game).solver


def prepare(game: Game[Any, Any]) -> None:
    """Let the solver build its whole-game tables now (`Solver.prepare`), once per game."""
    entry = _entry(game)
    if not entry.prepared:
        entry.solver.prepare()
        entry.prepared = True


def outcome(game: Game[Any, Any], state: Any) -> str:
    """ "N" or "P" for the player to move in `state` (memoized unless `Solver.memoize`
    is false)."""
    entry = _entry(game)
    return _memoized(_memo(entry, entry.outcome), state, entry.solver.outcome)


def outcome_lookup(game: Game[Any, Any]) -> Callable[[Any], str]:
    """`outcome` for many states of one game: the memo and solver looked up once.

    A `random_n` reset asks for every state of a playout (most of a reset's cost).
    """
    entry = _entry(game)
    memo, compute = _memo(entry, entry.outcome), entry.solver.outcome
    return lambda state: _memoized(memo, state, compute)


def winning_moves(game: Game[Any, Any], state: Any) -> tuple[Any, ...]:
    """Every move to a P-position, in action-id order (memoized unless `Solver.memoize`
    is false)."""
    entry = _entry(game)
    compute = entry.solver.winning_moves
    return _memoized(_memo(entry, entry.winning), state, lambda s: tuple(compute(s)))


class WinningLookup:
    """`winning_moves` for many states of one game: the memo and solver looked up once
    (the optimal opponent asks on every step). Pickles as its game (an env pickles)."""

    __slots__ = ("_memo", "_solve", "game")

    def __init__(self, game: Game[Any, Any]) -> None:
        entry = _entry(game)
        self.game = game
        self._solve = entry.solver.winning_moves
        self._memo = _memo(entry, entry.winning)

    def __call__(self, state: Any) -> tuple[Any, ...]:
        memo = self._memo
        if memo is None:
            return tuple(self._solve(state))
        found = memo.get(state)
        if found is None:  # `_memoized`, inline: the first steps of an env mostly miss
            if len(memo) > _MEMO_LIMIT:
                memo.clear()
            found = memo[state] = tuple(self._solve(state))
        return found

    def __reduce__(self) -> tuple[Any, ...]:
        return (WinningLookup, (self.game,))


def optimal_move(game: Game[Any, Any], state: Any, rng: np.random.Generator) -> Any:
    """A winning move chosen uniformly, or a uniformly random legal move in a P-position.

    Draws from `rng` exactly as `metanim.solver.optimal_move` does.
    """
    moves = winning_moves(game, state) or game.legal_moves(state)
    return moves[int(rng.integers(len(moves)))]
