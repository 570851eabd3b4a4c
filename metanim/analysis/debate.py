"""Debate dynamics as pure functions over `DebateTrace` records.

* Belief entrenchment (seed 000, Eq. 1): p⁽ᵗ⁺¹⁾ = p⁽ᵗ⁾² + 2p⁽ᵗ⁾(1−p⁽ᵗ⁾)p⁽⁰⁾, the curve
  and the residual of observed p⁽ᵗ⁾ against it.
* Identity bias (seed 003): Conformity, Obstinacy (Eqs. 1–2 and their multi-peer
  form), the gap Δ = Conformity − Obstinacy, the Identity Bias Coefficient
  IBC = Δ(vanilla) − Δ(anonymized) (Eq. 5), Subversion and Correction (Eqs. 6–7).
* Cross-model debate outcomes (seed 001): any-correct, the outcome breakdown of its
  Table 5, error-correction and negative-persuasion rates.

A trace is one debate on one item: every agent's answer in every round (round 0 is
the independent answer), the correct answer(s), and who saw whom. The methods'
decision records convert to it (see docs/analysis.md).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from metanim.stats import Interval, bootstrap_ci, wilson_interval


class DebateTrace(BaseModel):
    """One debate on one item."""

    model_config = ConfigDict(frozen=True)

    item_id: str = ""
    agents: list[str] = Field(min_length=1)
    #: answers[agent][round]; round 0 is the independent answer; None = no valid answer.
    answers: list[list[str | None]]
    #: the correct answer(s); for a game state, the winning move(s) as canonical text.
    correct: list[str]
    #: peers[agent] = agents whose previous answers it saw; default: everyone else.
    peers: dict[str, list[str]] | None = None
    #: whether peer answers were shown without identity labels (seed 003's anonymization).
    anonymized: bool = False
    condition: str = ""

    @field_validator("correct", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _check_shape(self) -> DebateTrace:
        if len(self.answers) != len(self.agents):
            raise ValueError("answers needs one list per agent")
        if len({len(a) for a in self.answers}) != 1:
            raise ValueError("every agent needs an answer slot in every round")
        if self.peers is not None:
            unknown = {p for ps in self.peers.values() for p in ps} - set(self.agents)
            if unknown or set(self.peers) - set(self.agents):
                raise ValueError(f"peers name agents not in the debate: {sorted(unknown)}")
        return self

    @property
    def rounds(self) -> int:
        """Number of answer rounds including round 0."""
        return len(self.answers[0])

    def peer_indices(self, i: int) -> list[int]:
        if self.peers is None:
            return [j for j in range(len(self.agents)) if j != i]
        index = {name: k for k, name in enumerate(self.agents)}
        return [index[p] for p in self.peers.get(self.agents[i], [])]

    def is_correct(self, answer: str | None) -> bool:
        return answer is not None and answer in self.correct


class Rate(BaseModel):
    """A count-based rate with its Wilson 95% interval."""

    model_config = ConfigDict(frozen=True)

    hits: int
    n: int

    @property
    def value(self) -> float:
        return self.hits / self.n if self.n else float("nan")

    @property
    def ci(self) -> Interval:
        return wilson_interval(self.hits, self.n)


# --------------------------------------------------------------- belief entrenchment
def entrenchment_step(p: float, p0: float) -> float:
    """One debate round of Eq. 1: consensus p² plus belief-driven resolution 2p(1−p)p⁽⁰⁾."""
    return p * p + 2 * p * (1 - p) * p0


def entrenchment_curve(p0: float, rounds: int = 3) -> list[float]:
    """[p⁽⁰⁾, p⁽¹⁾, …, p⁽ʳᵒᵘⁿᵈˢ⁾] predicted by Eq. 1."""
    if not 0 <= p0 <= 1:
        raise ValueError(f"p0 must be a probability, got {p0}")
    out = [p0]
    for _ in range(rounds):
        out.append(entrenchment_step(out[-1], p0))
    return out


def two_agent_chain(p0: float, rounds: int = 3) -> list[float]:
    """[p⁽⁰⁾, …, p⁽ʳᵒᵘⁿᵈˢ⁾] for two agents, by enumerating their joint law exactly.

    Each agent keeps an answer the other shares; on disagreement each redraws from p0.
    After one round this equals Eq. 1; later, agents that agreed stay correlated, which
    Eq. 1 (independent agents) ignores (docs/analysis.md).
    """
    joint = {(a, b): (p0 if a else 1 - p0) * (p0 if b else 1 - p0) for a in (0, 1) for b in (0, 1)}
    out = [p0]
    for _ in range(rounds):
        nxt = dict.fromkeys(joint, 0.0)
        for (a, b), w in joint.items():
            if a == b:
                nxt[(a, b)] += w
                continue
            for x, y in itertools.product((0, 1), repeat=2):
                nxt[(x, y)] += w * (p0 if x else 1 - p0) * (p0 if y else 1 - p0)
        joint = nxt
        out.append(sum(w for (a, _), w in joint.items() if a))
    return out


class EntrenchmentFit(BaseModel):
    """Observed p⁽ᵗ⁾ against Eq. 1's prediction, per action; residual = observed − predicted."""

    model_config = ConfigDict(frozen=True)

    rounds: int
    p0: list[float]
    observed: list[float]
    predicted: list[float]
    residuals: list[float]
    mean_residual: float
    #: share of "strongly consistent" actions (p⁽⁰⁾ > 0.5) whose probability rose.
    strong_rose: Rate


