"""Fake provider servers: the simulator answering as each hosted API or local server does.

No test reaches a provider, so each kind of OpenAI-compatible server is reproduced from
its documentation and issue trackers: a `Behaviour` is one flag per documented difference
(the cap field it takes, the parameters it refuses and the exact error body it sends, how
reasoning comes back, which structured-output channels it honours, how it streams, what its
model listing says), each with the URL it was read from in `SOURCES` (`provider_kinds`). The policies, the
answers and the request log stay the simulator's own (`SimApp`): a fake only changes the
wire, so a run against it has known ground truth (the simulated policy behind each public
model name) and every difference a provider makes is one switch a test can turn.

Why a thin layer over the simulator rather than separate fakes: the simulator already
answers every method's prompts (game positions, questions, debates, AceMAD reports) with
policies whose accuracy is known; a separate fake per provider would re-implement that
or answer nonsense. The layer is ~one function per behaviour, so the conformance suite
composes them (`dataclasses.replace(BEHAVIOURS["vllm"], reasoning="reasoning")`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import math
import time
import uuid
from typing import Any

from aiohttp import web

from metanim.llm.sim.provider_kinds import BEHAVIOURS, Behaviour, ErrorStyle
from metanim.llm.sim.server import SimApp, count_tokens
from metanim.llm.sim.wire import (
    as_tool_call,
    chunks,
    forced_function,
    function_call_item,
    reply_object,
    send_events,
)
from metanim.util import fastjson


# ------------------------------------------------------------------ errors
def error_body(
    style: ErrorStyle,
    status: int,
    message: str,
    *,
    kind: str = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
) -> dict[str, Any]:
    """An error body in the server's own shape."""
    if style == "openrouter":
        return {"error": {"code": status, "message": message, "metadata": {}}}
    if style == "vllm":
        return {
            "object": "error",
            "message": message,
            "type": "BadRequestError",
            "param": param,
            "code": status,
        }
    if style == "llamacpp":
        return {"error": {"code": status, "message": message, "type": kind}}
    if style == "ollama":
        return {"error": {"message": message, "type": "api_error", "param": None, "code": None}}
    if style == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    if style == "mistral":
        return {"object": "error", "message": message, "type": kind, "param": None, "code": None}
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _extra_forbidden(name: str, value: Any) -> dict[str, Any]:
    """Mistral's 422 for a field its schema does not have (SOURCES["mistral.422"])."""
    detail = [
        {
            "type": "extra_forbidden",
            "loc": ["body", name],
            "msg": "Extra inputs are not permitted",
            "input": value,
        }
    ]
    return {
        "object": "error",
        "message": {"detail": detail},
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }


def _number(value: Any) -> str:
    """A number as OpenAI's messages print it: 0, 0.7, 1."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class _Refused(Exception):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(status)
        self.status, self.body = status, body


# ------------------------------------------------------------------ the app
class ProviderApp(SimApp):
    """The simulator answering as `behaviour` (see the module).

    `calls` counts the requests the chat route received, answered or refused, and
    `completions` those it answered with a completion: the ground truth of what a run
    sent and what it was billed for.
    """

    def __init__(self, behaviour: Behaviour, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.behaviour = behaviour
        self.calls = 0
        self.completions: list[dict[str, Any]] = []  # request body, usage, status per answer
        self._seen_prefixes: set[str] = set()

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/v1/models", self.models)
        app.router.add_post("/v1/chat/completions", self.provider_chat)
        app.router.add_post("/v1/responses", self.provider_responses)
        # Azure's deployment routes (the `api-version` query is required).
        app.router.add_get("/openai/models", self.models)
        app.router.add_post("/openai/deployments/{deployment}/chat/completions", self.provider_chat)
        if self.behaviour.props:
            app.router.add_get("/props", self.props)
        if self.behaviour.version:
            app.router.add_get("/api/version", self.api_version)
        return app

    async def models(self, request: web.Request) -> web.Response:
        b = self.behaviour
        data = []
        for name in b.models:
            entry: dict[str, Any] = {"id": name, "object": "model", "created": 0}
            if b.owned_by is not None:
                entry["owned_by"] = b.owned_by
            if b.name == "anthropic":
                entry.update(type="model", display_name=name)
            if b.name == "openrouter":
                entry.update(pricing={"prompt": "0.0000011", "completion": "0.0000044"})
            data.append(entry)
        return web.json_response({"object": "list", "data": data})

    async def props(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "default_generation_settings": {"n_ctx": 4096},
                "total_slots": 4,
                "model_path": "/models/fake.gguf",
            }
        )

    async def api_version(self, request: web.Request) -> web.Response:
        return web.json_response({"version": "0.12.6"})

    # ---------------------------------------------------------- requests
    def _respond_error(self, exc: _Refused) -> web.Response:
        return web.Response(
            body=fastjson.dumps(exc.body), status=exc.status, content_type="application/json"
        )

    def _fail(self, status: int, message: str, **kw: Any) -> _Refused:
        return _Refused(status, error_body(self.behaviour.error_style, status, message, **kw))

    def check(self, body: dict[str, Any], *, api: str = "chat") -> None:
        """Refuse what the server refuses, with its own error body."""
        b = self.behaviour
        model = str(body.get("model", ""))
        if model not in b.models and not model.startswith("sim-"):
            raise self._fail(
                404,
                f"The model `{model}` does not exist or you do not have access to it.",
                code="model_not_found",
            )
        for name in sorted(b.refused):
            if name in body:
                if b.error_style == "mistral":
                    raise _Refused(422, _extra_forbidden(name, body[name]))
                raise self._fail(
                    400,
                    f"Unsupported parameter: '{name}' is not supported with this model.",
                    param=name,
                    code="unsupported_parameter",
                )
        if api == "chat":
            for cap in ("max_tokens", "max_completion_tokens"):
                if cap in body and cap not in b.cap_fields:
                    if b.cap_refusal == "openai":
                        other = next(iter(b.cap_fields))
                        raise self._fail(
                            400,
                            f"Unsupported parameter: '{cap}' is not supported with this "
                            f"model. Use '{other}' instead.",
                            param=cap,
                            code="unsupported_parameter",
                        )
                    if b.cap_refusal == "extra":
                        raise _Refused(422, _extra_forbidden(cap, body[cap]))
        temperature = body.get("temperature")
        fixed = b.fixed_temperature
        if fixed is not None and temperature is not None and float(temperature) != fixed:
            raise self._fail(
                400,
                f"Unsupported value: 'temperature' does not support "
                f"{_number(temperature)} with this model. Only the default "
                f"({_number(fixed)}) value is supported.",
                param="temperature",
                code="unsupported_value",
            )
        n = int(body.get("n") or 1)
        if b.max_n is not None and n > b.max_n:
            raise self._fail(
                400,
                f"Field 'n': Value must be between 1 <= value <= {b.max_n}, but got {n}",
                param="n",
            )
        fmt = body.get("response_format")
        if (
            isinstance(fmt, dict)
            and fmt.get("type") == "json_schema"
            and "json_schema" not in b.structured
            and b.response_format_unsupported == "refuse"
        ):
            raise self._fail(
                400, "This response_format type is unavailable now", param="response_format"
            )
        if "reasoning_effort" in body and b.reasoning_effort == "refuse":
            raise self._fail(
                400,
                "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
                param="reasoning_effort",
                code="unsupported_parameter",
            )

    def _cap(self, body: dict[str, Any]) -> int | None:
        b = self.behaviour
        for name in ("max_completion_tokens", "max_tokens"):
            if name in body and name in b.cap_fields and body[name] is not None:
                return int(body[name])
        return b.default_cap

    async def provider_chat(self, request: web.Request) -> web.StreamResponse:
        self.calls += 1
        if self.behaviour.name == "azure" and "api-version" not in request.query:
            return self._respond_error(self._fail(404, "Resource not found"))
        try:
            body = json.loads(await request.read())
        except ValueError:
            return self._respond_error(self._fail(400, "the body is not JSON"))
        if not self.behaviour.chat:
            return self._respond_error(
                self._fail(
                    404,
                    "This model is only supported in v1/responses and not in v1/chat/completions.",
                    param="model",
                )
            )
        if self.behaviour.name == "azure":
            body.setdefault("model", request.match_info["deployment"])
        try:
            self.check(body)
            completion = await self.answer(body)
        except _Refused as exc:
            return self._respond_error(exc)
        if body.get("stream"):
            options = body.get("stream_options") or {}
            b = self.behaviour
            include = bool(options.get("include_usage")) and b.stream_usage
            fields = {"reasoning_content": ("reasoning_content",), "reasoning": ("reasoning",)}
            events = chunks(
                completion,
                include_usage=include,
                usage_always=b.usage_always,
                reasoning_fields=fields.get(b.reasoning, ()),
            )
            return await send_events(request, events, delay_s=b.chunk_s, first_delay_s=b.think_s)
        if self.behaviour.think_s > 0:  # thinking unseen, then the whole reply at once
            await asyncio.sleep(self.behaviour.think_s)
        return web.Response(body=fastjson.dumps(completion), content_type="application/json")

    async def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The completion this server sends for `body` (already checked)."""
        b = self.behaviour
        model = str(body["model"])
        temperature = body.get("temperature")
        if temperature is not None and b.max_temperature is not None:
            temperature = min(float(temperature), b.max_temperature)
        seed = body.get(b.renamed_seed) if b.renamed_seed else body.get("seed")
        messages = body.get("messages") or []
        sim_body = {
            "model": b.models.get(model, model),
            "messages": [
                {"role": m.get("role"), "content": _text(m.get("content"))} for m in messages
            ],
            "temperature": temperature,
            "n": int(body.get("n") or 1),
            "seed": seed,
        }
        status, reply, _ = await self.complete(fastjson.dumps(sim_body))
        if status != 200:
            message = str((reply.get("error") or {}).get("message"))
            raise self._fail(
                status, message, kind="server_error" if status >= 500 else "invalid_request_error"
            )
        reply["model"] = model
        cap = self._cap(body)
        effort = {"minimal": 0.25, "low": 0.5, "medium": 1.0, "high": 2.0}.get(
            str(body.get("reasoning_effort")), 1.0
        )
        if b.reasoning_effort != "accept":
            effort = 1.0
        read = self._read(
            [{"role": str(m["role"]), "content": m["content"]} for m in sim_body["messages"]]
        )
        task = read.prompt.task
        tool = forced_function(body) if "tools" in b.structured else None
        bare = b.answer == "bare_json" or (b.keeps_schema and _constrained(b, body))
        total_reasoning = 0
        for index, choice in enumerate(reply["choices"]):
            text = choice["message"]["content"]
            answer = reply_object(text) if bare else None
            if answer is not None:
                text = json.dumps(answer)
            thinking = ""
            if b.reasoning != "none":
                tokens = math.ceil(b.reasoning_tokens * effort)
                thinking = _thinking(tokens, task, text if b.decoy else None, index)
            message, finish, used = _shape(b, text, thinking, cap)
            total_reasoning += used
            if tool is not None and finish == "stop":
                message = as_tool_call(message, tool, f"call_{uuid.uuid4().hex[:12]}")
                finish = "tool_calls"
            choice["message"], choice["finish_reason"] = message, finish
        usage = reply["usage"]
        completion_tokens = (
            sum(
                count_tokens(_text(c["message"].get("content")))
                + count_tokens(json.dumps(c["message"].get("tool_calls") or ""))
                * bool(c["message"].get("tool_calls"))
                for c in reply["choices"]
            )
            + total_reasoning
        )
        usage["completion_tokens"] = completion_tokens
        usage["total_tokens"] = usage["prompt_tokens"] + completion_tokens
        if b.reasoning != "none":
            usage["completion_tokens_details"] = {"reasoning_tokens": total_reasoning}
        if b.cached_prompt:
            usage["prompt_tokens_details"] = {"cached_tokens": self._cached(sim_body["messages"])}
        if b.usage_cost:
            usage["cost"] = (
                usage["prompt_tokens"] * b.cost_rates[0] + completion_tokens * b.cost_rates[1]
            ) / 1e6
        if b.timings:
            reply["timings"] = {
                "prompt_n": usage["prompt_tokens"],
                "prompt_ms": usage["prompt_tokens"] * 0.5,
                "predicted_n": completion_tokens,
                "predicted_ms": completion_tokens * 2.0,
            }
        self.completions.append({"body": body, "usage": dict(usage), "time": time.time()})
        return reply

    def _cached(self, messages: list[dict[str, str]]) -> int:
        """Tokens of the first message when a request with it was seen before (a cached
        prompt prefix, as the providers discount it)."""
        if not messages:
            return 0
        first = messages[0]["content"]
        key = hashlib.sha256(first.encode()).hexdigest()
        if key in self._seen_prefixes:
            return count_tokens(first)
        self._seen_prefixes.add(key)
        return 0

    # ---------------------------------------------------------- Responses API
    async def provider_responses(self, request: web.Request) -> web.StreamResponse:
        """OpenAI's Responses API (SOURCES["openai.responses"]): `input`, `instructions`,
        `max_output_tokens`, `reasoning.effort`, `text.format`, flat `tools`; output items
        (reasoning, message or function_call), `status` incomplete at the cap, usage in
        input/output tokens with their details."""
        self.calls += 1
        if not self.behaviour.responses:
            return self._respond_error(self._fail(404, "Not found"))
        try:
            body = json.loads(await request.read())
        except ValueError:
            return self._respond_error(self._fail(400, "the body is not JSON"))
        for name in ("messages", "max_tokens", "max_completion_tokens", "seed", "n"):
            if name in body:
                hint = {
                    "messages": " In the Responses API, this parameter has moved to 'input'."
                }.get(name, "")
                return self._respond_error(
                    self._fail(
                        400,
                        f"Unsupported parameter: '{name}'.{hint}",
                        param=name,
                        code="unsupported_parameter",
                    )
                )
        chat_body = _chat_from_responses(body)
        try:
            self.check(chat_body, api="responses")
            completion = await self.answer(chat_body)
        except _Refused as exc:
            return self._respond_error(exc)
        response = _responses_object(completion, body)
        if body.get("stream"):
            events = _responses_events(response)
            return await send_events(
                request,
                iter(events),
                delay_s=self.behaviour.chunk_s,
                first_delay_s=self.behaviour.think_s,
                done=False,
            )
        return web.Response(body=fastjson.dumps(response), content_type="application/json")


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _thinking(tokens: int, task: Any, answer_text: str | None, index: int) -> str:
    """Deterministic thinking of about `tokens` tokens; with `answer_text` (a decoy) it
    drafts a fenced reply naming another legal move than the answer's, then drops it."""
    words = max(1, round(tokens / 1.3))
    base = ["Let", "me", "weigh", "each", "move", "against", "the", "position."]
    text = " ".join(base[i % len(base)] for i in range(words))
    if answer_text is not None and task is not None:
        answer = reply_object(answer_text) or {}
        decoy = next((c for c in task.candidates if c != answer.get("action")), None)
        if decoy is not None:
            draft = json.dumps({"reasoning": "first draft", "action": decoy})
            text += f"\nA first draft:\n```json\n{draft}\n```\nNo: that move loses. Check again."
    return text


