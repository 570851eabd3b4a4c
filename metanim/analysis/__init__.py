"""Debate dynamics, reports, plots, the results page and results as dataframes and files
(docs/analysis.md)."""

from __future__ import annotations

import metanim.stats
from metanim.analysis.debate import (
    DebateTrace,
    EntrenchmentRow,
    Rate,
    agent_accuracy,
    answer_distribution,
    any_correct_rate,
    conformity_by_peers,
    conformity_obstinacy,
    dominant_action,
    entrenchment_curve,
    entrenchment_fit,
    entrenchment_fit_rows,
    entrenchment_points,
    entrenchment_row,
    entrenchment_steps,
    error_correction_rate,
    identity_bias_ci,
    identity_bias_coefficient,
    majority_accuracy,
    mixed_rate,
    negative_persuasion_rate,
    outcome_breakdown,
    subversion_correction,
)
from metanim.analysis.frames import calls_df, decisions_df, episodes_df, export
from metanim.analysis.ratings import Ratings, rate, rate_results
from metanim.analysis.report import Report, render_report, trace_from_decision
from metanim.util import deprecated_aliases

__all__ = [
    "DebateTrace",
    "EntrenchmentRow",
    "Rate",
    "Ratings",
    "Report",
    "agent_accuracy",
    "answer_distribution",
    "any_correct_rate",
    "calls_df",
    "conformity_by_peers",
    "conformity_obstinacy",
    "decisions_df",
    "dominant_action",
    "entrenchment_curve",
    "entrenchment_fit",
    "entrenchment_fit_rows",
    "entrenchment_points",
    "entrenchment_row",
    "entrenchment_steps",
    "episodes_df",
    "error_correction_rate",
    "export",
    "identity_bias_ci",
    "identity_bias_coefficient",
    "majority_accuracy",
    "mixed_rate",
    "negative_persuasion_rate",
    "outcome_breakdown",
    "rate",
    "rate_results",
    "render_report",
    "subversion_correction",
    "trace_from_decision",
]

#: The statistics live in `metanim.stats`, below every layer.
__getattr__ = deprecated_aliases(
    __name__,
    {
        name: (f"metanim.stats.{name}", getattr(metanim.stats, name))
        for name in (
            "MAJORITY_RULE", "AccuracySummary", "Interval", "Summary", "bootstrap_ci",
            "item_accuracy", "majority_verdict", "mcnemar_exact", "mcnemar_items", "mean_ci",
            "newcombe_difference", "paired_episode_difference", "paired_item_difference",
            "wilson_interval",
        )
    },
)  # fmt: skip
