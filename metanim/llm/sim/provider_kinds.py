"""What each fake provider does, as data: one `Behaviour` per kind of server.

Each flag is one documented difference between OpenAI-compatible servers, with the URL it
was read from in `SOURCES`; `metanim.llm.sim.providers` turns a behaviour into a server.
The table lives apart from the server so that naming a provider (`serve-sim --provider`,
its `--help`) loads no web framework.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

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
    #: A request whose schema comes over a channel in `structured` gets the reply's JSON
    #: object alone, as a constrained decode writes it (llama.cpp turns the schema into a
    #: grammar: https://github.com/ggml-org/llama.cpp/tree/master/tools/server#post-completion;
    #: https://platform.openai.com/docs/guides/structured-outputs). False: the server
    #: says it honours the channel and answers as if no schema came (the defect a run
    #: counts as `schema_violations`).
    keeps_schema: bool = True
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
