"""Play one game between two players and grade every move with the solver.

`play_game` and `format_record` are the library side of `metanim play`; the command's
flags and handler live in `metanim.arena._cli` (it builds solver players and servers).
Playing a game is an arena concern: it sits above the methods it drives.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from metanim.agents.base import Decision
from metanim.agents.policy import LLMPolicy
from metanim.games import Game
from metanim.llm._types import InfrastructureError


@dataclass
class PlayedMove:
    """One move of a played game, graded against the solver."""

    player: str
    state: Any
    decision: Decision
    position: str  # "N" (the mover can win) or "P"
    grade: str  # "optimal", "mistake", "any (P-position)", "forfeit", "fallback"


@dataclass
class GameRecord:
    """The moves of one game and its winner ("agent", "opponent")."""

    game: Game[Any, Any]
    moves: list[PlayedMove] = field(default_factory=list)
    winner: str | None = None
    reason: str = ""
    interrupted: bool = False  # a model could not be reached: the game did not finish


class PlayInfrastructureError(InfrastructureError):
    """A model could not be reached mid-game; `.record` holds the moves played so far."""

    def __init__(self, cause: InfrastructureError, record: GameRecord) -> None:
        super().__init__(str(cause), kind=cause.kind, status=cause.status, attempts=cause.attempts)
        self.record = record


def play_game(
    game: Game[Any, Any],
    agent: LLMPolicy,
    opponent: LLMPolicy,
    *,
    seed: int = 0,
    start: Any = None,
    agent_first: bool = True,
    max_moves: int | None = None,
) -> GameRecord:
    """Alternate `agent` and `opponent` from `start` until the game ends or someone forfeits."""
    from metanim.solver import outcome, winning_moves

    state = game.initial_state() if start is None else game.validate_state(start)
    if game.is_terminal(state):
        raise ValueError(f"the start state {state} is terminal: nothing to play")
    record = GameRecord(game)
    players = [("agent", agent), ("opponent", opponent)]
    if not agent_first:
        players.reverse()
    limit = max_moves or game.info.max_game_length
    for ply in range(limit):
        if game.is_terminal(state):
            break
        name, policy = players[ply % 2]
        try:
            decision = policy.act(game, state, seed=seed * 1000 + ply)
        except InfrastructureError as exc:
            record.interrupted = True
            record.reason = f"{name}'s model could not be reached at move {ply + 1}"
            raise PlayInfrastructureError(exc, record) from exc
        position = "N" if outcome(game, state).upper().startswith("N") else "P"
        if decision.move is None:
            record.moves.append(PlayedMove(name, state, decision, position, "forfeit"))
            record.winner = players[(ply + 1) % 2][0]
            record.reason = f"{name} forfeited (no valid move after re-asks)"
            return record
        if position == "P":
            grade = "any (P-position)"
        else:
            grade = "optimal" if decision.move in winning_moves(game, state) else "mistake"
        if decision.status == "fallback":
            grade += ", fallback"
        record.moves.append(PlayedMove(name, state, decision, position, grade))
        state = game.apply(state, decision.move)
    if game.is_terminal(state):
        last = record.moves[-1].player
        other = "opponent" if last == "agent" else "agent"
        # The game says who wins at a terminal state: the player to move there (`other`)
        # exactly when `mover_wins_at_terminal` (misère play).
        mover_wins = game.mover_wins_at_terminal
        record.winner = other if mover_wins else last
        record.reason = "opponent took the last move" if mover_wins else "took the last move"
    else:
        record.reason = f"stopped after {limit} moves"
    return record


def format_record(record: GameRecord) -> str:
    """A readable transcript: each move with its state, position class, grade and cost."""
    game = record.game
    lines = [f"{game.title} {game.params}"]
    for i, move in enumerate(record.moves, start=1):
        d = move.decision
        lines.append(
            f"{i:3d}. {move.player:8s} at {game.describe(move.state)}\n"
            f"     -> {d.answer_text or '(none)'}  [{move.position}-position: {move.grade}]"
            f"  calls={d.n_calls} tokens={d.usage.total_tokens} unparsable={d.unparsable}"
            f" illegal={d.illegal} status={d.status}"
        )
    if record.interrupted:
        lines.append(f"interrupted: {record.reason}")
    else:
        lines.append(f"winner: {record.winner} ({record.reason})")
    return "\n".join(lines)
