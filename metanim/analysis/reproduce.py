"""`metanim reproduce ARTIFACT`: every seed-paper table and figure from one command.

Each artifact runs its protocol through the arena (resumable JSONL logs, one run
identity per configuration), then writes `<out>/<artifact>.md` (a Markdown table) and,
where the paper has a figure, `<out>/<artifact>.png`. Models are simulated by default
(no network); `--model`/`--opponent-model`/`--base-url` point them at any server.
docs/analysis.md lists every artifact with its command and a sample of its output.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from metanim.analysis.debate import (
    DebateTrace,
    EntrenchmentRow,
    conformity_by_peers,
    conformity_obstinacy,
    entrenchment_fit_rows,
    entrenchment_row,
    identity_bias_ci,
)
from metanim.analysis.report import (
    accuracy_table,
    cross_markdown,
    render_report,
    trace_from_decision,
)
from metanim.arena import (
    EvaluationConfig,
    TournamentConfig,
    parse_setting,
    run_evaluation,
    run_tournament,
)
from metanim.datasets import DEFAULT_SPECS, build, write_jsonl
from metanim.records import item_accuracy, latest_by_id, md, read_records, wilson_interval
from metanim.records import pct as _pct

#: The four settings of seed 000's Figure 7 (left) and Table 12: NIM and Fibonacci Nim,
#: normal and misère. Every one starts at a random N-position (`start="random_n"`), so
#: the presets and the JSON settings start alike.
FOUR_SETTINGS = {
    "NIM-N": 'nim:{"heaps":[31],"max_take":3}',
    "NIM-M": 'nim:{"heaps":[31],"max_take":3,"misere":true}',
    "Fib-N": 'fibonacci:{"n":20}',
    "Fib-M": 'fibonacci:{"n":20,"misere":true}',
}


class ReproduceOptions(BaseModel):
    """What every artifact shares; the defaults follow the seed papers' protocols."""

    out: str = Field("reproduce", description="output folder")
    model: str = Field("sim-biased:heuristic=max_take,p=0.7", description="the model under test")
    model_b: str = Field("sim-optimal", description="the second model (cross-model debate)")
    bias_model: str = Field(
        "sim-conform:self=1,peer=2,base=random", description="identity-bias: the debating model"
    )
    opponent_model: str = Field(
        "sim-biased:heuristic=max_take,p=0.5", description="the opponent's model"
    )
    base_url: str | None = Field(None, description="server of every model (default: simulated)")
    episodes: int = Field(50, ge=1, description="episodes per setting (seed 000: 50)")
    repeats: int = Field(5, ge=1, description="passes over a dataset")
    samples: int = Field(20, ge=1, description="entrenchment: samples for p0 and debates per state")
    items: int | None = Field(None, ge=1, description="use only the first N items per dataset")
    datasets: list[str] = Field(
        default_factory=list,
        description="dataset files (states or questions) instead of the default build's "
        "(figure3, figure7-right, identity-bias, table5, weights)",
    )
    seed: int = Field(0, description="base seed")
    progress: bool = Field(False, description="progress bars")


@dataclass
class Artifact:
    name: str
    paper: str
    what: str
    run: Callable[[ReproduceOptions], list[Path]]


# ------------------------------------------------------------------------ running
def _folder(opts: ReproduceOptions, artifact: str) -> Path:
    path = Path(opts.out) / artifact
    path.mkdir(parents=True, exist_ok=True)
    return path


def _dataset(opts: ReproduceOptions, game: str) -> Path:
    """The default build's normal-play file of `game` (seed 000 Table 5 sizes), cached."""
    path = Path(opts.out) / "data" / f"{game}-normal.jsonl"
    if not path.exists():
        spec = next(s for s in DEFAULT_SPECS if s.game == game and s.variant == "normal")
        write_jsonl(build(spec, seed=opts.seed), path)
    return path


def _data(opts: ReproduceOptions, *games: str) -> list[Path]:
    """The given dataset files, else the default build's files of `games`."""
    if opts.datasets:
        return [Path(p) for p in opts.datasets]
    return [_dataset(opts, g) for g in games]


