"""What the simulated server sends beyond a plain JSON completion: tool calls and streams.

The plain simulator and the provider fakes (`metanim.llm.sim.providers`) share these:

- **Tool calls.** A request whose `tool_choice` forces one function (or that offers one
  function with `tool_choice` "required") gets the reply as that function's call: the
  JSON object the reply text holds becomes `message.tool_calls[0].function.arguments`,
  as a server constraining output to the function's parameters would send it
  (https://platform.openai.com/docs/guides/function-calling).
- **Streams.** `stream: true` answers server-sent events: `chat.completion.chunk` objects,
  each `data: {...}` line followed by a blank line, then `data: [DONE]`; with
  `stream_options.include_usage` one more chunk before `[DONE]` carries the usage and an
  empty `choices` list, the other chunks a null `usage`
  (https://platform.openai.com/docs/api-reference/chat/create, `stream_options`;
  the same shape llama.cpp's server sends, checked against it in tests/e2e).
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from aiohttp import web

from metanim.util import fastjson

#: Characters per streamed content piece: a few tokens, as servers send them.
PIECE_CHARS = 12

_FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


def forced_function(body: dict[str, Any]) -> str | None:
    """The function a request makes the model call, or None.

    `tool_choice` naming a function forces it; "required" with one tool forces that one.
    """
    tools = body.get("tools")
    if not isinstance(tools, list) or not tools:
        return None
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        named = choice.get("function") if isinstance(choice.get("function"), dict) else choice
        name = named.get("name")
        return str(name) if name else None
    if choice == "required" and len(tools) == 1:
        tool = tools[0] if isinstance(tools[0], dict) else {}
        function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        return str(function.get("name") or "") or None
    return None


def reply_object(text: str) -> dict[str, Any] | None:
    """The JSON object a reply text holds: its last fenced block, else the whole text."""
    blocks = _FENCED.findall(text)
    for candidate in [*reversed(blocks), text.strip()]:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def as_tool_call(message: dict[str, Any], name: str, call_id: str) -> dict[str, Any]:
    """`message` answered as a call of function `name` (its text's JSON object as the
    arguments; a text without one becomes {"reasoning": text})."""
    text = message.get("content")
    text = text if isinstance(text, str) else ""
    arguments = reply_object(text)
    if arguments is None:
        arguments = {"reasoning": text}
    out = {k: v for k, v in message.items() if k != "content"}
    out["content"] = None
    out["tool_calls"] = [
        {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
    ]
    return out


def function_call_item(call: dict[str, Any]) -> dict[str, Any]:
    """A chat completion's tool call as a Responses API `function_call` output item
    (https://platform.openai.com/docs/guides/function-calling)."""
    return {
        "type": "function_call",
        "id": f"fc_{uuid.uuid4().hex[:16]}",
        "call_id": call["id"],
        "name": call["function"]["name"],
        "arguments": call["function"]["arguments"],
        "status": "completed",
    }


def pieces(text: str, size: int = PIECE_CHARS) -> list[str]:
    """`text` cut into streamed pieces (at least one, possibly empty)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def chunks(
    completion: dict[str, Any],
    *,
    include_usage: bool,
    reasoning_fields: Sequence[str] = ("reasoning_content", "reasoning"),
    usage_always: bool = False,
) -> Iterator[dict[str, Any]]:
    """The `chat.completion.chunk` objects that stream `completion`.

    Per choice: a role chunk, the reasoning (each of `reasoning_fields` the message has,
    as delta fields of that name), the content (a string in pieces, or list content part
    by part), tool calls (arguments in pieces), then the finish reason. The usage comes
    in a last chunk with empty `choices` when `include_usage` (or `usage_always`, for
    servers that always send it).
    """
    head = {k: completion[k] for k in ("id", "created", "model") if k in completion}
    head["object"] = "chat.completion.chunk"
    usage_field: dict[str, Any] = {"usage": None} if include_usage else {}

    def chunk(index: int, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": index, "delta": delta, "finish_reason": finish, "logprobs": None}
        return {**head, "choices": [choice], **usage_field}

    for choice in completion.get("choices") or []:
        index = int(choice.get("index", 0))
        message = choice.get("message") or {}
        yield chunk(index, {"role": "assistant", "content": ""})
        for field in reasoning_fields:
            value = message.get(field)
            if isinstance(value, str) and value:
                for piece in pieces(value):
                    yield chunk(index, {field: piece})
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                yield chunk(index, {"content": [part]})
        elif isinstance(content, str) and content:
            for piece in pieces(content):
                yield chunk(index, {"content": piece})
        for number, call in enumerate(message.get("tool_calls") or []):
            function = call.get("function") or {}
            arguments = str(function.get("arguments") or "")
            yield chunk(
                index,
                {
                    "tool_calls": [
                        {
                            "index": number,
                            "id": call.get("id"),
                            "type": "function",
                            "function": {"name": function.get("name"), "arguments": ""},
                        }
                    ]
                },
            )
            for piece in pieces(arguments):
                yield chunk(
                    index, {"tool_calls": [{"index": number, "function": {"arguments": piece}}]}
                )
        yield chunk(index, {}, choice.get("finish_reason"))
    if include_usage or usage_always:
        yield {**head, "choices": [], "usage": completion.get("usage")}


async def send_events(
    request: web.BaseRequest,
    events: Iterator[dict[str, Any]],
    *,
    delay_s: float = 0.0,
    first_delay_s: float = 0.0,
    done: bool = True,
) -> web.StreamResponse:
    """Write `events` as server-sent events (`data: <json>` lines), then `data: [DONE]`.

    `first_delay_s` is silence before the first event (a model thinking unseen);
    `delay_s` the gap between events (tokens arriving).
    """
    response = web.StreamResponse(
        status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await response.prepare(request)
    if first_delay_s > 0:
        await asyncio.sleep(first_delay_s)
    for number, event in enumerate(events):
        if delay_s > 0 and number:
            await asyncio.sleep(delay_s)
        await response.write(b"data: " + fastjson.dumps(event) + b"\n\n")
    if done:
        await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response
