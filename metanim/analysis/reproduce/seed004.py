"""Seed 004 (AceMAD, breaking the Martingale curse): Table 2, the Figure 4 ablation and
the weights round by round, on challenging subsets of the NIM and Fibonacci files."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from metanim.analysis.reproduce._base import (
    AGENTS_N,
    DATA,
    PAIRED_HEAD,
    SAMPLING_T,
    Cast,
    Hypothesis,
    ReproduceOptions,
    Run,
    artifact,
    bars_plot,
    interval,
    item_verdicts,
    line_plot,
    log_rows,
    model_options,
    paired_items,
    served,
)
from metanim.arena import ChallengingConfig, run_challenging
from metanim.datasets import DEFAULT_SPECS, build, write_jsonl
from metanim.records import md
from metanim.records import pct as _pct
from metanim.stats import MAJORITY_RULE, item_accuracy

#: Seed 004's agents: a crowd that is confidently wrong most of the time, one doubter in it
#: that is tentatively right, and a fallible truth-holder that models the crowd's error.
SEED004_CROWD = "sim-biased:heuristic=max_take,p=0.55,otherwise=optimal,predict=self,conf=0.95"
SEED004_DOUBTER = "sim-biased:heuristic=max_take,p=0.45,otherwise=optimal,predict=self,conf=0.8"
SEED004_TRUTH = "sim-biased:heuristic=max_take,p=0.3,otherwise=optimal,predict=crowd,conf=0.8"
SEED004 = Hypothesis(
    {"crowd": SEED004_CROWD, "doubter": SEED004_DOUBTER, "truth_holder": SEED004_TRUTH},
    (
        "three crowd agents share one misconception: they prefer taking the most they may "
        "(55% against the winning move at T = 0.7, so about 80% at their T = 0.1), commit "
        "0.95 of their belief to their answer (confidently wrong) and predict that every "
        "peer believes the same (false consensus)",
        "the fourth crowd agent doubts it: the same two answers the other way round (the "
        "winning move about 80% of the time at T = 0.1), 0.8 of its belief, the same false "
        "consensus",
        "one truth-holder is fallible: it takes the winning move 70% of the time at T = "
        "0.7 (about 73% at its T = 0.6), the greedy move otherwise, commits 0.8 of its "
        "belief, and predicts the crowd's belief (it anticipates their error: seed 004's "
        "second-order cognition), right or wrong itself",
        "no agent reads the debate's arguments: each round every agent draws afresh, so "
        "Majority Voting and MAD are right where three of five draws are; AceMAD where the "
        "truth-holder's last draw is right and its weight carries it; Self-Belief Only "
        "amplifies the confident crowd over the tentative doubter and truth-holder, below "
        "uniform weights",
    ),
    flags={
        "crowd": ("model",),
        "doubter": ("model",),
        "truth_holder": ("truth_holder_model", "model"),
    },
)
SEED004_OPTIONS = DATA | {"truth_holder_model", "agent_models"}


def _cast(hypothesis: Hypothesis, opts: ReproduceOptions) -> Cast:
    """`--agent-models a|b|c|d|e` names every agent's model; else crowd and truth-holder."""
    if opts.agent_models:
        models = [m.strip() for m in opts.agent_models.split("|") if m.strip()]
        return Cast({f"agent_{i + 1}": m for i, m in enumerate(models)}, None)
    return hypothesis.cast(opts)


#: Seed 004's benchmarks here: NIM and Fibonacci files of the default build's
#: configurations at SOURCE_SCALE times its sizes, cut to their challenging subsets (the
#: paper filters whole benchmarks; at the default sizes a crowd that is sometimes right
#: leaves too few challenging items to grade).
SEED004_GAMES = ("nim", "fibonacci")
SOURCE_SCALE = 4


