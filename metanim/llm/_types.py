"""Records and the narrow client protocol shared by the LLM layer and the methods.

Methods (`metanim.agents`) depend only on `ChatModel`; the OpenAI-compatible
client, the cache and the simulated server live beside this file.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from metanim.util import MetaNimError

Message = dict[str, str]  # {"role": "system"|"user"|"assistant", "content": "..."}


class InfrastructureError(MetaNimError, RuntimeError):
    """The model could not be reached or refused service (auth, quota, exhausted retries).

    Never a move, a loss or a win: the decision or episode is marked and can be rerun.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str = "infrastructure",
        status: int | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        #: auth, permission, quota, not_found, bad_request, rate_limit, server_error,
        #: timeout, connection or bad_response (see docs/llm.md).
        self.kind = kind
        self.status = status  # HTTP status, when there was one
        self.attempts = attempts  # attempts made, retries included


#: How a reply schema reaches the server (docs/llm.md, "Structured output"):
#: off: not sent; json_schema: `response_format` {"type": "json_schema"} (OpenAI, llama.cpp,
#: vLLM, SGLang, Ollama); guided_json: a `guided_json` body field (vLLM's older form);
#: llama_json_schema: llama.cpp's own `json_schema` body field (turned into a grammar);
#: tools: a forced function call whose parameters are the schema (servers that ignore
#: `response_format`, as Anthropic's OpenAI-compatible endpoint documents).
StructuredOutput = Literal["off", "json_schema", "guided_json", "llama_json_schema", "tools"]
STRUCTURED_OUTPUT_MODES: tuple[str, ...] = (
    "off",
    "json_schema",
    "guided_json",
    "llama_json_schema",
    "tools",
)
#: What a run asks for: a mode, or "auto" (the mode the server says it takes, resolved
#: once before the run by `metanim.llm.structured_output_for`; never sent as such).
StructuredOutputSetting = Literal[
    "auto", "off", "json_schema", "guided_json", "llama_json_schema", "tools"
]
STRUCTURED_OUTPUT_SETTINGS: tuple[str, ...] = ("auto", *STRUCTURED_OUTPUT_MODES)

#: The completion cap of a chat model (one that does not think first): "auto" resolves to
#: it, or to a reasoning model's larger default (`metanim.llm.providers`).
DEFAULT_MAX_COMPLETION_TOKENS = 512
#: The cap a model's server needs, chosen per model (`ModelDefaults.cap`).
AUTO = "auto"


#: Request fields the client writes itself: one set by `--extra-body` would change what
#: is sent behind the run's back (another model, no messages) while its records say not.
CLIENT_FIELDS = ("model", "messages", "input", "instructions", "stream", "n")


def _check_extra_body(fields: dict[str, Any]) -> dict[str, Any]:
    taken = [name for name in fields if name in CLIENT_FIELDS]
    if taken:
        raise ValueError(
            f"{', '.join(taken)} {'is a field' if len(taken) == 1 else 'are fields'} the "
            "client sets itself; give the model with --model, the sampling with --param"
        )
    return fields


#: Extra request-body fields, every call (never one the client sets: `CLIENT_FIELDS`).
ExtraBody = Annotated[dict[str, Any], AfterValidator(_check_extra_body)]


