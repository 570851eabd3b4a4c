"""A random start's law, computed exactly, so that a start is one lookup.

`random_n` (and `auto` when it samples) starts at a state drawn as `sample_start`
describes: one uniformly random playout from the initial state, then a uniform pick
among its wanted states (non-terminal N-positions; with the opponent first,
P-positions from which no move ends the game), a new playout when it has none. For a
game of at most `LAW_STATES` reachable states that law is computed here once, exactly
(up to floating-point rounding), and a start is drawn from it with two draws and an
alias table (Vose): `integers(k)` picks a column, `random()` keeps it or takes its
alias. The single env, the batched env (`metanim.envs.vector`, the same two draws in
numba) and the arena's start (`resolve_start`) all draw it so, from the same table,
so the same seeds give the same starts in all three. A larger game plays the playout.

The law by dynamic programming over the reachable states: with F[s, a] the chance that
the playout reaches s after a wanted states, and G[s, b] the chance that it meets b
wanted states after s, a wanted s is picked with chance
sum_{a, b} F[s, a] G[s, b] / (a + b + 1), divided by the chance that a playout meets a
wanted state at all (a playout without one is replaced). Every playout is a path of the
game's DAG, so both are one pass each in topological order.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from metanim.envs import _solve
from metanim.games import Game

#: Reachable states up to which a game's start law is tabled (a few hundredths of a
#: second to build in Python at this size); a larger game's start plays a playout.
LAW_STATES = 4096


@dataclass(frozen=True, eq=False)
class StartLaw:
    """The start law of one game and side: its support and an alias table over it."""

    #: The states a start can be, in the order of the breadth-first walk from the
    #: initial state (the order every copy of this law shares).
    states: tuple[Any, ...]
    #: Column i keeps `states[i]` when the draw in [0, 1) is below `keep[i]`, else
    #: takes `states[alias[i]]`.
    keep: np.ndarray
    alias: np.ndarray
    #: The chance of each state of `states` (they sum to 1).
    chance: np.ndarray

    def draw(self, rng: Any) -> Any:
        """A state of the law, from two draws of `rng` (an `EpisodeStream` or a
        `np.random.Generator`): `integers(len(states))`, then `random()`."""
        column = int(rng.integers(len(self.states)))
        if rng.random() < self.keep[column]:
            return self.states[column]
        return self.states[int(self.alias[column])]


def start_law(game: Game[Any, Any], mover_wins: bool) -> StartLaw | None:
    """The start law of `game` for a first mover who wants to win (`mover_wins`) or to
    face a P-position; None when the game has more than `LAW_STATES` reachable states.
    Raises `ValueError` when no playout meets a wanted state."""
    return _law(game, mover_wins)


@lru_cache(maxsize=64)  # by configuration: a single env and a batched one share it
def _law(game: Game[Any, Any], mover_wins: bool) -> StartLaw | None:
    walk = _reachable(game)
    if walk is None:
        return None
    states, kids = walk
    size = len(states)
    outcome = _solve.outcome_lookup(game)
    terminal = np.array([not row for row in kids], dtype=bool)
    wanted = np.zeros(size, dtype=np.int64)
    for s, row in enumerate(kids):
        if not row:
            continue
        if mover_wins:
            wanted[s] = outcome(states[s]) == "N"
        else:  # a P-position from which no move ends the game
            wanted[s] = outcome(states[s]) == "P" and not terminal[row].any()
    order = _postorder(kids)
    depth = _longest(kids, order)
    width = depth + 1  # how many wanted states one playout can meet, plus one
    # G[s, b]: the rest of the playout after s meets b wanted states.
    after = np.zeros((size, width))
    # H[s] = G[s] shifted by s's own wantedness: what a parent adds up over its moves.
    shifted = np.zeros((size, width))
    for s in order:
        row = kids[s]
        if row:
            after[s] = shifted[row].sum(axis=0) / len(row)
        else:
            after[s, 0] = 1.0
        shifted[s, wanted[s] :] = after[s, : width - wanted[s]]
    # F[s, a]: the playout reaches s having met a wanted states before it.
    before = np.zeros((size, width))
    before[0, 0] = 1.0
    for s in reversed(order):
        row = kids[s]
        if row:
            share = np.zeros(width)
            share[wanted[s] :] = before[s, : width - wanted[s]] / len(row)
            np.add.at(before, row, share)
    ways = np.arange(width)
    weight = 1.0 / (ways[:, None] + ways[None, :] + 1.0)
    raw = wanted * np.einsum("sa,ab,sb->s", before, weight, after)
    total = raw.sum()
    if total <= 0.0:  # every reachable state is weighed: none is a start
        raise no_start_error(game, mover_wins=mover_wins, exists=False)
    support = np.flatnonzero(raw > 0.0)
    chance = raw[support] / total
    keep, alias = _alias(chance)
    return StartLaw(tuple(states[i] for i in support), keep, alias, chance)


def _reachable(game: Game[Any, Any]) -> tuple[list[Any], list[list[int]]] | None:
    """Every state reachable from the initial one, breadth first, and the child index of
    each legal move of each (a move per entry, as a playout draws moves); None past
    `LAW_STATES`."""
    initial = game.initial_state()
    index = {initial: 0}
    states = [initial]
    kids: list[list[int]] = []
    for state in states:  # grows as it goes
        row = []
        for move in game.legal_moves(state):
            child = game.child(state, move)
            j = index.get(child)
            if j is None:
                if len(states) >= LAW_STATES:
                    return None
                j = index[child] = len(states)
                states.append(child)
            row.append(j)
        kids.append(row)
    return states, kids


def _postorder(kids: list[list[int]]) -> list[int]:
    """The states children first (a topological order of the DAG, reversed)."""
    order: list[int] = []
    seen = [False] * len(kids)
    seen[0] = True
    stack = [(0, iter(kids[0]))]
    while stack:
        s, it = stack[-1]
        for c in it:
            if not seen[c]:
                seen[c] = True
                stack.append((c, iter(kids[c])))
                break
        else:
            stack.pop()
            order.append(s)
    return order


def _longest(kids: list[list[int]], order: list[int]) -> int:
    """The most non-terminal states one playout passes through."""
    length = [0] * len(kids)
    for s in order:
        row = kids[s]
        if row:
            length[s] = 1 + max(length[c] for c in row)
    return length[0]


def _alias(chance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vose's alias table of a distribution over columns 0..k-1."""
    k = len(chance)
    scaled = chance * k
    keep = np.ones(k)
    alias = np.arange(k, dtype=np.int64)
    small = [i for i in range(k) if scaled[i] < 1.0]
    large = [i for i in range(k) if scaled[i] >= 1.0]
    while small and large:
        s, g = small.pop(), large.pop()
        keep[s], alias[s] = scaled[s], g
        scaled[g] -= 1.0 - scaled[s]
        (small if scaled[g] < 1.0 else large).append(g)
    # What is left holds 1 up to rounding: it keeps itself.
    return keep, alias


def no_start_error(
    game: Any, *, mover_wins: bool, exists: bool | None, tries: int = 1000
) -> ValueError:
    """Why no random start was found, the same from the single and the batched env: the
    start rule for the seat, and whether no reachable state meets it (`exists` False)
    or none turned up in the playouts (`exists` None: too many states to know)."""
    if mover_wins:
        rule = "an N-position for the agent, who moves first"
        fix = "pass start='initial' or a state"
    else:
        rule = (
            "a P-position for the opponent, who moves first (seat='second'), from which no "
            "move ends the game, so that the agent's first decision is an N-position"
        )
        fix = "use seat='first', or pass start='initial' or a state"
    if exists is False:
        return ValueError(f"{game!r} cannot start this seat: no reachable state is {rule}; {fix}")
    return ValueError(
        f"found no start in {tries} random playouts of {game!r}: a start is {rule}; {fix}"
    )
