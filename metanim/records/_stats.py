"""Small, dependency-free statistics for win rates, accuracies and paired comparisons.

The statistical unit is the item for decision accuracy (repeats of one item are
aggregated before any interval or paired test) and the episode for win rates.
Only numpy and the standard library: scipy is a test-time dependency, and the tests
check every function here against scipy (or textbook values).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from statistics import NormalDist

import numpy as np
from pydantic import BaseModel, ConfigDict


class Interval(BaseModel):
    """A point estimate with a two-sided confidence interval."""

    model_config = ConfigDict(frozen=True)

    estimate: float
    low: float
    high: float
    level: float = 0.95

    def as_percent(self, digits: int = 1) -> str:
        return (
            f"{100 * self.estimate:.{digits}f} "
            f"[{100 * self.low:.{digits}f}, {100 * self.high:.{digits}f}]"
        )


class Summary(BaseModel):
    """Mean, sample standard deviation and a t-based confidence interval of the mean."""

    model_config = ConfigDict(frozen=True)

    n: int
    mean: float
    std: float
    low: float
    high: float
    level: float = 0.95


def _z(level: float) -> float:
    return NormalDist().inv_cdf(0.5 + level / 2)


def wilson_interval(successes: int, n: int, level: float = 0.95) -> Interval:
    """Wilson score interval of a binomial proportion (Wilson 1927).

    Unlike the Wald interval it stays inside [0, 1] and keeps its coverage at
    small n and at rates near 0 or 1, which is where win rates of 50 episodes live.
    With n = 0 the interval is the whole [0, 1] around an estimate of 0.
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return Interval(estimate=0.0, low=0.0, high=1.0, level=level)
    z = _z(level)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # At k = 0 (k = n) the bound is exactly 0 (1); say so rather than leave rounding dust.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Interval(estimate=p, low=low, high=high, level=level)


def t_quantile(p: float, df: int) -> float:
    """Quantile of Student's t distribution (bisection on the regularized incomplete beta)."""
    if df < 1:
        raise ValueError("df must be >= 1")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1 - p, df)
    lo, hi = 0.0, 1.0
    while _t_cdf(hi, df) < p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if _t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _t_cdf(t: float, df: int) -> float:
    # P(T > |t|) = I_x(df/2, 1/2) / 2 with x = df / (df + t²); near t = 0 use the
    # complement y = t² / (df + t²) directly, since 1 - x would lose every digit.
    t2 = t * t
    if t2 < df:
        tail = 0.5 * (1.0 - _betainc(0.5, df / 2, t2 / (df + t2)))
    else:
        tail = 0.5 * _betainc(df / 2, 0.5, df / (df + t2))
    return 1 - tail if t >= 0 else tail


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b) by Lentz's continued fraction (Numerical Recipes 6.4)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _betainc(b, a, 1 - x)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return math.exp(log_front) * f / a


def mean_ci(values: Sequence[float], level: float = 0.95) -> Summary:
    """Mean, sample std (ddof=1) and the t-based CI mean ± t_{n-1} · std/√n.

    Used for decision accuracy over R repeated runs; with one value the interval
    collapses to the point (no spread can be estimated).
    """
    data = np.asarray(values, dtype=float)
    n = int(data.size)
    if n == 0:
        raise ValueError("mean_ci needs at least one value")
    mean = float(data.mean())
    if n == 1:
        return Summary(n=1, mean=mean, std=0.0, low=mean, high=mean, level=level)
    std = float(data.std(ddof=1))
    half = t_quantile(0.5 + level / 2, n - 1) * std / math.sqrt(n)
    return Summary(n=n, mean=mean, std=std, low=mean - half, high=mean + half, level=level)


