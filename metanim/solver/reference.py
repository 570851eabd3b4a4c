"""Plain-Python reference solver: memoized recursion over the `Game` interface.

It knows nothing but `legal_moves` and `apply`, so it is the independent brute
force that tests and `check_game` compare the numba solver against, and the
baseline the benchmarks report ratios to. Slow by design; small states only.
"""

from __future__ import annotations

import sys
from collections.abc import Hashable
from typing import Any

from metanim.games import Game


def mex(values: set[int]) -> int:
    """Minimum excludant: the least non-negative integer not in `values`."""
    m = 0
    while m in values:
        m += 1
    return m


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
                self.grundy(self.game._apply(state, m)) for m in self.game.legal_moves(state)
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
                    not self.mover_wins(self.game._apply(state, m)) for m in moves
                )
        return self._mover_wins[key]

    def outcome(self, state: Any) -> str:
        return "N" if self.mover_wins(state) else "P"

    def winning_moves(self, state: Any) -> list[Any]:
        return [
            m
            for m in self.game.legal_moves(state)
            if not self.mover_wins(self.game._apply(state, m))
        ]


def _deep_recursion() -> None:
    # Chomp and Kayles games are up to a few hundred moves deep.
    if sys.getrecursionlimit() < 20_000:
        sys.setrecursionlimit(20_000)


_deep_recursion()
