"""JSON Schemas of the methods' replies, for structured output (docs/architecture.md,
"The flow of one decision").

Each schema holds the keys the method's Output Format asks for, the legal answers of the
current state (or the question's choices) as an `enum`, and free text capped at
`max_chars`, so a constrained reply is short and always parses. The task provides the
schema of the `action` value (`action_json_schema`); a task without one (an open numeric
question is a string or a number, so it has one) gets no schema, and its calls go
unconstrained.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

#: Longest free-text field (reasoning, arguments) a schema allows, in characters. A
#: context also keeps it under the call's completion cap (`Context.chars`), so a reply
#: that follows its schema cannot be cut off: a token is at least one character.
DEFAULT_MAX_CHARS = 300


def action_schema(task: Any) -> dict[str, Any] | None:
    """The task's JSON Schema of one `action` value, or None if it has none."""
    method = getattr(task, "action_json_schema", None)
    return method() if callable(method) else None


def _text(max_chars: int) -> dict[str, Any]:
    return {"type": "string", "maxLength": max_chars}


def _object(properties: dict[str, Any], required: Sequence[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties if required is None else required),
        "additionalProperties": False,
    }


def action_reply(
    task: Any, *, reasoning: bool = True, max_chars: int = DEFAULT_MAX_CHARS
) -> dict[str, Any] | None:
    """`{"reasoning": ..., "action": <enum>}` (ReAct, CoT, debate), or `{"action": ...}` (Standard).

    Reasoning comes first, so a constrained model still reasons before it commits.
    """
    action = action_schema(task)
    if action is None:
        return None
    properties: dict[str, Any] = {"reasoning": _text(max_chars)} if reasoning else {}
    properties["action"] = action
    return _object(properties)


def fields_reply(keys: Sequence[str], *, max_chars: int = DEFAULT_MAX_CHARS) -> dict[str, Any]:
    """An object of string fields (DReaMAD's elicitation and rewrite steps)."""
    return _object({key: _text(max_chars) for key in keys})


def verdict_reply(task: Any, *, max_chars: int = DEFAULT_MAX_CHARS) -> dict[str, Any] | None:
    """MPD's discriminative judge: preference, side, reasoning and the answer (or null)."""
    action = action_schema(task)
    if action is None:
        return None
    return _object(
        {
            "preference": {"enum": ["Yes", "No"]},
            "supported_side": {"enum": ["Affirmative", "Negative"]},
            "reasoning": _text(max_chars),
            "action": {"anyOf": [action, {"type": "null"}]},
        }
    )


def commitment_reply(options: Sequence[str] | None) -> dict[str, Any] | None:
    """AceMAD's private commitment: a probability per option for belief and prediction."""
    if not options:
        return None
    probability = {"type": "number", "minimum": 0, "maximum": 1}
    distribution = _object({option: probability for option in options})
    return _object({"belief": distribution, "prediction": distribution})


def keeps_to(schema: dict[str, Any], text: str) -> bool:
    """Whether a reply keeps to the schema its call sent: its whole text (whitespace
    aside) is one JSON value that validates against `schema` (jsonschema, the schema's
    own draft).

    A server that constrains output writes the object alone, never a Markdown code block
    or words around it, so the parser's strict stage (a ```json block) cannot tell a
    constrained reply from a broken one; this check can.
    """
    import jsonschema

    try:
        value = json.loads(text)
    except ValueError:
        return False
    validator = jsonschema.validators.validator_for(schema)
    return bool(validator(schema).is_valid(value))
