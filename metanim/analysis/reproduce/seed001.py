"""Seed 001 (cross-model debate on hard problems): Tables 2, 3 and 5."""

from __future__ import annotations

from pathlib import Path

from metanim.analysis.report import accuracy_table, cross_sections, render_report
from metanim.analysis.reproduce._base import DATA, Hypothesis, Run, artifact, served

#: Seed 001's Self-Consistency baseline: a majority of 3 CoT samples of the primary model.
SC_SAMPLES, SC_T = 3, 0.7

TABLE5 = Hypothesis(
    {
        "model_1": "sim-conform:self=1,peer=2,base=random",
        "model_2": "sim-biased:heuristic=max_take,p=0.5,read=consensus",
    },
    (
        "model_1 solves at random; in revision it weighs model_2's answer twice its own, "
        "so at T = 0 it adopts it (persuasion, for better or worse)",
        "model_2 holds two answers with equal conviction, the greedy move (take the most) "
        "and the winning move, so even at T = 0 it picks one of them at random (ties are "
        "broken at random); in revision it keeps its answer where model_1 agrees and "
        "otherwise reconsiders afresh",
        "the simulated mechanism: error correction (both wrong, one right after) is "
        "model_2 reconsidering when challenged, not reading a correct argument; negative "
        "persuasion is model_1 adopting model_2's wrong answer, or model_2 reconsidering "
        "its right one away; Self-Consistency votes model_1's own samples, so it cannot "
        "correct what every sample gets wrong",
    ),
    flags={"model_1": ("model",), "model_2": ("model_b",)},
)


@artifact(
    "table5", paper="Seed 001 Tables 2, 3, 5", what="cross-model debate outcomes",
    hypothesis=TABLE5, options=DATA | {"model_b"},
)  # fmt: skip
def table5(run: Run) -> list[Path]:
    """Cross-model debate (model_1, model_2) and same-model debate (model_1 at T = 0 and
    T = 0.7) on the NIM and Fibonacci datasets, each model graded before and after, the
    seven outcome categories per dataset with the error-correction and negative-persuasion
    rates and their intervals, and McNemar against each model alone and against
    Self-Consistency (seed 001 Tables 2, 3 and 5)."""
    opts, folder, cast = run.opts, run.folder, run.cast
    data = run.data("nim", "fibonacci")
    one, two = cast["model_1"], cast["model_2"]
    base = {"temperature": 0.0}
    run.evaluate(
        "cross",
        "cross",
        data,
        params={**base, "models": served(opts, [one, two])},
        repeats=1,
        model=one,
    )
    # Seed 001's same-model debate: one model twice, one agent at T = 0 and one at T = 0.7.
    same = {"models": served(opts, [one, one]), "temperatures": [0.0, 0.7]}
    run.evaluate("same-model", "cross", data, params=same, repeats=1, model=one)
    for name, model in (("single-a", one), ("single-b", two)):
        run.evaluate(name, "cot", data, model=model, repeats=1, params=base)
    sc = {"n": SC_SAMPLES, "temperature": SC_T}
    run.evaluate("self-consistency", "sc", data, model=one, repeats=1, params=sc)
    report = render_report(folder, write=False, plots=False)
    run.power(
        run.items(data), "items (the smaller dataset; debate and baselines on the same items)"
    )
    lines = run.header()
    lines += [
        cast.caption(
            "Cross-model debate: model_1 and model_2, both at T = 0; same-model debate: "
            "model_1 twice, at T = 0 and T = 0.7; one column per dataset"
        ),
        "",
        *cross_sections(report.cross),
        f"## Single models (CoT, T = 0) and Self-Consistency ({SC_SAMPLES} samples at T = {SC_T})",
        "",
        cast.caption(
            f"Each model alone; Self-Consistency: the majority of {SC_SAMPLES} CoT samples "
            f"of model_1 at T = {SC_T} (seed 001's baseline)"
        ),
        "",
        *accuracy_table([r for r in report.accuracy if "cross" not in r.method]),
        *cast.footer(
            [
                "both debates' solve and revise calls as stated above; CoT at T = 0",
                f"Self-Consistency at T = {SC_T}",
            ]
        ),
    ]
    return [run.write(lines)]
