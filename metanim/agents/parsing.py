"""Reading an answer out of a model's reply, as the methods record it.

The one reply parser lives in the games layer (`metanim.games.reply`: strict first, then
tolerant; see its docstring), so `Game.parse_move`, `env.step(text)` and the methods read
replies alike. `parse_reply` adds what a method records: the stage that found the value, and the kind
and reason of a failure. Re-asking lives in `base.Context.ask`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from metanim.agents.tasks import Task
from metanim.games import MoveError
from metanim.games.reply import extract_action


@dataclass(frozen=True)
class Parsed:
    """One reply read against a task: the answer, or the kind and reason of the failure."""

    stage: str | None  # which extraction stage found the value (None if none did)
    value: Any  # the raw action value
    answer: Any  # the parsed legal answer, or None
    error: str | None  # None, "unparsable" or "illegal"
    reason: str | None
    payload: dict[str, Any] | None = None  # structured replies (judge verdicts, AceMAD reports)

    @property
    def ok(self) -> bool:
        return self.error is None


def parse_reply(task: Task, text: str, *, finish_reason: str | None = None) -> Parsed:
    """Read a reply as an answer of `task`, never raising for the model's mistakes.

    With `finish_reason="length"` (cut off by the completion cap) only the strict stage
    counts; otherwise the error is "truncated".
    """
    try:
        value, stage = extract_action(text, finish_reason=finish_reason)
    except MoveError as exc:
        return Parsed(None, None, None, exc.kind, exc.reason)
    if value is None:
        return Parsed(stage, None, None, "unparsable", 'the "action" field is empty')
    try:
        answer = task.parse(value)
    except MoveError as exc:
        return Parsed(stage, value, None, exc.kind, exc.reason)
    return Parsed(stage, value, answer, None, None)


__all__ = ["Parsed", "parse_reply"]
