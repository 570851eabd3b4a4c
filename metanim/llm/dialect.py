"""A call in the server's dialect, and what a refusal of one of its fields means.

`request_body` turns one call (messages, temperature, n, seed, `CallOptions`) into the
body a server of a given `Provider` takes: the cap under the field it reads, no
temperature where the model takes only its own, the seed under its name or not at all,
reasoning effort as the server reads it, the reply schema through the structured-output
channel asked for, and the stream options; for the chat completions API or the
Responses API. `sent` says what went on the wire, for the call's record.

`refused_field` reads which request field an error names (OpenAI's `param`, Mistral's
`loc`, or the message's own words), and `fix_for` names the metanim flag that changes
that field, so a refusal stops a run with one line saying what to do.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from metanim.llm._types import AUTO, CallOptions, Message
from metanim.llm.providers import ModelDefaults, Provider

Api = Literal["chat", "responses"]
#: What a run asks for: an API, or "auto" (the one the model is served on).
ApiSetting = Literal["auto", "chat", "responses"]
#: The function a "tools" reply is a call of.
REPLY_TOOL = "reply"


@dataclass
class Adapted:
    """What a client changed after a server refused a field by name: used by every later
    call of the client, and said once in the log and in each call's record."""

    cap_field: str | None = None
    omit: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def resolve_cap(options: CallOptions, defaults: ModelDefaults) -> int | None:
    """The cap a call sends: the options' tokens, or for "auto" the model's default (a
    phase's own cap for a model that does not think first)."""
    if options.max_tokens != AUTO:
        return options.max_tokens  # type: ignore[return-value]
    if options.phase_cap is not None and not defaults.reasoning:
        return options.phase_cap
    return defaults.cap


