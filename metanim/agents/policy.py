"""`LLMPolicy`: a method as an env opponent (sync callable) or as the agent."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import numpy as np

from metanim.agents.base import Decision, Method
from metanim.agents.tasks import game_problem
from metanim.games import Game, IllegalMoveError

T = TypeVar("T")


class LLMPolicy:
    """Play a game with a prompting or debate method.

    As an env opponent, `policy(game, state, rng)` returns the chosen move (the seed is
    drawn from the env's `rng`, so `env.reset(seed=...)` reproduces it); a forfeit raises
    `IllegalMoveError`, which the env records as the opponent's forfeit. As the agent,
    `act(game, state, seed=...)` returns the whole `Decision`. Every decision is kept in
    `decisions`. An `InfrastructureError` propagates: it is never a move.

    The async methods run on one private event loop in a background thread, so the
    policy works from sync code and from inside a running loop alike.
    """

    def __init__(self, method: Method, *, list_moves: bool = False) -> None:
        self.method = method
        #: The method's prompts list the legal moves (`Game.prompt(list_moves=True)`).
        self.list_moves = list_moves
        self.decisions: list[Decision] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LLMPolicy({self.method.name}, models={self.method.models})"

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                threading.Thread(target=self._loop.run_forever, daemon=True).start()
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def act(self, game: Game[Any, Any], state: Any, *, seed: int | None = None) -> Decision:
        """Decide a move in `state`; returns the full record."""
        problem, at = game_problem(game, state, self.list_moves)
        decision = self._run(self.method.decide(problem, at, seed=seed))
        self.decisions.append(decision)
        return decision

    def __call__(self, game: Game[Any, Any], state: Any, rng: np.random.Generator) -> Any:
        decision = self.act(game, state, seed=int(rng.integers(2**31)))
        if decision.move is None:
            raise IllegalMoveError(f"{self.method.name} forfeited: no valid move after re-asks")
        return decision.move

    def close(self) -> None:
        """Stop the background loop."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._loop = None
