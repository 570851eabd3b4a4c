"""Seed 003 (identity bias in multi-agent debate): Table 1, vanilla vs anonymized MAD."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from metanim.analysis.debate import conformity_by_peers, conformity_obstinacy, identity_bias_ci
from metanim.analysis.report import trace_from_decision
from metanim.analysis.reproduce._base import (
    DATA,
    SAMPLING_T,
    Hypothesis,
    Run,
    artifact,
    interval,
    log_records,
)
from metanim.records import pct as _pct
from metanim.stats import wilson_interval

IDENTITY_BIAS = Hypothesis(
    {"agent": "sim-conform:self=1,peer=2,base=random"},
    (
        "an agent answers at random at first; when it sees its own previous answer and "
        "a peer's, it keeps its own with weight 1 and takes the peer's with weight 2 "
        "(sycophancy: conformity 2/3 where identity shows)",
        "anonymized, it cannot tell its own answer from the peer's, so both weigh the "
        "same (conformity 1/2): the expected IBC is (2·2/3 − 1) − 0 = +0.33",
    ),
    flags={"agent": ("bias_model", "model")},
)


@artifact(
    "identity-bias", paper="Seed 003 Table 1", what="identity bias (vanilla vs anonymized MAD)",
    hypothesis=IDENTITY_BIAS, options=DATA | {"bias_model", "peers"},
)  # fmt: skip
def identity_bias(run: Run) -> list[Path]:
    """Vanilla vs anonymized MAD on the NIM dataset with seed 003 Table 1's topology
    (5 agents, each seeing one peer, measured at round 1): Conformity, Obstinacy, Δ, IBC
    with a debate-bootstrap CI, and conformity by numbers of disagreeing/agreeing peers
    (seed 003 Eq. 19). `--peers k` widens the topology."""
    cast = run.cast
    peers = run.opts.peers
    data = run.data("nim")
    params: dict[str, Any] = {
        "agents": 5, "rounds": 1, "consensus_stop": False, "peers": peers or 1,
        "temperature": SAMPLING_T,
    }  # fmt: skip
    logs = {
        cond: run.evaluate(cond, method, data, params=params, model=cast["agent"])
        for cond, method in (("vanilla", "mad"), ("anonymized", "anonymous_mad"))
    }
    traces = {
        cond: [t for t in (trace_from_decision(r) for r in log_records(log)) if t is not None]
        for cond, log in logs.items()
    }
    run.power(run.items(data), "debates per condition")
    lines = run.header()
    lines += [
        f"MAD parameters: `{json.dumps(params)}` (seed 003 Table 1: 5 agents, one peer "
        "each, the first round of debate).",
        "",
        cast.caption("Conformity and Obstinacy under disagreement, 95% Wilson CI"),
        "",
        "| condition | debates | conformity | obstinacy | Δ |",
        "|---|---|---|---|---|",
    ]
    for cond, items in traces.items():
        b = conformity_obstinacy(items, round=1)
        c, o = b.conformity, b.obstinacy
        lines.append(
            f"| {cond} | {len(items)} | {interval(c.value, *_ci(c))} "
            f"| {interval(o.value, *_ci(o))} | {100 * b.gap:+.1f} pp |"
        )
    try:
        ci = identity_bias_ci(traces["vanilla"], traces["anonymized"], round=1)
        lines += [
            "",
            f"IBC = Δ(vanilla) − Δ(anonymized) = {100 * ci.estimate:+.1f} pp, 95% CI "
            f"[{100 * ci.low:+.1f}, {100 * ci.high:+.1f}] (1,000 bootstrap resamples of "
            "debates, round 1).",
        ]
    except ValueError as exc:
        lines += ["", f"IBC: not defined ({exc})."]
    lines += [
        "",
        cast.caption("Conformity by disagreeing (n_D) and agreeing (n_A) peers (Eq. 19)"),
        "",
        "| condition | n_D | n_A | turns | conformity | obstinacy |",
        "|---|---|---|---|---|---|",
    ]
    for cond, items in traces.items():
        for (n_d, n_a), b in conformity_by_peers(items).items():
            lines.append(
                f"| {cond} | {n_d} | {n_a} | {b.conformity.n} | {_pct(b.conformity.value)} "
                f"| {_pct(b.obstinacy.value)} |"
            )
    lines += cast.footer([f"every debater at T = {SAMPLING_T}"])
    return [run.write(lines)]


def _ci(rate: Any) -> tuple[float, float]:
    ci = wilson_interval(rate.hits, rate.n)
    return ci.low, ci.high
