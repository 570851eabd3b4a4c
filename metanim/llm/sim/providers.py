"""Fake provider servers: the simulator answering as each hosted API or local server does.

No test reaches a provider, so each kind of OpenAI-compatible server is reproduced from
its documentation and issue trackers: a `Behaviour` is one flag per documented difference
(the cap field it takes, the parameters it refuses and the exact error body it sends, how
reasoning comes back, which structured-output channels it honours, how it streams, what its
model listing says), each with the URL it was read from in `SOURCES`. The policies, the
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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web

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

Reasoning = Literal[
    "none",  # no thinking
    "reasoning_content",  # message.reasoning_content (DeepSeek, vLLM < 0.17, SGLang, llama.cpp)
    "reasoning",  # message.reasoning (vLLM >= 0.17, Ollama, OpenRouter)
    "think",  # <think>...</think> inline in content (Qwen3 served without a parser)
    "open_think",  # ...</think> without the opening tag (R1 templates that open it)
    "parts",  # content as a list: thinking parts, then text parts (Mistral Magistral)
    "hidden",  # counted in usage only (OpenAI o-series, gpt-5, Gemini)
]
ErrorStyle = Literal["openai", "openrouter", "vllm", "llamacpp", "ollama", "mistral", "anthropic"]

#: Where each behaviour was read (docs/llm.md, "Provider conformance", cites the same).
SOURCES: dict[str, str] = {
    "openai.max_tokens": "https://github.com/griptape-ai/ComfyUI-Griptape/issues/312",
    "openai.temperature": "https://github.com/OpenHands/OpenHands/issues/4131",
    "openai.max_completion_tokens": (
        "https://platform.openai.com/docs/api-reference/chat/create"
        "#chat-create-max_completion_tokens"
    ),
    "openai.stream_usage": "https://platform.openai.com/docs/api-reference/chat/create",
    "openai.responses_only": "https://github.com/alvinunreal/tmuxai/issues/82",
    "openai.responses": "https://platform.openai.com/docs/api-reference/responses/create",
    "openai.reasoning_budget": "https://community.openai.com/t/limiting-maximum-number-of-reasoning-tokens/1285430/2",
    "azure.reasoning": "https://github.com/gabrii/Cursor-Azure-GPT-5/issues/33",
    "deepseek.reasoner": "https://api-docs.deepseek.com/guides/reasoning_model",
    "vllm.reasoning": "https://github.com/vllm-project/vllm/pull/27752",
    "vllm.reasoning_content_removed": "https://github.com/vllm-project/vllm/pull/33402",
    "vllm.0.17": "https://github.com/langgenius/dify-official-plugins/issues/2740",
    "sglang.reasoning": "https://docs.sglang.io/docs/advanced_features/separate_reasoning",
    "llamacpp.server": "https://github.com/ggml-org/llama.cpp/tree/master/tools/server",
    "ollama.openai": "https://docs.ollama.com/api/openai-compatibility",
    "ollama.reasoning": "https://github.com/ollama/ollama/issues/15288",
    "ollama.error": "https://github.com/ollama/ollama/issues/12561",
    "ollama.version": "https://github.com/ollama/ollama/blob/main/docs/api.md#version",
    "anthropic.openai": "https://docs.claude.com/en/api/openai-sdk",
    "gemini.openai": "https://ai.google.dev/gemini-api/docs/openai",
    "openrouter.reasoning": "https://openrouter.ai/docs/use-cases/reasoning-tokens",
    "openrouter.usage": "https://openrouter.ai/docs/use-cases/usage-accounting",
    "openrouter.errors": "https://openrouter.ai/docs/errors",
    "mistral.reasoning": "https://github.com/spring-projects/spring-ai/pull/5020",
    "mistral.422": "https://github.com/nomtek/mistralai_client_dart/issues/44",
    "r1.open_think": "https://docs.sglang.io/docs/advanced_features/separate_reasoning",
}


@dataclass(frozen=True)
class Behaviour:
    """How one kind of server answers; each field is one documented behaviour.

    `models` maps the public model names it serves to the simulated policy that answers
    for each (`sim-optimal` plays the known optimal move).
    """

    name: str
    models: Mapping[str, str]
    #: /v1/models `owned_by` (None: the listing has no such field)
    owned_by: str | None = "system"
    #: cap fields taken; a sent cap field outside them is refused (`cap_refusal`) or ignored
    cap_fields: frozenset[str] = frozenset({"max_tokens", "max_completion_tokens"})
    #: "openai": OpenAI's 400 naming the param; "extra": Mistral's 422; "ignore": no cap
    cap_refusal: Literal["openai", "extra", "ignore"] = "openai"
    default_cap: int | None = None  # the cap when none is sent (None: unlimited)
    #: the one temperature taken (OpenAI reasoning models: 1); another is a 400
    fixed_temperature: float | None = None
    max_temperature: float | None = None  # a higher one is silently lowered (Anthropic)
    #: parameters refused by name: "openai" style (400 unsupported_parameter) or Mistral's
    #: 422 extra_forbidden, per `error_style`
    refused: frozenset[str] = frozenset()
    renamed_seed: str | None = None  # Mistral calls it random_seed
    max_n: int | None = None
    reasoning: Reasoning = "none"
    reasoning_tokens: int = 0  # thinking per reply, in the cap and in usage
    decoy: bool = False  # the thinking drafts a fenced reply with another legal move
    answer: Literal["as_is", "bare_json"] = "as_is"
    answer_omitted: bool = False  # thinks, then stops without an answer (content null)
    empty_content: Literal["null", "empty"] = "null"  # content when the cap cut the thinking
    #: structured-output channels: json_schema (response_format), tools, llama_json_schema,
    #: guided_json; "response_format" outside them: refused (400) or ignored
    structured: frozenset[str] = frozenset({"json_schema", "tools"})
    response_format_unsupported: Literal["ignore", "refuse"] = "ignore"
    reasoning_effort: Literal["accept", "ignore", "refuse"] = "accept"
    stream_usage: bool = True  # honours stream_options.include_usage
    usage_always: bool = False  # sends usage in every response (OpenRouter)
    cached_prompt: bool = False  # prompt_tokens_details.cached_tokens for a seen prefix
    usage_cost: bool = False  # usage.cost in dollars (OpenRouter)
    timings: bool = False  # llama.cpp's per-request `timings`
    props: bool = False  # llama.cpp's /props
    version: bool = False  # Ollama's /api/version
    chat: bool = True  # serves chat completions
    responses: bool = False  # serves the Responses API
    error_style: ErrorStyle = "openai"
    think_s: float = 0.0  # silence before a stream's first event (hidden thinking)
    chunk_s: float = 0.0  # gap between stream events
    #: dollars per 1M tokens for `usage_cost` (input, output)
    cost_rates: tuple[float, float] = (0.0, 0.0)
    notes: tuple[str, ...] = field(default=())


def _models(*names: str, policy: str = "sim-optimal") -> dict[str, str]:
    return dict.fromkeys(names, policy)


def _openai_reasoning(name: str, *models: str, **changes: Any) -> Behaviour:
    """An OpenAI reasoning model's server: only max_completion_tokens, only temperature 1,
    the sampling and logprob fields refused, thinking hidden and counted."""
    kw: dict[str, Any] = {
        "cap_fields": frozenset({"max_completion_tokens"}), "fixed_temperature": 1.0,
        "refused": _REASONING_REFUSED, "reasoning": "hidden", "reasoning_tokens": 192,
    }  # fmt: skip
    return Behaviour(name, _models(*models), **{**kw, **changes})


def _open_weights(name: str, reasoning: Reasoning, *models: str, guided: bool = False) -> Behaviour:
    """vLLM or SGLang serving an open reasoning model with its reasoning parser."""
    channels = {"json_schema", "tools", *(("guided_json",) if guided else ())}
    return Behaviour(
        name, _models(*models), owned_by=name.split("-")[0], reasoning=reasoning,
        reasoning_tokens=120, structured=frozenset(channels), error_style="vllm",
    )  # fmt: skip


_REASONING_REFUSED = frozenset(
    {"top_p", "presence_penalty", "frequency_penalty", "logprobs", "top_logprobs", "logit_bias"}
)

#: The provider behaviours of the conformance suite (docs/llm.md, "Provider conformance").
BEHAVIOURS: dict[str, Behaviour] = {
    b.name: b
    for b in (
        # OpenAI, classic chat models: take both cap fields, any temperature.
        Behaviour("openai", _models("gpt-4o", "gpt-4o-mini", "gpt-4.1-mini"), cached_prompt=True),
        # OpenAI reasoning models: max_tokens and a temperature other than 1 refused with
        # the bodies in SOURCES; thinking hidden and counted; Responses API too.
        _openai_reasoning(
            "openai-reasoning",
            "o4-mini",
            "o3",
            "gpt-5-mini",
            "gpt-5",
            cached_prompt=True,
            responses=True,
        ),
        # Responses-only models (o3-pro, gpt-5-pro, codex): chat completions is a 404.
        _openai_reasoning(
            "openai-responses-only",
            "o3-pro",
            "gpt-5-pro",
            "gpt-5-codex",
            reasoning_tokens=256,
            chat=False,
            responses=True,
        ),
        # Azure OpenAI reasoning deployments: OpenAI's refusals, on Azure's routes.
        _openai_reasoning("azure", "my-o4-mini", owned_by=None),
        # DeepSeek: reasoning_content; max_tokens bounds thinking + answer (default 32K);
        # temperature accepted and ignored; json_schema response_format refused.
        Behaviour(
            "deepseek",
            {"deepseek-reasoner": "sim-optimal", "deepseek-chat": "sim-optimal"},
            owned_by="deepseek",
            cap_fields=frozenset({"max_tokens"}),
            cap_refusal="ignore",
            default_cap=32768,
            reasoning="reasoning_content",
            reasoning_tokens=600,
            structured=frozenset({"tools"}),
            response_format_unsupported="refuse",
            reasoning_effort="ignore",
            cached_prompt=True,
        ),
        # vLLM before 0.17 with a reasoning parser: reasoning_content; 0.17 and later:
        # the field is `reasoning`; SGLang with --reasoning-parser: reasoning_content.
        _open_weights("vllm-old", "reasoning_content", "Qwen/Qwen3-8B", guided=True),
        _open_weights(
            "vllm", "reasoning", "Qwen/Qwen3-8B", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"
        ),
        _open_weights("sglang", "reasoning_content", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"),
        # llama.cpp's server: /props, timings, reasoning_content (--reasoning-format).
        Behaviour(
            "llamacpp",
            _models("Qwen3-1.7B-Q4_K_M"),
            owned_by="llamacpp",
            reasoning="reasoning_content",
            reasoning_tokens=80,
            max_n=1,
            structured=frozenset({"json_schema", "llama_json_schema"}),
            timings=True,
            props=True,
            error_style="llamacpp",
            cached_prompt=True,
        ),
        # An R1 distill whose chat template opens <think>: the reply has a lone </think>,
        # and the thinking drafted a fenced reply with another move (the silent wrong answer).
        Behaviour(
            "r1-open-think",
            _models("DeepSeek-R1-Distill-Qwen-1.5B"),
            owned_by="llamacpp",
            reasoning="open_think",
            reasoning_tokens=60,
            decoy=True,
            answer="bare_json",
            max_n=1,
            structured=frozenset({"json_schema", "llama_json_schema"}),
            props=True,
            error_style="llamacpp",
        ),
        # Ollama: `reasoning`, content "" when there is no answer, /api/version.
        Behaviour(
            "ollama",
            _models("qwen3:8b"),
            owned_by="library",
            cap_fields=frozenset({"max_tokens"}),
            cap_refusal="ignore",
            reasoning="reasoning",
            reasoning_tokens=100,
            empty_content="empty",
            structured=frozenset({"json_schema", "tools"}),
            version=True,
            error_style="ollama",
        ),
        # Anthropic's OpenAI SDK compatibility: response_format, seed and
        # reasoning_effort ignored; tools honoured (strict ignored); n must be 1;
        # temperature above 1 lowered to 1.
        Behaviour(
            "anthropic",
            _models("claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"),
            owned_by=None,
            max_n=1,
            max_temperature=1.0,
            structured=frozenset({"tools"}),
            reasoning_effort="ignore",
            error_style="anthropic",
        ),
        # Gemini's OpenAI compatibility: reasoning_effort taken, thinking hidden and counted.
        Behaviour(
            "gemini",
            _models("gemini-2.5-flash", "gemini-2.5-pro"),
            owned_by="google",
            reasoning="hidden",
            reasoning_tokens=150,
        ),
        # OpenRouter: vendor/model names, `reasoning`, usage (with cost) always sent.
        Behaviour(
            "openrouter",
            {
                "openai/o4-mini": "sim-optimal",
                "deepseek/deepseek-r1": "sim-optimal",
                "anthropic/claude-sonnet-4.5": "sim-optimal",
            },
            owned_by=None,
            reasoning="reasoning",
            reasoning_tokens=100,
            usage_always=True,
            usage_cost=True,
            cost_rates=(1.10, 4.40),
            error_style="openrouter",
        ),
        # Mistral: Magistral's list content (thinking parts, then text); `seed` refused as
        # an extra input (it is `random_seed`), as is max_completion_tokens.
        Behaviour(
            "mistral",
            _models("magistral-medium-latest", "magistral-small-latest"),
            owned_by="mistralai",
            cap_fields=frozenset({"max_tokens"}),
            cap_refusal="extra",
            refused=frozenset({"seed"}),
            renamed_seed="random_seed",
            reasoning="parts",
            reasoning_tokens=100,
            error_style="mistral",
        ),
    )
}


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
        total_reasoning = 0
        for index, choice in enumerate(reply["choices"]):
            text = choice["message"]["content"]
            answer = reply_object(text) if b.answer == "bare_json" else None
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
