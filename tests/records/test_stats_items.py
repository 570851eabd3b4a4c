"""The item as the statistical unit: hand-computed cases and a coverage suite.

Coverage: the truth is a simulated model's expected accuracy over an item population;
every seed draws its items (and, for a stochastic model, its samples) from it with
numpy, and the reported 95% interval must cover the truth in 90-99% of the seeds, at
the item counts of the default datasets (11, 18 and 20 items).
"""

from __future__ import annotations

import numpy as np
import pytest

from metanim.stats import (
    item_accuracy,
    majority_verdict,
    mcnemar_items,
    newcombe_difference,
    paired_episode_difference,
    paired_item_difference,
    tango_interval,
)

scipy_stats = pytest.importorskip("scipy.stats")


def _wilson(k: float, n: int) -> tuple[float, float]:
    ci = scipy_stats.binomtest(int(k), n).proportion_ci(0.95, method="wilson")
    return ci.low, ci.high


def _repeat(verdicts: list[bool], r: int) -> dict[int, list[bool]]:
    return {i: [v] * r for i, v in enumerate(verdicts)}


# ------------------------------------------------------------------ reproducers
@pytest.mark.parametrize("repeats", [1, 5])
def test_mcnemar_counts_items_not_repeats(repeats):
    # Four items, three discordant (A right, B wrong): p = 2 * 0.5**3 = 0.25 whatever R.
    a = _repeat([True, True, True, False], repeats)
    b = _repeat([False, False, False, False], repeats)
    test = mcnemar_items(a, b)
    assert (test.only_a, test.only_b) == (3, 0)
    assert test.p_value == pytest.approx(0.25)


@pytest.mark.parametrize("repeats", [1, 5])
def test_deterministic_accuracy_ci_is_wilson_over_items(repeats):
    # 0.25 from 4 items: Wilson(1, 4), never [0.25, 0.25] however many repeats.
    s = item_accuracy(_repeat([True, False, False, False], repeats))
    assert (s.items, s.repeats, s.decisions) == (4, repeats, 4 * repeats)
    assert s.mean == 0.25
    assert (s.low, s.high) == pytest.approx(_wilson(1, 4))
    assert s.high - s.low > 0.5
    if repeats > 1:
        assert s.std == 0.0  # the paper's spread over repeats stays reported as it is
    else:
        assert s.std != s.std  # NaN: no spread from one repeat


def test_all_correct_is_not_zero_width():
    s = item_accuracy(_repeat([True] * 11, 5))
    assert s.mean == 1.0 and s.high == 1.0
    assert s.low == pytest.approx(_wilson(11, 11)[0])
    assert s.low < 0.8


def test_stochastic_effective_sample_size_by_hand():
    # Per-item means 1, .5, .5, 0 (R = 2): p = .5, s2 = (.25+0+0+.25)/3 = 1/6,
    # n_eff = 4 * .25 * 6 = 6 -> Wilson(3, 6).
    v = {"a": [True, True], "b": [True, False], "c": [False, True], "d": [False, False]}
    s = item_accuracy(v)
    assert s.effective_n == pytest.approx(6.0)
    assert (s.low, s.high) == pytest.approx(_wilson(3, 6))
    # Per-repeat accuracies: repeat 0 = 2/4, repeat 1 = 2/4 -> std 0.
    assert s.std == 0.0


def test_effective_n_is_capped_at_items_times_repeats():
    # Every item right in exactly 1 of 2 repeats: no spread between items -> n·R draws.
    v = {i: [i % 2 == 0, i % 2 == 1] for i in range(10)}
    s = item_accuracy(v)
    assert s.effective_n == 20
    assert (s.low, s.high) == pytest.approx(_wilson(10, 20))


