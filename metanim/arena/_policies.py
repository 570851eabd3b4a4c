"""Players of an episode: the narrow `Policy` protocol and its two kinds.

A policy turns a position into a `Turn`: the legal move it plays, or a forfeit, or an
infrastructure error, with the counts, usage and latency of the decision. Solver
policies (`optimal`, `random`, `epsilon:<p>`) reuse the env's opponents; `MethodPolicy`
wraps any prompting or debate `Method` of `metanim.agents`.
"""

from __future__ import annotations

import contextvars
import time
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from metanim.agents.base import Decision
from metanim.games import Game, MoveError
from metanim.llm._types import ChatModel, Completion, InfrastructureError, Message

TurnStatus = Literal["ok", "fallback", "forfeit", "infrastructure_error"]


#: Per-turn counts that move records carry and side totals add up.
TURN_COUNTS = (
    "illegal",
    "unparsable",
    "truncated",
    "calls",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "latency_s",
)


@dataclass
class Turn:
    """One decision of one player, as the arena records it.

    `move` is a legal move when `status` is "ok" or "fallback" (a seeded random legal
    move the method played after every answer failed, recorded, never silent), else None.
    """

    move: Any
    status: TurnStatus
    illegal: int = 0
    unparsable: int = 0
    truncated: int = 0  # replies cut off by the completion cap
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    error: str | None = None
    # The method's full `Decision`, kept as the model: the log serialises it once, in
    # pydantic-core, with the episode (a dict dumped here would be walked twice more).
    detail: Decision | dict[str, Any] | None = None

    def counts(self) -> dict[str, int | float]:
        """The answer-failure and usage counts, as the episode records copy and add them."""
        return {name: getattr(self, name) for name in TURN_COUNTS}


@runtime_checkable
class Policy(Protocol):
    """A player: `await policy.act(game, state, seed=...)` returns a `Turn`.

    A policy that draws randomness takes it from `rng`, or when none is given (the
    arena gives none) from a generator seeded with `seed` (solver policies: the env's
    counter-based `EpisodeStream`): an LLM method never needs one, and seeding a numpy
    generator costs more than the rest of a solver move.
    """

    name: str

    async def act(
        self,
        game: Game[Any, Any],
        state: Any,
        *,
        seed: int,
        rng: np.random.Generator | None = None,
    ) -> Turn: ...


@dataclass
class SolverPolicy:
    """A solver-backed player: "optimal", "random" or "epsilon:<p>" (no model calls).

    A solver policy never errs, so its turns are always "ok"; it draws only from `rng`,
    else from the env's stream of the ply seed the episode derives, so the same seed
    gives the same moves.
    """

    name: str

    def __post_init__(self) -> None:
        from metanim.envs.opponents import make_opponent

        self._choose = make_opponent(self.name)

    async def act(
        self,
        game: Game[Any, Any],
        state: Any,
        *,
        seed: int,
        rng: np.random.Generator | None = None,
    ) -> Turn:
        from metanim.envs._stream import EpisodeStream
        from metanim.envs.opponents import resolve_move

        start = time.perf_counter()
        # The env's counter-based stream (what its built-in opponents draw from): two
        # integer mixes per draw, against ~20 µs to seed a numpy Generator per move.
        draws = rng if rng is not None else EpisodeStream(seed, 0)
        move = resolve_move(game, state, self._choose(game, state, draws))
        return Turn(move=move, status="ok", latency_s=time.perf_counter() - start)


SOLVER_POLICIES = ("optimal", "random")


def is_solver_spec(spec: str) -> bool:
    """Whether `spec` names a solver policy rather than an LLM method."""
    name = spec.strip().lower()
    return name in SOLVER_POLICIES or name.startswith("epsilon:")


@dataclass
class MethodPolicy:
    """An LLM player: a `metanim.agents` method (anything with `async decide`).

    Infrastructure errors become an "infrastructure_error" turn, never a move or a
    forfeit; `record_decisions` keeps the method's full decision record (messages,
    samples, votes) in the turn.
    """

    name: str
    method: Any
    record_decisions: bool = True

    async def act(
        self,
        game: Game[Any, Any],
        state: Any,
        *,
        seed: int,
        rng: np.random.Generator | None = None,
    ) -> Turn:
        start = time.perf_counter()
        try:
            decision = await self.method.decide(game, state, seed=seed)
        except InfrastructureError as exc:
            partial = getattr(exc, "decision", None)
            turn = (
                _turn_from_decision(partial, self.record_decisions) if partial else Turn(None, "ok")
            )
            turn.move, turn.status = None, "infrastructure_error"
            turn.error = f"{exc.kind}: {exc}"
            turn.latency_s = time.perf_counter() - start
            return turn
        turn = _turn_from_decision(decision, self.record_decisions)
        if turn.move is not None and not game.is_legal(state, turn.move):
            # A method must hand back a legal move; anything else is a bug to surface,
            # not a move to repair (DESIGN §9).
            raise MoveError(f"method {self.name} returned an illegal move {turn.move!r}")
        return turn


def _kept(decision: Any) -> Decision | dict[str, Any]:
    """A decision as a move record keeps it: a `Decision` as it is (dumped once, with its
    episode's line); another method's record as its JSON form."""
    if isinstance(decision, Decision):
        return decision
    return decision.model_dump(mode="json", exclude={"move"})


def _turn_from_decision(decision: Any, keep: bool) -> Turn:
    status = decision.status
    move = decision.move if status in ("ok", "fallback") else None
    return Turn(
        move=move,
        status=status,
        illegal=int(decision.illegal),
        unparsable=int(decision.unparsable),
        truncated=int(getattr(decision, "truncated", 0)),
        calls=len(decision.calls),
        prompt_tokens=int(decision.usage.prompt_tokens),
        completion_tokens=int(decision.usage.completion_tokens),
        cost_usd=float(decision.cost_usd),
        latency_s=float(decision.latency_s),
        error=decision.error,
        detail=_kept(decision) if keep else None,
    )


# --------------------------------------------------------------- call timing
@dataclass
class CallTimes:
    """Start and end times of every model call made inside one episode or decision."""

    spans: list[tuple[float, float]] = field(default_factory=list)

    def chain(self) -> int:
        """Length of the longest chain of calls each starting after the previous ended.

        With a fixed per-call latency this is the critical path in calls: no schedule,
        however concurrent, can finish the episode in fewer sequential latencies.
        """
        spans = sorted(self.spans)
        best: list[int] = []
        for i, (start, _) in enumerate(spans):
            prior = [best[j] for j in range(i) if spans[j][1] <= start]
            best.append(1 + max(prior, default=0))
        return max(best, default=0)


_CALL_TIMES: contextvars.ContextVar[CallTimes | None] = contextvars.ContextVar(
    "metanim_arena_call_times", default=None
)


def track_calls() -> CallTimes:
    """Start recording call spans in the current task (child tasks inherit the recorder)."""
    times = CallTimes()
    _CALL_TIMES.set(times)
    return times


class TimedModel:
    """A `ChatModel` wrapper that records each call's span into the current `CallTimes`."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner

    @property
    def model(self) -> str:
        return self.inner.model

    async def chat(self, messages: list[Message], **kwargs: Any) -> Completion:
        start = time.perf_counter()
        try:
            return await self.inner.chat(messages, **kwargs)
        finally:
            times = _CALL_TIMES.get()
            if times is not None:
                times.spans.append((start, time.perf_counter()))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