def entrenchment_steps(traces: Iterable[DebateTrace], round: int = -1) -> int:
    """The number of debate steps t that answers at `round` are after round 0.

    Every trace must reach the same step (a debate stopped early on consensus has fewer
    rounds), so p⁽ᵗ⁾ is never compared with a curve of another length.
    """
    steps = {range(t.rounds)[round] for t in traces}
    if not steps:
        raise ValueError("no debate traces")
    if len(steps) > 1:
        raise ValueError(
            f"the traces reach different debate steps {sorted(steps)}; pad early-stopped "
            "debates with their final answers or pass traces of one length"
        )
    return steps.pop()


def entrenchment_fit(
    points: Iterable[tuple[float, float]],
    rounds: int | None = None,
    *,
    traces: Iterable[DebateTrace] | None = None,
    round: int = -1,
) -> EntrenchmentFit:
    """Compare observed (p⁽⁰⁾, p⁽ᵗ⁾) pairs with Eq. 1 (seed 000 reports a mean residual of −2.5%).

    The number of steps t comes from `traces` when given (`entrenchment_steps`: the round
    the observed answers were read at, `len(rounds) - 1` for the last one), else from
    `rounds` (default 3, the seed's three debate rounds after the initial answers).
    """
    if traces is not None:
        steps = entrenchment_steps(traces, round)
        if rounds is not None and rounds != steps:
            raise ValueError(f"rounds={rounds} but the traces are at debate step {steps}")
        rounds = steps
    elif rounds is None:
        rounds = 3
    pairs = list(points)
    if not pairs:
        raise ValueError("entrenchment_fit needs at least one (p0, p_t) pair")
    p0 = [float(a) for a, _ in pairs]
    observed = [float(b) for _, b in pairs]
    predicted = [entrenchment_curve(a, rounds)[-1] for a in p0]
    residuals = [o - p for o, p in zip(observed, predicted, strict=True)]
    strong = [(a, b) for a, b in zip(p0, observed, strict=True) if a > 0.5]
    return EntrenchmentFit(
        rounds=rounds,
        p0=p0,
        observed=observed,
        predicted=predicted,
        residuals=residuals,
        mean_residual=sum(residuals) / len(residuals),
        strong_rose=Rate(hits=sum(1 for a, b in strong if b > a), n=len(strong)),
    )


