"""Plain-Python reference solver: memoized recursion over the `Game` interface.

It knows nothing but `legal_moves` and `apply`, so it is the independent brute
force that tests and `check_game` compare the numba solver against, and the
baseline the benchmarks report ratios to. Slow by design; small states only.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Iterable
from functools import cache
from typing import Any

from metanim.games import Game, Kayles, SizeLimitError


def mex(values: set[int]) -> int:
    """Minimum excludant: the least non-negative integer not in `values`."""
    m = 0
    while m in values:
        m += 1
    return m


@cache
def partitions_up_to(total: int) -> int:
    """The number of multisets of positive integers summing to at most `total` (the
    positions a search over multisets of heaps may meet below a total of `total`)."""
    ways = [1] + [0] * total
    for part in range(1, total + 1):
        for n in range(part, total + 1):
            ways[n] += ways[n - part]
    return sum(ways)


class ReferenceSolver:
    """Grundy values (normal play) and outcomes (normal or misère) by memoized recursion."""

    def __init__(self, game: Game[Any, Any]) -> None:
        self.game = game
        self._grundy: dict[Hashable, int] = {}
        self._mover_wins: dict[Hashable, bool] = {}

    def grundy(self, state: Any) -> int:
        """Normal-play Grundy value of `state`."""
        key = self.game.state_key(state)
        if key not in self._grundy:
            children = {
                self.grundy(self.game.child(state, m)) for m in self.game.legal_moves(state)
            }
            self._grundy[key] = mex(children)
        return self._grundy[key]

    def mover_wins(self, state: Any) -> bool:
        """Whether the player to move wins with best play, under the game's own play rule."""
        if not self.game.misere:
            return self.grundy(state) != 0
        key = self.game.state_key(state)
        if key not in self._mover_wins:
            moves = self.game.legal_moves(state)
            if not moves:
                self._mover_wins[key] = True  # misère: the player who cannot move has won
            else:
                self._mover_wins[key] = any(
                    not self.mover_wins(self.game.child(state, m)) for m in moves
                )
        return self._mover_wins[key]

    def outcome(self, state: Any) -> str:
        return "N" if self.mover_wins(state) else "P"

    def winning_moves(self, state: Any) -> list[Any]:
        return [
            m
            for m in self.game.legal_moves(state)
            if not self.mover_wins(self.game.child(state, m))
        ]


class MultisetMisereSearch:
    """Misère outcome of a sum of independent components, memoized on their multiset.

    Misère play does not decompose into a XOR, so the whole position is searched; a
    position is the sorted tuple of its non-zero components (Kayles runs, NIM heaps),
    so equal components in any order share one entry. `component_moves(c)` lists the
    tuples of components a move on `c` leaves. With `max_work`, a query that scans more
    children than that raises `SizeLimitError` (`work` counts them; reset it per query).
    """

    def __init__(
        self,
        component_moves: Callable[[int], Iterable[tuple[int, ...]]],
        *,
        max_work: int | None = None,
    ) -> None:
        self._moves = cache(lambda c: tuple(component_moves(c)))
        self._memo: dict[tuple[int, ...], bool] = {}
        self.max_work = max_work
        self.work = 0

    def mover_wins(self, key: Iterable[int]) -> bool:
        key = tuple(sorted(c for c in key if c))
        if key in self._memo:
            return self._memo[key]
        # Iterative DFS so deep positions cannot overflow the Python stack.
        stack: list[tuple[tuple[int, ...], list[tuple[int, ...]] | None]] = [(key, None)]
        while stack:
            node, children = stack[-1]
            if node in self._memo:
                stack.pop()
                continue
            if children is None:
                children = self._children(node)
                stack[-1] = (node, children)
                if not children:
                    self._memo[node] = True  # no move: the mover has won (misère)
                    stack.pop()
                    continue
            pending = [c for c in children if c not in self._memo]
            if any(not self._memo[c] for c in children if c in self._memo):
                self._memo[node] = True
                stack.pop()
            elif pending:
                stack.append((pending[0], None))
            else:
                self._memo[node] = False
                stack.pop()
        return self._memo[key]

    def _children(self, key: tuple[int, ...]) -> list[tuple[int, ...]]:
        out = set()
        for i, comp in enumerate(key):
            if i and key[i - 1] == comp:
                continue  # equal components give equal children
            rest = key[:i] + key[i + 1 :]
            moves = self._moves(comp)
            self.work += len(moves)
            if self.max_work is not None and self.work > self.max_work:
                raise SizeLimitError(
                    f"the misère search scanned more than {self.max_work:,} moves (its max_work)"
                )
            for parts in moves:
                out.add(tuple(sorted(c for c in (*rest, *parts) if c)))
        return sorted(out)


def kayles_run_moves(n: int) -> list[tuple[int, ...]]:
    """The runs each move leaves in one run of `n` pins, from the game's own rules."""
    game = Kayles([max(n, 1)])
    state = ("1" * n,)
    return [game.state_key(game.child(state, m)) for m in game.legal_moves(state)]


def _deep_recursion() -> None:
    # Chomp and Kayles games are up to a few hundred moves deep.
    if sys.getrecursionlimit() < 20_000:
        sys.setrecursionlimit(20_000)


_deep_recursion()
