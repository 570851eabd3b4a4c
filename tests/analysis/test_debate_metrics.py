"""Seed-faithful debate metrics on hand-computed traces (seeds 000, 001, 003)."""

from __future__ import annotations

import pytest

from metanim.analysis.debate import (
    DebateTrace,
    agent_accuracy,
    conformity_by_peers,
    conformity_obstinacy,
    dominant_action,
    entrenchment_curve,
    entrenchment_fit_rows,
    entrenchment_row,
    identity_bias_ci,
    majority_accuracy,
    majority_answer,
    mixed_rate,
    negative_persuasion_rate,
    outcome_breakdown,
)


def _pair(a, b, correct="x"):
    return DebateTrace(agents=["A", "B"], answers=[a, b], correct=correct)


def test_majority_ties_are_not_the_first_agents():
    assert majority_answer(["y", "x"]) is None
    assert majority_answer(["x", "y", "y"]) == "y"
    assert majority_answer([None, "x"]) == "x"
    # Whichever agent answered first, a 1-1 split is not a majority.
    assert majority_accuracy([_pair(["x"], ["y"])]).hits == 0
    assert majority_accuracy([_pair(["y"], ["x"])]).hits == 0


def test_negative_persuasion_keeps_mixed_debates_apart():
    three = DebateTrace(
        agents=["A", "B", "C"],
        answers=[["x", "y"], ["y", "x"], ["y", "y"]],  # A persuaded, B corrected: mixed
        correct="x",
    )
    np_only = _pair(["x", "y"], ["y", "y"])
    traces = [three, np_only, _pair(["x", "x"], ["x", "x"])]
    assert (negative_persuasion_rate(traces).hits, negative_persuasion_rate(traces).n) == (1, 3)
    assert mixed_rate(traces).hits == 1
    assert outcome_breakdown(traces)["mixed correction + persuasion"] == 1


def test_each_model_graded_before_and_after():
    traces = [
        DebateTrace(agents=["m1", "m2"], answers=[["x", "x"], ["y", "x"]], correct="x"),
        DebateTrace(agents=["m1", "m2"], answers=[["y", "y"], ["y", "x"]], correct="x"),
    ]
    acc = agent_accuracy(traces)
    assert [(r.hits, r.n) for r in acc["m1"]] == [(1, 2), (1, 2)]
    assert [(r.hits, r.n) for r in acc["m2"]] == [(0, 2), (2, 2)]


def test_entrenchment_row_uses_the_dominant_action_and_full_rounds():
    samples = ["3"] * 14 + ["1"] * 6  # p0(3) = 0.7, strongly consistent, wrong (optimal 1)
    debate = DebateTrace(agents=["a", "b"], answers=[["3", "3", "3", "3"], ["1", "3", "3", "3"]], correct="1")  # fmt: skip
    other = DebateTrace(agents=["a", "b"], answers=[["1", "1", "1", "1"], ["3", "3", "1", "1"]], correct="1")  # fmt: skip
    row = entrenchment_row("s", samples, [debate, other], "1")
    assert row is not None and row.action == "3" and row.belief == "wrong"
    assert row.steps == 3 and row.p0 == pytest.approx(0.7) and row.pt == pytest.approx(0.5)
    expected = entrenchment_curve(0.7, 3)[-1]  # 0.7 -> 0.784 -> ... by Eq. 1
    p = 0.7
    for _ in range(3):
        p = p * p + 2 * p * (1 - p) * 0.7
    assert expected == pytest.approx(p)
    assert row.residual == pytest.approx(0.5 - p)
    # Two-answer states no longer give a residual of exactly 0: only the dominant action fits.
    fit = entrenchment_fit_rows([row])
    assert fit.mean_residual == pytest.approx(0.5 - p) and fit.mean_residual != 0
    assert dominant_action(["1"] * 10 + ["3"] * 10) is None
    assert entrenchment_row("s", ["1"] * 10 + ["3"] * 10, [debate], "1") is None


def test_conformity_conditioned_on_peer_counts():
    # A (x) faces B (y) and C (y): n_D = 2, n_A = 0, A conforms to y.
    # B faces A (x, disagrees) and C (y, agrees): n_D = 1, n_A = 1, B stays.
    # C is like B: stays.
    t = DebateTrace(
        agents=["A", "B", "C"], answers=[["x", "y"], ["y", "y"], ["y", "y"]], correct="x"
    )
    by = conformity_by_peers([t])
    assert set(by) == {(2, 0), (1, 1)}
    assert (by[(2, 0)].conformity.hits, by[(2, 0)].conformity.n) == (1, 1)
    assert (by[(1, 1)].obstinacy.hits, by[(1, 1)].obstinacy.n) == (2, 2)
    pooled = conformity_obstinacy([t])
    assert pooled.conformity.n == sum(b.conformity.n for b in by.values())


def test_ibc_interval_resamples_debates():
    vanilla = [_pair(["x", "y"], ["y", "x"])] * 30 + [_pair(["x", "x"], ["y", "y"])] * 10
    anonymized = [_pair(["x", "x"], ["y", "y"])] * 30 + [_pair(["x", "y"], ["y", "x"])] * 10
    ci = identity_bias_ci(vanilla, anonymized, seed=1)
    # vanilla: 60 conform / 20 stay of 80 -> +0.5; anonymized: 20 / 60 -> -0.5; IBC = 1.0.
    assert ci.estimate == pytest.approx(1.0)
    assert ci.low < 1.0 < ci.high and ci.low > 0
    same = identity_bias_ci(vanilla, vanilla, seed=1)
    assert same.estimate == 0 and same.low < 0 < same.high


def test_early_stopped_debates_pad_to_rounds_plus_one():
    from metanim.agents import Decision
    from metanim.analysis.report import trace_from_decision
    from metanim.records import DecisionRecord

    def record(rounds: list[dict[str, str]]) -> DecisionRecord:
        decision = Decision(
            method="mad", params={"rounds": 3}, task={}, seed=0, status="ok", rounds=rounds
        )
        return DecisionRecord(
            id="d", record_id="r", game="nim", status="ok", correct=True, optimal_move="2",
            decision=decision,
        )  # fmt: skip

    stopped = record([{"agent_1": "2", "agent_2": "2"}])
    full = record([{"agent_1": "1", "agent_2": "2"}] + [{"agent_1": "2", "agent_2": "2"}] * 3)
    a, b = trace_from_decision(stopped), trace_from_decision(full)
    assert a is not None and b is not None
    assert a.rounds == b.rounds == 4  # round 0 plus 3 updates, stopped or not
    assert a.answers[0] == ["2"] * 4
    from metanim.analysis.debate import entrenchment_steps

    assert entrenchment_steps([a, b]) == 3
