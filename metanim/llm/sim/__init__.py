"""The simulated OpenAI-compatible server whose models are policies with known parameters.

See docs/simulated_server.md for the model-name grammar and the request log. The server
and the in-process transport load on first use: they import aiohttp, which checking a
model name never needs.
"""

from typing import TYPE_CHECKING, Any

from metanim.llm.sim.behaviour import REFERENCE_TEMPERATURE, at_temperature, probability_at
from metanim.llm.sim.policies import Task, find_task, reply, template_keys
from metanim.llm.sim.spec import (
    LISTED_MODELS,
    ModelSpecError,
    SimModelSpec,
    check_simulated,
    parse_model_spec,
)
from metanim.util import deprecated_aliases
from metanim.util.lazy import lazy_exports

if TYPE_CHECKING:
    from metanim.llm.sim.server import SimApp, SimServer, count_tokens, serve
    from metanim.llm.sim.transport import SimChatModel

__all__ = [
    "LISTED_MODELS",
    "REFERENCE_TEMPERATURE",
    "ModelSpecError",
    "SimApp",
    "SimChatModel",
    "SimModelSpec",
    "SimServer",
    "Task",
    "at_temperature",
    "check_simulated",
    "count_tokens",
    "find_task",
    "parse_model_spec",
    "probability_at",
    "reply",
    "serve",
    "template_keys",
]


_lazy, _names = lazy_exports(
    __name__,
    {"server": ["SimApp", "SimServer", "count_tokens", "serve"], "transport": ["SimChatModel"]},
)
# Renamed: `metanim.llm.ModelSpec` names any model and where it is served.
_renamed = deprecated_aliases(
    __name__, {"ModelSpec": ("metanim.llm.sim.SimModelSpec", SimModelSpec)}
)


def __getattr__(name: str) -> Any:
    try:
        return _lazy(name)
    except AttributeError:
        return _renamed(name)


def __dir__() -> list[str]:
    return _names()
