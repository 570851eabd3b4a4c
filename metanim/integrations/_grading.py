"""Grading a model's reply to a game position with the exact solver (shared by the harnesses).

- critical state (an N-position with one winning move): correct iff it is that move;
- any other N-position: correct iff the move wins (leaves a P-position);
- P-position: no winning move exists, so every legal move is as good as any; the grade
  says so (and counts a legal move as correct: nothing better was possible);
- an unparsable, illegal or truncated reply is wrong, with the parser's reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from metanim.games import Game, MoveError, make_game
from metanim.solver import solver_for


@dataclass(frozen=True)
class Grade:
    """The verdict on one reply."""

    correct: bool
    answer: str | None  # the canonical text of the move read from the reply
    outcome: str  # "N" (the mover can win) or "P" (no winning move exists)
    n_winning: int  # number of winning moves in the position
    error: str | None  # None, "unparsable", "illegal" or "truncated"
    explanation: str


def _as_state(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_as_state(v) for v in value)
    return value


def game_and_state(meta: dict[str, Any]) -> tuple[Game[Any, Any], Any]:
    """The game and state named by a record's (or a sample's) `game`, `game_params`, `state`."""
    game = make_game(meta["game"], **meta["game_params"])
    return game, game.validate_state(_as_state(meta["state"]))


def grade_reply(
    game: Game[Any, Any], state: Any, reply: str, *, finish_reason: str | None = None
) -> Grade:
    """Grade `reply` (a model's whole answer text) as a move in `state`, by the solver."""
    winning = solver_for(game).winning_moves(state)
    outcome = "N" if winning else "P"
    try:
        move = game.parse_move(reply, state, finish_reason=finish_reason)
    except MoveError as err:
        return Grade(False, None, outcome, len(winning), err.kind, f"{err.kind}: {err.reason}")
    text = game.move_text(move)
    if not winning:
        return Grade(
            True,
            text,
            outcome,
            0,
            None,
            f"P-position: no winning move exists; {text} is legal and as good as any move",
        )
    shown = ", ".join(game.move_text(m) for m in winning[:8]) + (" ..." if len(winning) > 8 else "")
    if len(winning) == 1:
        head = f"critical state: the unique winning move is {shown}"
    else:
        head = f"N-position with {len(winning)} winning moves ({shown})"
    verdict = "wins" if move in winning else "does not win"
    return Grade(move in winning, text, outcome, len(winning), None, f"{head}; {text} {verdict}")
