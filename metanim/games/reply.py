"""The reply contract: the Output Format a prompt asks for, and the one parser that reads replies.

Games own both sides, so every reader of a model's reply (the agents, `Game.parse_move`,
`env.step(text)`, the PettingZoo view, the dataset rows and the inspect/lm-eval
integrations) reads it the same way and raises the same errors.

Extraction is strict first, then tolerant; the first stage that yields a value wins:

1. strict: a ```json code block whose object validates as `ActionReply` (pydantic);
2. json_object: the last JSON object in the text that has an "action" key;
3. key: an `action: value` pair written loosely (unquoted keys, as in Table 8's scheme);
4. bare: the whole reply is a bare integer, coordinate or option letter.

The value found is then read by `Game.move_from_value`: a text value counts only when it
*is* a number or a list of numbers ("2", "[0, 3]", "(1, 2)"); "take 2 from heap 1" is
unparsable, never heap 2 take 1. A reply cut off by the completion cap
(`finish_reason="length"`) is accepted only through the strict stage, else it raises
`TruncatedReplyError`: a truncated reply is its own status, never read loosely.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, ValidationError

from metanim.games._base import UnparsableMoveError

#: Bumped whenever an Output Format text below changes (dataset rows record it).
REPLY_FORMAT_VERSION: Final = "metanim-reply/1"

#: The Output Format sections (MetaNIM Table 8), by style. `{schema}` is the one-line
#: description of the `action` value (`Game.action_schema`). ReAct is the papers'
#: reference method, so dataset rows carry the ReAct form.
OUTPUT_FORMAT: Final[dict[str, str]] = {
    "standard": (
        "#Output Format: Reply with a Markdown code block that starts with ```json and ends "
        "with ```, holding one JSON object:\n"
        '```json\n{{"action": {schema}}}\n```'
    ),
    "react": (
        "#Output Format: Reply with a Markdown code block that starts with ```json and ends "
        "with ```, holding one JSON object:\n"
        '```json\n{{"reasoning": string // why you choose this action,\n'
        ' "action": {schema} // the action your reasoning leads to}}\n```'
    ),
    "cot": (
        "#Output Format: Reply with a Markdown code block that starts with ```json and ends "
        "with ```, holding one JSON object:\n"
        '```json\n{{"reasoning": string // your step-by-step reasoning,\n'
        ' "action": {schema} // the action your reasoning leads to}}\n```\n'
        "Let's think step by step. What is the best choice for you?"
    ),
}


def output_format(style: str, schema: str) -> str:
    """The Output Format section of `style` for an action described by `schema`."""
    if style not in OUTPUT_FORMAT:
        raise ValueError(f"unknown output format {style!r}; choose one of {sorted(OUTPUT_FORMAT)}")
    return OUTPUT_FORMAT[style].format(schema=schema)


def with_format(problem: str, style: str, schema: str) -> str:
    """A problem followed by its Output Format section."""
    return f"{problem}\n{output_format(style, schema)}"


class TruncatedReplyError(UnparsableMoveError):
    """The reply was cut off by the completion cap before a complete answer."""

    kind = "truncated"


class ActionReply(BaseModel):
    """The strict reply schema: an object with an `action` (and optional reasoning)."""

    model_config = ConfigDict(extra="allow")

    action: Any
    reasoning: str | None = None


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_KEY = re.compile(
    # The lookbehind keeps "reaction: 5" or "transaction=3" from reading as an action.
    # A number must end there: "1e2" is no 1, "1.5e2" no 1 and "3rd" no 3 (the JSON
    # stages read exponents; a text with one is unparsable, like "2.0"). "2." still is 2.
    r"""(?<![A-Za-z0-9_])["']?action["']?\s*[:=]\s*(\[[^\]\[]*\]|\([^()]*\)|-?\d+(?:\.\d+)?(?!\.?[0-9A-Za-z_])|"[^"]*"|'[^']*'|[A-Za-z]\b)""",
    re.IGNORECASE,
)
_BARE = re.compile(
    r"^\s*(-?\d+(?:\.\d+)?|[\[(]\s*-?\d+\s*,\s*-?\d+\s*[\])]|\(?[A-Za-z]\)?)\s*\.?\s*$"
)

STAGES: Final = ("strict", "json_object", "key", "bare")


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


def extract_action(text: str, *, finish_reason: str | None = None) -> tuple[Any, str]:
    """The raw action value in a reply and the stage that found it.

    Args:
        text: The model's whole reply.
        finish_reason: The server's finish reason, when known; "length" (cut off by the
            completion cap) allows only the strict stage.

    Raises:
        TruncatedReplyError: a reply cut off by the cap holds no complete strict answer.
        UnparsableMoveError: no stage found an action.
    """
    for obj in reversed(fenced_objects(text)):
        try:
            return ActionReply.model_validate(obj).action, "strict"
        except ValidationError:
            continue
    if finish_reason == "length":
        raise TruncatedReplyError(
            "the reply was cut off by the completion cap (finish_reason 'length') before "
            "a complete JSON code block with an action",
            text[:200],
        )
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


__all__ = [
    "OUTPUT_FORMAT",
    "REPLY_FORMAT_VERSION",
    "STAGES",
    "ActionReply",
    "TruncatedReplyError",
    "extract_action",
    "fenced_objects",
    "json_objects",
    "last_object_with",
    "output_format",
    "with_format",
]
