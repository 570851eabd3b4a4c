"""Seed 000 (DReaMAD, MetaNIM Arena): Table 1, Figure 3 with Table 10, Figure 6, Figure 7
(left and right) and Table 12.

The agents of every artifact here are one hypothesis (`SEED000`): greedy, swayed by one
word that their own elicited texts sometimes carry, and reading a debate by consensus;
the tournaments add a ReAct opponent.
"""

from __future__ import annotations

import contextlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from metanim.analysis.debate import (
    DebateTrace,
    EntrenchmentRow,
    entrenchment_curve,
    entrenchment_fit_rows,
    entrenchment_row,
)
from metanim.analysis.plots import entrenchment_plot
from metanim.analysis.report import accuracy_table, render_report, trace_from_decision
from metanim.analysis.reproduce._base import (
    DATA,
    GAMES,
    ITEMS,
    PAIRED_HEAD,
    SAMPLING_T,
    Hypothesis,
    Run,
    artifact,
    bars_plot,
    line_plot,
    log_records,
    log_rows,
    paired_episodes,
    paired_items,
    paired_section,
    win_table,
)
from metanim.records import md
from metanim.records import pct as _pct
from metanim.stats import MAJORITY_RULE, item_accuracy, mean_ci, wilson_interval

#: The four settings of seed 000's Figure 7 (left) and Table 12: NIM and Fibonacci Nim,
#: normal and misère. Every one starts at a random N-position (`start="random_n"`), so
#: the presets and the JSON settings start alike.
FOUR_SETTINGS = {
    "NIM-N": 'nim:{"heaps":[31],"max_take":3}',
    "NIM-M": 'nim:{"heaps":[31],"max_take":3,"misere":true}',
    "Fib-N": 'fibonacci:{"n":20}',
    "Fib-M": 'fibonacci:{"n":20,"misere":true}',
}

#: Seed 000's agents (Tables 1 and 12, Figures 3, 6 and 7): greedy, swayed by one word
#: that their own elicited texts sometimes carry, and reading a debate by consensus.
SEED000_MODEL = (
    "sim-biased:heuristic=max_take,p=0.7,cue=Grundy,cue_p=0,insight=0.45,read=consensus,spread=1"
)
#: Seed 000's opponent is GPT-4o, the strongest model it tried.
SEED000_OPPONENT = "sim-biased:heuristic=max_take,p=0.1"
SEED000 = Hypothesis(
    {"agent": SEED000_MODEL, "opponent": SEED000_OPPONENT},
    (
        "at T = 0.7 an agent takes the most it may (the greedy heuristic) 70% of the time and "
        "the winning move otherwise; lower temperatures sharpen that preference (T = 0 is always "
        "greedy), higher ones flatten it",
        "a prompt that mentions 'Grundy' makes it play the winning move; a text it writes "
        "itself (an elicited strategy, a rewritten prompt) mentions 'Grundy' with probability "
        "0.45 at T = 0.7 (0.47 at T = 1, 0.43 at T = 0.5, 0.36 at T = 0.25, 0.20 at T = 0.1, "
        "never at T = 0), and keeps it when its request mentions it; nothing else in a "
        "method's prompt changes its play",
        "in a debate it keeps its answer when a peer (drawn at random) gives the same one, and "
        "otherwise answers afresh from its own preferences (the mechanism of seed 000's Eq. 1); "
        "an argument that mentions 'Grundy' cues the agent that reads it (arguments, not "
        "votes, persuade)",
    ),
    # A real model plays a real opponent: --model names both unless --opponent-model is given.
    flags={"agent": ("model",), "opponent": ("opponent_model", "model")},
    role_words={
        "opponent": (
            "the ReAct opponent (seed 000: GPT-4o) plays the winning move 90% of the time, "
            "the greedy move otherwise",
        )
    },
)
#: The evaluations play no opponent.
SEED000_AGENT = SEED000.only("agent")


# ---------------------------------------------------------------- seed 000, Table 1
#: Seed 000 Table 1's games, in its column order.
ACCURACY_GAMES = ("nim", "fibonacci", "chomp", "kayles")
TABLE1_METHODS = {"ReAct": "react", "+ CoT": "cot", "DReaMAD(−)": "dreamad_minus"}