class CallOptions(BaseModel):
    """Everything a call sends beyond its messages, temperature, n and seed; one per call.

    Recorded with every call (`CallRecord.options`), so a decision says exactly what its
    requests asked for. `schema` is the reply's JSON Schema, sent only when
    `structured_output` is not "off". What went on the wire (the cap's field name, the
    temperature or the server's default) is recorded beside it (`Completion.sent`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    max_tokens: Annotated[int, Field(ge=1)] | Literal["auto"] | None = Field(
        AUTO,
        description="completion cap: tokens, 'auto' (the model's default: 512, more for a "
        "reasoning model), or None (the server's own)",
    )
    #: A phase's own cap where `max_tokens` is "auto" (AceMAD's short argument), for a model
    #: that does not think first; a reasoning model's thinking needs its whole default cap.
    phase_cap: int | None = Field(None, ge=1)
    cap_field: Literal["max_tokens", "max_completion_tokens"] | None = Field(
        None, description="the cap's field name (None: the server's, from its profile)"
    )
    reasoning_effort: str | None = None
    #: Request fields left out (e.g. "seed", "temperature": the server's default).
    omit: tuple[str, ...] = ()
    top_p: float | None = Field(None, gt=0, le=1)
    stop: list[str] | None = None
    extra_body: ExtraBody = Field(default_factory=dict)
    structured_output: StructuredOutput = "off"
    schema_: dict[str, Any] | None = Field(None, alias="schema")

    def with_(self, **changes: Any) -> CallOptions:
        """A copy with `changes` (`schema=` sets the reply schema)."""
        if "schema" in changes:
            changes["schema_"] = changes.pop("schema")
        return self.model_copy(update=changes)

    def record(self) -> dict[str, Any]:
        """The JSON form kept in call records (the schema only when it was sent).

        Dumped once per options object when it holds no mutable value (no extra body,
        stop list or schema, the usual case: every call records its options); else each
        time, so a record never shows a dict as it was before a caller changed it.
        """
        if self.extra_body or self.stop or self.schema_ is not None:
            return self._dump()
        hit = _OPTION_RECORDS.get(id(self))
        if hit is None or hit[0] is not self:
            if len(_OPTION_RECORDS) > 256:  # a caller making fresh options per call
                _OPTION_RECORDS.clear()
            hit = _OPTION_RECORDS[id(self)] = (self, self._dump())
        return dict(hit[1])

    def _dump(self) -> dict[str, Any]:
        out = self.model_dump(mode="json", by_alias=True, exclude_defaults=False)
        if self.structured_output == "off":
            out.pop("schema", None)
        return out


# id -> (options, record); the options object is kept, so its id is never reused meanwhile.
_OPTION_RECORDS: dict[int, tuple[CallOptions, dict[str, Any]]] = {}


class Usage(BaseModel):
    """Tokens one call (or a sum of calls) took, as the server reported them.

    `reasoning_tokens` (`completion_tokens_details.reasoning_tokens`) are part of
    `completion_tokens`, billed as output; `cached_tokens`
    (`prompt_tokens_details.cached_tokens`) are part of `prompt_tokens`, billed at the
    cached-input price where the provider discounts them.
    """

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
        )


class Completion(BaseModel):
    """One chat call's answer: `texts` holds n choices (n >= 1)."""

    model_config = ConfigDict(frozen=True)

    model: str
    texts: list[str]
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float = 0.0  # dollars actually spent: 0.0 for a cached answer
    # Request sent to response received (retries and their backoff included); a cached
    # answer: the cache lookup.
    latency_s: float = 0.0
    # Call created to request sent: waiting for a concurrency slot (and, on a loop's first
    # call, for the connection set-up and server checks).
    queue_s: float = 0.0
    cached: bool = False  # from the response cache; `usage` still holds its tokens
    # Whether `cost_usd` is known: False for a model the price table does not price (its
    # cost is unknown, never $0) unless the server is self-hosted or reported the cost.
    priced: bool = True
    # What went on the wire, where it differs by server: api, cap_field and cap, the
    # temperature sent (None: the server's default), stream, and what was adapted after
    # the server refused a parameter.
    sent: dict[str, Any] = Field(default_factory=dict)
    # model, temperature, n, seed, sample_index (and, from the client, base_url, max_tokens)
    request: dict[str, Any] = Field(default_factory=dict)
    retries: int = 0  # failed attempts before this answer (0 for a cached answer)
    # Why each choice ended, as the server said: "stop", "length" (cut by the cap), ...
    finish_reasons: list[str | None] = Field(default_factory=list)
    # A reasoning model's thinking per choice (`reasoning_content`, or <think>...</think>
    # taken out of the text), kept apart so the answer is parsed from `texts` alone.
    reasoning: list[str | None] = Field(default_factory=list)
    # Why each failed attempt failed (kind, HTTP status), in order; len == retries.
    attempt_errors: list[dict[str, Any]] = Field(default_factory=list)
    endpoint: str | None = None  # the base URL that answered (one of a client's replicas)
    # The server's own busy time for the reply, where it reports one (llama.cpp's
    # `timings`: prompt evaluation plus generation), in seconds; None elsewhere.
    server_s: float | None = None

    @property
    def text(self) -> str:
        return self.texts[0]

    @property
    def finish_reason(self) -> str | None:
        return self.finish_reasons[0] if self.finish_reasons else None

    @property
    def truncated(self) -> bool:
        """Whether the first choice was cut off by the completion cap."""
        return self.finish_reason == "length"


@runtime_checkable
class ChatModel(Protocol):
    """What a prompting or debate method needs from a model: one async chat call."""

    @property
    def model(self) -> str: ...

    async def chat(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        n: int = 1,
        seed: int | None = None,
        sample_index: int = 0,
        max_tokens: int | None = None,
        options: CallOptions | None = None,
    ) -> Completion:
        """One chat completion. `sample_index` separates repeated samples in the cache.

        `options` (cap, top_p, stop, extra body, reply schema) wins over `max_tokens`.
        """
        ...
