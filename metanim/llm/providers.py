"""Providers as data: what differs between OpenAI-compatible servers, one profile per kind.

A `Provider` says how a kind of server takes a request (the completion cap's field name,
the seed's name or none, how reasoning effort is sent, whether it streams usage) and what
a run may assume of it (does `--structured-output auto` send schemas, does it bill). A
`ModelDefaults` says what one model needs there: a reasoning model gets a cap that leaves
room for its thinking, a timeout long enough for thinking nothing is streamed of, and no
temperature where it takes only its own. The profile is detected from the server
(`metanim.llm.probe.detect_provider`: its host, else what its model listing says) or named
(`--provider`), stated in the run header and recorded with every call.

Every rule cites where it was read (docs/llm.md, "Providers"); the fake servers in
`metanim.llm.sim.providers` answer as the same documents say, and the conformance suite
plays every method against each.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Literal

from metanim.llm._types import StructuredOutput

CapField = Literal["max_tokens", "max_completion_tokens"]
CAP_FIELDS: tuple[str, ...] = ("max_tokens", "max_completion_tokens")
#: Reasoning effort levels a run may ask for (OpenAI's names; other servers map them).
REASONING_EFFORTS: tuple[str, ...] = ("none", "minimal", "low", "medium", "high", "xhigh")

#: The completion cap of a model that does not think first (every phase of every method
#: fits in it; docs/llm.md, "Call options").
CHAT_CAP = 512
#: OpenAI: "reserve at least 25,000 tokens for reasoning and outputs" when starting with
#: reasoning models (https://platform.openai.com/docs/guides/reasoning, "Allocating space
#: for reasoning").
OPENAI_REASONING_CAP = 25_000
#: DeepSeek: deepseek-reasoner's max_tokens bounds thinking and answer together, default
#: 32K (https://api-docs.deepseek.com/guides/reasoning_model).
DEEPSEEK_REASONING_CAP = 32_768
#: A reasoning model that shows its thinking (Qwen3, R1 distills, Magistral): room for a
#: few thousand tokens of thinking before a short answer.
VISIBLE_REASONING_CAP = 8_192
#: Timeouts measure silence (streaming): a chat model answers within a minute; a model
#: that streams its thinking is never silent long; one whose thinking is hidden (OpenAI
#: o-series and gpt-5, Gemini 2.5) streams nothing while it thinks.
CHAT_TIMEOUT_S = 60.0
VISIBLE_REASONING_TIMEOUT_S = 180.0
HIDDEN_REASONING_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class ModelDefaults:
    """What one model needs on its server: cap, timeout, and whether it takes a temperature.

    Attributes:
        reasoning: the model thinks before it answers (its thinking counts in the cap).
        hidden: its thinking is not sent (only counted), so a stream is silent meanwhile.
        temperature: "send" the method's temperature, or "server" (the model takes only its
            own: sending another is refused, or ignored, as documented).
    """

    cap: int = CHAT_CAP
    timeout_s: float = CHAT_TIMEOUT_S
    reasoning: bool = False
    hidden: bool = False
    temperature: Literal["send", "server"] = "send"
    why: str = "a chat model"
    #: the API the model is served on ("responses": OpenAI's Responses API only)
    api: Literal["chat", "responses"] = "chat"


_CHAT = ModelDefaults()
_OPENAI_REASONING = ModelDefaults(
    OPENAI_REASONING_CAP, HIDDEN_REASONING_TIMEOUT_S, reasoning=True, hidden=True,
    temperature="server",
    why="an OpenAI reasoning model: it takes only its default temperature, and its hidden "
    "thinking counts in the cap",
)  # fmt: skip
_DEEPSEEK_REASONER = ModelDefaults(
    DEEPSEEK_REASONING_CAP, VISIBLE_REASONING_TIMEOUT_S, reasoning=True, temperature="server",
    why="deepseek-reasoner: it ignores temperature, and max_tokens bounds thinking and answer",
)  # fmt: skip
_VISIBLE = ModelDefaults(
    VISIBLE_REASONING_CAP, VISIBLE_REASONING_TIMEOUT_S, reasoning=True,
    why="a reasoning model whose thinking counts in the cap",
)  # fmt: skip
_GEMINI_THINKING = ModelDefaults(
    OPENAI_REASONING_CAP, HIDDEN_REASONING_TIMEOUT_S, reasoning=True, hidden=True,
    why="a Gemini 2.5+ model: it thinks by default, unseen, in the cap",
)  # fmt: skip

_OPENAI_RESPONSES_ONLY = dataclasses.replace(
    _OPENAI_REASONING,
    why="an OpenAI model served only by the Responses API (o3-pro, the gpt-5 pro and codex "
    "models): it takes only its default temperature, and its hidden thinking counts in the cap",
    api="responses",
)
#: Models OpenAI serves only on the Responses API (chat completions answers 404).
_RESPONSES_ONLY_NAME = re.compile(r"^(o1-pro|o3-pro|o3-deep-research|o4-mini-deep-research|"
                                  r"gpt-5(\.\d+)?-pro)(-|$)|codex")  # fmt: skip
#: OpenAI's reasoning families (o1, o3, o4-mini, gpt-5 and its sizes; gpt-5-chat is not).
_OPENAI_REASONING_NAME = re.compile(r"^(o\d+)(-|$)|^gpt-5(?!-chat)(\.\d+)?(-|$)")
#: Open-weight reasoning models by name (served by vLLM, SGLang, llama.cpp, Ollama, ...).
_OPEN_REASONING_NAME = re.compile(
    r"(^|[/_\-.:])(qwen3|qwq|deepseek-r1|r1-distill|magistral|phi-4-reasoning|gpt-oss)"
    r"|reason|think",
    re.IGNORECASE,
)


def _bare(model: str) -> str:
    """A model name without its router prefix (`openai/o4-mini` -> `o4-mini`) or Azure's."""
    model = model.removeprefix("azure:")
    return model.rsplit("/", 1)[-1].lower()