def _sources(run: Run) -> list[Path]:
    """The given dataset files, else the default build's NIM and Fibonacci files at
    `SOURCE_SCALE` times their sizes (cached)."""
    if run.opts.datasets:
        return [Path(p) for p in run.opts.datasets]
    paths = []
    for game in SEED004_GAMES:
        path = Path(run.opts.out) / "data" / f"{game}-normal-x{SOURCE_SCALE}.jsonl"
        if not path.exists():
            spec = next(s for s in DEFAULT_SPECS if s.game == game and s.variant == "normal")
            spec = spec.model_copy(update={"n": spec.n * SOURCE_SCALE})
            write_jsonl(build(spec, seed=run.opts.seed), path)
        paths.append(path)
    return paths


def _seed004_models(cast: Cast) -> list[str]:
    """One model per agent in AceMAD's role order (crowd first, truth-holder last)."""
    if "crowd" in cast.roles:
        return [cast["crowd"]] * (AGENTS_N - 2) + [cast["doubter"], cast["truth_holder"]]
    models = list(cast.roles.values())
    return [models[i % len(models)] for i in range(AGENTS_N)]


def _challenging(run: Run) -> list[Path]:
    """Seed 004 App. B.2's challenging subsets: items the single agent (the crowd's model,
    Standard prompting) gets right in fewer than 40% of 5 runs at T = 0.7; cached. A game
    with none is left out (its cells read "–"); with none in any game there is nothing to
    compare, which is said rather than run."""
    opts = run.opts
    folder = Path(opts.out) / "data" / "challenging"
    sources = _sources(run)
    crowd = _seed004_models(run.cast)[0]
    config = ChallengingConfig(
        name="single", dataset=[str(p) for p in sources], model=crowd, base_url=opts.base_url,
        limit=opts.items, seed=opts.seed, results_dir=str(folder), progress=opts.progress,
        **model_options(opts),
    )  # fmt: skip
    result = run_challenging(config)
    run.checked(result.evaluation, "single")
    subsets = [Path(result.written[str(p)]) for p in sources]
    kept = [p for p in subsets if p.stat().st_size]
    if not kept:
        raise ValueError(
            f"no challenging items: the single agent ({crowd}, Standard at T = 0.7) answered "
            "every item right in at least 40% of 5 runs, so there is nothing for the seed 004 "
            "methods to correct; give a weaker --model (the crowd's) or more --items"
        )
    return kept


def _acemad_params(
    opts: ReproduceOptions, models: list[str], rounds: int, **extra: Any
) -> dict[str, Any]:
    return {"agents": AGENTS_N, "rounds": rounds, "models": served(opts, models), **extra}


SEED004_TEMPERATURES = (
    "AceMAD: crowd agents at T = 0.1, the truth-holder at T = 0.6 (seed 004 App. B.1)",
    "Majority Voting and MAD: the same five agents at the same temperatures",
    f"Single Agent: Standard prompting at T = {SAMPLING_T}, R passes",
)


def _accuracy_cells(log: Path, games: Sequence[str]) -> tuple[list[str], list[float]]:
    rows = log_rows(log)
    cells, means = [], []
    for game in games:
        verdicts: dict[str, list[bool]] = defaultdict(list)
        for r in rows:
            if r.get("game") == game and r.get("correct") is not None:
                verdicts[r["record_id"]].append(bool(r["correct"]))
        if not verdicts:
            cells.append("–")
            continue
        s = item_accuracy(verdicts)
        means.append(s.mean)
        cells.append(f"{interval(s.mean, s.low, s.high)} ({s.items} items)")
    return cells, means


