"""A decision the simulated models answer: its legal answers and its optimal ones.

Its own module, below the policies and the behaviour rules that both read it.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

from metanim.games import Game, MoveError


def move_value(game: Game[Any, Any], move: Any) -> Any:
    """The JSON value of a move as prompts show it (`move_text` parsed)."""
    text = game.move_text(move)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


@dataclass
class Task:
    """A decision with known legal answers (`candidates`) and optimal answers (`correct`)."""

    kind: str  # "game" or "question"
    candidates: list[Any]
    correct: list[Any]
    game: Game[Any, Any] | None = None
    state: Any = None
    heuristics: dict[str, Any] = field(default_factory=dict)
    illegal_value: Any = None
    question: str = ""  # a known question's text (a rewritten prompt must keep it)

    def normalize(self, text: str) -> Any:
        """The legal candidate an answer names, or None."""
        if self.game is not None:
            try:
                return move_value(self.game, self.game.parse_move(text, self.state))
            except MoveError:
                return None
        cleaned = text.strip()
        if cleaned.startswith('"'):
            # A JSON string: LaTeX answers carry escaped backslashes.
            with contextlib.suppress(json.JSONDecodeError):
                cleaned = str(json.loads(cleaned))
        cleaned = cleaned.strip("\"'").strip()
        for candidate in self.candidates:
            if cleaned.lower() == str(candidate).lower():
                return candidate
        return None

    def describe(self) -> dict[str, Any]:
        """JSON summary for the request log."""
        if self.game is not None:
            return {
                "kind": "game",
                "game": self.game.name,
                "params": self.game.params,
                "state": self.game.to_json(self.state),
                "winning": self.correct,
            }
        return {"kind": "question", "answer": self.correct, "choices": self.candidates}
