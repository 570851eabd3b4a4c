"""The one episode loop: two policies over a `Game`, recorded and graded move by move.

Tournaments, `metanim play` and the examples all play games here. The loop drives the
game through the `Game` interface (the one place its rules live); start states come
from the env's sampler, so the env and the arena start games the same way. Every move
is graded by the solver: a move is optimal when it moves to a P-position, or when the
mover stood in a P-position (every move is then as good as any other).

Seeds are honoured end to end: the episode seed fixes the start state, and each ply's
decision seed is derived from it, independent of what else runs concurrently.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from metanim.arena._players import Policy, track_calls
from metanim.envs import resolve_start, start_setting
from metanim.games import Game
from metanim.records import (
    Actor,
    EndReason,
    EpisodeRecord,
    EpisodeStatus,
    MoveRecord,
    Seat,
    SideTotals,
)
from metanim.solver import solver_for
from metanim.util import derive_seed


def start_position(
    game: Game[Any, Any], start: Any, seat: Seat, seed: int
) -> tuple[Any, Literal["N", "P"]]:
    """The start state of an episode and its outcome for the first mover.

    `start="random_n"` gives the agent an N-position at its first decision: with the
    agent first, a random N-position; with the opponent first, a random P-position
    from which no move ends the game (the env's own sampler, `resolve_start`).
    `"initial"` or an explicit state is used as given.
    """
    start = start_setting(game, start, preset=False)
    rng = np.random.default_rng(derive_seed(seed, "start"))
    state = resolve_start(game, start, rng, mover_wins=seat == "first")
    return state, solver_for(game).outcome(state)  # type: ignore[return-value]


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
    on_move: Callable[[MoveRecord], None] | None = None,
) -> EpisodeRecord:
    """Play one game to its end, or to the first forfeit or infrastructure error.

    Args:
        game: The game configuration.
        agent: The evaluated player.
        opponent: The other player.
        seat: "first" if the agent moves first.
        start: "random_n" (default), "initial", "auto" or a state.
        seed: Episode seed (start state, decision seeds, solver choices).
        episode_id, setting, index: identifiers copied into the record.
        on_move: called with each move's record as soon as it is made.
    """
    began = time.perf_counter()
    times = track_calls()
    solver = solver_for(game)  # every state here came from `game.apply`: no validation
    state, start_outcome = start_position(game, start, seat, seed)
    start_json = game.to_json(state)
    players: dict[Actor, Policy] = {"agent": agent, "opponent": opponent}
    moves: list[MoveRecord] = []
    mover: Actor = "agent" if seat == "first" else "opponent"
    status: EpisodeStatus | None = None
    end_reason: EndReason = "game_over"
    winner: Actor | None = None
    error: str | None = None
    ply = 0
    while not game.is_terminal(state):
        other = other_of(mover)
        position = solver.outcome(state)
        ply_seed = derive_seed(seed, "ply", ply)
        try:
            turn = await players[mover].act(game, state, seed=ply_seed)
        except Exception as exc:  # a bug in a policy: mark the episode, never score it
            status, end_reason = "error", "error"
            error = f"{mover}: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"
            break
        # Optimal: a winning move, or any move when the mover faces a P-position.
        optimal = None
        if turn.move is not None:
            optimal = position == "P" or turn.move in solver.winning_moves(state)
        move = MoveRecord(
            # model_dump, not dict(): pydantic-core's dump is a quarter of the Python
            # iteration's cost, paid per move.
            **turn.counts.model_dump(),
            ply=ply,
            actor=mover,
            state=game.to_json(state),
            position=position,
            status=turn.status,
            move=None if turn.move is None else game.move_text(turn.move),
            optimal=optimal,
            seed=ply_seed,
            error=turn.error,
            decision=turn.detail,
        )
        moves.append(move)
        if on_move is not None:
            on_move(move)
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
        winner = mover if game.mover_wins_at_terminal else other_of(mover)
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
        agent_totals=SideTotals.of(m for m in moves if m.actor == "agent"),
        opponent_totals=SideTotals.of(m for m in moves if m.actor == "opponent"),
        chain_calls=times.chain(),
        wall_s=time.perf_counter() - began,
        error=error,
        moves=moves,
    )


def other_of(actor: Actor) -> Actor:
    return "opponent" if actor == "agent" else "agent"