@dataclass(frozen=True)
class Provider:
    """How one kind of server takes requests (see the module).

    Attributes:
        kind: the profile's name (`--provider`).
        cap_field: the field the completion cap is sent as.
        seed_field: the seed's name (Mistral: random_seed), or None to send none.
        effort: how `--reasoning-effort` is sent: "field" (`reasoning_effort`), "object"
            (`reasoning: {"effort": ...}`, OpenRouter), or "ignored" (documented as
            having no effect: not sent, and the run header says so).
        stream_usage: takes `stream_options.include_usage`.
        structured_auto: what `--structured-output auto` sends there.
        self_hosted: bills nothing (a local server): its calls cost $0, known.
        openai_models: OpenAI's reasoning rules apply to OpenAI model names here (a proxy
            or router to OpenAI).
        source: the documentation the profile follows.
    """

    kind: str
    cap_field: CapField = "max_tokens"
    seed_field: str | None = "seed"
    effort: Literal["field", "object", "ignored"] = "field"
    stream_usage: bool = True
    structured_auto: StructuredOutput = "off"
    self_hosted: bool = False
    openai_models: bool = True
    #: the cap fields it reads (a cap sent in another is refused or silently ignored)
    takes_caps: tuple[str, ...] = CAP_FIELDS
    #: structured-output modes it refuses (documented), each with the page saying so
    refuses_modes: tuple[str, ...] = ()
    source: str = ""
    notes: tuple[str, ...] = field(default=())

    def defaults(self, model: str) -> ModelDefaults:
        """What `model` needs on this server (cap, timeout, temperature)."""
        bare = _bare(model)
        if self.kind == "sim":
            return _CHAT
        if self.openai_models and _RESPONSES_ONLY_NAME.search(bare):
            return _OPENAI_RESPONSES_ONLY
        if self.openai_models and _OPENAI_REASONING_NAME.search(bare):
            return _OPENAI_REASONING
        if self.kind == "deepseek" and "reasoner" in bare:
            return _DEEPSEEK_REASONER
        if self.kind == "gemini" and re.match(r"gemini-(2\.5|[3-9])", bare):
            return _GEMINI_THINKING
        if self.kind in ("openrouter", "generic") and bare.startswith("deepseek-r1"):
            return _VISIBLE
        if _OPEN_REASONING_NAME.search(bare) and self.kind not in ("anthropic", "openai", "azure"):
            return _VISIBLE
        return _CHAT


