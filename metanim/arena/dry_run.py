"""`--dry-run`: a run parsed, checked and planned as it would be, with nothing written and
nothing sent but what it states."""

from __future__ import annotations

import dataclasses

from metanim.arena._run import RunPlan, plan
from metanim.arena.challenging import ChallengingConfig
from metanim.arena.evaluate import Evaluation, EvaluationConfig
from metanim.arena.tournament import Tournament, TournamentConfig
from metanim.llm import requests_sent


def plan_run(config: TournamentConfig | EvaluationConfig) -> RunPlan:
    """The plan of the run `config` describes: every check a run makes before its first
    call (players, settings, sizes, dataset files), its items and what its log lacks.

    Nothing is written and no server is started. No request is sent but the ones that
    ask what a real model's server is, when `--structured-output auto` needs it (the
    plan lists them: `RunPlan.sent`).
    """
    if isinstance(config, ChallengingConfig):
        config = config.evaluation()
    with requests_sent() as sent:
        job = Tournament(config) if isinstance(config, TournamentConfig) else Evaluation(config)
        planned = plan(job)
    return dataclasses.replace(planned, sent=list(sent))
