"""Statistics against scipy and textbook values; debate metrics on hand-built traces."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metanim.analysis.debate import (
    DebateTrace,
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
from metanim.stats import (
    bootstrap_ci,
    mcnemar_exact,
    mean_ci,
    newcombe_difference,
    t_quantile,
    wilson_interval,
)

scipy_stats = pytest.importorskip("scipy.stats")


# ------------------------------------------------------------------------ stats
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


# ------------------------------------------------------------ belief entrenchment
def test_entrenchment_curve_eq1():
    curve = entrenchment_curve(0.6, rounds=3)
    p1 = 0.36 + 2 * 0.6 * 0.4 * 0.6
    assert curve[:2] == [0.6, pytest.approx(p1)]
    assert curve[2] == pytest.approx(p1 * p1 + 2 * p1 * (1 - p1) * 0.6)
    # Strongly consistent beliefs are amplified, weak ones shrink; 0.5 is a fixed point.
    assert entrenchment_curve(0.7)[-1] > 0.7 and entrenchment_curve(0.3)[-1] < 0.3
    assert entrenchment_curve(0.5)[-1] == pytest.approx(0.5)


def test_entrenchment_fit_residuals():
    fit = entrenchment_fit([(0.7, 0.9), (0.2, 0.05)], rounds=3)
    pred = [entrenchment_curve(0.7)[-1], entrenchment_curve(0.2)[-1]]
    assert fit.predicted == pytest.approx(pred)
    assert fit.mean_residual == pytest.approx(((0.9 - pred[0]) + (0.05 - pred[1])) / 2)
    assert (fit.strong_rose.hits, fit.strong_rose.n) == (1, 1)


def test_entrenchment_steps_come_from_the_traces():
    # Round 0 plus two update rounds: p(2), compared with a 2-step curve, not the default 3.
    two = DebateTrace(agents=["a", "b"], answers=[["3", "3", "3"], ["1", "3", "3"]], correct="1")
    assert entrenchment_steps([two, two]) == 2
    fit = entrenchment_fit([(0.7, 0.9)], traces=[two])
    assert fit.rounds == 2
    assert fit.predicted == pytest.approx([entrenchment_curve(0.7, 2)[-1]])
    assert entrenchment_fit([(0.7, 0.9)], traces=[two], round=1).rounds == 1
    three = DebateTrace(agents=["a"], answers=[["3", "3", "3", "3"]], correct="1")
    assert entrenchment_fit([(0.7, 0.9)], traces=[three]).rounds == 3
    with pytest.raises(ValueError, match="different debate steps"):
        entrenchment_steps([two, three])
    with pytest.raises(ValueError, match="rounds=3"):
        entrenchment_fit([(0.7, 0.9)], 3, traces=[two])


def test_entrenchment_points_from_samples_and_debates():
    samples = ["3"] * 14 + ["1"] * 6
    trace = DebateTrace(agents=["a", "b"], answers=[["3", "3"], ["1", "3"]], correct="1")
    points = dict(entrenchment_points(samples, [trace, trace]))
    assert points == {0.7: 1.0, 0.3: 0.0}


# ------------------------------------------------------------------ identity bias
def _pair(a: list[str], b: list[str], correct: str = "x", anonymized: bool = False) -> DebateTrace:
    return DebateTrace(agents=["A", "B"], answers=[a, b], correct=correct, anonymized=anonymized)


def test_conformity_obstinacy_single_peer():
    traces = [
        _pair(["x", "y"], ["y", "y"]),  # A conforms, B stays: A conf, B obst
        _pair(["x", "x"], ["y", "y"]),  # both obstinate
        _pair(["x", "x"], ["x", "x"]),  # agreement: not counted
    ]
    bias = conformity_obstinacy(traces)
    assert (bias.conformity.hits, bias.obstinacy.hits, bias.conformity.n) == (1, 3, 4)
    assert bias.gap == pytest.approx(1 / 4 - 3 / 4)


def test_identity_bias_coefficient():
    vanilla = [_pair(["x", "y"], ["y", "x"])]  # both conform: gap 1
    anonymized = [_pair(["x", "x"], ["y", "x"])]  # A obstinate, B conforms: gap 0
    assert identity_bias_coefficient(vanilla, anonymized) == pytest.approx(1.0)


def test_peers_restrict_who_counts():
    trace = DebateTrace(
        agents=["A", "B", "C"],
        answers=[["x", "z"], ["x", "x"], ["z", "z"]],
        correct="x",
        peers={"A": ["B"], "B": ["A"], "C": ["A"]},
    )
    # A only sees B, who agreed: no disagreement for A. C saw A (x) and stayed: obstinate.
    bias = conformity_obstinacy([trace])
    assert (bias.conformity.hits, bias.obstinacy.hits, bias.conformity.n) == (0, 1, 1)


def test_subversion_and_correction():
    traces = [
        _pair(["x", "y"], ["y", "y"]),  # A subverted; B (wrong, peer right) not corrected
        _pair(["y", "x"], ["x", "x"]),  # A corrected; B (right, peer wrong) holds
    ]
    rates = subversion_correction(traces)
    assert (rates["subversion"].hits, rates["subversion"].n) == (1, 2)
    assert (rates["correction"].hits, rates["correction"].n) == (1, 2)


# --------------------------------------------------------------- debate outcomes
def test_outcome_breakdown_and_rates():
    traces = [
        _pair(["x", "x"], ["x", "x"]),  # stay correct
        _pair(["y", "y"], ["z", "z"]),  # stay wrong
        _pair(["y", "x"], ["z", "z"]),  # error correction (all wrong -> one right)
        _pair(["x", "y"], ["y", "y"]),  # negative persuasion
        _pair(["x", "x"], ["y", "x"]),  # positive correction
    ]
    counts = outcome_breakdown(traces)
    assert counts["all correct, stay correct"] == 1
    assert counts["all wrong, stay wrong"] == 1
    assert counts["error correction"] == 1
    assert counts["negative persuasion"] == 1
    assert counts["positive correction"] == 1
    assert sum(counts.values()) == len(traces)
    assert (error_correction_rate(traces).hits, error_correction_rate(traces).n) == (1, 2)
    assert (negative_persuasion_rate(traces).hits, negative_persuasion_rate(traces).n) == (1, 5)
    assert any_correct_rate(traces).hits == 3
    assert any_correct_rate(traces, round=0).hits == 3
    assert majority_accuracy(traces).hits == 2  # the x-z tie is no majority: wrong, not agent 1


def test_trace_validation():
    with pytest.raises(ValueError):
        DebateTrace(agents=["A", "B"], answers=[["x"]], correct="x")
    with pytest.raises(ValueError):
        DebateTrace(agents=["A"], answers=[["x"]], correct="x", peers={"A": ["Z"]})
