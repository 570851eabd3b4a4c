"""`--dry-run`: a run parsed, checked and planned as it would be, with nothing sent or written."""

from __future__ import annotations

from metanim.arena._run import RunPlan, plan
from metanim.arena.challenging import ChallengingConfig
from metanim.arena.evaluate import Evaluation, EvaluationConfig
from metanim.arena.tournament import Tournament, TournamentConfig


def plan_run(config: TournamentConfig | EvaluationConfig) -> RunPlan:
    """The plan of the run `config` describes: every check a run makes before its first
    call (players, settings, sizes, dataset files), its items and what its log lacks.

    Nothing is sent (no server is contacted or started) and nothing is written.
    """
    if isinstance(config, ChallengingConfig):
        config = config.evaluation()
    job = Tournament(config) if isinstance(config, TournamentConfig) else Evaluation(config)
    return plan(job)
