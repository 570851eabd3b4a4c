"""The LLM layer: one async OpenAI-compatible chat client, its cache and price table,
and the records every method reads (`ChatModel`, `Completion`, `Usage`).

The simulated server lives in `metanim.llm.sim`. The client loads on first use
(`OpenAIChatClient`): aiohttp costs a quarter of a second to import, which a command that
sends nothing (`--help`, `--dry-run`) never pays.
"""

from typing import TYPE_CHECKING

from metanim.llm._types import (
    AUTO,
    DEFAULT_MAX_COMPLETION_TOKENS,
    STRUCTURED_OUTPUT_MODES,
    STRUCTURED_OUTPUT_SETTINGS,
    CallOptions,
    ChatModel,
    Completion,
    InfrastructureError,
    Message,
    StructuredOutput,
    StructuredOutputSetting,
    Usage,
)
from metanim.llm.budget import BudgetExhausted, CostBudget
from metanim.llm.cache import ResponseCache, cache_key
from metanim.llm.dialect import Api, ApiSetting
from metanim.llm.model_spec import (
    SIM_IN_PROCESS,
    SIM_URL_ENV,
    ModelSpec,
    sim_url_from_env,
)
from metanim.llm.prices import PRICES_ENV, Price, PriceTable
from metanim.llm.probe import (
    Detected,
    StructuredChoice,
    detect_provider,
    forget_probes,
    requests_sent,
    structured_output_for,
)
from metanim.llm.providers import (
    CAP_FIELDS,
    PROVIDER_KINDS,
    PROVIDERS,
    REASONING_EFFORTS,
    ModelDefaults,
    Provider,
    provider,
)
from metanim.llm.target import (
    AZURE_PREFIX,
    DEFAULT_BASE_URL,
    SIM_KEY_ENV,
    ServerTarget,
    auth_headers,
    check_api_key,
    check_base_url,
    check_model,
    is_loopback,
    key_env,
    model_api_key,
    server_target,
)
from metanim.util.lazy import lazy_exports

if TYPE_CHECKING:
    from metanim.llm.client import OpenAIChatClient, SharedConnections

__getattr__, __dir__ = lazy_exports(__name__, {"client": ["OpenAIChatClient", "SharedConnections"]})

__all__ = [
    "AUTO",
    "AZURE_PREFIX",
    "CAP_FIELDS",
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_COMPLETION_TOKENS",
    "PRICES_ENV",
    "PROVIDERS",
    "PROVIDER_KINDS",
    "REASONING_EFFORTS",
    "SIM_IN_PROCESS",
    "SIM_KEY_ENV",
    "SIM_URL_ENV",
    "STRUCTURED_OUTPUT_MODES",
    "STRUCTURED_OUTPUT_SETTINGS",
    "Api",
    "ApiSetting",
    "BudgetExhausted",
    "CallOptions",
    "ChatModel",
    "Completion",
    "CostBudget",
    "Detected",
    "InfrastructureError",
    "Message",
    "ModelDefaults",
    "ModelSpec",
    "OpenAIChatClient",
    "Price",
    "PriceTable",
    "Provider",
    "ResponseCache",
    "ServerTarget",
    "SharedConnections",
    "StructuredChoice",
    "StructuredOutput",
    "StructuredOutputSetting",
    "Usage",
    "auth_headers",
    "cache_key",
    "check_api_key",
    "check_base_url",
    "check_model",
    "detect_provider",
    "forget_probes",
    "is_loopback",
    "key_env",
    "model_api_key",
    "provider",
    "requests_sent",
    "server_target",
    "sim_url_from_env",
    "structured_output_for",
]
