"""Debate metrics on hand-built traces: entrenchment, conformity, identity bias, subversion
and correction, outcome breakdowns."""

from __future__ import annotations

import pytest

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
