"""The one lm-eval answer filter: a reply to the canonical text of the move it names."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from metanim.games import MoveError
from metanim.integrations._grading import game_and_state

#: What the filter writes for a reply that names no legal move (never equal to a target).
INVALID = "[invalid]"


def _cell(value: Any) -> Any:
    # `state` and `game_params` are JSON strings in the files (one Arrow type per column).
    return json.loads(value) if isinstance(value, str) else value


def canonical_reply(reply: str, doc: dict[str, Any]) -> str:
    """The canonical move text of `reply` in the row's position, or `INVALID`."""
    game, state = game_and_state(
        {
            "game": doc["game"],
            "game_params": _cell(doc["game_params"]),
            "state": _cell(doc["state"]),
        }
    )
    try:
        return game.move_text(game.parse_move(reply, state))
    except MoveError:
        return INVALID


def canonical_move(
    resps: Sequence[Sequence[str]], docs: Sequence[dict[str, Any]]
) -> list[list[str]]:
    """lm-eval `custom` filter: every reply of every row to its canonical move text."""
    return [
        [canonical_reply(r, doc) for r in replies] for replies, doc in zip(resps, docs, strict=True)
    ]
