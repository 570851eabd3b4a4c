"""Pure statistics: intervals, paired tests, the bootstrap, tests against chance and the
Bradley–Terry fit of the ratings.

No module here imports the rest of metanim (an import-linter contract holds it): these
are functions of counts and verdicts, checked against scipy and closed forms in the
tests, and every layer above may use them. The statistical unit is the item for decision
accuracy (repeats of one item aggregated before any interval or paired test) and the
episode for win rates (docs/analysis.md, "Statistical units").
"""

from metanim.stats._chance import ALPHA, chance_test, item_outcomes, majority_chance
from metanim.stats._intervals import (
    MAJORITY_RULE,
    AccuracySummary,
    Interval,
    McNemarResult,
    Summary,
    binom_two_sided,
    bootstrap_ci,
    item_accuracy,
    majority_verdict,
    mcnemar_exact,
    mcnemar_items,
    mean_ci,
    newcombe_difference,
    paired_episode_difference,
    paired_item_difference,
    t_quantile,
    tango_interval,
    wilson_interval,
)
from metanim.stats._ratings import PRIOR_SIGMA, fit_bradley_terry

__all__ = [
    "ALPHA",
    "MAJORITY_RULE",
    "PRIOR_SIGMA",
    "AccuracySummary",
    "Interval",
    "McNemarResult",
    "Summary",
    "binom_two_sided",
    "bootstrap_ci",
    "chance_test",
    "fit_bradley_terry",
    "item_accuracy",
    "item_outcomes",
    "majority_chance",
    "majority_verdict",
    "mcnemar_exact",
    "mcnemar_items",
    "mean_ci",
    "newcombe_difference",
    "paired_episode_difference",
    "paired_item_difference",
    "t_quantile",
    "tango_interval",
    "wilson_interval",
]