def _evaluate(
    opts: ReproduceOptions, folder: Path, name: str, method: str, datasets: list[Path], *,
    params: dict[str, Any] | None = None, model: str | None = None, repeats: int | None = None,
) -> Path:  # fmt: skip
    config = EvaluationConfig(
        name=name, dataset=[str(d) for d in datasets], method=method, params=params or {},
        model=model or opts.model, base_url=opts.base_url, repeats=repeats or opts.repeats,
        limit=opts.items, seed=opts.seed, results_dir=str(folder), progress=opts.progress,
    )  # fmt: skip
    return run_evaluation(config).log_path


def _tournament(
    opts: ReproduceOptions, folder: Path, name: str, method: str, games: list[str], *,
    params: dict[str, Any] | None = None,
) -> Path:  # fmt: skip
    config = TournamentConfig(
        name=name, games=games, method=method, params=params or {}, model=opts.model,
        base_url=opts.base_url, opponent="react", opponent_model=opts.opponent_model,
        opponent_base_url=opts.base_url, episodes=opts.episodes, start="random_n",
        seed=opts.seed, results_dir=str(folder), progress=opts.progress,
    )  # fmt: skip
    return run_tournament(config).log_path


def _rows(log: Path) -> list[dict[str, Any]]:
    return list(latest_by_id(read_records(log)).values())


def _write(folder: Path, name: str, lines: list[str]) -> Path:
    path = folder.parent / f"{name}.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _win_cells(rows: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        if r["status"] in ("win", "loss"):
            out[r["setting"]][0] += r["status"] == "win"
            out[r["setting"]][1] += 1
    return {k: (w, n) for k, (w, n) in out.items()}


def _win_table(
    runs: list[tuple[str, Path]], columns: dict[str, str], *, average: bool
) -> tuple[list[str], dict[str, dict[str, tuple[float, float, float]]]]:
    """Rows: methods; columns: settings; cells: win rate [95% Wilson] (n)."""
    keys = {label: parse_setting(text)[0] for label, text in columns.items()}
    head = ["method", *columns, *(["Average"] if average else [])]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    bars: dict[str, dict[str, tuple[float, float, float]]] = {}
    for label, log in runs:
        cells = _win_cells(_rows(log))
        row, wins, total = [], 0, 0
        bars[label] = {}
        for col, key in keys.items():
            w, n = cells.get(key, (0, 0))
            ci = wilson_interval(w, n)
            wins, total = wins + w, total + n
            row.append(
                f"{_pct(w / n if n else math.nan)} [{_pct(ci.low)}, {_pct(ci.high)}] (n={n})"
            )
            bars[label][col] = (ci.low, ci.estimate, ci.high)
        if average:
            # Equal episodes per setting: the pooled rate is the average of the settings.
            ci = wilson_interval(wins, total)
            row.append(f"{_pct(ci.estimate)} [{_pct(ci.low)}, {_pct(ci.high)}] (n={total})")
            bars[label]["Average"] = (ci.low, ci.estimate, ci.high)
        lines.append(f"| {md(label)} | " + " | ".join(row) + " |")
    return lines, bars


def _bars(bars: Any, path: Path, title: str, ylabel: str) -> list[Path]:
    try:
        from metanim.analysis.plots import grouped_bars

        return [grouped_bars(bars, path, title=title, ylabel=ylabel)]
    except ImportError:  # matplotlib is the optional `plots` extra
        return []


def _header(artifact: Artifact, opts: ReproduceOptions, command: str) -> list[str]:
    return [
        f"# {artifact.paper}: {artifact.what}",
        "",
        f"Command: `{command}`. Model: `{opts.model}`; seed {opts.seed}.",
        "",
    ]


# ---------------------------------------------------------------- seed 000, Table 1
ACCURACY_GAMES = ("nim", "fibonacci", "chomp", "kayles")


