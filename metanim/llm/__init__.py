"""The LLM layer: one async OpenAI-compatible chat client, its cache and price table,
and the records every method reads (`ChatModel`, `Completion`, `Usage`).

The simulated server lives in `metanim.llm.sim`.
"""

from metanim.llm._types import (
    CallOptions,
    ChatModel,
    Completion,
    InfrastructureError,
    Message,
    Usage,
)
from metanim.llm.cache import ResponseCache, cache_key
from metanim.llm.client import DEFAULT_BASE_URL, OpenAIChatClient
from metanim.llm.prices import PRICES_ENV, Price, PriceTable

__all__ = [
    "DEFAULT_BASE_URL",
    "PRICES_ENV",
    "CallOptions",
    "ChatModel",
    "Completion",
    "InfrastructureError",
    "Message",
    "OpenAIChatClient",
    "Price",
    "PriceTable",
    "ResponseCache",
    "Usage",
    "cache_key",
]