def answer_distribution(answers: Iterable[str | None]) -> dict[str, float]:
    """Empirical action probabilities (seed 000 samples N = 20 answers at T = 0.7);
    invalid answers (None) count in the denominator under the key "<invalid>"."""
    counts = Counter("<invalid>" if a is None else a for a in answers)
    total = sum(counts.values())
    return {a: c / total for a, c in counts.most_common()} if total else {}


def entrenchment_points(
    initial_samples: Sequence[str | None], traces: Sequence[DebateTrace], round: int = -1
) -> list[tuple[float, float]]:
    """(p⁽⁰⁾, p⁽ᵗ⁾) per action of one item: p⁽⁰⁾ from independent samples, p⁽ᵗ⁾ from
    every agent's answer at `round` over repeated debates of the same item."""
    p0 = answer_distribution(initial_samples)
    pt = answer_distribution(a[round] for t in traces for a in t.answers)
    return [(p, pt.get(action, 0.0)) for action, p in p0.items() if action != "<invalid>"]


def dominant_action(initial_samples: Sequence[str | None]) -> tuple[str, float] | None:
    """The strongly consistent action of a state: (action, p⁽⁰⁾) when one valid action has
    p⁽⁰⁾ > 0.5 (seed 000 §3.1), else None."""
    dist = answer_distribution(initial_samples)
    best = max(
        ((a, p) for a, p in dist.items() if a != "<invalid>"), key=lambda x: x[1], default=None
    )
    return best if best is not None and best[1] > 0.5 else None


class EntrenchmentRow(BaseModel):
    """One state of seed 000's Table 10: its dominant action before and after debate."""

    model_config = ConfigDict(frozen=True)

    item_id: str
    action: str
    #: "correct" when the dominant action is the optimal move, else "wrong" (Table 10's groups).
    belief: Literal["wrong", "correct"]
    p0: float
    pt: float
    predicted: float
    residual: float
    samples: int
    debates: int
    steps: int


def entrenchment_row(
    item_id: str,
    initial_samples: Sequence[str | None],
    traces: Sequence[DebateTrace],
    correct: Sequence[str] | str,
    round: int = -1,
    selection_samples: Sequence[str | None] | None = None,
) -> EntrenchmentRow | None:
    """Table 10's row of one state, or None if no action is strongly consistent.

    p⁽⁰⁾ is the dominant action's share of the independent samples; p⁽ᵗ⁾ its share of
    every agent's answer at `round` over the state's debates; the prediction is Eq. 1
    after t steps, t read from the traces (`entrenchment_steps`). With
    `selection_samples`, the dominant action is chosen on them and p⁽⁰⁾ measured on
    `initial_samples`: a state chosen on the same samples that measure it has its p⁽⁰⁾
    read high (the winner's curse).
    """
    dominant = dominant_action(initial_samples if selection_samples is None else selection_samples)
    if dominant is None or not traces:
        return None
    action, p0 = dominant
    if selection_samples is not None:
        p0 = sum(s == action for s in initial_samples) / len(initial_samples)
    steps = entrenchment_steps(traces, round)
    answers = [a[round] for t in traces for a in t.answers]
    pt = sum(a == action for a in answers) / len(answers)
    predicted = entrenchment_curve(p0, steps)[-1]
    good = [correct] if isinstance(correct, str) else list(correct)
    return EntrenchmentRow(
        item_id=item_id,
        action=action,
        belief="correct" if action in good else "wrong",
        p0=p0,
        pt=pt,
        predicted=predicted,
        residual=pt - predicted,
        samples=len(initial_samples),
        debates=len(traces),
        steps=steps,
    )