@artifact(
    "table1", paper="Seed 000 Table 1", what="decision accuracy with Average",
    hypothesis=SEED000_AGENT, options=ITEMS,
)  # fmt: skip
def table1(run: Run) -> list[Path]:
    """ReAct, + CoT and DReaMAD(−) on the four critical-state datasets, every answer
    sampled at T = 0.7, R passes: mean ± std, CI over items, and DReaMAD(−) vs ReAct paired."""
    opts, folder, cast = run.opts, run.folder, run.cast
    data = [run.dataset(g) for g in ACCURACY_GAMES]
    logs = {}
    for label, method in TABLE1_METHODS.items():
        params: dict[str, Any] = {"temperature": SAMPLING_T}
        if method == "dreamad_minus":
            params |= {"elicit_temperature": 0.1, "rewrite_temperature": SAMPLING_T}
        logs[label] = run.evaluate(
            label.lower().strip("+ ").replace("(−)", "-minus"),
            method,
            data,
            params=params,
            model=cast["agent"],
        )
    report = render_report(folder, write=False, plots=False)
    # The paper's rows, in its order, under its names.
    rows = [
        r.model_copy(update={"method": label})
        for label, method in TABLE1_METHODS.items()
        for r in report.accuracy
        # The label's method name (its parameters at their defaults are not shown).
        if r.decisions and r.method.partition(" · ")[0].partition("[")[0] == method
    ]
    temps = [
        f"every answer call at T = {SAMPLING_T} (seed 000's sampling temperature; the "
        "paper's ReAct rows have a nonzero std, so they were sampled)",
        "DReaMAD(−)'s elicitation at T = 0.1 and its rewrite at T = 0.7 (seed 000 §4)",
    ]
    run.power(run.items(data), "items (per dataset; each method on the same items)")
    lines = run.header()
    lines += [
        cast.caption(
            f"Decision accuracy (choosing the unique optimal move), R = {opts.repeats} "
            f"passes; answers at T = {SAMPLING_T}, DReaMAD(−)'s elicitation at T = 0.1 and "
            "rewrite at T = 0.7"
        ),
        "",
        "Cell: mean ± std over the R passes (the paper's numbers), 95% CI over items, "
        "items × R. Columns in the paper's order; Average: mean of the games.",
        "",
        *accuracy_table(rows, games=list(ACCURACY_GAMES)),
        "",
        cast.caption(
            "DReaMAD(−) vs ReAct at equal temperature, paired on items (all games together)"
        ),
        "",
        *PAIRED_HEAD,
        paired_items("DReaMAD(−)", logs["DReaMAD(−)"], "ReAct", logs["ReAct"]).row(),
        paired_items("DReaMAD(−)", logs["DReaMAD(−)"], "+ CoT", logs["+ CoT"]).row(),
        "",
        f"McNemar: {MAJORITY_RULE}. A − B: accuracy difference of per-item means.",
        *cast.footer(temps),
    ]
    out = [run.write(lines)]
    bars: dict[str, dict[str, tuple[float, float, float]]] = defaultdict(dict)
    for r in rows:
        bars[r.method][r.game] = (r.low, r.mean, r.high)
    out += bars_plot(
        bars, run.image(),
        cast.title(f"Decision accuracy, T = {SAMPLING_T} (95% CI over items)"), "accuracy (%)",
        games=list(ACCURACY_GAMES),
    )  # fmt: skip
    return out


# ------------------------------------------------------- seed 000, Figure 3 + Table 10
def _eq1_range(hits: int, n: int, rounds: int) -> tuple[float, float]:
    """Eq. 1 after `rounds` steps at the ends of p⁽⁰⁾'s 95% Wilson interval (Eq. 1
    increases with p⁽⁰⁾, so this is the interval of the prediction)."""
    ci = wilson_interval(hits, n)
    return entrenchment_curve(ci.low, rounds)[-1], entrenchment_curve(ci.high, rounds)[-1]


