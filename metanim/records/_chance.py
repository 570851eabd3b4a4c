"""Chance baselines: what a player without any skill scores on the same items and games.

A rate means little without the rate of guessing. For decision accuracy the baseline is
the uniform-random legal policy's expected accuracy on the graded items (each critical
state has one right move among its legal moves: exactly 1/legal), beside a
constant-answer baseline (always the first legal move, always option A). For a win rate
against a solver opponent it is the uniform-random player's exact win probability from
the same starts and seats, by dynamic programming over the game's states; against a
model opponent there is none (its play is unknown). `above_chance` is the one-sided exact
binomial test (scipy.stats.binomtest) of the item-level outcomes against that baseline.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from metanim.envs import EpsilonOptimalOpponent, OptimalOpponent, is_solver_player, make_opponent
from metanim.games import Game, make_game
from metanim.solver import solver_for

#: (state, mover) pairs the win-probability table may hold: past it, no baseline (a
#: large Chomp board has billions of positions; every preset holds far fewer).
MAX_STATES = 200_000


def random_win_probability(
    game_name: str, game_params: dict[str, Any], state: Any, seat: str, opponent: str
) -> float | None:
    """The uniform-random player's exact chance to win this episode's game.

    `state` is the episode's start (JSON form), `seat` the random player's ("first" moves
    first), `opponent` the solver player it meets (optimal, random, epsilon:<p>). None for
    a model opponent, or a game whose reachable positions exceed `MAX_STATES`.
    """
    if state is None or not is_solver_player(opponent):
        return None
    table = _table(game_name, json.dumps(game_params, sort_keys=True), opponent.strip().lower())
    return table.value(state, seat == "first")


@lru_cache(maxsize=32)
def _table(game_name: str, params: str, opponent: str) -> _WinTable:
    return _WinTable(make_game(game_name, **json.loads(params)), opponent)


class _WinTable:
    """V(state, random player to move): the random player's win probability, memoized."""

    def __init__(self, game: Game[Any, Any], opponent: str) -> None:
        self.game = game
        self.solver = solver_for(game)
        policy = make_opponent(opponent)
        # The opponent's move distribution, as `metanim.envs.opponents` plays it: optimal
        # is uniform among the winning moves (all legal moves in a P-position); epsilon
        # mixes uniform play in with probability epsilon.
        if isinstance(policy, OptimalOpponent):
            self.epsilon = 0.0
        elif isinstance(policy, EpsilonOptimalOpponent):
            self.epsilon = policy.epsilon
        else:
            self.epsilon = 1.0
        self.memo: dict[tuple[Any, bool], float] = {}  # (state key, random to move)
        self.too_large = False

    def value(self, state_json: Any, random_to_move: bool) -> float | None:
        if self.too_large:
            return None
        game = self.game
        # Memoized by the game's `state_key`: positions with one key are the same game up
        # to renaming its parts (NIM's heaps sorted, Kayles' runs as a multiset), so they
        # have the same legal-move structure, the same winning moves, and the same value
        # under uniform play as under optimal play.
        start = game.validate_state(state_json)
        root = (game.state_key(start), random_to_move)
        stack = [(start, random_to_move)]
        # Depth-first, children before parents, without recursion (a game may last
        # hundreds of moves).
        while stack:
            state, mine = stack[-1]
            key = (game.state_key(state), mine)
            if key in self.memo:
                stack.pop()
                continue
            if game.is_terminal(state):
                # The player to move at the end wins in misère play, loses in normal play.
                self.memo[key] = float(mine == game.mover_wins_at_terminal)
                stack.pop()
                continue
            moves = game.legal_moves(state)
            children = [(game.apply(state, m), not mine) for m in moves]
            todo = [c for c in children if (game.state_key(c[0]), c[1]) not in self.memo]
            if todo:
                stack.extend(todo)
                if len(self.memo) + len(stack) > MAX_STATES:
                    self.too_large = True
                    return None
                continue
            self.memo[key] = self._mix(state, mine, moves, children)
            stack.pop()
        return self.memo[root]

    def _mix(
        self, state: Any, mine: bool, moves: list[Any], children: list[tuple[Any, bool]]
    ) -> float:
        values = [self.memo[(self.game.state_key(c), m)] for c, m in children]
        uniform = sum(values) / len(values)
        if mine or self.epsilon >= 1.0:
            return uniform
        winning = set(self.solver.winning_moves(state))
        best = [v for m, v in zip(moves, values, strict=True) if m in winning] or values
        optimal = sum(best) / len(best)
        return self.epsilon * uniform + (1.0 - self.epsilon) * optimal
