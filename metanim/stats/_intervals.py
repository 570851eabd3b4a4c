"""Intervals and paired tests for win rates, accuracies and paired comparisons.

The statistical unit is the item for decision accuracy (repeats of one item are
aggregated before any interval or paired test) and the episode for win rates. No interval
here is zero-width: Wilson's for rates, Wilson on the effective number of items for
accuracy, Tango's score interval for paired differences (the bootstrap only where paired
differences vary). Distribution functions come from `scipy.special` (the t quantile, the
binomial tail); the intervals are closed forms or monotone root searches over them.
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
    p = successes / n
    low, high = _wilson_bounds(p, n, level)
    return Interval(estimate=p, low=low, high=high, level=level)


def t_quantile(p: float, df: int) -> float:
    """Quantile of Student's t distribution (`scipy.special.stdtrit`)."""
    if df < 1:
        raise ValueError("df must be >= 1")
    from scipy import special  # here: scipy costs ~1 s to import, and most runs never ask

    return float(special.stdtrit(df, p))


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
    """Two-sided p-value of k successes in n fair coin flips: 2·min tail, capped at 1
    (the binomial CDF from `scipy.special.bdtr`)."""
    if n == 0:
        return 1.0
    from scipy import special  # here: scipy costs ~1 s to import, and most runs never ask

    return min(1.0, 2 * float(special.bdtr(min(k, n - k), n, 0.5)))


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
    tests/records/test_stats_items.py.)

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
    # At p = 0 (p = 1) the bound is exactly 0 (1); say so rather than leave rounding dust.
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


def tango_interval(only_a: float, only_b: float, n: int, level: float = 0.95) -> Interval:
    """Tango's (1998) score interval for p_A − p_B from n paired outcomes.

    `only_a` pairs have A right and B wrong, `only_b` the reverse; the rest agree. The
    bounds are the differences δ where the score statistic
    Z(δ) = (only_a − only_b − nδ) / sqrt(n·(2q̃ + δ(1 − δ))) reaches ∓z, q̃ the maximum
    likelihood P(only B) given δ. Unlike a bootstrap it does not collapse when no pair
    disagrees (0 of 40 discordant gives ±0.088), and it stays in [−1, 1]. Fractional
    counts (per-item shares of repeats) are accepted: their variance is at most the
    binary one, so the interval stays conservative.
    """
    if n <= 0:
        return Interval(estimate=0.0, low=-1.0, high=1.0, level=level)
    if min(only_a, only_b) < 0 or only_a + only_b > n:
        raise ValueError(f"need 0 <= only_a + only_b <= n, got {only_a}, {only_b} of {n}")
    b, c = float(only_a), float(only_b)
    z = _z(level)
    estimate = (b - c) / n

    def score(delta: float) -> float:
        # The constrained MLE of P(only B): the positive root of
        # 2n q² − ((b + c) + (b − c − 2n)δ) q − cδ(1 − δ) = 0.
        half_b = (b + c) + (b - c - 2 * n) * delta
        q = half_b + math.sqrt(max(half_b * half_b + 8 * n * c * delta * (1 - delta), 0.0))
        q /= 4 * n
        var = n * (2 * q + delta * (1 - delta))
        num = b - c - n * delta
        if var <= 0:
            return 0.0 if num == 0 else math.copysign(math.inf, num)
        return num / math.sqrt(var)

    def bound(target: float, lo: float, hi: float) -> float:
        # Z decreases in δ: bisect for Z(δ) = target between lo and hi.
        if (score(lo) - target) * (score(hi) - target) > 0:
            return lo if abs(score(lo) - target) < abs(score(hi) - target) else hi
        for _ in range(100):
            mid = (lo + hi) / 2
            if score(mid) > target:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    low = -1.0 if score(-1.0) <= z else bound(z, -1.0, estimate)
    high = 1.0 if score(1.0) >= -z else bound(-z, estimate, 1.0)
    return Interval(estimate=estimate, low=low, high=high, level=level)


def paired_item_difference(
    a: Mapping[Hashable, Sequence[bool]],
    b: Mapping[Hashable, Sequence[bool]],
    level: float = 0.95,
) -> Interval:
    """CI of accuracy(A) − accuracy(B) over the items both methods answered.

    Each item contributes its share of correct repeats under A and under B (its repeats
    stay together, the item is the unit); Tango's interval takes the per-item differences
    as discordance (an item A gets right 3 of 4 times and B 1 of 4 counts 0.5 towards
    "only A"), exact for one repeat and conservative for more. It never collapses, even
    when no item differs.
    """
    keys = [k for k in a if k in b and len(a[k]) and len(b[k])]
    if not keys:
        raise ValueError("paired_item_difference needs at least one item both methods answered")
    diff = np.array([float(np.mean(a[k])) - float(np.mean(b[k])) for k in keys])
    return tango_interval(
        float(diff[diff > 0].sum()), float(-diff[diff < 0].sum()), len(keys), level
    )


def paired_episode_difference(
    a: Sequence[bool], b: Sequence[bool], level: float = 0.95
) -> Interval:
    """CI of win rate(A) − win rate(B) for two methods played on the same episode seeds.

    Episode k of A and episode k of B share a start (and a seat), so they are a pair:
    Tango's score interval on the discordant pairs.
    """
    if len(a) != len(b):
        raise ValueError(f"paired episodes need equal lengths, got {len(a)} and {len(b)}")
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    return tango_interval(only_a, only_b, len(a), level)