def bootstrap_ci(
    values: Sequence[float],
    statistic: Callable[[np.ndarray], float] = np.mean,
    *,
    resamples: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap CI of `statistic` (1,000 resamples by default, as in seed 001).

    Seeded, so a report renders the same interval every time.
    """
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise ValueError("bootstrap_ci needs at least one value")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, data.size, size=(resamples, data.size))
    stats = np.array([statistic(data[row]) for row in idx])
    alpha = (1 - level) / 2
    low, high = np.quantile(stats, [alpha, 1 - alpha])
    return Interval(estimate=float(statistic(data)), low=float(low), high=float(high), level=level)


class McNemarResult(BaseModel):
    """McNemar's exact test of paired binary outcomes (e.g. two methods on one dataset)."""

    model_config = ConfigDict(frozen=True)

    only_a: int  # discordant pairs: A right, B wrong
    only_b: int  # discordant pairs: A wrong, B right
    p_value: float


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> McNemarResult:
    """Two-sided exact McNemar test: under H0 the discordant pairs split Binomial(n, 1/2).

    The exact binomial form (not the chi-square approximation) because datasets of
    11-20 items give a handful of discordant pairs.
    """
    if len(a) != len(b):
        raise ValueError("paired outcomes must have the same length")
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    return McNemarResult(
        only_a=only_a, only_b=only_b, p_value=binom_two_sided(only_a, only_a + only_b)
    )


def binom_two_sided(k: int, n: int) -> float:
    """Two-sided p-value of k successes in n fair coin flips: 2·min tail, capped at 1."""
    if n == 0:
        return 1.0
    m = min(k, n - k)
    tail = sum(math.comb(n, i) for i in range(m + 1)) / 2**n
    return min(1.0, 2 * tail)


def newcombe_difference(
    successes_a: int, n_a: int, successes_b: int, n_b: int, level: float = 0.95
) -> Interval:
    """CI of p_a − p_b for independent proportions: Newcombe's hybrid score method
    (method 10 of Newcombe 1998), built from the two Wilson intervals."""
    a = wilson_interval(successes_a, n_a, level)
    b = wilson_interval(successes_b, n_b, level)
    diff = a.estimate - b.estimate
    low = diff - math.sqrt((a.estimate - a.low) ** 2 + (b.high - b.estimate) ** 2)
    high = diff + math.sqrt((a.high - a.estimate) ** 2 + (b.estimate - b.low) ** 2)
    return Interval(estimate=diff, low=low, high=high, level=level)


# ------------------------------------------------------------- the item as the unit
#: What a paired test on items does with repeats: printed under every table that uses it.
MAJORITY_RULE = "one verdict per item: the majority of its repeats; a tie between right and wrong counts as wrong"


def _per_item(verdicts: Mapping[Hashable, Sequence[bool]]) -> np.ndarray:
    """Per-item mean accuracy over that item's repeats (items with no verdict left out)."""
    return np.array([float(np.mean(v)) for v in verdicts.values() if len(v)], dtype=float)


class AccuracySummary(BaseModel):
    """Decision accuracy with the item as the unit.

    `mean ± std` is the paper's summary over the R repeats (std of the R per-repeat
    accuracies; NaN when R = 1); `low`/`high` is a 95% interval over items (see
    `item_accuracy`), which never collapses for a deterministic method.
    """

    model_config = ConfigDict(frozen=True)

    items: int
    repeats: int
    decisions: int
    mean: float
    std: float
    low: float
    high: float
    effective_n: float
    level: float = 0.95


def item_accuracy(
    verdicts: Mapping[Hashable, Sequence[bool]],
    repeat_of: Mapping[Hashable, Sequence[int]] | None = None,
    level: float = 0.95,
) -> AccuracySummary:
    """Accuracy over items, each item judged on all of its repeats together.

    The point estimate is the mean over items of each item's share of correct repeats
    (equal to the pooled share when every item has R repeats). The interval is Wilson's
    on Kish's effective sample size of those per-item means: n_eff = n·p̂(1−p̂)/s², with
    s² the sample variance (ddof 1) of the per-item means, clipped to [n, n·R]. With R = 1, or a
    deterministic method (every item always right or always wrong), s² ≥ p̂(1−p̂) and this
    is exactly Wilson over the n items; extra repeats of a stochastic method can narrow it
    at most to Wilson over n·R draws. Repeats are never counted as items, and the
    interval is never zero-width. (A percentile bootstrap over items undercovers badly at
    11-20 items near 90% accuracy; this interval keeps 91-99% there, see
    tests/test_stats_items.py.)

    Args:
        verdicts: item id -> the item's verdicts, one per repeat (True = correct).
        repeat_of: item id -> the repeat index of each verdict, for the per-repeat
            mean ± std; default: the verdict's position.
        level: confidence level.
    """
    items = {k: list(map(bool, v)) for k, v in verdicts.items() if len(v)}
    n = len(items)
    if n == 0:
        raise ValueError("item_accuracy needs at least one item with a verdict")
    per_item = _per_item(items)
    repeats = max(len(v) for v in items.values())
    p = float(per_item.mean())
    spread = float(per_item.var(ddof=1)) if n > 1 else 0.0
    if p in (0.0, 1.0) or spread <= 0.0:
        # No spread to estimate: all right, all wrong, or every item at the same share.
        n_eff = float(n) if p in (0.0, 1.0) else float(n * repeats)
    else:
        n_eff = min(max(n * p * (1 - p) / spread, float(n)), float(n * repeats))
    low, high = _wilson_bounds(p, n_eff, level)
    by_repeat: dict[int, list[bool]] = {}
    for key, vs in items.items():
        idx = list(repeat_of[key]) if repeat_of is not None else list(range(len(vs)))
        for r, v in zip(idx, vs, strict=True):
            by_repeat.setdefault(int(r), []).append(v)
    accs = [float(np.mean(v)) for _, v in sorted(by_repeat.items())]
    std = float(np.std(accs, ddof=1)) if len(accs) > 1 else math.nan
    return AccuracySummary(
        items=n,
        repeats=len(accs),
        decisions=sum(len(v) for v in items.values()),
        mean=p,
        std=std,
        low=low,
        high=high,
        effective_n=n_eff,
        level=level,
    )


def _wilson_bounds(p: float, n: float, level: float) -> tuple[float, float]:
    """Wilson's score bounds for an estimate p on a (possibly fractional) sample size n."""
    z = _z(level)
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if p <= 0 else max(0.0, centre - half)
    high = 1.0 if p >= 1 else min(1.0, centre + half)
    return low, high


def majority_verdict(verdicts: Sequence[bool]) -> bool:
    """One verdict from an item's repeats: right only if most repeats are right (tie = wrong)."""
    right = sum(map(bool, verdicts))
    return 2 * right > len(verdicts)


def mcnemar_items(
    a: Mapping[Hashable, Sequence[bool]], b: Mapping[Hashable, Sequence[bool]]
) -> McNemarResult:
    """McNemar's exact test with one verdict per item (`majority_verdict`, see MAJORITY_RULE).

    Only items both methods answered are paired. Repeats never multiply the pairs: four
    items with three discordant give p = 0.25 whether R is 1 or 5.
    """
    keys = [k for k in a if k in b and len(a[k]) and len(b[k])]
    return mcnemar_exact(
        [majority_verdict(a[k]) for k in keys], [majority_verdict(b[k]) for k in keys]
    )


def paired_item_bootstrap(
    a: Mapping[Hashable, Sequence[bool]],
    b: Mapping[Hashable, Sequence[bool]],
    *,
    resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap CI of accuracy(A) − accuracy(B), resampling shared items.

    Each item contributes its per-item mean accuracy under A and under B (its repeats
    stay together), so the pairing and the unit (the item) are both kept.
    """
    keys = [k for k in a if k in b and len(a[k]) and len(b[k])]
    if not keys:
        raise ValueError("paired_item_bootstrap needs at least one item both methods answered")
    diff = np.array([float(np.mean(a[k])) - float(np.mean(b[k])) for k in keys])
    return bootstrap_ci(diff, resamples=resamples, level=level, seed=seed)


def paired_episode_difference(
    a: Sequence[bool],
    b: Sequence[bool],
    *,
    resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """CI of win rate(A) − win rate(B) for two methods played on the same episode seeds.

    Episode k of A and episode k of B share a start (and a seat), so the pairs are
    resampled together (percentile bootstrap over paired episodes).
    """
    if len(a) != len(b):
        raise ValueError(f"paired episodes need equal lengths, got {len(a)} and {len(b)}")
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    return bootstrap_ci(diff, resamples=resamples, level=level, seed=seed)