def entrenchment_fit_rows(rows: Sequence[EntrenchmentRow]) -> EntrenchmentFit:
    """Eq. 1's fit over the dominant, strongly consistent actions (seed 000: mean −2.5%)."""
    if not rows:
        raise ValueError("no strongly consistent state (p0 > 0.5) to fit")
    steps = {r.steps for r in rows}
    if len(steps) > 1:
        raise ValueError(f"the rows are at different debate steps {sorted(steps)}")
    return entrenchment_fit([(r.p0, r.pt) for r in rows], steps.pop())


# ------------------------------------------------------------------- identity bias
class IdentityBias(BaseModel):
    """Conformity and Obstinacy over every (agent, round ≥ 1) with a disagreeing peer."""

    model_config = ConfigDict(frozen=True)

    conformity: Rate
    obstinacy: Rate

    @property
    def gap(self) -> float:
        """Δ = Conformity − Obstinacy (seed 003, Eq. 4)."""
        return self.conformity.value - self.obstinacy.value


def conformity_obstinacy(traces: Iterable[DebateTrace], round: int | None = None) -> IdentityBias:
    """Conformity = P[y_{i,t} ∈ {y_{j,t−1} : j disagreed}] and Obstinacy = P[y_{i,t} = y_{i,t−1}],
    both given that at least one peer disagreed at t−1 (seed 003 Eqs. 1–2; with one
    peer this is exactly the single-peer definition). `round` restricts to one t."""
    conform, obstinate, n = (int(x) for x in _per_debate_counts(traces, round).sum(0))
    return IdentityBias(conformity=Rate(hits=conform, n=n), obstinacy=Rate(hits=obstinate, n=n))


def _bias_events(trace: DebateTrace, round: int | None) -> Iterable[tuple[int, int, bool, bool]]:
    """(n_D, n_A, conformed, stayed) per (agent, round ≥ 1) with a valid answer pair."""
    for t in _rounds(trace, round):
        for i, mine in enumerate(trace.answers):
            prev, now = mine[t - 1], mine[t]
            if prev is None or now is None:
                continue
            peer_prev = [trace.answers[j][t - 1] for j in trace.peer_indices(i)]
            disagreeing = [a for a in peer_prev if a is not None and a != prev]
            agreeing = [a for a in peer_prev if a == prev]
            yield len(disagreeing), len(agreeing), now in set(disagreeing), now == prev


def conformity_by_peers(
    traces: Iterable[DebateTrace], round: int | None = None
) -> dict[tuple[int, int], IdentityBias]:
    """Conformity and Obstinacy conditioned on the numbers of disagreeing (n_D ≥ 1) and
    agreeing (n_A) peers, keyed (n_D, n_A) (seed 003 Eq. 19): the bandwagon effect shows
    as conformity rising with n_D. (1, 0) is the single-peer case."""
    tallies: dict[tuple[int, int], list[int]] = {}
    for trace in traces:
        for n_d, n_a, conformed, stayed in _bias_events(trace, round):
            if n_d == 0:
                continue
            c = tallies.setdefault((n_d, n_a), [0, 0, 0])
            c[0] += conformed
            c[1] += stayed
            c[2] += 1
    return {
        key: IdentityBias(conformity=Rate(hits=c, n=n), obstinacy=Rate(hits=o, n=n))
        for key, (c, o, n) in sorted(tallies.items())
    }


def _per_debate_counts(traces: Iterable[DebateTrace], round: int | None) -> np.ndarray:
    rows = []
    for trace in traces:
        c = o = n = 0
        for n_d, _n_a, conformed, stayed in _bias_events(trace, round):
            if n_d:
                c, o, n = c + conformed, o + stayed, n + 1
        rows.append((c, o, n))
    return np.array(rows, dtype=float).reshape(-1, 3)