def _shape(
    b: Behaviour, text: str, thinking: str, cap: int | None
) -> tuple[dict[str, Any], str, int]:
    """The message, finish reason and reasoning tokens of one choice, with the cap applied
    to thinking + answer as reasoning servers count it."""
    reasoning_tokens = count_tokens(thinking) if thinking else 0
    answer_tokens = count_tokens(text)
    finish = "stop"
    if b.answer_omitted:
        text, answer_tokens = "", 0
    if cap is not None and reasoning_tokens >= cap and thinking:
        keep = max(1, int(len(thinking.split()) * cap / max(reasoning_tokens, 1)))
        thinking = " ".join(thinking.split()[:keep])
        reasoning_tokens, text, finish = cap, "", "length"
    elif cap is not None and reasoning_tokens + answer_tokens > cap:
        room = cap - reasoning_tokens
        words = text.split(" ")
        keep = max(0, int(len(words) * room / max(answer_tokens, 1)))
        text, finish = " ".join(words[:keep]), "length"
    empty: str | None = "" if b.empty_content == "empty" else None
    content: str | None = text
    if b.answer_omitted or (finish == "length" and not text):
        content = empty
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if not thinking or b.reasoning == "hidden":
        return message, finish, reasoning_tokens
    if b.reasoning in ("reasoning_content", "reasoning"):
        message[b.reasoning] = thinking
    elif b.reasoning == "think":
        message["content"] = f"<think>\n{thinking}\n</think>\n\n{content or ''}"
    elif b.reasoning == "open_think":
        # The template wrote the opening tag into the prompt: the reply starts thinking.
        closing = "\n</think>\n\n" if finish == "stop" or content else ""
        message["content"] = f"{thinking}{closing}{content or ''}"
    elif b.reasoning == "parts":
        parts: list[dict[str, Any]] = [
            {"type": "thinking", "thinking": [{"type": "text", "text": thinking}]}
        ]
        if content:
            parts.append({"type": "text", "text": content})
        message["content"] = parts
    return message, finish, reasoning_tokens


