"""The recovery suite: simulated agents with known parameters, and the analysis finds them.

Every expected value below is derived here by hand from the configured parameters (a
closed form or a brute-force enumeration), never read from the code under test. The
methods run in-process over `SimChatModel` (the simulator's own request handler; HTTP
adds nothing to what is measured). Each run is seeded, so the outcome is fixed; the
intervals are 99% intervals sized to the debates run, so a pass is not luck of the seed.
"""

from __future__ import annotations

import math

import pytest

from metanim.analysis import recovery
from metanim.analysis.debate import entrenchment_curve, two_agent_chain
from metanim.stats import newcombe_difference, wilson_interval

LEVEL = 0.99


def within(value: float, interval) -> bool:
    return interval.low <= value <= interval.high


def tempered(p: float, temperature: float) -> float:
    """P(heuristic) for two answers with reference preferences p, 1 - p (softmax of logs)."""
    if temperature == 0:
        return 1.0 if p > 0.5 else 0.0
    a, b = p ** (0.7 / temperature), (1 - p) ** (0.7 / temperature)
    return a / (a + b)


@pytest.mark.parametrize(
    ("p", "temperature"), [(0.3, 0.7), (0.6, 0.7), (0.85, 0.7), (0.6, 0.35), (0.6, 1.4)]
)
def test_p0_of_a_biased_model(p, temperature):
    rate = recovery.heuristic_share(f"sim-biased:p={p}", samples=700, temperature=temperature)
    expected = tempered(p, temperature)
    assert within(expected, wilson_interval(rate.hits, rate.n, LEVEL)), (rate.value, expected)


def test_temperature_zero_takes_the_most_preferred_answer():
    assert recovery.heuristic_share("sim-biased:p=0.6", samples=70, temperature=0).value == 1.0
    assert recovery.heuristic_share("sim-biased:p=0.4", samples=70, temperature=0).value == 0.0


@pytest.mark.slow
def test_mad_entrenchment_follows_eq1_for_agents_that_read_their_peers():
    p0 = 0.6
    run = recovery.entrenchment(p0, agents=2, debates=600, rounds=3, seed=1)
    eq1 = entrenchment_curve(p0, 3)
    chain = two_agent_chain(p0, 3)
    assert chain[1] == pytest.approx(eq1[1])  # one step from independent answers is Eq. 1
    assert within(p0, run.observed(0, LEVEL))
    assert within(eq1[1], run.observed(1, LEVEL))
    # Later rounds: two agents that agreed stay together, which Eq. 1's independence
    # ignores (p3 = 0.682 against 0.736); the exact law of the debate is recovered.
    assert within(chain[3], run.observed(3, LEVEL))
    assert run.observed(3, LEVEL).low > p0  # the strongly held answer is entrenched


def conform_interval(bias, level=LEVEL):
    c = bias.conformity
    return wilson_interval(c.hits, c.n, level)


@pytest.mark.slow
@pytest.mark.parametrize(("own", "peer", "ibc"), [(1, 3, 0.5), (3, 1, -0.5)])
def test_identity_bias_is_recovered_and_anonymization_removes_it(own, peer, ibc):
    run = recovery.identity_bias(own, peer, debates=250 if own == 1 else 120, seed=2)
    keep = own / (own + peer)
    # Two agents: a disagreeing agent either keeps its answer or takes its peer's.
    assert run.vanilla.conformity.hits + run.vanilla.obstinacy.hits == run.vanilla.obstinacy.n
    assert within(1 - keep, conform_interval(run.vanilla))
    # Anonymized, the agent cannot tell its own answer: both opinions weigh the same.
    assert within(0.5, conform_interval(run.anonymized))
    # IBC = (2c_v - 1) - (2c_a - 1) = 2 (c_v - c_a); its interval from Newcombe's method.
    v, a = run.vanilla.conformity, run.anonymized.conformity
    diff = newcombe_difference(v.hits, v.n, a.hits, a.n, LEVEL)
    assert run.ibc == pytest.approx(2 * diff.estimate)
    assert 2 * diff.low <= ibc <= 2 * diff.high
    assert (2 * diff.low > 0) if ibc > 0 else (2 * diff.high < 0)


def test_acemad_truth_holder_gains_weight_and_beats_the_majority():
    run = recovery.acemad(items=21, seed=3)
    # The weight share after each round rises monotonically from 1/N.
    assert 0.2 < run.truth_weight[0] < run.truth_weight[1] < run.truth_weight[2]
    assert run.majority.hits == 0  # the crowd's shared misconception wins the vote
    gain = newcombe_difference(run.acemad.hits, run.acemad.n, run.majority.hits, run.majority.n)
    assert gain.low > 0.5


def test_acemad_without_anticipation_gives_the_truth_holder_no_weight():
    # The same truth-holder predicting from the debate, not the crowd's error: right, but
    # with no second-order knowledge its weight falls below 1/N and the crowd wins.
    run = recovery.acemad(items=7, truth_holder="sim-optimal", seed=3)
    assert run.truth_weight[-1] < 0.2
    assert run.acemad.hits == 0


def test_prompt_diversity_changes_behaviour_as_configured():
    insight, cue_p, p = 0.3, 0.1, 0.9
    full = recovery.cue("full", debates=200, insight=insight, seed=4)
    shared = recovery.cue("plus_mad", debates=200, insight=insight, seed=4)
    # The elicited strategy (T = 0.1) almost never carries the cue: 0.3 at T = 0.1 is
    # 0.3^7 / (0.3^7 + 0.7^7) = 0.26%; each rewrite (T = 0.7) carries it with p = 0.3.
    strategy = insight**7 / (insight**7 + (1 - insight) ** 7)
    per_agent = strategy + (1 - strategy) * insight
    for run in (full, shared):
        assert within(per_agent, wilson_interval(run.cued.hits, run.cued.n, LEVEL))
        assert within(cue_p, wilson_interval(*_hn(run.heuristic_when_cued), LEVEL))
        assert within(p, wilson_interval(*_hn(run.heuristic_when_not), LEVEL))
    # DReaMAD: each agent rewrites its own prompt, so the cues are independent draws;
    # (+)MAD: one rewrite shared by both agents.
    both_full = strategy + (1 - strategy) * insight**2
    assert within(both_full, wilson_interval(*_hn(full.both_cued), LEVEL))
    assert within(per_agent, wilson_interval(*_hn(shared.both_cued), LEVEL))
    assert math.isclose(shared.both_cued.value, shared.cued.value)


def _hn(rate):
    return rate.hits, rate.n


def test_mad_stop_false_runs_every_round():
    from metanim.agents import build_method
    from metanim.llm.sim import SimApp, SimChatModel

    app = SimApp(seed=0)

    def rounds(spec):
        method = build_method(spec, "sim-optimal", client_factory=lambda m: SimChatModel(m, app))
        decision = recovery.decide_all(method, [(recovery.NIM, (29,), 1)])[0]
        return len(decision.rounds), decision.params["consensus_stop"]

    # Optimal agents agree at once on the only winning move: the stop ends the debate.
    assert rounds("mad:agents=2,rounds=3") == (1, True)
    assert rounds("mad:agents=2,rounds=3,consensus_stop=false") == (4, False)
    with pytest.raises(ValueError, match="stop"):
        rounds("mad:stop=maybe")