def table1(opts: ReproduceOptions) -> list[Path]:
    """ReAct, + CoT, DReaMAD(−) on the four critical-state datasets: mean ± std over R runs."""
    folder = _folder(opts, "table1")
    data = [_dataset(opts, g) for g in ACCURACY_GAMES]
    for name, method in (("react", "react"), ("cot", "cot"), ("dreamad-minus", "dreamad_minus")):
        _evaluate(opts, folder, name, method, data)
    report = render_report(folder, write=False, plots=False)
    rows = [r for r in report.accuracy if r.decisions]
    lines = _header(ARTIFACTS["table1"], opts, "metanim reproduce table1")
    lines += [
        "Accuracy of choosing the unique optimal move. Cell: mean ± std over the R passes "
        "(the paper's numbers), 95% CI over items, items × R. Average: mean of the games.",
        "",
        *accuracy_table(rows),
    ]
    out = [_write(folder, "table1", lines)]
    bars = {r.method: {} for r in rows}
    for r in rows:
        bars[r.method][r.game] = (r.low, r.mean, r.high)
    out += _bars(
        bars, folder.parent / "table1.png", "Decision accuracy (95% CI over items)", "accuracy (%)"
    )
    return out


# ------------------------------------------------------- seed 000, Figure 3 + Table 10
def entrenchment(opts: ReproduceOptions) -> list[Path]:
    """Seed 000 §3 / App. B.1: p⁽⁰⁾ from N samples at T = 0.7, then N two-agent debates
    per state at T = 0.7, 3 full rounds (no consensus stop); Eq. 1 over dominant actions."""
    folder = _folder(opts, "figure3")
    data = _data(opts, "fibonacci")
    n = opts.samples
    p0_log = _evaluate(opts, folder, "p0", "react", data, params={"temperature": 0.7}, repeats=n)
    mad_log = _evaluate(
        opts, folder, "mad", "mad", data, repeats=n,
        params={"agents": 2, "rounds": 3, "temperature": 0.7, "consensus_stop": False},
    )  # fmt: skip
    samples: dict[str, list[str | None]] = defaultdict(list)
    optimal: dict[str, str] = {}
    states: dict[str, Any] = {}
    for r in _rows(p0_log):
        samples[r["record_id"]].append(r["answer"] if r["status"] == "ok" else None)
        optimal[r["record_id"]] = r["optimal_move"]
        states[r["record_id"]] = ((r.get("decision") or {}).get("task") or {}).get("state")
    traces: dict[str, list[DebateTrace]] = defaultdict(list)
    for r in _rows(mad_log):
        t = trace_from_decision(r)
        if t is not None:
            traces[r["record_id"]].append(t)
    rows: list[EntrenchmentRow] = []
    for rid in sorted(samples):
        row = entrenchment_row(rid, samples[rid], traces.get(rid, []), optimal[rid])
        if row is not None:
            rows.append(row)
    lines = _header(ARTIFACTS["figure3"], opts, "metanim reproduce figure3")
    lines += [
        f"Protocol: {n} samples at T = 0.7 give p⁽⁰⁾; {n} debates per state, 2 agents, T = 0.7, "
        "3 rounds with the consensus stop off give p⁽³⁾ (every agent's final answer). Rows: "
        "states whose dominant action is strongly consistent (p⁽⁰⁾ > 0.5); belief = whether "
        "that action is the optimal move. Prediction: Eq. 1 after 3 steps; residual = "
        "observed − predicted.",
        "",
        "| state | action | belief | p⁽⁰⁾ | p⁽³⁾ | Eq. 1 | residual |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: (r.belief, r.item_id)):
        state = json.dumps(states.get(r.item_id), separators=(",", ":"))
        lines.append(
            f"| {md(state)} | {md(r.action)} | {r.belief} | {r.p0:.3f} | {r.pt:.3f} "
            f"| {r.predicted:.3f} | {r.residual:+.3f} |"
        )
    if rows:
        fit = entrenchment_fit_rows(rows)
        lines += [
            "",
            f"Mean residual over {len(rows)} strongly consistent actions: "
            f"{100 * fit.mean_residual:+.1f}% (seed 000: −2.5%); p⁽³⁾ > p⁽⁰⁾ in "
            f"{fit.strong_rose.hits}/{fit.strong_rose.n}.",
        ]
    else:
        lines += ["", "No state had a strongly consistent action (p⁽⁰⁾ > 0.5)."]
    out = [_write(folder, "figure3", lines)]
    try:
        from metanim.analysis.plots import entrenchment_plot

        out.append(
            entrenchment_plot(
                [(r.p0, r.pt) for r in rows], folder.parent / "figure3.png", rounds=3,
                title="Belief entrenchment (dominant actions)",
            )
        )  # fmt: skip
    except ImportError:
        pass
    return out


# ---------------------------------------------------------------- seed 000, Figure 6
FIGURE6_METHODS = {
    "Standard": "standard",
    "ReAct": "react",
    "Self-Refine": "self_refine",
    "Self-Consistency": "sc",
    "MAD": "mad",
    "MPD": "mpd",
    "DReaMAD": "dreamad",
}
FIGURE6_SETTINGS = {
    "NIM": "nim-31-k3",
    "Fibonacci": "fibonacci-20",
    "Kayles": "kayles-20",
    "Chomp": "chomp-5x5",
    "Corner Queen": "corner-queen",
}


def figure6(opts: ReproduceOptions) -> list[Path]:
    """Win rate of every self-correction method against a ReAct opponent, per game."""
    folder = _folder(opts, "figure6")
    runs = [
        (label, _tournament(opts, folder, label.lower().replace(" ", "-"), method, list(FIGURE6_SETTINGS.values())))
        for label, method in FIGURE6_METHODS.items()
    ]  # fmt: skip
    table, bars = _win_table(runs, FIGURE6_SETTINGS, average=False)
    lines = _header(ARTIFACTS["figure6"], opts, "metanim reproduce figure6")
    lines += [
        f"Win rate over {opts.episodes} episodes per game against ReAct on "
        f"`{opts.opponent_model}`, agent first to move at a random N-position; 95% Wilson CI.",
        "",
        *table,
    ]
    return [
        _write(folder, "figure6", lines),
        *_bars(
            bars,
            folder.parent / "figure6.png",
            "Win rate vs a ReAct opponent (95% Wilson CI)",
            "win rate (%)",
        ),
    ]


# -------------------------------------------------------- seed 000, Figure 7 (left)
def figure7_left(opts: ReproduceOptions) -> list[Path]:
    """(+)MAD (one shared elicited prompt) vs DReaMAD (one prompt per agent), averaged over
    NIM and Fibonacci, normal and misère."""
    folder = _folder(opts, "figure7-left")
    runs = [
        (label, _tournament(opts, folder, name, method, list(FOUR_SETTINGS.values())))
        for label, name, method in (("(+)MAD", "plus-mad", "plus_mad"), ("DReaMAD", "dreamad", "dreamad"))
    ]  # fmt: skip
    table, bars = _win_table(runs, FOUR_SETTINGS, average=True)
    lines = _header(ARTIFACTS["figure7-left"], opts, "metanim reproduce figure7-left")
    lines += [
        f"{opts.episodes} episodes per setting, every setting starting at a random N-position. "
        "Average: wins over all episodes (equal per setting), 95% Wilson CI.",
        "",
        *table,
    ]
    avg = {"Average win rate": {label: bars[label]["Average"] for label, _ in runs}}
    return [
        _write(folder, "figure7-left", lines),
        *_bars(
            avg,
            folder.parent / "figure7-left.png",
            "Perspective diversification (4 settings)",
            "win rate (%)",
        ),
    ]


# ------------------------------------------------------- seed 000, Figure 7 (right)
TEMPERATURES = (0.0, 0.25, 0.5, 0.75, 1.0)


def figure7_right(opts: ReproduceOptions) -> list[Path]:
    """DReaMAD's accuracy on the Fibonacci dataset as the elicitation and rewrite
    temperature goes from 0 to 1 (seed 000: 15 runs each, 95% CI)."""
    folder = _folder(opts, "figure7-right")
    data = _data(opts, "fibonacci")
    points = []
    for t in TEMPERATURES:
        log = _evaluate(
            opts, folder, f"dreamad-t{t}", "dreamad", data,
            params={"elicit_temperature": t, "rewrite_temperature": t},
        )  # fmt: skip
        verdicts: dict[str, list[bool]] = defaultdict(list)
        for r in _rows(log):
            if r["correct"] is not None:
                verdicts[r["record_id"]].append(bool(r["correct"]))
        points.append((t, item_accuracy(verdicts)))
    lines = _header(ARTIFACTS["figure7-right"], opts, "metanim reproduce figure7-right")
    lines += [
        f"{opts.repeats} runs per temperature (seed 000: 15); 95% CI over items.",
        "",
        "| temperature | accuracy (mean ± std) | 95% CI | items × R |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {t} | {_pct(s.mean)} ± {100 * s.std:.1f} | [{_pct(s.low)}, {_pct(s.high)}] | {s.items} × {s.repeats} |"
        for t, s in points
    ]
    out = [_write(folder, "figure7-right", lines)]
    try:
        from metanim.analysis.plots import _pyplot

        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(5, 3.5))
        xs = [t for t, _ in points]
        ax.plot(xs, [100 * s.mean for _, s in points], marker="o")
        ax.fill_between(
            xs, [100 * s.low for _, s in points], [100 * s.high for _, s in points], alpha=0.25
        )
        ax.set_xlabel("elicitation / rewrite temperature")
        ax.set_ylabel("accuracy (%)")
        ax.set_ylim(0, 105)
        ax.set_title("DReaMAD on Fibonacci (95% CI over items)")
        fig.tight_layout()
        fig.savefig(folder.parent / "figure7-right.png", dpi=120)
        plt.close(fig)
        out.append(folder.parent / "figure7-right.png")
    except ImportError:
        pass
    return out


