"""Seed 002 (MPD, Liang et al.): the "tit for tat" level and the judge's adaptive break."""

from __future__ import annotations

import json
from pathlib import Path
from statistics import fmean
from typing import Any

from metanim.analysis.reproduce._base import (
    DATA,
    PAIRED_HEAD,
    SAMPLING_T,
    Hypothesis,
    Run,
    artifact,
    interval,
    item_verdicts,
    log_records,
    paired_items,
    served,
)
from metanim.stats import MAJORITY_RULE, item_accuracy

#: Liang et al.'s debate: at most 3 rounds, the judge deciding at T = 0.
ROUNDS, JUDGE_T = 3, 0.0
#: The compared runs: each level (0-3) with the adaptive break, and the paper's default
#: level with the break off (every round debated, then the judge extracts).
CONDITIONS: dict[str, dict[str, Any]] = {
    **{f"level-{level}": {"level": level} for level in range(4)},
    "level-2-fixed": {"level": 2, "adaptive_break": False},
}
#: The pairs the paper sets against each other: its default level against full consensus,
#: and the adaptive break against debating every round.
PAIRS = (("level-2", "level-0"), ("level-2", "level-2-fixed"))

MPD_LEVELS = Hypothesis(
    {
        "debaters": "sim-biased:heuristic=max_take,p=0.7,read=consensus",
        "judge": "sim-conform:self=1,peer=2,base=random",
    },
    (
        "each debater takes the most it can 70% of the time (the greedy move) and "
        "otherwise plays the winning move; it keeps an answer the other side shares and "
        "answers afresh where they differ (seed 000's entrenchment mechanism, Eq. 1)",
        "the judge adopts one side's latest answer at random, so its verdict is 'finished' "
        "as soon as a side names a legal answer: it breaks after round 1 unless both sides "
        "gave none, and the rounds column shows the protocol records the break, not how "
        "long a real judge waits",
        "no simulated behaviour reads the level's instruction (the simulator's only "
        "text-reading behaviour is a one-word cue, and keying it to a level's wording would "
        "build the paper's result into the agents), so levels 0-3 differ here only by "
        "chance: the level comparison needs a real model (`--model`)",
        "with the break off, two more rounds of consensus reading can entrench the greedy "
        "move (Eq. 1): the only route by which debating every round can cost accuracy here",
    ),
    flags={"debaters": ("model",), "judge": ("model",)},
)


def _params(condition: str) -> dict[str, Any]:
    return {
        "rounds": ROUNDS, "temperature": SAMPLING_T, "judge_temperature": JUDGE_T,
        **CONDITIONS[condition],
    }  # fmt: skip


def rounds_debated(log: Path) -> list[int]:
    """Per decision that ran, the rounds debated before the judge answered."""
    return [len(r.decision.rounds) for r in log_records(log) if r.decision is not None]


def adaptive_breaks(log: Path) -> list[int | None]:
    """Per decision the judge decided, the round it broke at (None: no break)."""
    return [
        r.decision.extra["judge"]["adaptive_break"]
        for r in log_records(log)
        if r.decision is not None and "judge" in r.decision.extra
    ]


@artifact(
    "mpd-levels", paper="Seed 002 Figures 3-5",
    what="MPD accuracy by tit-for-tat level, adaptive break vs fixed rounds",
    hypothesis=MPD_LEVELS, options=DATA, runs=tuple(CONDITIONS),
)  # fmt: skip
def mpd_levels(run: Run) -> list[Path]:
    """MPD (affirmative, negative, judge) at tit-for-tat levels 0-3 with the adaptive
    break and at level 2 with the break off, on the NIM critical-state file: accuracy per
    condition with its interval over items, the rounds debated before the judge answered,
    and level 2 vs level 0 and adaptive vs fixed paired on items."""
    opts, cast = run.opts, run.cast
    data = run.data("nim")
    models = served(opts, [cast["debaters"], cast["debaters"], cast["judge"]])
    logs = {
        cond: run.evaluate(
            cond, "mpd", data, params={**_params(cond), "models": models}, model=cast["judge"]
        )
        for cond in CONDITIONS
    }
    run.power(run.items(data), "items (every condition on the same items)")
    lines = run.header()
    lines += [
        f"MPD parameters: `{json.dumps(_params('level-2'))}`; each condition sets `level` "
        "(Liang et al. Table 10) and level-2-fixed sets `adaptive_break: false` (every "
        "round debated, then the judge extracts the answer).",
        "",
        cast.caption(
            f"Accuracy by condition, R = {opts.repeats} passes, 95% interval over items; "
            "rounds debated before the judge answered"
        ),
        "",
        "| condition | level | adaptive break | items × R | accuracy [95% CI] "
        "| mean rounds | broke early |",
        "|---|---|---|---|---|---|---|",
    ]
    for cond, log in logs.items():
        acc = item_accuracy(item_verdicts(log))
        rounds = rounds_debated(log)
        breaks = adaptive_breaks(log)
        early = sum(b is not None for b in breaks)
        adaptive = CONDITIONS[cond].get("adaptive_break", True)
        lines.append(
            f"| {cond} | {CONDITIONS[cond]['level']} | {'on' if adaptive else 'off'} "
            f"| {acc.items} × {acc.repeats} | {interval(acc.mean, acc.low, acc.high)} "
            f"| {fmean(rounds):.2f} | {early}/{len(breaks)} |"
        )
    lines += [
        "",
        cast.caption("The paper's comparisons, paired on items"),
        "",
        *PAIRED_HEAD,
        *(paired_items(a, logs[a], b, logs[b]).row() for a, b in PAIRS),
        "",
        f"McNemar: {MAJORITY_RULE}. A − B: accuracy difference of per-item means.",
        *cast.footer(
            [f"debaters at T = {SAMPLING_T}", f"the judge at T = {JUDGE_T} (Liang et al.)"]
        ),
    ]
    return [run.write(lines)]
