"""The simulated OpenAI-compatible server whose models are policies with known parameters.

See docs/simulated_server.md for the model-name grammar and the request log.
"""

from metanim.llm.sim.policies import Task, find_task, reply, template_keys
from metanim.llm.sim.server import SimApp, SimServer, count_tokens, serve
from metanim.llm.sim.spec import LISTED_MODELS, ModelSpec, ModelSpecError, parse_model_spec

__all__ = [
    "LISTED_MODELS",
    "ModelSpec",
    "ModelSpecError",
    "SimApp",
    "SimServer",
    "Task",
    "count_tokens",
    "find_task",
    "parse_model_spec",
    "reply",
    "serve",
    "template_keys",
]