# --------------------------------------------------------------- seed 000, Table 12
TABLE12_METHODS = {
    "Self-Refinement": ("self_refine", {}),
    "Self-Refinement + DReaMAD(−)": ("self_refine", {"elicit": True}),
    "Self-Consistency": ("sc", {}),
    "Self-Consistency + DReaMAD(−)": ("sc", {"elicit": True}),
    "MAD": ("mad", {}),
    "DReaMAD": ("dreamad", {}),
}


def table12(opts: ReproduceOptions) -> list[Path]:
    """Win rates when DReaMAD's elicitation stage is added to Self-Refine and Self-Consistency."""
    folder = _folder(opts, "table12")
    runs = []
    for label, (method, params) in TABLE12_METHODS.items():
        name = (
            label.lower()
            .replace(" + dreamad(−)", "-elicit")
            .replace(" ", "-")
            .replace("(", "")
            .replace(")", "")
        )
        runs.append(
            (
                label,
                _tournament(
                    opts, folder, name, method, list(FOUR_SETTINGS.values()), params=params
                ),
            )
        )
    table, _ = _win_table(runs, FOUR_SETTINGS, average=False)
    lines = _header(ARTIFACTS["table12"], opts, "metanim reproduce table12")
    lines += [
        f"{opts.episodes} episodes per setting against ReAct on `{opts.opponent_model}`; "
        "95% Wilson CI.",
        "",
        *table,
    ]
    return [_write(folder, "table12", lines)]


