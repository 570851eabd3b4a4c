"""The simulated OpenAI-compatible server whose models are policies with known parameters.

See docs/simulated_server.md for the model-name grammar and the request log.
"""

from metanim.llm.sim.behaviour import REFERENCE_TEMPERATURE, at_temperature, probability_at
from metanim.llm.sim.policies import Task, find_task, reply, template_keys
from metanim.llm.sim.server import SimApp, SimServer, count_tokens, serve
from metanim.llm.sim.spec import (
    LISTED_MODELS,
    ModelSpecError,
    SimModelSpec,
    check_simulated,
    parse_model_spec,
)
from metanim.llm.sim.transport import SimChatModel
from metanim.util import deprecated_aliases

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


# Renamed: `metanim.llm.ModelSpec` names any model and where it is served.
__getattr__ = deprecated_aliases(
    __name__, {"ModelSpec": ("metanim.llm.sim.SimModelSpec", SimModelSpec)}
)