@artifact(
    "figure3", paper="Seed 000 Figure 3 + Table 10", what="belief entrenchment",
    hypothesis=SEED000_AGENT, options=DATA | {"samples"},
)  # fmt: skip
def entrenchment(run: Run) -> list[Path]:
    """Seed 000 §3 / App. B.1: p⁽⁰⁾ from N samples at T = 0.7, then N two-agent debates
    per state at T = 0.7, 3 full rounds (no consensus stop); Eq. 1 over dominant actions."""
    opts, cast = run.opts, run.cast
    data = run.data("fibonacci")
    n = opts.samples
    # The states are chosen on samples of their own (another seed): chosen on the samples
    # that measure p⁽⁰⁾, a state's p⁽⁰⁾ reads high (the winner's curse).
    select_log = run.evaluate(
        "select", "react", data, params={"temperature": SAMPLING_T}, repeats=n,
        model=cast["agent"], seed=opts.seed + 1,
    )  # fmt: skip
    p0_log = run.evaluate(
        "p0",
        "react",
        data,
        params={"temperature": SAMPLING_T},
        repeats=n,
        model=cast["agent"],
    )
    mad_log = run.evaluate(
        "mad",
        "mad",
        data,
        repeats=n,
        model=cast["agent"],
        params={"agents": 2, "rounds": 3, "temperature": SAMPLING_T, "consensus_stop": False},
    )
    samples: dict[str, list[str | None]] = defaultdict(list)
    chosen_on: dict[str, list[str | None]] = defaultdict(list)
    for r in log_rows(select_log):
        chosen_on[r["record_id"]].append(r["answer"] if r["status"] == "ok" else None)
    optimal: dict[str, str] = {}
    states: dict[str, Any] = {}
    for r in log_rows(p0_log):
        samples[r["record_id"]].append(r["answer"] if r["status"] == "ok" else None)
        optimal[r["record_id"]] = r["optimal_move"]
        states[r["record_id"]] = ((r.get("decision") or {}).get("task") or {}).get("state")
    traces: dict[str, list[DebateTrace]] = defaultdict(list)
    for record in log_records(mad_log):
        t = trace_from_decision(record)
        if t is not None:
            traces[record.record_id].append(t)
    rows: list[EntrenchmentRow] = []
    for rid in sorted(samples):
        row = entrenchment_row(
            rid, samples[rid], traces.get(rid, []), optimal[rid],
            selection_samples=chosen_on.get(rid, []),
        )  # fmt: skip
        if row is not None:
            rows.append(row)
    lines = run.header()
    lines += [
        f"Protocol: {n} samples at T = {SAMPLING_T} choose the states, {n} more (drawn "
        f"apart) give p⁽⁰⁾; {n} debates per state, 2 "
        f"agents, T = {SAMPLING_T}, 3 rounds with the consensus stop off give p⁽³⁾ (every "
        "agent's final answer). Rows: states whose dominant action is strongly consistent "
        "(p⁽⁰⁾ > 0.5); belief = whether that action is the optimal move. Eq. 1: the "
        "prediction after 3 steps from the measured p⁽⁰⁾; its 95% range: Eq. 1 at the ends "
        "of p⁽⁰⁾'s Wilson interval. p⁽³⁾'s 95% CI: Wilson over the debates, a debate counting "
        "its share of answers on the action (0, ½ or 1: its two answers are not "
        "independent). Consistent: the two intervals overlap. Residual = "
        "observed − predicted.",
        "",
        cast.caption("Belief entrenchment per state (seed 000 Table 10's layout)"),
        "",
        "| state | action | belief | p⁽⁰⁾ [95% CI] | p⁽³⁾ [95% CI] | Eq. 1 [95% range] "
        "| consistent | residual |",
        "|---|---|---|---|---|---|---|---|",
    ]
    within = 0
    for r in sorted(rows, key=lambda r: (r.belief, r.item_id)):
        state = json.dumps(states.get(r.item_id), separators=(",", ":"))
        hits = round(r.p0 * n)
        p0ci = wilson_interval(hits, n)
        own = traces.get(r.item_id, [])
        # The real count: each debate's share of its agents' final answers on the action.
        shares = sum(sum(a[-1] == r.action for a in t.answers) / len(t.answers) for t in own)
        ptci = wilson_interval(shares, len(own))  # type: ignore[arg-type]
        low, high = _eq1_range(hits, n, 3)
        consistent = ptci.low <= high and low <= ptci.high
        within += consistent
        lines.append(
            f"| {md(state)} | {md(r.action)} | {r.belief} "
            f"| {r.p0:.3f} [{p0ci.low:.3f}, {p0ci.high:.3f}] "
            f"| {r.pt:.3f} [{ptci.low:.3f}, {ptci.high:.3f}] "
            f"| {r.predicted:.3f} [{low:.3f}, {high:.3f}] | {'yes' if consistent else 'no'} "
            f"| {r.residual:+.3f} |"
        )
    if rows:
        fit = entrenchment_fit_rows(rows)
        mean_p0 = sum(r.p0 for r in rows) / len(rows)
        mean_pt = sum(r.pt for r in rows) / len(rows)
        residual = (
            mean_ci([r.residual for r in rows]) if len(rows) > 1 else None
        )  # states are independent: a t interval over them
        spread = (
            f" [95% CI {100 * residual.low:+.1f}, {100 * residual.high:+.1f}] (t over states)"
            if residual is not None and residual.high > residual.low
            else " (one state or no spread: no interval)"
        )
        if residual is not None and residual.high > residual.low:
            half = 100 * (residual.high - residual.low) / 2
            run.power_note = (
                f"Power: with {len(rows)} states the mean residual's 95% interval is "
                f"±{half:.1f} pp: a residual smaller than that is not detected at this size "
                f"(the paper's −2.5 pp would need about {len(rows) * (half / 2.5) ** 2:,.0f} "
                "states of this spread)."
            )
        lines += [
            "",
            f"Over {len(rows)} strongly consistent actions: mean p⁽⁰⁾ {mean_p0:.3f}, mean "
            f"p⁽³⁾ {mean_pt:.3f}; mean residual {100 * fit.mean_residual:+.1f} pp{spread} "
            f"(seed 000: −2.5%); p⁽³⁾ > p⁽⁰⁾ in {fit.strong_rose.hits}/{fit.strong_rose.n}; p⁽³⁾ "
            f"consistent with Eq. 1 in {within}/{len(rows)}. Two debaters that agreed stay "
            "together, so p⁽³⁾ falls short of Eq. 1 (which treats every round's pairs as "
            "independent) by a few points: the paper's negative residual.",
        ]
    else:
        lines += ["", "No state had a strongly consistent action (p⁽⁰⁾ > 0.5)."]
    lines += cast.footer(
        [f"ReAct samples and both debaters at T = {SAMPLING_T} (seed 000 App. B.1)"]
    )
    out = [run.write(lines)]
    with contextlib.suppress(ImportError):  # matplotlib is the optional `plots` extra
        out.append(
            entrenchment_plot(
                [(r.p0, r.pt) for r in rows], run.image(), rounds=3,
                title=cast.title("Belief entrenchment (dominant actions)"),
            )
        )  # fmt: skip
    return out


