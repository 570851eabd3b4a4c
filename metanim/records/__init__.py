"""What a run writes and analysis reads: records, logs, run identities and summaries.

The arena writes these (one `EpisodeRecord` line per episode, one `DecisionRecord` line
per evaluated item, a summary beside each log); `metanim.analysis` reads them back, typed.
The statistics they use live below, in `metanim.stats`.
"""

import metanim.stats
from metanim.records._episode import (
    Actor,
    EndReason,
    EpisodeRecord,
    EpisodeStatus,
    MoveRecord,
    Seat,
    SideTotals,
)
from metanim.records._identity import (
    AMOUNT_ONLY,
    NOT_IDENTITY,
    RUN_SETTINGS,
    SIDES,
    config_identity,
    current_prompt_versions,
    distinguishing_labels,
    identity_hash,
    identity_label,
    log_identity,
    run_identity,
    side_servers,
    uses_prompts,
)
from metanim.records._log import (
    AppendLog,
    LogLockedError,
    RunLock,
    iter_logs,
    iter_records,
    latest_by_id,
    log_kind,
    read_records,
    run_config,
)
from metanim.records._summary import (
    RESULT_STATUSES,
    VERDICTS,
    EvaluationTally,
    TournamentTally,
    game_key,
    md,
    pct,
    render_summary,
    signed,
    std_text,
    summarize_evaluation,
    summarize_tournament,
    text_table,
)
from metanim.util import deprecated_aliases

__all__ = [
    "AMOUNT_ONLY",
    "NOT_IDENTITY",
    "RESULT_STATUSES",
    "RUN_SETTINGS",
    "SIDES",
    "VERDICTS",
    "Actor",
    "AppendLog",
    "EndReason",
    "EpisodeRecord",
    "EpisodeStatus",
    "EvaluationTally",
    "LogLockedError",
    "MoveRecord",
    "RunLock",
    "Seat",
    "SideTotals",
    "TournamentTally",
    "config_identity",
    "current_prompt_versions",
    "distinguishing_labels",
    "game_key",
    "identity_hash",
    "identity_label",
    "iter_logs",
    "iter_records",
    "latest_by_id",
    "log_identity",
    "log_kind",
    "md",
    "pct",
    "read_records",
    "render_summary",
    "run_config",
    "run_identity",
    "side_servers",
    "signed",
    "std_text",
    "summarize_evaluation",
    "summarize_tournament",
    "text_table",
    "uses_prompts",
]

#: The statistics live in `metanim.stats`, below every layer; the old names still answer.
__getattr__ = deprecated_aliases(
    __name__,
    {name: (f"metanim.stats.{name}", getattr(metanim.stats, name)) for name in (
        "MAJORITY_RULE", "AccuracySummary", "Interval", "McNemarResult", "Summary",
        "binom_two_sided", "bootstrap_ci", "item_accuracy", "majority_verdict",
        "mcnemar_exact", "mcnemar_items", "mean_ci", "newcombe_difference",
        "paired_episode_difference", "paired_item_difference", "t_quantile",
        "tango_interval", "wilson_interval",
    )},
)  # fmt: skip
