"""The few statistics the arena reports: Wilson interval and mean ± std with a 95% CI.

`metanim.analysis` owns the statistics of the project; these are used only until
it provides them, so the arena never blocks on it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# t quantiles (0.975) for small samples; the normal 1.96 beyond.
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
         9: 2.262, 10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042}  # fmt: skip


def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (Wilson 1927); (0, 1) when n = 0."""
    try:
        from metanim.analysis import wilson_ci  # type: ignore[attr-defined]

        low, high = wilson_ci(successes, n)[:2]
        return float(low), float(high)
    except (ImportError, AttributeError, TypeError):
        pass
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _t975(df: int) -> float:
    if df <= 0:
        return math.nan
    keys = [k for k in _T975 if k <= df]
    return _T975[max(keys)] if df <= 30 else 1.959964


def mean_std_ci(values: Sequence[float]) -> tuple[float, float, float, float]:
    """Mean, sample std and a 95% Student-t confidence interval of the mean."""
    n = len(values)
    if n == 0:
        return math.nan, math.nan, math.nan, math.nan
    mean = sum(values) / n
    if n == 1:
        return mean, 0.0, math.nan, math.nan
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = _t975(n - 1) * std / math.sqrt(n)
    return mean, std, mean - half, mean + half
