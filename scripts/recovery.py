"""The recovery suite at full size: writes the "What the analysis recovers" section of
docs/analysis.md.

Configures simulated agents with known parameters, runs the real methods in-process
(`metanim.analysis.recovery`), and tabulates each analysis's estimate beside the truth
derived by hand from the parameters (closed forms, or an enumeration of the two-agent
debate). `tests/analysis/test_recovery.py` asserts smaller versions in CI.

    python scripts/recovery.py            # 18 minutes on a busy 2-core machine
    python scripts/recovery.py --quick    # a smoke run, nothing written
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from metanim.analysis import recovery
from metanim.analysis.debate import entrenchment_curve, two_agent_chain
from metanim.stats import newcombe_difference, wilson_interval

DOC = Path(__file__).resolve().parent.parent / "docs" / "analysis.md"
START, END = "<!-- recovery:start -->", "<!-- recovery:end -->"
LEVEL = 0.95


def ci(rate, level=LEVEL) -> str:
    i = wilson_interval(rate.hits, rate.n, level)
    return f"{i.estimate:.3f} [{i.low:.3f}, {i.high:.3f}]"


def tempered(p: float, t: float) -> float:
    if t == 0:
        return 1.0 if p > 0.5 else 0.0
    a, b = p ** (0.7 / t), (1 - p) ** (0.7 / t)
    return a / (a + b)


def section_p0(scale: float) -> list[str]:
    rows = ["| p (T = 0.7) | T | truth | estimate [95% CI] | n |", "|---|---|---|---|---|"]
    n = int(2100 * scale)
    for p, t in [(0.3, 0.7), (0.6, 0.7), (0.85, 0.7), (0.6, 0.35), (0.6, 1.4), (0.6, 0.0)]:
        rate = recovery.heuristic_share(f"sim-biased:p={p}", samples=n, temperature=t, seed=11)
        rows.append(f"| {p} | {t} | {tempered(p, t):.3f} | {ci(rate)} | {rate.n} |")
    return rows


def section_entrenchment(scale: float) -> list[str]:
    rows = [
        "| p⁽⁰⁾ | agents | debates | observed p⁽¹⁾ | observed p⁽³⁾ [95% CI] | Eq. 1 p⁽³⁾ "
        "| exact two-agent p⁽³⁾ |",
        "|---|---|---|---|---|---|---|",
    ]
    for p0, agents, debates in [
        (0.3, 2, 1000),
        (0.6, 2, 1000),
        (0.8, 2, 1000),
        (0.6, 4, 500),
        (0.6, 8, 250),
        (0.6, 16, 120),
    ]:
        debates = max(20, int(debates * scale))
        run = recovery.entrenchment(p0, agents=agents, debates=debates, seed=12)
        eq1 = entrenchment_curve(p0, 3)
        s1, s3 = run.observed(1), run.observed(3)
        exact = f"{two_agent_chain(p0, 3)[3]:.3f}" if agents == 2 else "-"
        rows.append(
            f"| {p0} | {agents} | {debates} | {s1.mean:.3f} (Eq. 1: {eq1[1]:.3f}) | "
            f"{s3.mean:.3f} [{s3.low:.3f}, {s3.high:.3f}] | {eq1[3]:.3f} | {exact} |"
        )
    return rows


def section_identity(scale: float) -> list[str]:
    rows = [
        "| self, peer | truth Conformity (vanilla) | vanilla C [95% CI] | anonymized C "
        "[95% CI] | truth IBC | IBC [95% CI] | disagreements (vanilla) |",
        "|---|---|---|---|---|---|---|",
    ]
    for own, peer in [(1, 3), (3, 1), (1, 1)]:
        run = recovery.identity_bias(own, peer, debates=max(20, int(800 * scale)), seed=13)
        v, a = run.vanilla.conformity, run.anonymized.conformity
        d = newcombe_difference(v.hits, v.n, a.hits, a.n)
        truth = 2 * (peer / (own + peer) - 0.5)
        rows.append(
            f"| {own}, {peer} | {peer / (own + peer):.3f} | {ci(v)} | {ci(a)} | {truth:+.2f} | "
            f"{run.ibc:+.3f} [{2 * d.low:+.3f}, {2 * d.high:+.3f}] | {v.n} |"
        )
    return rows


def section_acemad(scale: float) -> list[str]:
    rows = [
        "| truth-holder | items | its weight after rounds 1, 2, 3 | AceMAD accuracy | "
        "majority vote |",
        "|---|---|---|---|---|",
    ]
    items = max(7, int(70 * scale))
    for name, th in [
        ("anticipates the crowd (`predict=crowd`)", recovery.TRUTH_HOLDER),
        ("predicts from the debate (`predict=debate`)", "sim-optimal"),
    ]:
        run = recovery.acemad(items=items, truth_holder=th, seed=14)
        w = ", ".join(f"{x:.3f}" for x in run.truth_weight)
        rows.append(f"| {name} | {items} | {w} | {ci(run.acemad)} | {ci(run.majority)} |")
    return rows


def section_cue(scale: float) -> list[str]:
    rows = [
        "| method | agents cued (truth 0.302) | both agents cued | heuristic when cued "
        "(truth 0.1) | heuristic otherwise (truth 0.9) |",
        "|---|---|---|---|---|",
    ]
    for variant, label, both in [
        ("full", "DReaMAD (one rewrite per agent)", "0.093"),
        ("plus_mad", "(+)MAD (one shared rewrite)", "0.302"),
    ]:
        run = recovery.cue(variant, debates=max(20, int(600 * scale)), insight=0.3, seed=15)
        rows.append(
            f"| {label} | {ci(run.cued)} | {ci(run.both_cued)} (truth {both}) | "
            f"{ci(run.heuristic_when_cued)} | {ci(run.heuristic_when_not)} |"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run; writes nothing")
    args = parser.parse_args()
    scale = 0.05 if args.quick else 1.0
    start = time.perf_counter()
    parts = {
        "p0": section_p0(scale),
        "entrenchment": section_entrenchment(scale),
        "identity": section_identity(scale),
        "acemad": section_acemad(scale),
        "cue": section_cue(scale),
    }
    seconds = time.perf_counter() - start
    text = render(parts, seconds)
    print(text)
    if not args.quick:
        doc = DOC.read_text()
        block = f"{START}\n{text.strip()}\n{END}"
        pattern = re.compile(re.escape(START) + ".*?" + re.escape(END), re.DOTALL)
        doc = (
            pattern.sub(lambda _: block, doc)
            if pattern.search(doc)
            else doc.rstrip() + "\n\n" + block + "\n"
        )
        DOC.write_text(doc)


def render(parts: dict[str, list[str]], seconds: float) -> str:
    return "\n".join(
        [
            "## What the analysis recovers (`scripts/recovery.py`)",
            "",
            "Each analysis is run on debates among simulated agents whose behaviour is known "
            "in closed form (docs/simulated_server.md), driven through the real methods "
            "in-process (`metanim.analysis.recovery`, `SimChatModel`). The truth column is "
            "derived by hand from the configured parameters; intervals are 95% (Wilson for "
            "rates, a t-interval over debates for p⁽ᵗ⁾, Newcombe for differences). "
            "`tests/analysis/test_recovery.py` asserts the same at CI size with 99% intervals. "
            f"This run took {seconds:.0f} s.",
            "",
            "**p⁽⁰⁾ of a biased model** (`answer_distribution`'s input: samples at T). "
            "`sim-biased:p` on NIM positions whose only winning move is not the heuristic: "
            "the heuristic's share recovers p at T = 0.7 and p^(0.7/T) / (p^(0.7/T) + "
            "(1−p)^(0.7/T)) elsewhere.",
            "",
            *parts["p0"],
            "",
            "**Belief entrenchment, Eq. 1** (`entrenchment_curve`). MAD with the stop off "
            "(`consensus_stop=false`) among `sim-biased:p,read=consensus` agents: an agent keeps an "
            "answer a random peer shares and otherwise redraws from p⁽⁰⁾ — the mechanism Eq. 1 "
            "models. One round from independent answers is exactly Eq. 1 (p⁽¹⁾ column). "
            "Later rounds are not: two agents that agreed stay together, so their answers are "
            "correlated and Eq. 1's independence overstates entrenchment for two agents; the "
            "observed p⁽³⁾ recovers the exact law of the two-agent debate (enumerated), and "
            "approaches Eq. 1 as more agents each read one random peer (the mean-field limit "
            "Eq. 1 assumes). The negative residual for two agents matches the sign of the "
            "seed's −2.5% mean residual.",
            "",
            *parts["entrenchment"],
            "",
            "**Identity bias** (`conformity_obstinacy`, `identity_bias_coefficient`). Two "
            "`sim-conform:self,peer,base=random` agents on Fibonacci Nim (19 moves), three "
            "rounds, stop off. With identity visible a disagreeing agent keeps its answer with "
            "probability self/(self+peer); anonymized it cannot tell its own, so both opinions "
            "weigh the same and Δ = 0. Hence Conformity = peer/(self+peer) and "
            "IBC = 2·peer/(self+peer) − 1: +0.5 for self=1, peer=3 (sycophancy), −0.5 for "
            "self=3, peer=1 (self-bias), 0 for equal weights.",
            "",
            *parts["identity"],
            "",
            "**AceMAD weights** (`brier_score`, `update_weights`, `aggregate`). Five agents on "
            "NIM positions where the crowd's heuristic is wrong: four crowd agents "
            f"(`{recovery.CROWD}`, T = 0.1) predicting false consensus, one truth-holder (T = "
            "0.6). A truth-holder that anticipates the crowd's error predicts the crowd's "
            "belief exactly and scores S = 1 while each crowd agent is surprised by the "
            "dissent, so its weight share rises above 1/N = 0.2 every round and the "
            "squared-weight vote follows it; the majority vote of the first answers is always "
            "the crowd's. The same truth-holder without the second-order model loses weight "
            "and AceMAD loses with it — the ablation of seed 004's Figure 4.",
            "",
            *parts["acemad"],
            "",
            "**Prompt diversity** (DReaMAD vs (+)MAD). `sim-biased:p=0.9,cue=modulo,"
            "cue_p=0.1,insight=0.3`, two agents, answers of round 0: a rewritten prompt "
            "carries the cue with probability 0.3 at T = 0.7 (the strategy at T = 0.1 with "
            "0.003), so each agent is cued with probability 0.302; DReaMAD's agents are cued "
            "independently (both: 0.003 + 0.997·0.09 = 0.093), (+)MAD's together (both: "
            "0.302); a cued agent plays the heuristic with 0.1, others with 0.9.",
            "",
            *parts["cue"],
        ]
    )


if __name__ == "__main__":
    main()
