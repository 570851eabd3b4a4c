"""Episodes, tournaments and dataset evaluations with resumable JSONL result logs.

`run_tournament(TournamentConfig(...))` plays method against opponent and reports win
rates with Wilson CIs per setting and seat; `run_evaluation(EvaluationConfig(...))`
measures decision accuracy on a critical-state dataset. See docs/arena.md.
"""

from metanim.arena._config import AgentProfile, load_profile
from metanim.arena._policies import MethodPolicy, Policy, SolverPolicy, Turn
from metanim.arena.episodes import EpisodeRecord, MoveRecord, play_episode
from metanim.arena.tournament import (
    TournamentConfig,
    TournamentResult,
    arun_tournament,
    render_report,
    run_tournament,
    summarize,
)

__all__ = [
    "AgentProfile",
    "EpisodeRecord",
    "MethodPolicy",
    "MoveRecord",
    "Policy",
    "SolverPolicy",
    "TournamentConfig",
    "TournamentResult",
    "Turn",
    "arun_tournament",
    "load_profile",
    "play_episode",
    "render_report",
    "run_tournament",
    "summarize",
]
