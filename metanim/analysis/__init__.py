"""Statistics, debate dynamics, plots and the results report (docs/analysis.md)."""

from __future__ import annotations

from metanim.analysis.debate import (
    DebateTrace,
    Rate,
    answer_distribution,
    any_correct_rate,
    conformity_obstinacy,
    entrenchment_curve,
    entrenchment_fit,
    entrenchment_points,
    entrenchment_steps,
    error_correction_rate,
    identity_bias_coefficient,
    majority_accuracy,
    negative_persuasion_rate,
    outcome_breakdown,
    subversion_correction,
)
from metanim.analysis.report import Report, render_report, trace_from_decision
from metanim.analysis.stats import (
    Interval,
    Summary,
    bootstrap_ci,
    mcnemar_exact,
    mean_ci,
    newcombe_difference,
    wilson_interval,
)

__all__ = [
    "DebateTrace",
    "Interval",
    "Rate",
    "Report",
    "Summary",
    "answer_distribution",
    "any_correct_rate",
    "bootstrap_ci",
    "conformity_obstinacy",
    "entrenchment_curve",
    "entrenchment_fit",
    "entrenchment_points",
    "entrenchment_steps",
    "error_correction_rate",
    "identity_bias_coefficient",
    "majority_accuracy",
    "mcnemar_exact",
    "mean_ci",
    "negative_persuasion_rate",
    "newcombe_difference",
    "outcome_breakdown",
    "render_report",
    "subversion_correction",
    "trace_from_decision",
    "wilson_interval",
]