@artifact(
    "acemad", paper="Seed 004 Table 2", what="AceMAD vs baselines on challenging subsets",
    hypothesis=SEED004, options=SEED004_OPTIONS, casting=_cast,
)  # fmt: skip
def acemad_table(run: Run) -> list[Path]:
    """Seed 004 Table 2 on challenging subsets, N = 5: Single Agent, Majority Voting, MAD
    and AceMAD at T = 2, 3, 5 rounds (Centralized and Sparse MAD are not in the project)."""
    opts, cast = run.opts, run.cast
    data = _challenging(run)
    models = _seed004_models(cast)
    temps = "|".join(["0.1"] * (AGENTS_N - 1) + ["0.6"])
    runs: list[tuple[str, Path | None]] = [
        ("Single Agent", run.evaluate("single", "standard", data, model=models[0],
                                   params={"temperature": SAMPLING_T})),
        ("Majority Voting", run.evaluate("majority", "mad", data, model=models[0], repeats=1,
            params={"agents": AGENTS_N, "rounds": 0, "models": served(opts, models),
                    "temperatures": temps})),
        ("Decentralized MAD", run.evaluate("mad", "mad", data, model=models[0], repeats=1,
            params={"agents": AGENTS_N, "rounds": 3, "models": served(opts, models),
                    "temperatures": temps})),
        ("Centralized MAD", None),
        ("Sparse MAD", None),
    ]  # fmt: skip
    for t in (2, 3, 5):
        runs.append(
            (
                f"AceMAD (T={t})",
                run.evaluate(
                    f"acemad-t{t}",
                    "acemad",
                    data,
                    model=models[0],
                    repeats=1,
                    params=_acemad_params(opts, models, t),
                ),
            )
        )
    games = list(SEED004_GAMES)
    run.power(
        sum(run.items([p]) for p in data), "challenging items (each method on the same items)"
    )
    lines = run.header()
    lines += [
        cast.caption(
            f"Accuracy on the challenging subsets (N = {AGENTS_N} agents), 95% CI over items"
        ),
        "",
        "| method | " + " | ".join(games) + " | Average |",
        "|---" * (len(games) + 2) + "|",
    ]
    for label, log in runs:
        if log is None:
            lines.append(f"| {label} | " + " | ".join(["absent"] * len(games)) + " | absent |")
            continue
        cells, means = _accuracy_cells(log, games)
        avg = _pct(sum(means) / len(means)) if len(means) == len(games) else "–"
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {avg} |")
    logs = {label: log for label, log in runs if log is not None}
    lines += [
        "",
        "absent: seed 004's Centralized and Sparse MAD are not implemented in this project.",
        "",
        cast.caption("AceMAD (T=3) vs the baselines, paired on items"),
        "",
        *PAIRED_HEAD,
        *(paired_items("AceMAD (T=3)", logs["AceMAD (T=3)"], b, logs[b]).row()
          for b in ("Majority Voting", "Decentralized MAD")),
        "",
        f"McNemar: {MAJORITY_RULE}.",
        *cast.footer(SEED004_TEMPERATURES),
    ]  # fmt: skip
    return [run.write(lines)]


ABLATION = {
    "Full protocol": "peer",
    "Self-Belief Only": "self",
    "Uniform Weight (Standard MAD)": "uniform",
}