def request_body(
    api: Api,
    provider: Provider,
    defaults: ModelDefaults,
    model: str,
    messages: list[Message],
    *,
    temperature: float,
    n: int,
    seed: int | None,
    options: CallOptions,
    adapted: Adapted,
    stream: bool,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the request body, what was sent) for one call; see the module.

    Raises:
        ValueError: n > 1 on the Responses API (one answer per call).
    """
    omit = set(options.omit) | adapted.omit
    cap = resolve_cap(options, defaults)
    cap_field = options.cap_field or adapted.cap_field or provider.cap_field
    send_temperature = defaults.temperature == "send" and "temperature" not in omit
    sent: dict[str, Any] = {
        "api": api,
        "cap": cap,
        "temperature": temperature if send_temperature else None,
        "stream": stream,
    }
    body: dict[str, Any] = {"model": model}
    schema = options.schema_ if options.structured_output != "off" else None
    effort = options.reasoning_effort
    if api == "responses":
        if n != 1:
            raise ValueError("the Responses API answers one choice per call (n = 1)")
        body["input"] = [dict(m) for m in messages]
        if cap is not None:
            body["max_output_tokens"] = cap
            sent["cap_field"] = "max_output_tokens"
        if effort is not None:
            body["reasoning"] = {"effort": effort}
        if schema is not None and options.structured_output == "tools":
            body["tools"] = [
                {"type": "function", "name": REPLY_TOOL, "parameters": schema, "strict": True}
            ]
            body["tool_choice"] = {"type": "function", "name": REPLY_TOOL}
        elif schema is not None:
            body["text"] = {
                "format": {"type": "json_schema", "name": REPLY_TOOL, "schema": schema,
                           "strict": True}
            }  # fmt: skip
    else:
        body["messages"] = [dict(m) for m in messages]
        if n != 1:
            body["n"] = n
        if seed is not None and provider.seed_field and "seed" not in omit:
            body[provider.seed_field] = seed
        if cap is not None:
            body[cap_field] = cap
            sent["cap_field"] = cap_field
        if effort is not None:
            if provider.effort == "field":
                body["reasoning_effort"] = effort
            elif provider.effort == "object":
                body["reasoning"] = {"effort": effort}
            else:
                sent["reasoning_effort"] = f"not sent: {provider.kind} ignores it"
        if options.stop:
            body["stop"] = list(options.stop)
        if schema is not None:
            _schema_fields(body, options.structured_output, schema)
        if stream and provider.stream_usage:
            body["stream_options"] = {"include_usage": True}
    if send_temperature:
        body["temperature"] = temperature
    if options.top_p is not None:
        body["top_p"] = options.top_p
    if stream:
        body["stream"] = True
    body.update(options.extra_body)
    for name in omit:
        body.pop(name, None)
    if adapted.notes:
        sent["adapted"] = list(adapted.notes)
    return body, sent


def _schema_fields(body: dict[str, Any], mode: str, schema: dict[str, Any]) -> None:
    if mode == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": REPLY_TOOL, "schema": schema, "strict": True},
        }
    elif mode == "guided_json":
        body["guided_json"] = schema
    elif mode == "llama_json_schema":
        body["json_schema"] = schema
    elif mode == "tools":
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": REPLY_TOOL,
                    "description": "Give your reply: its fields as the task asks.",
                    "parameters": schema,
                    "strict": True,
                },
            }
        ]
        body["tool_choice"] = {"type": "function", "function": {"name": REPLY_TOOL}}


# ------------------------------------------------------------------ refusals
_NAMED = re.compile(
    r"(?:Unsupported (?:parameter|value)|Unknown parameter|Unrecognized request argument"
    r"(?: supplied)?)\s*:\s*'([\w.\[\]]+)'",
    re.IGNORECASE,
)
#: Fields whose refusal is about the reply schema (the "try another
#: --structured-output" tail).
SCHEMA_FIELDS = frozenset(
    {"response_format", "json_schema", "guided_json", "tools", "tool_choice", "text", "text.format"}
)
_SCHEMA_WORDS = re.compile(r"response_format|json_schema|guided_json|schema|grammar|tool", re.I)


def refused_field(body: bytes) -> str | None:
    """The request field an error body names as refused, if it names one."""
    try:
        parsed = json.loads(body)
    except ValueError:
        match = _NAMED.search(body.decode("utf-8", "replace"))
        return match.group(1) if match else None
    if not isinstance(parsed, dict):
        return None
    inner = parsed.get("error", parsed)
    candidates = [inner, parsed] if isinstance(inner, dict) else [parsed]
    for holder in candidates:
        param = holder.get("param")
        if isinstance(param, str) and param:
            return param.split(".")[0].split("[")[0]
    message = inner.get("message") if isinstance(inner, dict) else inner
    if isinstance(message, dict):  # Mistral: {"detail": [{"loc": ["body", "seed"], ...}]}
        for item in message.get("detail") or []:
            loc = item.get("loc") if isinstance(item, dict) else None
            if isinstance(loc, list) and len(loc) >= 2 and loc[0] == "body":
                return str(loc[1])
        return None
    match = _NAMED.search(str(message or ""))
    return match.group(1).split(".")[0] if match else None


def about_schema(field_name: str | None, message: str) -> bool:
    """Whether a refusal concerns the reply schema (not, say, the context size)."""
    if field_name is not None:
        return field_name in SCHEMA_FIELDS
    return bool(_SCHEMA_WORDS.search(message))


#: The metanim flag that changes each field a server may refuse.
_FIXES = {
    "seed": "--omit-param seed leaves it out",
    "top_p": "leave --top-p unset, or --omit-param top_p",
    "stop": "leave --stop unset",
    "reasoning_effort": "leave --reasoning-effort unset (or pick another level)",
    "reasoning": "leave --reasoning-effort unset (or pick another level)",
    "n": "sample one answer per call (the methods do unless n= is given)",
    "temperature": "--omit-param temperature runs at the server's default",
    "max_tokens": "--cap-field max_completion_tokens",
    "max_completion_tokens": "--cap-field max_tokens",
    "stream": "--no-stream",
    "stream_options": "--no-stream",
}


def fix_for(field_name: str, extra_body: dict[str, Any]) -> str:
    """One phrase naming the flag that changes `field_name`."""
    if field_name in SCHEMA_FIELDS:
        return "--structured-output off (or another mode: json_schema, tools, guided_json, llama_json_schema)"
    if field_name in extra_body:
        return f"drop {field_name} from --extra-body"
    return _FIXES.get(field_name, f"--omit-param {field_name} leaves it out")