def test_majority_rule_ties_are_wrong():
    assert majority_verdict([True, True, False]) is True
    assert majority_verdict([True, False]) is False
    assert majority_verdict([True, False, True, False]) is False
    # A's items right in 2 of 4 repeats are ties -> wrong -> no discordance with B wrong.
    a = {0: [True, False, True, False], 1: [True, True, True, False]}
    b = {0: [False] * 4, 1: [False] * 4}
    assert (mcnemar_items(a, b).only_a, mcnemar_items(a, b).only_b) == (1, 0)


def test_paired_item_difference_keeps_repeats_together():
    a = {i: [True, True] for i in range(6)}
    b = {i: [True, True] if i < 3 else [False, False] for i in range(6)}
    ci = paired_item_difference(a, b)
    assert ci.estimate == pytest.approx(0.5)
    # Six items, three discordant one way: Tango's interval on (3, 0) of 6, never the 12
    # (item, repeat) pairs.
    assert (ci.low, ci.high) == (tango_interval(3, 0, 6).low, tango_interval(3, 0, 6).high)
    # Six items are few: the interval holds 0 (McNemar's p = 0.25 agrees).
    assert ci.low < 0 < 0.5 < ci.high <= 1
    same = paired_item_difference(a, a)
    assert same.low < 0 < same.high  # no pair disagrees: still an interval


def test_paired_episode_difference_and_newcombe():
    a = [True] * 8 + [False] * 2
    b = [True] * 5 + [False] * 5
    ci = paired_episode_difference(a, b)
    assert ci.estimate == pytest.approx(0.3)
    assert ci.low < 0.3 < ci.high
    with pytest.raises(ValueError, match="equal lengths"):
        paired_episode_difference(a, b[:5])
    # Newcombe (1998) Table II example: 56/70 vs 48/80 -> [0.0524, 0.3339].
    nc = newcombe_difference(56, 70, 48, 80)
    assert (nc.low, nc.high) == pytest.approx((0.0524, 0.3339), abs=5e-4)


# ----------------------------------------------------------------------- coverage
SEEDS = 300  # >= 200; truths chosen where the binomial lattice is not at an edge of 90-99%
ITEM_COUNTS = (11, 18, 20)  # Fibonacci, Kayles, NIM/Chomp/Corner Queen in the default build


def _coverage(truth: float, n_items: int, repeats: int, stochastic: bool) -> float:
    hits = 0
    for seed in range(SEEDS):
        rng = np.random.default_rng([seed, n_items, repeats, int(stochastic), int(truth * 100)])
        if stochastic:
            # Item difficulty varies: theta ~ Beta with mean `truth`, samples ~ Bernoulli(theta).
            theta = rng.beta(4 * truth, 4 * (1 - truth), size=n_items)
        else:
            # T = 0: each item is always right or always wrong; P(right) = truth.
            theta = (rng.random(n_items) < truth).astype(float)
        draws = rng.random((n_items, repeats)) < theta[:, None]
        s = item_accuracy({i: list(row) for i, row in enumerate(draws)})
        hits += s.low <= truth <= s.high
    return hits / SEEDS


@pytest.mark.slow
@pytest.mark.parametrize("stochastic", [False, True], ids=["deterministic", "stochastic"])
@pytest.mark.parametrize("repeats", [1, 5])
@pytest.mark.parametrize("truth", [0.2, 0.6, 0.8])
def test_item_interval_covers_the_truth(truth, repeats, stochastic):
    for n_items in ITEM_COUNTS:
        cov = _coverage(truth, n_items, repeats, stochastic)
        assert 0.90 <= cov <= 0.99, (n_items, cov)


def test_repeat_interval_would_fail_coverage():
    """The old unit (a t-interval over repeats) is zero-width for T = 0: it can never cover."""
    from metanim.stats import mean_ci

    rng = np.random.default_rng(0)
    covered = 0
    for _ in range(50):
        theta = (rng.random(20) < 0.6).astype(float)
        per_repeat = [theta.mean()] * 5
        s = mean_ci(per_repeat)
        covered += s.low <= 0.6 <= s.high and s.high > s.low
    assert covered == 0