@artifact(
    "acemad-ablation", paper="Seed 004 Figure 4", what="peer prediction vs self-belief vs uniform weights",
    hypothesis=SEED004, options=SEED004_OPTIONS, casting=_cast,
)  # fmt: skip
def acemad_ablation(run: Run) -> list[Path]:
    """Seed 004 Fig. 4: AceMAD's full protocol vs weights from self-belief only vs uniform
    weights, on the challenging subsets, T = 3 rounds."""
    opts, cast = run.opts, run.cast
    data = _challenging(run)
    models = _seed004_models(cast)
    logs = {
        label: run.evaluate(f"acemad-{w}", "acemad", data, model=models[0],
                         repeats=1, params=_acemad_params(opts, models, 3, weighting=w))
        for label, w in ABLATION.items()
    }  # fmt: skip
    games = list(SEED004_GAMES)
    run.power(
        sum(run.items([p]) for p in data), "challenging items (each variant on the same items)"
    )
    lines = run.header()
    lines += [
        cast.caption("Accuracy on the challenging subsets, T = 3 rounds; 95% CI over items"),
        "",
        "| variant | " + " | ".join(games) + " | Average |",
        "|---" * (len(games) + 2) + "|",
    ]
    bars: dict[str, dict[str, tuple[float, float, float]]] = defaultdict(dict)
    for label, log in logs.items():
        cells, means = _accuracy_cells(log, games)
        avg = _pct(sum(means) / len(means)) if len(means) == len(games) else "–"
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {avg} |")
        for game in games:
            verdicts = {k: v for k, v in item_verdicts(log).items() if k.startswith(f"{game}:")}
            if verdicts:
                s = item_accuracy(verdicts)
                bars[label][game] = (s.low, s.mean, s.high)
    full = logs["Full protocol"]
    lines += [
        "",
        cast.caption("The full protocol vs each ablation, paired on items"),
        "",
        *PAIRED_HEAD,
        *(paired_items("Full protocol", full, b, logs[b]).row() for b in list(ABLATION)[1:]),
        "",
        "Self-Belief Only: each round's score is the agent's confidence in its own answer "
        "(max of its belief), no peer forecast; Uniform Weight: every weight stays 1/N, so "
        "the decision is the plain average of beliefs.",
        *cast.footer(SEED004_TEMPERATURES[:1]),
    ]
    return [
        run.write(lines),
        *bars_plot(bars, run.image(),
               cast.title("AceMAD ablation (95% CI over items)"), "accuracy (%)", games=games),
    ]  # fmt: skip


@artifact(
    "weights", paper="Seed 004", what="AceMAD weight trajectories",
    hypothesis=SEED004, options=SEED004_OPTIONS, casting=_cast,
)  # fmt: skip
def weights(run: Run) -> list[Path]:
    """AceMAD's per-agent weights round by round (mean over decisions, by role) on the
    challenging subsets: where the crowd is wrong, a truth-holder that predicts the crowd
    gains weight."""
    opts, cast = run.opts, run.cast
    models = _seed004_models(cast)
    log = run.evaluate(
        "acemad",
        "acemad",
        _challenging(run),
        repeats=1,
        model=models[0],
        params=_acemad_params(opts, models, 3),
    )
    by: dict[tuple[str, str, int], list[float]] = defaultdict(list)
    for r in log_rows(log):
        ace = ((r.get("decision") or {}).get("extra") or {}).get("acemad") or {}
        roles = ace.get("roles") or {}
        for rnd in ace.get("rounds") or []:
            for agent, w in (rnd.get("weights") or {}).items():
                by[(agent, str(roles.get(agent, "")), int(rnd["round"]))].append(float(w))
    agents = sorted({(a, role) for a, role, _ in by})
    rounds = sorted({r for _, _, r in by})
    lines = run.header()
    lines += [
        cast.caption(
            "Mean weight of each agent after each round over all decisions (weights sum to "
            f"1; 1/N = {1 / AGENTS_N:.2f})"
        ),
        "",
        "| agent | role | model | " + " | ".join(f"round {r}" for r in rounds) + " |",
        "|---|---|---|" + "---|" * len(rounds),
    ]
    for agent, role in agents:
        cells = [by.get((agent, role, r), []) for r in rounds]
        model = models[int(agent.rsplit("_", 1)[-1]) - 1] if agent.startswith("agent_") else "?"
        lines.append(
            f"| {md(agent)} | {md(role)} | `{model}` | "
            + " | ".join(f"{sum(c) / len(c):.3f}" if c else "–" for c in cells)
            + " |"
        )
    lines += cast.footer(SEED004_TEMPERATURES[:1])
    out = [run.write(lines)]
    series = {
        f"{agent} ({role})": [
            (r, math.nan, sum(by[(agent, role, r)]) / len(by[(agent, role, r)]), math.nan)
            for r in rounds
            if by.get((agent, role, r))
        ]
        for agent, role in agents
    }
    out += line_plot(
        series, run.image(), title=cast.title("AceMAD weight trajectories"),
        xlabel="round", ylabel="mean weight", percent=False,
    )  # fmt: skip
    return out
