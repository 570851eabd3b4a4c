"""The simulated OpenAI-compatible server whose models are policies with known parameters.

See docs/simulated_server.md for the model-name grammar and the request log.
"""

from metanim.llm.sim.behaviour import REFERENCE_TEMPERATURE, at_temperature, probability_at
from metanim.llm.sim.policies import Task, find_task, reply, template_keys
from metanim.llm.sim.server import SimApp, SimServer, count_tokens, serve
from metanim.llm.sim.spec import LISTED_MODELS, ModelSpec, ModelSpecError, parse_model_spec
from metanim.llm.sim.transport import SimChatModel

__all__ = [
    "LISTED_MODELS",
    "REFERENCE_TEMPERATURE",
    "ModelSpec",
    "ModelSpecError",
    "SimApp",
    "SimChatModel",
    "SimServer",
    "Task",
    "at_temperature",
    "count_tokens",
    "find_task",
    "parse_model_spec",
    "probability_at",
    "reply",
    "serve",
    "template_keys",
]