def _p(kind: str, **kw: object) -> Provider:
    return Provider(kind, **kw)  # type: ignore[arg-type]


#: Every profile, by kind. `generic` is an unknown server: the widest-taken fields, and
#: OpenAI's rules for OpenAI model names (it is most likely a proxy to OpenAI).
PROVIDERS: dict[str, Provider] = {
    p.kind: p
    for p in (
        _p("openai", cap_field="max_completion_tokens",
           source="https://platform.openai.com/docs/api-reference/chat/create"),
        _p("azure", cap_field="max_completion_tokens",
           source="https://learn.microsoft.com/azure/ai-foundry/openai/how-to/reasoning"),
        _p("deepseek", effort="ignored", openai_models=False, takes_caps=("max_tokens",),
           refuses_modes=("json_schema", "guided_json", "llama_json_schema"),
           source="https://api-docs.deepseek.com/guides/reasoning_model"),
        _p("vllm", structured_auto="json_schema", self_hosted=True, openai_models=False,
           source="https://docs.vllm.ai/en/latest/features/reasoning_outputs/"),
        _p("sglang", structured_auto="json_schema", self_hosted=True, openai_models=False,
           source="https://docs.sglang.io/docs/advanced_features/separate_reasoning"),
        _p("llamacpp", structured_auto="json_schema", self_hosted=True, openai_models=False,
           source="https://github.com/ggml-org/llama.cpp/tree/master/tools/server"),
        _p("ollama", structured_auto="json_schema", self_hosted=True, openai_models=False,
           takes_caps=("max_tokens",), refuses_modes=("guided_json", "llama_json_schema"),
           source="https://docs.ollama.com/api/openai-compatibility"),
        _p("anthropic", seed_field=None, effort="ignored", openai_models=False,
           source="https://docs.claude.com/en/api/openai-sdk"),
        _p("gemini", openai_models=False, source="https://ai.google.dev/gemini-api/docs/openai"),
        _p("openrouter", effort="object",
           source="https://openrouter.ai/docs/use-cases/reasoning-tokens"),
        _p("mistral", seed_field="random_seed", openai_models=False, takes_caps=("max_tokens",),
           source="https://docs.mistral.ai/api/"),
        _p("generic"),
        _p("sim", self_hosted=True, openai_models=False, source="docs/simulated_server.md"),
    )
}  # fmt: skip
PROVIDER_KINDS: tuple[str, ...] = tuple(PROVIDERS)

#: Hosts of hosted APIs: known without asking them.
HOSTS: dict[str, str] = {
    "api.openai.com": "openai",
    "openai.azure.com": "azure",
    "api.deepseek.com": "deepseek",
    "api.anthropic.com": "anthropic",
    "generativelanguage.googleapis.com": "gemini",
    "openrouter.ai": "openrouter",
    "api.mistral.ai": "mistral",
}
#: What a server's `/models` listing says (`owned_by`), by kind.
OWNERS: dict[str, str] = {
    "vllm": "vllm",
    "sglang": "sglang",
    "llamacpp": "llamacpp",
    "deepseek": "deepseek",
    "mistralai": "mistral",
    "google": "gemini",
    "system": "openai",
    "openai": "openai",
    "openai-internal": "openai",
    "metanim-sim": "sim",
}


def provider(kind: str) -> Provider:
    """The profile named `kind`; a `ValueError` naming the known ones otherwise."""
    try:
        return PROVIDERS[kind]
    except KeyError:
        raise ValueError(
            f"unknown provider {kind!r}; choose one of {', '.join(PROVIDER_KINDS)}"
        ) from None
