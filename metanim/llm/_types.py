"""Records and the narrow client protocol shared by the LLM layer and the methods.

Methods (`metanim.agents`) depend only on `ChatModel`; the OpenAI-compatible
client, the cache and the simulated server live beside this file.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from metanim.games import MetaNimError

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


class Usage(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class Completion(BaseModel):
    """One chat call's answer: `texts` holds n choices (n >= 1)."""

    model_config = ConfigDict(frozen=True)

    model: str
    texts: list[str]
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float = 0.0  # dollars actually spent: 0.0 for a cached answer
    latency_s: float = 0.0
    cached: bool = False  # from the response cache; `usage` still holds its tokens
    # model, temperature, n, seed, sample_index (and, from the client, base_url, max_tokens)
    request: dict[str, Any] = Field(default_factory=dict)
    retries: int = 0  # failed attempts before this answer (0 for a cached answer)

    @property
    def text(self) -> str:
        return self.texts[0]


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
    ) -> Completion:
        """One chat completion. `sample_index` separates repeated samples in the cache."""
        ...
