"""`POST /v1/responses` (OpenAI's Responses API) on the simulated server.

Tools that speak the Responses API (inspect_ai's default `openai/` provider, the
openai SDK's `client.responses.create`) get the same simulated answers as chat
completions: the request is translated into a chat-completions body, answered by the
server's own chat handler (policies, faults, request log and all), and the reply is
translated back. Function tools pass through as the chat handler's forced tool calls
(`metanim.llm.sim.wire`): a forced call comes back as a `function_call` output item, and
`function_call` / `function_call_output` input items are read as the assistant's call
and its result (https://platform.openai.com/docs/guides/function-calling, the Responses
API's items). Streaming is refused clearly.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web

from metanim.llm.sim.wire import function_call_item

ChatHandler = Callable[[Any], Awaitable[web.StreamResponse]]


class _ChatRequest:
    """What the chat handler reads from a request: the headers and the body."""

    def __init__(self, headers: Mapping[str, str], body: bytes) -> None:
        self.headers = headers
        self._body = body

    async def read(self) -> bytes:
        return self._body


def _text_of(content: Any) -> str:
    """The text of a Responses content value: a string or a list of typed parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            parts.append(part["text"])  # input_text, output_text, text
        elif isinstance(part, str):
            parts.append(part)
    return "".join(parts)


def chat_messages(body: dict[str, Any]) -> list[dict[str, str]]:
    """The chat messages of a Responses request (`instructions` + `input`).

    Raises:
        ValueError: `input` is neither a string nor a list of message items.
    """
    messages: list[dict[str, str]] = []
    if body.get("instructions"):
        messages.append({"role": "system", "content": str(body["instructions"])})
    items = body.get("input")
    if isinstance(items, str):
        return [*messages, {"role": "user", "content": items}]
    if not isinstance(items, list):
        raise ValueError("'input' must be a string or a list of input items")
    for item in items:
        if not isinstance(item, dict):
            raise ValueError("every input item must be an object")
        kind = item.get("type", "message")
        if kind == "message" or "role" in item:
            role = str(item.get("role", "user"))
            # The Responses API calls the system role "developer" for newer models.
            role = "system" if role == "developer" else role
            messages.append({"role": role, "content": _text_of(item.get("content"))})
        elif kind == "function_call":
            messages.append({"role": "assistant", "content": str(item.get("arguments") or "")})
        elif kind == "function_call_output":
            messages.append({"role": "tool", "content": _text_of(item.get("output"))})
        # Reasoning items and other non-message items carry nothing a policy reads.
    return messages


def _error(status: int, message: str) -> web.Response:
    body = {
        "error": {"message": message, "type": "invalid_request_error", "code": None, "param": None}
    }
    return web.json_response(body, status=status)


def responses_handler(chat: ChatHandler) -> Callable[[web.Request], Awaitable[web.Response]]:
    """An aiohttp handler for `/v1/responses` answering through the chat handler `chat`."""

    async def handle(request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.read())
            model = str(body["model"])
            messages = chat_messages(body)
        except (ValueError, KeyError, TypeError) as exc:
            return _error(400, f"the body must be JSON with 'model' and 'input': {exc}")
        if body.get("stream"):
            return _error(400, "the simulated server does not stream; send stream=false")
        chat_body: dict[str, Any] = {"model": model, "messages": messages}
        for key in ("temperature", "top_p", "seed"):
            if body.get(key) is not None:
                chat_body[key] = body[key]
        if body.get("max_output_tokens") is not None:
            chat_body["max_tokens"] = body["max_output_tokens"]
        if body.get("tools") and body.get("tool_choice") is not None:
            # Flat function tools and {"type": "function", "name": ...}: `forced_function`
            # reads both shapes.
            chat_body["tools"] = body["tools"]
            chat_body["tool_choice"] = body["tool_choice"]
        answer = await chat(_ChatRequest(request.headers, json.dumps(chat_body).encode()))
        if not isinstance(answer, web.Response) or answer.status != 200:
            return answer  # type: ignore[return-value]  # errors pass through unchanged
        completion = json.loads(answer.body)  # type: ignore[arg-type]
        choice = completion["choices"][0]
        text = choice["message"]["content"]
        output = [
            function_call_item(call) for call in choice["message"].get("tool_calls") or []
        ] or [
            {
                "type": "message",
                "id": f"msg_sim_{uuid.uuid4().hex[:16]}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ]
        usage = completion.get("usage", {})
        truncated = choice.get("finish_reason") == "length"
        return web.json_response(
            {
                "id": f"resp_sim_{uuid.uuid4().hex[:16]}",
                "object": "response",
                "created_at": int(time.time()),
                "status": "incomplete" if truncated else "completed",
                "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
                "error": None,
                "model": model,
                "instructions": body.get("instructions"),
                "output": output,
                "parallel_tool_calls": False,
                "tool_choice": chat_body.get("tool_choice", "none"),
                "tools": chat_body.get("tools", []),
                "temperature": body.get("temperature"),
                "top_p": body.get("top_p"),
                "max_output_tokens": body.get("max_output_tokens"),
                "text": {"format": {"type": "text"}},
                "metadata": {},
                "usage": {
                    "input_tokens": usage.get("prompt_tokens", 0),
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": usage.get("completion_tokens", 0),
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": usage.get("total_tokens", 0),
                },
            }
        )

    return handle
