"""Reading an action out of a model's reply: strict first, then tolerant.

1. strict: a ```json code block whose object validates as `ActionReply` (pydantic);
2. json_object: the last JSON object in the text that has an "action" key;
3. key: an `action: value` pair written loosely (unquoted keys, as in Table 8's scheme);
4. bare: the whole reply is a bare integer, coordinate or option letter.

The first stage that yields a value wins; the task then interprets it, raising
`UnparsableMoveError` or `IllegalMoveError`. The stage is recorded with every sample, so
strictness can be audited. Re-asking lives in `base.Context.ask`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from metanim.agents.tasks import Task
from metanim.games import MoveError, UnparsableMoveError


class ActionReply(BaseModel):
    """The strict reply schema: an object with an `action` (and optional reasoning)."""

    model_config = ConfigDict(extra="allow")

    action: Any
    reasoning: str | None = None


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_KEY = re.compile(
    # The lookbehind keeps "reaction: 5" or "transaction=3" from reading as an action.
    r"""(?<![A-Za-z0-9_])["']?action["']?\s*[:=]\s*(\[[^\]\[]*\]|\([^()]*\)|-?\d+(?:\.\d+)?|"[^"]*"|'[^']*'|[A-Za-z]\b)""",
    re.IGNORECASE,
)
_BARE = re.compile(
    r"^\s*(-?\d+(?:\.\d+)?|[\[(]\s*-?\d+\s*,\s*-?\d+\s*[\])]|\(?[A-Za-z]\)?)\s*\.?\s*$"
)

STAGES = ("strict", "json_object", "key", "bare")


def fenced_objects(text: str) -> list[dict[str, Any]]:
    """JSON objects inside ``` code blocks, in order."""
    out = []
    for block in _FENCE.findall(text):
        try:
            value = json.loads(block.strip())
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object that decodes anywhere in `text`, in order."""
    decoder = json.JSONDecoder()
    out, index = [], 0
    while True:
        start = text.find("{", index)
        if start < 0:
            return out
        try:
            value, end = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, ValueError):
            index = start + 1
            continue
        if isinstance(value, dict):
            out.append(value)
        index = end


def last_object_with(text: str, *keys: str) -> dict[str, Any] | None:
    """The last JSON object (fenced first, then anywhere) that has all `keys`."""
    for candidates in (fenced_objects(text), json_objects(text)):
        for obj in reversed(candidates):
            if all(k in obj for k in keys):
                return obj
    return None


def extract_action(text: str) -> tuple[Any, str]:
    """The raw action value in a reply and the stage that found it.

    Raises:
        UnparsableMoveError: no stage found an action.
    """
    for obj in reversed(fenced_objects(text)):
        try:
            return ActionReply.model_validate(obj).action, "strict"
        except ValidationError:
            continue
    for obj in reversed(json_objects(text)):
        if "action" in obj:
            return obj["action"], "json_object"
    matches = _KEY.findall(text)
    if matches:
        raw = matches[-1].strip()
        if raw[:1] in "\"'":
            return raw[1:-1], "key"
        return raw, "key"
    bare = _BARE.match(text.replace("`", ""))
    if bare:
        return bare.group(1), "bare"
    raise UnparsableMoveError(
        'no JSON object with an "action" field, and no bare answer, was found', text[:200]
    )


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


def parse_reply(task: Task, text: str) -> Parsed:
    """Read a reply as an answer of `task`, never raising for the model's mistakes."""
    try:
        value, stage = extract_action(text)
    except MoveError as exc:
        return Parsed(None, None, None, exc.kind, exc.reason)
    if value is None:
        return Parsed(stage, None, None, "unparsable", 'the "action" field is empty')
    try:
        answer = task.parse(value)
    except MoveError as exc:
        return Parsed(stage, value, None, exc.kind, exc.reason)
    return Parsed(stage, value, answer, None, None)
