"""Tournaments, evaluations and single games: one episode loop, one player builder, one run.

`run_tournament(TournamentConfig(...))` plays method against opponent and reports win
rates with Wilson CIs per setting and seat; `run_evaluation(EvaluationConfig(...))`
measures decision accuracy on critical-state datasets or question files;
`play_game(TournamentConfig(...))` plays one game of a tournament's plan, move by move.
What they write is `metanim.records`'. See docs/arena.md.
"""

import metanim.records
from metanim.arena._config import (
    AgentProfile,
    RunConfig,
    load_config_file,
    load_profile,
    merge_profiles,
    profile_fields,
)
from metanim.arena._players import (
    ClientPool,
    MethodPolicy,
    Policy,
    Side,
    SolverPolicy,
    Turn,
    build_player,
)
from metanim.arena._preflight import resolve_structured_output
from metanim.arena._run import RunPlan, RunResult
from metanim.arena.challenging import ChallengingConfig, ChallengingResult, run_challenging
from metanim.arena.dry_run import plan_run
from metanim.arena.episodes import play_episode
from metanim.arena.evaluate import (
    EvaluationConfig,
    EvaluationResult,
    arun_evaluation,
    run_evaluation,
)
from metanim.arena.play import aplay_game, format_end, format_move, play_game, play_hint
from metanim.arena.tournament import (
    TournamentConfig,
    TournamentResult,
    arun_tournament,
    parse_setting,
    run_tournament,
)
from metanim.util import deprecated_aliases

__all__ = [
    "AgentProfile",
    "ChallengingConfig",
    "ChallengingResult",
    "ClientPool",
    "EvaluationConfig",
    "EvaluationResult",
    "MethodPolicy",
    "Policy",
    "RunConfig",
    "RunPlan",
    "RunResult",
    "Side",
    "SolverPolicy",
    "TournamentConfig",
    "TournamentResult",
    "Turn",
    "aplay_game",
    "arun_evaluation",
    "arun_tournament",
    "build_player",
    "format_end",
    "format_move",
    "load_config_file",
    "load_profile",
    "merge_profiles",
    "parse_setting",
    "plan_run",
    "play_episode",
    "play_game",
    "play_hint",
    "profile_fields",
    "resolve_structured_output",
    "run_challenging",
    "run_evaluation",
    "run_tournament",
]

# What a run writes now lives in `metanim.records`.
__getattr__ = deprecated_aliases(
    __name__,
    {
        "EpisodeRecord": ("metanim.records.EpisodeRecord", metanim.records.EpisodeRecord),
        "MoveRecord": ("metanim.records.MoveRecord", metanim.records.MoveRecord),
        "render_report": ("metanim.records.render_summary", metanim.records.render_summary),
        "summarize": (
            "metanim.records.summarize_tournament",
            metanim.records.summarize_tournament,
        ),
    },
)
