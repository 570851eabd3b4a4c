"""Prompting and debate methods behind one interface (docs/architecture.md, "agents").

`Method.decide(task_or_game, state, seed=...)` returns a `Decision`: the answer and the
full record. Methods work on game positions (`GameTask`) and on questions (`QuestionTask`).
"""

from metanim.agents.acemad import AceMAD, aggregate, brier_score, update_weights
from metanim.agents.base import (
    CallRecord,
    Context,
    Counts,
    Decision,
    DecisionInfrastructureError,
    Method,
    Sample,
    TieBreak,
)
from metanim.agents.debate import MAD, MPD, AnonymousMAD, CrossModel, DReaMAD
from metanim.agents.parsing import Parsed, parse_reply
from metanim.agents.policy import LLMPolicy
from metanim.agents.prompts import METHOD_PROMPT_VERSION
from metanim.agents.registry import (
    METHODS,
    MethodSpec,
    UnknownMethodError,
    build_method,
    canonical_method,
    check_parameters,
    declared_defaults,
    explicit_params,
    make_client,
    method_parameters,
    parse_spec,
)
from metanim.agents.single import CoT, ReAct, SelfConsistency, SelfRefine, Standard
from metanim.agents.tasks import (
    GameTask,
    Question,
    QuestionTask,
    Task,
    as_task,
    game_problem,
    load_questions,
)
from metanim.games.reply import ActionReply, extract_action

__all__ = [
    "MAD",
    "METHODS",
    "METHOD_PROMPT_VERSION",
    "MPD",
    "AceMAD",
    "ActionReply",
    "AnonymousMAD",
    "CallRecord",
    "CoT",
    "Context",
    "Counts",
    "CrossModel",
    "DReaMAD",
    "Decision",
    "DecisionInfrastructureError",
    "GameTask",
    "LLMPolicy",
    "Method",
    "MethodSpec",
    "Parsed",
    "Question",
    "QuestionTask",
    "ReAct",
    "Sample",
    "SelfConsistency",
    "SelfRefine",
    "Standard",
    "Task",
    "TieBreak",
    "UnknownMethodError",
    "aggregate",
    "as_task",
    "brier_score",
    "build_method",
    "canonical_method",
    "check_parameters",
    "declared_defaults",
    "explicit_params",
    "extract_action",
    "game_problem",
    "load_questions",
    "make_client",
    "method_parameters",
    "parse_reply",
    "parse_spec",
    "update_weights",
]