# ---------------------------------------------------------------- seed 000, Figure 6
FIGURE6_METHODS: dict[str, tuple[str, dict[str, Any]]] = {
    "Standard": ("standard", {"temperature": SAMPLING_T}),
    "ReAct": ("react", {"temperature": SAMPLING_T}),
    "Self-Refine": ("self_refine", {"temperature": SAMPLING_T}),
    "Self-Consistency": ("sc", {"temperature": SAMPLING_T}),
    "MAD": ("mad", {"temperature": SAMPLING_T}),
    "MPD": ("mpd", {"temperature": SAMPLING_T}),
    "DReaMAD": ("dreamad", {"temperature": SAMPLING_T}),
}
FIGURE6_SETTINGS = {
    "NIM": "nim-31-k3",
    "Fibonacci": "fibonacci-20",
    "Kayles": "kayles-20",
    "Chomp": "chomp-5x5",
    "Corner Queen": "corner-queen",
}
TOURNAMENT_TEMPERATURES = (
    f"every method's answers at T = {SAMPLING_T} (seed 000's sampling temperature)",
    "DReaMAD's elicitation at T = 0.1 and rewrites at T = 0.7; MPD's judge at T = 0 (Liang et al.)",
    f"the ReAct opponent at T = {SAMPLING_T}",
)


