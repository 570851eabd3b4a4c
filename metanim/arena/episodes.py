"""One episode between two policies over a `Game`, recorded move by move.

The episode drives the game directly through the `Game` interface (the one place its
rules live); start states come from the env's sampler, so the env and the arena start
games the same way. Every move is graded by the solver: a move is optimal when it
moves to a P-position, or when the mover stood in a P-position (every move is then as
good as any other).

Seeds are honoured end to end: the episode seed fixes the start state, and each
ply's decision seed and solver RNG are derived from it, independent of what else
runs concurrently.
"""

from __future__ import annotations

import inspect
import time
import traceback
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from metanim.agents.base import Decision
from metanim.arena._policies import TURN_COUNTS, Policy, Turn, track_calls
from metanim.games import Game
from metanim.util.seeds import derive_seed

Seat = Literal["first", "second"]
Actor = Literal["agent", "opponent"]
#: win/loss are results; infrastructure_error (the model could not be reached) and
#: error (a bug in a policy) are never a result: the episode is marked and rerun.
EpisodeStatus = Literal["win", "loss", "infrastructure_error", "error"]
EndReason = Literal[
    "game_over", "agent_forfeit", "opponent_forfeit", "infrastructure_error", "error"
]


class MoveRecord(BaseModel):
    """One decision in an episode: the position, the answer and its solver grade."""

    model_config = ConfigDict(frozen=True)

    ply: int
    actor: Actor
    state: Any  # JSON form of the position the mover faced
    position: Literal["N", "P"]  # solver outcome for the mover
    status: str  # ok, fallback, forfeit, infrastructure_error
    move: str | None = None  # canonical move text
    optimal: bool | None = None  # None when no move was played
    illegal: int = 0
    unparsable: int = 0
    truncated: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    seed: int = 0
    error: str | None = None
    # The method's full record, when kept: its `Decision` in a live episode, its JSON
    # form (a dict, kept a dict) when read back from a log.
    decision: dict[str, Any] | Decision | None = Field(None, union_mode="left_to_right")


class SideTotals(BaseModel):
    """Per-player totals of one episode."""

    moves: int = 0
    optimal_moves: int = 0
    illegal: int = 0
    unparsable: int = 0
    truncated: int = 0
    forfeits: int = 0
    fallbacks: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0

    @classmethod
    def of(cls, turns: list[tuple[Turn, bool | None]]) -> SideTotals:
        """The totals of one side's turns, each with its solver grade."""
        totals: dict[str, Any] = dict.fromkeys(cls.model_fields, 0)
        for turn, optimal in turns:
            totals["moves"] += turn.move is not None
            totals["optimal_moves"] += bool(optimal)
            totals["forfeits"] += turn.status == "forfeit"
            totals["fallbacks"] += turn.status == "fallback"
            for name in TURN_COUNTS:
                totals[name] += getattr(turn, name)
        return cls(**totals)


class EpisodeRecord(BaseModel):
    """A finished (or failed) episode: one line of a tournament log."""

    model_config = ConfigDict(frozen=True)

    id: str
    setting: str
    index: int
    seed: int
    seat: Seat
    agent: str
    opponent: str
    game: str
    game_params: dict[str, Any]
    start_state: Any  # None when the episode failed before its start was drawn
    start_outcome: Literal["N", "P"] | None  # for the first mover
    status: EpisodeStatus
    end_reason: EndReason
    winner: Actor | None
    plies: int
    agent_totals: SideTotals
    opponent_totals: SideTotals
    chain_calls: int = 0  # critical path: longest chain of dependent model calls
    wall_s: float = 0.0
    error: str | None = None
    moves: list[MoveRecord] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def finished(self) -> bool:
        return self.status in ("win", "loss")


def start_position(
    game: Game[Any, Any], start: Any, seat: Seat, seed: int
) -> tuple[Any, Literal["N", "P"]]:
    """The start state of an episode and its outcome for the first mover.

    `start="random_n"` gives the agent an N-position at its first decision: with the
    agent first, a random N-position; with the opponent first, a random P-position
    from which no move ends the game (the env's own sampler, `resolve_start`).
    `"initial"` or an explicit state is used as given.
    """
    from metanim.envs.env import resolve_start, start_setting
    from metanim.solver import outcome

    start = start_setting(game, start, preset=False)
    rng = np.random.default_rng(derive_seed(seed, "start"))
    state = resolve_start(game, start, rng, mover_wins=seat == "first")
    return state, outcome(game, state)  # type: ignore[return-value]


