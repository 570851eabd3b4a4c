"""Fibonacci Nim: take at most twice the previous take; the first move may not take all."""

from __future__ import annotations

import re
from math import isqrt
from typing import Any

import numpy as np

from metanim.games._base import (
    Game,
    GameInfo,
    find_int,
    ints,
    is_int,
    param_int,
    plural,
    state_ints,
    there_are,
)
from metanim.games.errors import (
    InvalidStateError,
)

FibState = tuple[int, int]  # (stones remaining, max take now), max take capped at remaining
FibMove = int  # stones taken


def fibonacci_code(remaining: Any, max_take: Any) -> Any:
    """Code of (remaining, max take) with max take <= remaining: triangular layout.

    The state index of `FibonacciNim` and the solver's table index; ints give an exact
    int, int64 arrays an int64 array.
    """
    return remaining * (remaining + 1) // 2 + max_take


def fibonacci_states(n: int) -> int:
    """Codes of every (remaining, max take) with max take <= remaining <= n."""
    return fibonacci_code(n, n) + 1  # type: ignore[no-any-return]


class FibonacciNim(Game[FibState, FibMove]):
    """Fibonacci Nim (Whinihan 1963).

    ## Description
    One pile of `n` stones. The first player takes x with 1 ≤ x < n; afterwards a
    player takes between 1 and twice the previous take. Normal play: whoever takes
    the last stone wins. From the start, the first player loses exactly when n is a
    Fibonacci number; a winning move takes the smallest Zeckendorf part of n.

    ## Action Space
    `Discrete(n - 1)`: action `x - 1` takes x stones.

    ## Observation Space
    `[remaining, max_take]`, shape `(2,)`, each in `[0, n]`. The max take is part
    of the state, so the observation is Markov.

    ## Starting State
    `(n, n - 1)`; paper default n = 20.

    ## Arguments
    `n`: initial pile (≥ 2); `misere`: bool.

    ## Version History
    v0: initial version.
    """

    name = "fibonacci"
    title = "Fibonacci Nim"
    role_phrase = "a simple Fibonacci game"
    disguised_role = "a two-player game called Growing Takes"

    def __init__(self, n: int = 20, *, misere: bool = False, disguise: bool = False) -> None:
        super().__init__(misere=misere, disguise=disguise)
        self.n = param_int(n, "n (stones in the pile)", low=2)

    @property
    def info(self) -> GameInfo:
        return GameInfo(
            name=self.name,
            title=self.title,
            num_actions=self.n - 1,
            max_game_length=self.n,
            observation_shape=(2,),
            observation_high=self.n,
            params={"n": self.n},
            misere=self.misere,
        )

    def initial_state(self) -> FibState:
        return (self.n, self.n - 1)

    def validate_state(self, state: Any) -> FibState:
        remaining, max_take = state_ints(
            state, "a Fibonacci Nim state [remaining, max_take]", count=2
        )
        if not 0 <= remaining <= self.n:
            raise InvalidStateError(f"remaining stones {remaining} outside [0, {self.n}]")
        if remaining == 0 and max_take != 0:
            raise InvalidStateError("with no stones left the max take must be 0")
        if remaining > 0 and not 1 <= max_take <= remaining:
            raise InvalidStateError(
                f"max take {max_take} outside [1, {remaining}] (it is capped at the stones left)"
            )
        if remaining == self.n and max_take == self.n:
            raise InvalidStateError("the first move may not take the whole pile")
        return (remaining, max_take)

    def is_terminal(self, state: FibState) -> bool:
        return state[1] == 0

    def num_legal_moves(self, state: FibState) -> int:
        return state[1]

    def legal_moves(self, state: FibState) -> list[FibMove]:
        return list(range(1, state[1] + 1))

    def legal_move_at(self, state: FibState, k: int) -> FibMove:
        if not 0 <= k < state[1]:
            raise IndexError("no such legal move")
        return k + 1

    def legal_mask(self, state: FibState, out: np.ndarray) -> np.ndarray:
        out[: state[1]] = 1  # takes 1..max take are ids 0..max take - 1
        out[state[1] :] = 0
        return out

    def is_legal(self, state: FibState, move: Any) -> bool:
        if not is_int(move):
            return super().is_legal(state, move)
        return 1 <= move <= state[1]

    def child(self, state: FibState, move: FibMove) -> FibState:
        left = state[0] - move
        return (left, min(2 * move, left))

    def why_illegal(self, state: FibState, move: FibMove) -> str:
        remaining, max_take = state
        if move < 1:
            return f"you must take at least 1 stone, not {move}"
        if move > remaining:
            return f"only {remaining} stone(s) remain, so you cannot take {move}"
        return f"you may take at most {max_take} stone(s) this turn, not {move}"

    def action_id(self, move: FibMove) -> int:
        return int(move) - 1

    def move_from_action(self, action: int) -> FibMove:
        return int(action) + 1

    # The state index: the solver's triangular code. Indices with max take 0 and stones
    # left, and the whole pile taken at once, are no state (`state_from_index` says so).
    @property
    def num_states(self) -> int:
        return fibonacci_code(self.n, self.n - 1) + 1  # type: ignore[no-any-return]

    def state_index(self, state: FibState) -> int:
        return fibonacci_code(*state)  # type: ignore[no-any-return]

    def _state_at(self, index: int) -> FibState:
        remaining = (isqrt(8 * index + 1) - 1) // 2
        return (remaining, index - remaining * (remaining + 1) // 2)

    def _observation_index(self, obs: np.ndarray) -> np.ndarray:
        return fibonacci_code(obs[..., 0], obs[..., 1])  # type: ignore[no-any-return]

    def observation(self, state: FibState) -> np.ndarray:
        return np.asarray(state, dtype=np.int64)

    def move_text(self, move: FibMove) -> str:
        return str(move)

    def move_words(self, move: FibMove) -> str:
        return f"take {move}"

    def rules_text(self) -> str:
        last = "loses" if self.misere else "wins"
        goal = (
            "make your opponent take the last stone"
            if self.misere
            else "take the last stone, leaving nothing for your opponent"
        )
        return (
            f"#Objective: Your goal is to {goal}. The player who takes the last stone {last}.\n"
            "#Game Rule: 1. There is a single pile of stones. 2. Players take turns. "
            "3. The first player may take any number of stones except the whole pile. "
            "4. Every later turn must take at least 1 stone and at most twice the number "
            "the previous player took. "
            f"5. The player who takes the last stone {last}."
        )

    def describe(self, state: FibState) -> str:
        return (
            f"{there_are(state[0], 'stone')} remaining in the pile. "
            f"This turn you may take between 1 and {state[1]} {plural(state[1], 'stone')}."
        )

    def parse_state(self, text: str) -> FibState:
        remaining = find_int(r"There (?:are|is) (\d+) stones? remaining", text, "the pile size")
        max_take = find_int(r"you may take between 1 and (\d+) stones?", text, "the max take")
        return self.validate_state((remaining, max_take))

    @classmethod
    def config_from_text(cls, text: str) -> dict[str, Any]:
        remaining = find_int(r"There (?:are|is) (\d+) stones? remaining", text, "the pile size")
        # One more stone than is left: every (remaining, max take) is then a valid state.
        return {"n": max(remaining + 1, 2), "misere": bool(re.search(r"last stone loses", text))}

    def task_text(self, state: FibState) -> str:
        return (
            "Based on the current state, decide how many stones you will take "
            f"(between 1 and {state[1]}) on this turn."
        )

    def action_schema(self, state: FibState) -> str:
        return f"integer // how many stones you take, between 1 and {state[1]}"

    def _move_from_value(self, value: Any, state: FibState) -> FibMove:
        (count,) = ints(value, 1, "the number of stones to take")
        return count