def _slug(label: str) -> str:
    for a, b in ((" + dreamad(−)", "-elicit"), ("(+)", "plus-"), (" ", "-"), ("(", ""), (")", "")):
        label = label.lower().replace(a, b)
    return label


def _tournaments(
    run: Run, methods: dict[str, tuple[str, dict[str, Any]]], settings: dict[str, str]
) -> list[tuple[str, Path]]:
    """One tournament per labelled method over `settings`, in order."""
    return [
        (label, run.tournament(_slug(label), method, list(settings.values()), params=params))
        for label, (method, params) in methods.items()
    ]  # fmt: skip


@artifact(
    "figure6", paper="Seed 000 Figure 6", what="win rates of self-correction methods",
    hypothesis=SEED000, options=GAMES,
)  # fmt: skip
def figure6(run: Run) -> list[Path]:
    """Win rate of every self-correction method against a ReAct opponent, per game."""
    opts, cast = run.opts, run.cast
    runs = _tournaments(run, FIGURE6_METHODS, FIGURE6_SETTINGS)
    table, bars = win_table(runs, FIGURE6_SETTINGS, average=False)
    run.power(run.opts.episodes, "episodes per game (each method on the same starts)")
    lines = run.header()
    lines += [
        cast.caption(
            f"Win rate over {opts.episodes} episodes per game against ReAct, agent first to "
            "move at a random N-position; 95% Wilson CI"
        ),
        "",
        *table,
        *cast.footer(TOURNAMENT_TEMPERATURES),
    ]
    return [
        run.write(lines),
        *bars_plot(
            bars, run.image(),
            cast.title("Win rate vs a ReAct opponent (95% Wilson CI)"), "win rate (%)",
            games=list(FIGURE6_SETTINGS),
        ),
    ]  # fmt: skip


# -------------------------------------------------------- seed 000, Figure 7 (left)
@artifact(
    "figure7-left", paper="Seed 000 Figure 7 (left)", what="(+)MAD vs DReaMAD over four settings",
    hypothesis=SEED000, options=GAMES,
)  # fmt: skip
def figure7_left(run: Run) -> list[Path]:
    """(+)MAD (one shared elicited prompt) vs DReaMAD (one prompt per agent), averaged over
    NIM and Fibonacci, normal and misère."""
    opts, cast = run.opts, run.cast
    runs = [
        (label, run.tournament(name, method, list(FOUR_SETTINGS.values()), params={"temperature": SAMPLING_T}))
        for label, name, method in (("(+)MAD", "plus-mad", "plus_mad"), ("DReaMAD", "dreamad", "dreamad"))
    ]  # fmt: skip
    table, bars = win_table(runs, FOUR_SETTINGS, average=True)
    run.power(run.opts.episodes, "episodes per setting (each method on the same starts)")
    lines = run.header()
    lines += [
        cast.caption(
            f"{opts.episodes} episodes per setting, every setting starting at a random "
            "N-position. Average: wins over all episodes (equal per setting), 95% Wilson CI"
        ),
        "",
        *table,
        *paired_section(cast, "DReaMAD vs (+)MAD over the four settings",
                         [paired_episodes("DReaMAD", runs[1][1], "(+)MAD", runs[0][1])]),
        *cast.footer(TOURNAMENT_TEMPERATURES),
    ]  # fmt: skip
    avg = {"Average win rate": {label: bars[label]["Average"] for label, _ in runs}}
    return [
        run.write(lines),
        *bars_plot(avg, run.image(),
               cast.title("Perspective diversification (4 settings)"), "win rate (%)"),
    ]  # fmt: skip


# ------------------------------------------------------- seed 000, Figure 7 (right)
TEMPERATURES = (0.0, 0.25, 0.5, 0.75, 1.0)