def _wants_rng(policy: Policy) -> bool:
    """Whether `policy.act` requires `rng` (the protocol had it required until policies
    learned to seed their own generator from `seed`); checked once per policy class."""
    kind = type(policy)
    wants = _WANTS_RNG.get(kind)
    if wants is None:
        try:
            param = inspect.signature(policy.act).parameters.get("rng")
        except (TypeError, ValueError):
            param = None
        wants = _WANTS_RNG[kind] = param is not None and param.default is param.empty
    return wants


_WANTS_RNG: dict[type, bool] = {}


async def play_episode(
    game: Game[Any, Any],
    agent: Policy,
    opponent: Policy,
    *,
    seat: Seat = "first",
    start: Any = "random_n",
    seed: int = 0,
    episode_id: str = "",
    setting: str = "",
    index: int = 0,
) -> EpisodeRecord:
    """Play one game to its end, or to the first forfeit or infrastructure error.

    Args:
        game: The game configuration.
        agent: The evaluated player.
        opponent: The other player.
        seat: "first" if the agent moves first.
        start: "random_n" (default), "initial" or a state.
        seed: Episode seed (start state, decision seeds, solver choices).
        episode_id, setting, index: identifiers copied into the record.
    """
    # The env layer's memoized solver door: every state here came from `game.apply`, so
    # the public API's validation of each state on each query is not needed.
    from metanim.envs._solve import outcome, winning_moves

    began = time.perf_counter()
    times = track_calls()
    state, start_outcome = start_position(game, start, seat, seed)
    start_json = game.to_json(state)
    players: dict[Actor, Policy] = {"agent": agent, "opponent": opponent}
    turns: dict[Actor, list[tuple[Turn, bool | None]]] = {"agent": [], "opponent": []}
    moves: list[MoveRecord] = []
    mover: Actor = "agent" if seat == "first" else "opponent"
    status: EpisodeStatus | None = None
    end_reason: EndReason = "game_over"
    winner: Actor | None = None
    error: str | None = None
    ply = 0
    while not game.is_terminal(state):
        other: Actor = "opponent" if mover == "agent" else "agent"
        position = outcome(game, state)
        ply_seed = derive_seed(seed, "ply", ply)
        try:
            player = players[mover]
            if _wants_rng(player):  # a policy written when `rng` was always passed
                turn = await player.act(
                    game, state, seed=ply_seed, rng=np.random.default_rng(ply_seed)
                )
            else:
                turn = await player.act(game, state, seed=ply_seed)
        except Exception as exc:  # a bug in a policy: mark the episode, never score it
            status, end_reason = "error", "error"
            error = f"{mover}: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"
            break
        optimal = None
        if turn.move is not None:
            # Optimal: a winning move, or any move when the mover faces a P-position.
            optimal = position == "P" or turn.move in winning_moves(game, state)
        turns[mover].append((turn, optimal))
        moves.append(
            MoveRecord(
                ply=ply,
                actor=mover,
                state=game.to_json(state),
                position=position,
                status=turn.status,
                move=None if turn.move is None else game.move_text(turn.move),
                optimal=optimal,
                **turn.counts(),
                seed=ply_seed,
                error=turn.error,
                decision=turn.detail,
            )
        )
        if turn.status == "infrastructure_error":
            status, end_reason, error = "infrastructure_error", "infrastructure_error", turn.error
            break
        if turn.move is None:  # every answer stayed unparsable or illegal
            winner = other
            end_reason = "agent_forfeit" if mover == "agent" else "opponent_forfeit"
            break
        state = game.apply(state, turn.move)
        ply += 1
        mover = other
    else:
        # The player to move at a terminal state wins in misère play, loses in normal play.
        winner = (
            mover if game.mover_wins_at_terminal else ("opponent" if mover == "agent" else "agent")
        )
    if status is None:
        status = "win" if winner == "agent" else "loss"
    return EpisodeRecord(
        id=episode_id,
        setting=setting,
        index=index,
        seed=seed,
        seat=seat,
        agent=agent.name,
        opponent=opponent.name,
        game=game.name,
        game_params=game.params,
        start_state=start_json,
        start_outcome=start_outcome,
        status=status,
        end_reason=end_reason,
        winner=winner if status in ("win", "loss") else None,
        plies=sum(m.move is not None for m in moves),
        agent_totals=SideTotals.of(turns["agent"]),
        opponent_totals=SideTotals.of(turns["opponent"]),
        chain_calls=times.chain(),
        wall_s=time.perf_counter() - began,
        error=error,
        moves=moves,
    )
