"""Seed 001 (cross-model debate on hard problems): Tables 2, 3 and 5."""

from __future__ import annotations

from pathlib import Path

from metanim.analysis.report import accuracy_table, cross_sections, render_report
from metanim.analysis.reproduce._base import DATA, Hypothesis, Run, artifact, served

TABLE5 = Hypothesis(
    {
        "model_1": "sim-conform:self=1,peer=2,base=random",
        "model_2": "sim-biased:heuristic=max_take,p=0.6,read=consensus",
    },
    (
        "model_1 solves at random, then in its revision weighs the other model's answer "
        "twice its own (at T = 0 it adopts it: persuasion, for better or worse)",
        "model_2 takes the most it may 60% of the time at T = 0.7, so at T = 0 always: "
        "it is right exactly where the greedy move wins, and keeps its answer in revision",
        "so debate turns model_1's chance answers into model_2's: positive corrections "
        "where model_2 is right, negative persuasion where model_1 was right by chance",
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
    seven outcome categories per dataset, and McNemar against each model alone (seed 001
    Tables 2, 3 and 5)."""
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
    report = render_report(folder, write=False, plots=False)
    lines = run.header()
    lines += [
        cast.caption(
            "Cross-model debate: model_1 and model_2, both at T = 0; same-model debate: "
            "model_1 twice, at T = 0 and T = 0.7; one column per dataset"
        ),
        "",
        *cross_sections(report.cross),
        "## Single models (CoT, T = 0)",
        "",
        cast.caption("Each model alone"),
        "",
        *accuracy_table([r for r in report.accuracy if "cross" not in r.method]),
        *cast.footer(["both debates' solve and revise calls as stated above; CoT at T = 0"]),
    ]
    return [run.write(lines)]