# ------------------------------------------------------------ seed 003, identity bias
def identity_bias(opts: ReproduceOptions, peers: int | None = None) -> list[Path]:
    """Vanilla vs anonymized MAD (3 agents, 2 rounds, no consensus stop) on the NIM
    dataset: Conformity, Obstinacy, Δ, IBC with a debate-bootstrap CI, round 1 alone,
    and conformity by numbers of disagreeing/agreeing peers (seed 003 Eq. 19)."""
    folder = _folder(opts, "identity-bias")
    data = _data(opts, "nim")
    params: dict[str, Any] = {"agents": 3, "rounds": 2, "consensus_stop": False}
    if peers is not None:
        params["peers"] = peers
    logs = {
        cond: _evaluate(opts, folder, cond, method, data, params=params, model=opts.bias_model)
        for cond, method in (("vanilla", "mad"), ("anonymized", "anonymous_mad"))
    }
    traces = {
        cond: [t for t in (trace_from_decision(r) for r in _rows(log)) if t is not None]
        for cond, log in logs.items()
    }
    lines = _header(ARTIFACTS["identity-bias"], opts, "metanim reproduce identity-bias")
    lines[2] = (
        f"Command: `metanim reproduce identity-bias`. Model: `{opts.bias_model}`; seed {opts.seed}."
    )
    lines += [f"MAD parameters: `{json.dumps(params)}`.", ""]
    lines += [
        "| condition | debates | conformity | obstinacy | Δ | conformity r1 | obstinacy r1 | Δ r1 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for cond, items in traces.items():
        b, b1 = conformity_obstinacy(items), conformity_obstinacy(items, round=1)
        lines.append(
            f"| {cond} | {len(items)} | {_pct(b.conformity.value)} | {_pct(b.obstinacy.value)} "
            f"| {100 * b.gap:+.1f} pp | {_pct(b1.conformity.value)} | {_pct(b1.obstinacy.value)} "
            f"| {100 * b1.gap:+.1f} pp |"
        )
    try:
        ci = identity_bias_ci(traces["vanilla"], traces["anonymized"])
        ci1 = identity_bias_ci(traces["vanilla"], traces["anonymized"], round=1)
        lines += [
            "",
            f"IBC = Δ(vanilla) − Δ(anonymized) = {100 * ci.estimate:+.1f} pp, 95% CI "
            f"[{100 * ci.low:+.1f}, {100 * ci.high:+.1f}] (1,000 bootstrap resamples of debates); "
            f"round 1 alone: {100 * ci1.estimate:+.1f} pp [{100 * ci1.low:+.1f}, {100 * ci1.high:+.1f}].",
        ]
    except ValueError as exc:
        lines += ["", f"IBC: not defined ({exc})."]
    lines += ["", "Conformity by disagreeing (n_D) and agreeing (n_A) peers (Eq. 19):", ""]
    lines += [
        "| condition | n_D | n_A | turns | conformity | obstinacy |",
        "|---|---|---|---|---|---|",
    ]
    for cond, items in traces.items():
        for (n_d, n_a), b in conformity_by_peers(items).items():
            lines.append(
                f"| {cond} | {n_d} | {n_a} | {b.conformity.n} | {_pct(b.conformity.value)} "
                f"| {_pct(b.obstinacy.value)} |"
            )
    return [_write(folder, "identity-bias", lines)]


# ------------------------------------------------------------------ seed 001, Table 5
def table5(opts: ReproduceOptions) -> list[Path]:
    """Cross-model debate (model, model_b) and same-model debate (model at T = 0 and
    T = 0.7) on the NIM and Fibonacci datasets, each model graded before and after, the
    seven outcome categories, and McNemar against each model alone (seed 001 Tables 2,
    3 and 5)."""
    folder = _folder(opts, "table5")
    data = _data(opts, "nim", "fibonacci")
    models = f"{opts.model}|{opts.model_b}"
    base = {"temperature": 0.0}
    _evaluate(opts, folder, "cross", "cross", data, params={**base, "models": models}, repeats=1)
    # Seed 001's same-model debate: one model twice, one agent at T = 0 and one at T = 0.7.
    same = {"models": f"{opts.model}|{opts.model}", "temperatures": [0.0, 0.7]}
    _evaluate(opts, folder, "same-model", "cross", data, params=same, repeats=1)
    for name, model in (("single-a", opts.model), ("single-b", opts.model_b)):
        _evaluate(opts, folder, name, "cot", data, model=model, repeats=1)
    report = render_report(folder, write=False, plots=False)
    lines = _header(ARTIFACTS["table5"], opts, "metanim reproduce table5")
    lines += [
        f"Cross-model: model_1 = `{opts.model}`, model_2 = `{opts.model_b}`, both at T = 0. "
        f"Same-model: `{opts.model}` twice, model_1 at T = 0 and model_2 at T = 0.7.",
        "",
    ]
    for row in report.cross:
        lines += cross_markdown(row)
    lines += [
        "## Single models (CoT)",
        "",
        *accuracy_table([r for r in report.accuracy if "cross" not in r.method]),
    ]
    return [_write(folder, "table5", lines)]


# --------------------------------------------------------- seed 004, weight trajectories
def weights(opts: ReproduceOptions) -> list[Path]:
    """AceMAD's per-agent weights round by round (mean over decisions, by role)."""
    folder = _folder(opts, "weights")
    log = _evaluate(opts, folder, "acemad", "acemad", _data(opts, "nim"), repeats=1)
    by: dict[tuple[str, str, int], list[float]] = defaultdict(list)
    for r in _rows(log):
        ace = ((r.get("decision") or {}).get("extra") or {}).get("acemad") or {}
        roles = ace.get("roles") or {}
        for rnd in ace.get("rounds") or []:
            for agent, w in (rnd.get("weights") or {}).items():
                by[(agent, str(roles.get(agent, "")), int(rnd["round"]))].append(float(w))
    agents = sorted({(a, role) for a, role, _ in by})
    rounds = sorted({r for _, _, r in by})
    lines = _header(ARTIFACTS["weights"], opts, "metanim reproduce weights")
    lines += [
        "Mean weight of each agent after each round over all decisions (weights sum to 1; "
        "truth-holders should gain).",
        "",
        "| agent | role | " + " | ".join(f"round {r}" for r in rounds) + " |",
        "|---|---|" + "---|" * len(rounds),
    ]
    for agent, role in agents:
        cells = [by.get((agent, role, r), []) for r in rounds]
        lines.append(
            f"| {md(agent)} | {md(role)} | "
            + " | ".join(f"{sum(c) / len(c):.3f}" if c else "–" for c in cells)
            + " |"
        )
    out = [_write(folder, "weights", lines)]
    try:
        from metanim.analysis.plots import _pyplot

        plt = _pyplot()
        fig, ax = plt.subplots(figsize=(5, 3.5))
        for agent, role in agents:
            ys = [
                sum(by[(agent, role, r)]) / len(by[(agent, role, r)])
                for r in rounds
                if by.get((agent, role, r))
            ]
            ax.plot(rounds[: len(ys)], ys, marker="o", label=f"{agent} ({role})")
        ax.set_xlabel("round")
        ax.set_ylabel("mean weight")
        ax.set_title("AceMAD weight trajectories")
        ax.legend(fontsize="small")
        fig.tight_layout()
        fig.savefig(folder.parent / "weights.png", dpi=120)
        plt.close(fig)
        out.append(folder.parent / "weights.png")
    except ImportError:
        pass
    return out


ARTIFACTS: dict[str, Artifact] = {
    a.name: a
    for a in (
        Artifact("table1", "Seed 000 Table 1", "decision accuracy with Average", table1),
        Artifact("figure3", "Seed 000 Figure 3 + Table 10", "belief entrenchment", entrenchment),
        Artifact("figure6", "Seed 000 Figure 6", "win rates of self-correction methods", figure6),
        Artifact("figure7-left", "Seed 000 Figure 7 (left)", "(+)MAD vs DReaMAD over four settings", figure7_left),
        Artifact("figure7-right", "Seed 000 Figure 7 (right)", "accuracy vs elicitation temperature", figure7_right),
        Artifact("table12", "Seed 000 Table 12", "elicitation added to Self-Refine and Self-Consistency", table12),
        Artifact("identity-bias", "Seed 003", "identity bias (vanilla vs anonymized MAD)", identity_bias),
        Artifact("table5", "Seed 001 Table 5", "cross-model debate outcomes", table5),
        Artifact("weights", "Seed 004", "AceMAD weight trajectories", weights),
    )
}  # fmt: skip


def reproduce(name: str, opts: ReproduceOptions) -> list[Path]:
    """Run artifact `name` (or "all"); returns the files written."""
    if name == "all":
        return [p for a in ARTIFACTS.values() for p in a.run(opts)]
    if name not in ARTIFACTS:
        raise ValueError(f"unknown artifact {name!r}; choose one of {', '.join(ARTIFACTS)} or all")
    return ARTIFACTS[name].run(opts)


__all__ = ["ARTIFACTS", "ReproduceOptions", "reproduce"]