def _chat_from_responses(body: dict[str, Any]) -> dict[str, Any]:
    """The chat body a Responses request stands for (to answer it through `answer`)."""
    from metanim.llm.sim.responses import chat_messages

    out: dict[str, Any] = {"model": body.get("model"), "messages": chat_messages(body)}
    if body.get("max_output_tokens") is not None:
        out["max_completion_tokens"] = body["max_output_tokens"]
    for key in ("temperature", "top_p"):
        if key in body:
            out[key] = body[key]
    effort = (body.get("reasoning") or {}).get("effort")
    if effort is not None:
        out["reasoning_effort"] = effort
    tools = body.get("tools")
    if tools:
        out["tools"] = [
            {"type": "function", "function": {k: v for k, v in t.items() if k != "type"}}
            for t in tools
        ]
        choice = body.get("tool_choice")
        if isinstance(choice, dict) and choice.get("name"):
            out["tool_choice"] = {"type": "function", "function": {"name": choice["name"]}}
        elif choice is not None:
            out["tool_choice"] = choice
    fmt = (body.get("text") or {}).get("format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        out["response_format"] = {"type": "json_schema", "json_schema": fmt}
    return out


def _constrained(b: Behaviour, body: dict[str, Any]) -> bool:
    """Whether a request sends a reply schema over a channel the server honours (tools
    aside: a forced call's arguments are the object already)."""
    fmt = body.get("response_format")
    return (
        (
            "json_schema" in b.structured
            and isinstance(fmt, dict)
            and fmt.get("type") == "json_schema"
        )
        or ("llama_json_schema" in b.structured and isinstance(body.get("json_schema"), dict))
        or ("guided_json" in b.structured and body.get("guided_json") is not None)
    )


def _responses_object(completion: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    choice = completion["choices"][0]
    message = choice["message"]
    usage = completion["usage"]
    output: list[dict[str, Any]] = []
    reasoning_tokens = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens", 0)
    if reasoning_tokens:
        summary = []
        if (request.get("reasoning") or {}).get("summary"):
            summary = [{"type": "summary_text", "text": "I weighed each move."}]
        output.append(
            {"type": "reasoning", "id": f"rs_{uuid.uuid4().hex[:16]}", "summary": summary}
        )
    output.extend(function_call_item(call) for call in message.get("tool_calls") or [])
    text = message.get("content")
    if isinstance(text, str) and text:
        output.append(
            {
                "type": "message",
                "id": f"msg_{uuid.uuid4().hex[:16]}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    truncated = choice.get("finish_reason") == "length"
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
    return {
        "id": f"resp_{uuid.uuid4().hex[:16]}",
        "object": "response",
        "created_at": int(time.time()),
        "model": completion["model"],
        "status": "incomplete" if truncated else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
        "error": None,
        "output": output,
        "usage": {
            "input_tokens": usage["prompt_tokens"],
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": usage["completion_tokens"],
            "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
            "total_tokens": usage["total_tokens"],
        },
    }


def _responses_events(response: dict[str, Any]) -> list[dict[str, Any]]:
    """A Responses stream: created, text deltas, completed (each with its `type`)."""
    events: list[dict[str, Any]] = [
        {
            "type": "response.created",
            "response": {**response, "status": "in_progress", "output": []},
        }
    ]
    for item in response["output"]:
        if item["type"] == "message":
            text = item["content"][0]["text"]
            for i in range(0, len(text), 12):
                events.append({"type": "response.output_text.delta", "delta": text[i : i + 12]})
    final = "response.completed" if response["status"] == "completed" else "response.incomplete"
    events.append({"type": final, "response": response})
    return events


class ProviderServer:
    """A fake provider on loopback: `ProviderServer("openai-reasoning")` (or a `Behaviour`).

    A context manager like `SimServer`, with `base_url`, the app (`handlers`: its
    `calls` and `completions`) and the simulator's request `log`.
    """

    def __init__(self, behaviour: Behaviour | str, *, seed: int = 0, **kwargs: Any) -> None:
        from metanim.llm.sim.server import SimServer

        b = BEHAVIOURS[behaviour] if isinstance(behaviour, str) else behaviour
        self.behaviour = b
        self._server = SimServer(seed=seed, app=ProviderApp(b, seed=seed, **kwargs))
        self.handlers: ProviderApp = self._server.handlers  # type: ignore[assignment]

    @property
    def base_url(self) -> str:
        return self._server.base_url

    @property
    def root(self) -> str:
        """The server's root URL (Azure's endpoint; llama.cpp's /props lives here)."""
        return self.base_url.removesuffix("/v1")

    @property
    def log(self) -> list[dict[str, Any]]:
        return self._server.log

    def __enter__(self) -> ProviderServer:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()


def with_(name: str, **changes: Any) -> Behaviour:
    """A named behaviour with some flags changed (one test's variant)."""
    return dataclasses.replace(BEHAVIOURS[name], **changes)
