"""The statistics of `metanim.stats` against scipy and textbook values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metanim.stats import (
    bootstrap_ci,
    mcnemar_exact,
    mean_ci,
    newcombe_difference,
    t_quantile,
    wilson_interval,
)

scipy_stats = pytest.importorskip("scipy.stats")


def test_wilson_textbook_values():
    # Newcombe (1998), Table I: 81/263 -> 0.2553 to 0.3662; 15/148 -> 0.0624 to 0.1605.
    ci = wilson_interval(81, 263)
    assert (round(ci.low, 4), round(ci.high, 4)) == (0.2553, 0.3662)
    ci = wilson_interval(15, 148)
    assert (round(ci.low, 4), round(ci.high, 4)) == (0.0624, 0.1605)
    assert wilson_interval(0, 10).low == 0.0 and wilson_interval(10, 10).high == 1.0
    assert wilson_interval(0, 0).high == 1.0


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 500), frac=st.floats(0, 1), level=st.sampled_from([0.9, 0.95, 0.99]))
def test_wilson_matches_scipy(n, frac, level):
    k = round(frac * n)
    ours = wilson_interval(k, n, level)
    ref = scipy_stats.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    assert ours.low == pytest.approx(ref.low, abs=1e-9)
    assert ours.high == pytest.approx(ref.high, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(df=st.integers(1, 200), p=st.floats(0.5, 0.9995))
def test_t_quantile_matches_scipy(df, p):
    assert t_quantile(p, df) == pytest.approx(scipy_stats.t.ppf(p, df), rel=1e-7, abs=1e-9)


def test_mean_ci_matches_scipy():
    values = [62.5, 70.0, 65.0, 72.5, 60.0]
    s = mean_ci(values)
    low, high = scipy_stats.t.interval(
        0.95, len(values) - 1, loc=np.mean(values), scale=scipy_stats.sem(values)
    )
    assert s.mean == pytest.approx(66.0)
    assert s.std == pytest.approx(np.std(values, ddof=1))
    assert (s.low, s.high) == (pytest.approx(low), pytest.approx(high))
    one = mean_ci([0.4])
    assert (one.low, one.high, one.std) == (0.4, 0.4, 0.0)


def test_bootstrap_is_seeded_and_covers_the_mean():
    data = np.random.default_rng(1).normal(3.0, 1.0, size=200)
    a = bootstrap_ci(data, seed=5)
    assert a == bootstrap_ci(data, seed=5)
    assert a.low < data.mean() < a.high
    # Close to the normal-theory interval for a mean of 200 draws.
    half = 1.96 * data.std(ddof=1) / math.sqrt(200)
    assert a.high - a.low == pytest.approx(2 * half, rel=0.2)
    ref = scipy_stats.bootstrap(
        (data,), np.mean, n_resamples=2000, method="percentile", random_state=0
    )
    assert a.low == pytest.approx(ref.confidence_interval.low, abs=0.05)


@settings(max_examples=60, deadline=None)
@given(pairs=st.lists(st.tuples(st.booleans(), st.booleans()), max_size=60))
def test_mcnemar_exact_matches_scipy_binomtest(pairs):
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    result = mcnemar_exact(a, b)
    n = result.only_a + result.only_b
    expected = 1.0 if n == 0 else scipy_stats.binomtest(result.only_a, n, 0.5).pvalue
    assert result.p_value == pytest.approx(expected, rel=1e-9)


def test_mcnemar_textbook_value():
    # 1 vs 6 discordant pairs: p = 2 * (1 + 7) / 128 = 0.125.
    result = mcnemar_exact([True] * 1 + [False] * 6, [False] * 1 + [True] * 6)
    assert result.p_value == pytest.approx(0.125)


def test_newcombe_difference_textbook_value():
    # Newcombe (1998) Table II, example (a): 56/70 - 48/80 -> 0.0524 to 0.3339.
    ci = newcombe_difference(56, 70, 48, 80)
    assert (round(ci.low, 4), round(ci.high, 4)) == (0.0524, 0.3339)


def test_stats() -> None:
    ci = wilson_interval(8, 10)
    assert 0.49 < ci.low < 0.5 and 0.94 < ci.high < 0.95  # Wilson (1927), z = 1.96
    assert (wilson_interval(0, 0).low, wilson_interval(0, 0).high) == (0.0, 1.0)
    s = mean_ci([0.5, 0.7, 0.6])
    assert s.mean == pytest.approx(0.6) and s.std == pytest.approx(0.1)
    assert s.low == pytest.approx(0.6 - 4.303 * 0.1 / 3**0.5, abs=1e-4)