def identity_bias_ci(
    vanilla: Iterable[DebateTrace],
    anonymized: Iterable[DebateTrace],
    *,
    round: int | None = None,
    resamples: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """IBC with a percentile bootstrap CI, resampling whole debates within each condition.

    A debate's (agent, round) events are correlated, so the debate is the unit resampled.
    """
    v, a = _per_debate_counts(vanilla, round), _per_debate_counts(anonymized, round)
    if not len(v) or not len(a) or not v[:, 2].sum() or not a[:, 2].sum():
        raise ValueError("IBC needs debates with a disagreeing peer in both conditions")

    def gap(counts: np.ndarray) -> np.ndarray:
        # counts: (resamples, 3) sums -> Conformity − Obstinacy (NaN where n = 0).
        with np.errstate(invalid="ignore", divide="ignore"):
            return (counts[..., 0] - counts[..., 1]) / counts[..., 2]

    estimate = float(gap(v.sum(0)) - gap(a.sum(0)))
    rng = np.random.default_rng(seed)
    vs = v[rng.integers(0, len(v), (resamples, len(v)))].sum(1)
    as_ = a[rng.integers(0, len(a), (resamples, len(a)))].sum(1)
    stats = gap(vs) - gap(as_)
    stats = stats[~np.isnan(stats)]
    alpha = (1 - level) / 2
    low, high = np.quantile(stats, [alpha, 1 - alpha])
    return Interval(estimate=estimate, low=float(low), high=float(high), level=level)


def rate_bootstrap(
    hits: Sequence[bool], *, resamples: int = 1000, level: float = 0.95, seed: int = 0
) -> Interval:
    """A rate over debates (or items) with seed 001's percentile bootstrap CI (1,000 resamples)."""
    return bootstrap_ci([float(h) for h in hits], resamples=resamples, level=level, seed=seed)


def identity_bias_coefficient(
    vanilla: Iterable[DebateTrace], anonymized: Iterable[DebateTrace], round: int | None = None
) -> float:
    """IBC = Δ(vanilla) − Δ(anonymized) (seed 003, Eq. 5): > 0 sycophancy, < 0 self-bias."""
    return conformity_obstinacy(vanilla, round).gap - conformity_obstinacy(anonymized, round).gap


def subversion_correction(
    traces: Iterable[DebateTrace], round: int | None = None
) -> dict[Literal["subversion", "correction"], Rate]:
    """Subversion = P[i wrong at t | i right, a peer wrong at t−1];
    Correction = P[i right at t | i wrong, a peer right at t−1] (seed 003, Eqs. 6–7)."""
    sub_hits = sub_n = cor_hits = cor_n = 0
    for trace in traces:
        for t in _rounds(trace, round):
            for i, mine in enumerate(trace.answers):
                if mine[t] is None:
                    continue
                peers_prev = [trace.answers[j][t - 1] for j in trace.peer_indices(i)]
                was_right = trace.is_correct(mine[t - 1])
                now_right = trace.is_correct(mine[t])
                if was_right and any(not trace.is_correct(p) for p in peers_prev):
                    sub_n += 1
                    sub_hits += not now_right
                elif not was_right and any(trace.is_correct(p) for p in peers_prev):
                    cor_n += 1
                    cor_hits += now_right
    return {
        "subversion": Rate(hits=sub_hits, n=sub_n),
        "correction": Rate(hits=cor_hits, n=cor_n),
    }


def _rounds(trace: DebateTrace, round: int | None) -> range:
    if round is None:
        return range(1, trace.rounds)
    if not 1 <= round < trace.rounds:
        return range(0)
    return range(round, round + 1)


# --------------------------------------------------------------- debate outcomes
OUTCOMES = (
    "all correct, stay correct",
    "all wrong, stay wrong",
    "positive correction",
    "error correction",
    "negative persuasion",
    "no change (mixed)",
    "mixed correction + persuasion",
)


def outcome_of(trace: DebateTrace, final_round: int = -1) -> str:
    """Seed 001's Table 5 category of one debate, generalized to any number of agents."""
    before = [trace.is_correct(a[0]) for a in trace.answers]
    after = [trace.is_correct(a[final_round]) for a in trace.answers]
    gained = any(not b and a for b, a in zip(before, after, strict=True))
    lost = any(b and not a for b, a in zip(before, after, strict=True))
    if not any(before):
        return "error correction" if any(after) else "all wrong, stay wrong"
    if gained and lost:
        return "mixed correction + persuasion"
    if lost:
        return "negative persuasion"
    if all(before):
        return "all correct, stay correct"
    return "positive correction" if gained else "no change (mixed)"


def outcome_breakdown(traces: Iterable[DebateTrace]) -> dict[str, int]:
    """Count of each outcome category, in `OUTCOMES` order."""
    counts = Counter(outcome_of(t) for t in traces)
    return {name: counts.get(name, 0) for name in OUTCOMES}


def any_correct_rate(traces: Iterable[DebateTrace], round: int = -1) -> Rate:
    """Share of debates where at least one agent is correct at `round` (seed 001's "any correct")."""
    items = list(traces)
    hits = sum(1 for t in items if any(t.is_correct(a[round]) for a in t.answers))
    return Rate(hits=hits, n=len(items))


def error_correction_rate(traces: Iterable[DebateTrace]) -> Rate:
    """Of debates where every agent was wrong at round 0, the share where at least one
    agent is right at the end (seed 001: 3 of 9 on MATH-500) — what voting never does."""
    items = [t for t in traces if not any(t.is_correct(a[0]) for a in t.answers)]
    hits = sum(1 for t in items if any(t.is_correct(a[-1]) for a in t.answers))
    return Rate(hits=hits, n=len(items))


def negative_persuasion_rate(traces: Iterable[DebateTrace]) -> Rate:
    """Share of all debates whose outcome is "negative persuasion": an initially right
    agent ends wrong and no agent gained (seed 001 Table 5: 3 of 80 on GSM8K).

    Debates where one agent was persuaded while another was corrected are Table 5's own
    row ("mixed correction + persuasion", `mixed_rate`), not counted here.
    """
    items = list(traces)
    return Rate(hits=sum(outcome_of(t) == "negative persuasion" for t in items), n=len(items))


def mixed_rate(traces: Iterable[DebateTrace]) -> Rate:
    """Share of debates with both a correction and a persuasion (seed 001 Table 5's last row)."""
    items = list(traces)
    return Rate(
        hits=sum(outcome_of(t) == "mixed correction + persuasion" for t in items), n=len(items)
    )


def agent_accuracy(traces: Iterable[DebateTrace]) -> dict[str, tuple[Rate, Rate]]:
    """Per agent (model), its accuracy before (round 0) and after (last round) the debate.

    Seed 001 grades each model's own answer after debate, never a vote between models.
    """
    items = list(traces)
    out: dict[str, tuple[Rate, Rate]] = {}
    for name in dict.fromkeys(a for t in items for a in t.agents):
        mine = [(t, t.agents.index(name)) for t in items if name in t.agents]
        before = sum(t.is_correct(t.answers[i][0]) for t, i in mine)
        after = sum(t.is_correct(t.answers[i][-1]) for t, i in mine)
        out[name] = (Rate(hits=before, n=len(mine)), Rate(hits=after, n=len(mine)))
    return out


def majority_answer(answers: Sequence[str | None]) -> str | None:
    """The strict plurality among valid answers; None when the top is tied (or none is
    valid). A tie is never resolved in favour of whoever answered first: for accuracy,
    a tied vote counts as wrong (the same rule as `stats.majority_verdict`)."""
    valid = [a for a in answers if a is not None]
    if not valid:
        return None
    ranked = Counter(valid).most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]


def majority_accuracy(traces: Iterable[DebateTrace], round: int = -1) -> Rate:
    """Share of debates whose strict majority answer at `round` is correct (a tie is wrong)."""
    items = list(traces)
    hits = sum(1 for t in items if t.is_correct(majority_answer([a[round] for a in t.answers])))
    return Rate(hits=hits, n=len(items))
