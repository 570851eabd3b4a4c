"""The arena's two statistics, from `metanim.analysis.stats` (the project's one home for them)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from metanim.analysis.stats import mean_ci, wilson_interval


def wilson(successes: int, n: int) -> tuple[float, float]:
    """95% Wilson score interval of a proportion; (0, 1) when n = 0."""
    interval = wilson_interval(successes, n)
    return interval.low, interval.high


def mean_std_ci(values: Sequence[float]) -> tuple[float, float, float, float]:
    """Mean, sample std and 95% t interval of the mean; NaNs when there is no value.

    With one value the spread cannot be estimated: std 0 and an interval of NaN (not the
    point, which would look like certainty).
    """
    if not values:
        return math.nan, math.nan, math.nan, math.nan
    s = mean_ci(values)
    if s.n == 1:
        return s.mean, math.nan, math.nan, math.nan
    return s.mean, s.std, s.low, s.high