@artifact(
    "figure7-right", paper="Seed 000 Figure 7 (right)", what="accuracy vs elicitation temperature",
    hypothesis=SEED000_AGENT, options=DATA,
)  # fmt: skip
def figure7_right(run: Run) -> list[Path]:
    """DReaMAD's accuracy on the Fibonacci dataset as the elicitation and rewrite
    temperature goes from 0 to 1 (seed 000: 15 runs each, 95% CI)."""
    opts, cast = run.opts, run.cast
    data = run.data("fibonacci")
    points = []
    logs = {}
    for t in TEMPERATURES:
        logs[t] = run.evaluate(
            f"dreamad-t{t}",
            "dreamad",
            data,
            model=cast["agent"],
            params={"elicit_temperature": t, "rewrite_temperature": t, "temperature": SAMPLING_T},
        )
        verdicts: dict[str, list[bool]] = defaultdict(list)
        for r in log_rows(logs[t]):
            if r["correct"] is not None:
                verdicts[r["record_id"]].append(bool(r["correct"]))
        points.append((t, item_accuracy(verdicts)))
    run.power(run.items(data), "items per temperature")
    lines = run.header()
    lines += [
        cast.caption(
            f"DReaMAD on Fibonacci, {opts.repeats} runs per temperature (seed 000: 15); "
            "95% CI over items"
        ),
        "",
        "| temperature | accuracy (mean ± std) | 95% CI | items × R |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {t} | {_pct(s.mean)} ± {100 * s.std:.1f} | [{_pct(s.low)}, {_pct(s.high)}] "
        f"| {s.items} × {s.repeats} |"
        for t, s in points
    ]
    lo, hi = TEMPERATURES[0], TEMPERATURES[-1]
    lines += [
        "",
        cast.caption(f"T = {hi} vs T = {lo}, paired on items"),
        "",
        *PAIRED_HEAD,
        paired_items(f"T = {hi}", logs[hi], f"T = {lo}", logs[lo]).row(),
        *cast.footer(
            [
                "the elicitation (both steps) and the rewrites at the temperature of the row",
                f"the debate's answers at T = {SAMPLING_T}",
            ]
        ),
    ]
    series = {"DReaMAD": [(t, s.low, s.mean, s.high) for t, s in points]}
    return [
        run.write(lines),
        *line_plot(
            series, run.image(),
            title=cast.title("DReaMAD on Fibonacci (95% CI over items)"),
            xlabel="elicitation / rewrite temperature", ylabel="accuracy (%)",
        ),
    ]  # fmt: skip


# --------------------------------------------------------------- seed 000, Table 12
TABLE12_METHODS: dict[str, tuple[str, dict[str, Any]]] = {
    "Self-Refinement": ("self_refine", {"temperature": SAMPLING_T}),
    "Self-Refinement + DReaMAD(−)": ("self_refine", {"temperature": SAMPLING_T, "elicit": True}),
    "Self-Consistency": ("sc", {"temperature": SAMPLING_T}),
    "Self-Consistency + DReaMAD(−)": ("sc", {"temperature": SAMPLING_T, "elicit": True}),
    "MAD": ("mad", {"temperature": SAMPLING_T}),
    "DReaMAD": ("dreamad", {"temperature": SAMPLING_T}),
}
#: The rows seed 000's Table 12 sets against each other.
TABLE12_PAIRS = (
    ("Self-Refinement + DReaMAD(−)", "Self-Refinement"),
    ("Self-Consistency + DReaMAD(−)", "Self-Consistency"),
    ("DReaMAD", "MAD"),
)


@artifact(
    "table12", paper="Seed 000 Table 12", what="elicitation added to Self-Refine and Self-Consistency",
    hypothesis=SEED000, options=GAMES,
)  # fmt: skip
def table12(run: Run) -> list[Path]:
    """Win rates when DReaMAD's elicitation stage is added to Self-Refine and Self-Consistency."""
    opts, cast = run.opts, run.cast
    runs = _tournaments(run, TABLE12_METHODS, FOUR_SETTINGS)
    logs = dict(runs)
    table, _ = win_table(runs, FOUR_SETTINGS, average=True)
    run.power(run.opts.episodes, "episodes per game (each method on the same starts)")
    lines = run.header()
    lines += [
        cast.caption(
            f"{opts.episodes} episodes per setting against ReAct; 95% Wilson CI; the "
            "elicited prompt replaces the game prompt (seed 000 §4.2)"
        ),
        "",
        *table,
        *paired_section(cast, "Each method with the elicitation stage vs without",
                         [paired_episodes(a, logs[a], b, logs[b]) for a, b in TABLE12_PAIRS]),
        *cast.footer(TOURNAMENT_TEMPERATURES),
    ]  # fmt: skip
    return [run.write(lines)]
