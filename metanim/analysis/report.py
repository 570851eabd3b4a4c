"""`metanim report RESULTS`: a results folder as tables (terminal, Markdown) and PNG plots.

It reads what `metanim.arena` writes (docs/analysis.md lists the fields it relies on):
every `*.jsonl` log under the folder, each line either a tournament episode (has
`seat`, `status` win/loss/…, `moves`) or an evaluation decision (has `record_id`,
`correct`), with the run's config beside it (`<log>.config.json`, or `run.json` in
the same folder) naming the method and model. Unknown lines are skipped, so a folder
may also hold datasets or other logs.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterator
from itertools import combinations
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from metanim.analysis.debate import (
    DebateTrace,
    conformity_obstinacy,
    error_correction_rate,
    negative_persuasion_rate,
    subversion_correction,
)
from metanim.analysis.stats import mcnemar_exact, mean_ci, wilson_interval

FINISHED = ("win", "loss")


class WinRow(BaseModel):
    method: str
    game: str
    wins: int
    finished: int
    low: float
    high: float
    failed: int = Field(0, description="infrastructure errors and errors: never a loss")

    @property
    def rate(self) -> float:
        return self.wins / self.finished if self.finished else math.nan


class AccuracyRow(BaseModel):
    method: str
    game: str
    repeats: int
    decisions: int
    mean: float
    std: float
    low: float
    high: float
    failed: int = 0


class PairedRow(BaseModel):
    game: str
    a: str
    b: str
    pairs: int
    only_a: int
    only_b: int
    p_value: float


class DebateRow(BaseModel):
    method: str
    debates: int
    conformity: float
    obstinacy: float
    subversion: float
    correction: float
    error_correction: str
    negative_persuasion: str


class Report(BaseModel):
    """Everything `metanim report` shows; `markdown` is also written as report.md."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    results_dir: str
    win_rates: list[WinRow] = Field(default_factory=list)
    accuracy: list[AccuracyRow] = Field(default_factory=list)
    paired: list[PairedRow] = Field(default_factory=list)
    debate: list[DebateRow] = Field(default_factory=list)
    skipped_files: list[str] = Field(default_factory=list)
    plots: list[str] = Field(default_factory=list)
    markdown: str = ""

    def terminal(self) -> str:
        """Plain-text tables for the terminal."""
        out = [f"results: {self.results_dir}"]
        if self.win_rates:
            out += ["", "Win rate (95% Wilson CI)"]
            out += _text_table(
                ["method", "game", "win rate", "95% CI", "n", "failed"],
                [
                    [
                        r.method,
                        r.game,
                        _pct(r.rate),
                        f"[{_pct(r.low)}, {_pct(r.high)}]",
                        r.finished,
                        r.failed,
                    ]
                    for r in self.win_rates
                ],
            )
        if self.accuracy:
            out += ["", "Decision accuracy (mean ± std over repeats, 95% CI)"]
            out += _text_table(
                ["method", "game", "accuracy", "95% CI", "R", "decisions"],
                [
                    [
                        r.method,
                        r.game,
                        f"{_pct(r.mean)} ± {100 * r.std:.1f}",
                        f"[{_pct(r.low)}, {_pct(r.high)}]",
                        r.repeats,
                        r.decisions,
                    ]
                    for r in self.accuracy
                ],
            )
        if not self.win_rates and not self.accuracy:
            out.append("no tournament episodes or evaluation decisions found")
        out += [f"plot: {p}" for p in self.plots]
        return "\n".join(out)


# ------------------------------------------------------------------------- reading
def iter_logs(results_dir: str | Path) -> Iterator[tuple[Path, str, dict[str, Any]]]:
    """(log path, kind, config) for every episode or decision log under the folder."""
    for path in sorted(Path(results_dir).rglob("*.jsonl")):
        kind = _kind(path)
        if kind is None:
            continue
        yield path, kind, _config_of(path)


def _kind(path: Path) -> str | None:
    try:
        with path.open(encoding="utf-8") as fh:
            first = next((line for line in fh if line.strip()), "")
        row = json.loads(first) if first else {}
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(row, dict):
        return None
    if "seat" in row and "status" in row:
        return "episodes"
    if "record_id" in row and "correct" in row:
        return "decisions"
    return None


def _config_of(path: Path) -> dict[str, Any]:
    for candidate in (path.with_suffix(".config.json"), path.parent / "run.json"):
        if candidate.exists():
            try:
                data = json.loads(candidate.read_text())
            except json.JSONDecodeError:
                continue
            if isinstance(data, dict):
                return data
    return {}


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    # Read as `tournament`/`evaluate` read their logs: a torn last line (a killed run)
    # is skipped, a corrupt complete line is refused with file:line.
    from metanim.arena._log import read_records

    for row in read_records(path):
        if isinstance(row, dict):
            yield row


def _latest(rows: Iterator[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last line per id: a resumed run appends a rerun after the failed attempt."""
    out: dict[Any, dict[str, Any]] = {}
    for k, row in enumerate(rows):
        out[row.get("id", k)] = row
    return list(out.values())


def _label(config: dict[str, Any], fallback: str) -> tuple[str, str]:
    return str(config.get("method") or fallback or "?"), str(config.get("model") or "")


def _game_key(game: str, variant: str) -> str:
    return game if variant in ("", "normal") else f"{game} ({variant})"


# ------------------------------------------------------------------------- report
def render_report(results_dir: str | Path, *, write: bool = True, plots: bool = True) -> Report:
    """Read a results folder; with `write`, save report.md and (with `plots`) PNGs there."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise ValueError(f"no results folder at {results_dir}")
    episodes: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    decisions: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for path, kind, config in iter_logs(results_dir):
        rows = _latest(_rows(path))
        for row in rows:
            if kind == "episodes":
                method, model = _label(config, str(row.get("agent", "")))
                setting = str(row.get("setting") or row.get("game") or "?")
                episodes[(method, model, setting)].append(row)
            else:
                method, model = _label(config, str(row.get("method", "")))
                game = _game_key(str(row.get("game", "?")), str(row.get("variant", "")))
                decisions[(method, model, game)].append(row)
    models: dict[str, set[str]] = defaultdict(set)
    for method, model, _ in [*episodes, *decisions]:
        models[method].add(model)

    def name(method: str, model: str) -> str:
        # Name the model only where one method ran on several models.
        return method if len(models[method]) <= 1 or not model else f"{method} · {model}"

    report = Report(results_dir=str(results_dir))
    for (method, model, game), rows in sorted(episodes.items()):
        finished = [r for r in rows if r.get("status") in FINISHED]
        wins = sum(r["status"] == "win" for r in finished)
        ci = wilson_interval(wins, len(finished))
        report.win_rates.append(
            WinRow(
                method=name(method, model),
                game=game,
                wins=wins,
                finished=len(finished),
                low=ci.low,
                high=ci.high,
                failed=len(rows) - len(finished),
            )
        )
    for (method, model, game), rows in sorted(decisions.items()):
        report.accuracy.append(_accuracy_row(name(method, model), game, rows))
    report.paired = _paired(decisions, name)
    report.debate = _debate_rows(decisions, name)
    if write and plots and (report.win_rates or report.accuracy):
        report.plots = _plots(report, results_dir)
    report.markdown = to_markdown(report)
    if write:
        (results_dir / "report.md").write_text(report.markdown, encoding="utf-8")
    return report


def _accuracy_row(method: str, game: str, rows: list[dict[str, Any]]) -> AccuracyRow:
    graded = [r for r in rows if r.get("correct") is not None]
    per_repeat: dict[int, list[bool]] = defaultdict(list)
    for r in graded:
        per_repeat[int(r.get("repeat", 0))].append(bool(r["correct"]))
    accs = [sum(v) / len(v) for _, v in sorted(per_repeat.items())]
    failed = len(rows) - len(graded)
    if len(accs) >= 2:
        s = mean_ci(accs)
        # An accuracy lies in [0, 1]; a t-interval over few repeats can overshoot it.
        return AccuracyRow(
            method=method,
            game=game,
            repeats=len(accs),
            decisions=len(graded),
            mean=s.mean,
            std=s.std,
            low=max(0.0, s.low),
            high=min(1.0, s.high),
            failed=failed,
        )
    # One pass: no spread over repeats, so the CI is Wilson's over the decisions.
    hits = sum(bool(r["correct"]) for r in graded)
    ci = wilson_interval(hits, len(graded))
    return AccuracyRow(
        method=method,
        game=game,
        repeats=len(accs),
        decisions=len(graded),
        mean=ci.estimate,
        std=0.0,
        low=ci.low,
        high=ci.high,
        failed=failed,
    )


def _paired(
    decisions: dict[tuple[str, str, str], list[dict[str, Any]]], name: Any
) -> list[PairedRow]:
    """McNemar's exact test between every two methods on the same (record, repeat)."""
    by_game: dict[str, dict[str, dict[tuple[str, int], bool]]] = defaultdict(dict)
    for (method, model, game), rows in decisions.items():
        by_game[game][name(method, model)] = {
            (str(r["record_id"]), int(r.get("repeat", 0))): bool(r["correct"])
            for r in rows
            if r.get("correct") is not None
        }
    out = []
    for game, per_method in sorted(by_game.items()):
        for a, b in combinations(sorted(per_method), 2):
            keys = sorted(set(per_method[a]) & set(per_method[b]))
            if not keys:
                continue
            test = mcnemar_exact([per_method[a][k] for k in keys], [per_method[b][k] for k in keys])
            out.append(
                PairedRow(
                    game=game,
                    a=a,
                    b=b,
                    pairs=len(keys),
                    only_a=test.only_a,
                    only_b=test.only_b,
                    p_value=test.p_value,
                )
            )
    return out


def trace_from_decision(row: dict[str, Any]) -> DebateTrace | None:
    """A `DebateTrace` from an evaluation log line whose decision kept debate rounds
    (`decision.rounds`: one {agent: answer text} per round); None if it has none."""
    decision = row.get("decision") or {}
    rounds = decision.get("rounds") or []
    if not isinstance(rounds, list) or not rounds or not all(isinstance(r, dict) for r in rounds):
        return None
    agents = list(dict.fromkeys(a for r in rounds for a in r))
    if len(agents) < 2:
        return None
    # A debate that stops early on agreement leaves its later rounds out: every
    # agent's answer carries forward to the configured number of rounds.
    planned = (decision.get("params") or {}).get("rounds")
    total = max(len(rounds), int(planned) if isinstance(planned, int) else 0)
    answers: list[list[str | None]] = []
    for agent in agents:
        seq: list[str | None] = []
        for k in range(total):
            last = seq[-1] if seq else None
            seq.append(rounds[k].get(agent, last) if k < len(rounds) else last)
        answers.append(seq)
    return DebateTrace(
        item_id=str(row.get("record_id", "")),
        agents=agents,
        answers=answers,
        correct=[str(row.get("optimal_move", ""))],
    )


def _debate_rows(
    decisions: dict[tuple[str, str, str], list[dict[str, Any]]], name: Any
) -> list[DebateRow]:
    traces: dict[str, list[DebateTrace]] = defaultdict(list)
    for (method, model, _), rows in decisions.items():
        for row in rows:
            trace = trace_from_decision(row)
            if trace is not None and trace.rounds >= 2:
                traces[name(method, model)].append(trace)
    out = []
    for method, items in sorted(traces.items()):
        bias = conformity_obstinacy(items)
        sc = subversion_correction(items)
        ec, npr = error_correction_rate(items), negative_persuasion_rate(items)
        out.append(
            DebateRow(
                method=method,
                debates=len(items),
                conformity=bias.conformity.value,
                obstinacy=bias.obstinacy.value,
                subversion=sc["subversion"].value,
                correction=sc["correction"].value,
                error_correction=f"{ec.hits}/{ec.n}",
                negative_persuasion=f"{npr.hits}/{npr.n}",
            )
        )
    return out


def _plots(report: Report, results_dir: Path) -> list[str]:
    try:
        from metanim.analysis.plots import grouped_bars
    except ImportError:  # pragma: no cover
        return []
    out = []
    try:
        if report.win_rates:
            bars: dict[str, dict[str, tuple[float, float, float]]] = defaultdict(dict)
            for r in report.win_rates:
                if r.finished:
                    bars[r.method][r.game] = (r.low, r.rate, r.high)
            out.append(
                str(
                    grouped_bars(
                        bars,
                        results_dir / "win_rates.png",
                        title="Win rate per game (95% Wilson CI)",
                        ylabel="win rate (%)",
                    )
                )
            )
        if report.accuracy:
            acc: dict[str, dict[str, tuple[float, float, float]]] = defaultdict(dict)
            for a in report.accuracy:
                if a.decisions:
                    acc[a.method][a.game] = (max(a.low, 0.0), a.mean, min(a.high, 1.0))
            out.append(
                str(
                    grouped_bars(
                        acc,
                        results_dir / "accuracy.png",
                        title="Decision accuracy per game (95% CI)",
                        ylabel="accuracy (%)",
                    )
                )
            )
    except ImportError:
        return out
    return out


# ------------------------------------------------------------------------ markdown
def to_markdown(report: Report) -> str:
    lines = [f"# Results: `{report.results_dir}`", ""]
    if report.win_rates:
        lines += [
            "## Win rates (seed 000, Figure 6)",
            "",
            "Wins over finished episodes (wins + losses), 95% Wilson CI. Failed episodes "
            "(infrastructure errors, errors) are never losses; they are counted apart.",
            "",
            "| method | game | win rate | 95% CI | finished | failed |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r.method} | {r.game} | {_pct(r.rate)} | [{_pct(r.low)}, {_pct(r.high)}] "
            f"| {r.finished} | {r.failed} |"
            for r in report.win_rates
        ]
        lines.append("")
    if report.accuracy:
        games = sorted({a.game for a in report.accuracy})
        methods = sorted({a.method for a in report.accuracy})
        cell = {(a.method, a.game): a for a in report.accuracy}
        lines += [
            "## Decision accuracy (seed 000, Table 1)",
            "",
            "Share of decisions that pick the unique optimal move: mean ± std over the R "
            "passes, 95% t-interval (Wilson over decisions when R = 1).",
            "",
            "| method | " + " | ".join(games) + " |",
            "|---|" + "---|" * len(games),
        ]
        for m in methods:
            cells = []
            for g in games:
                a = cell.get((m, g))
                cells.append(
                    "–"
                    if a is None or not a.decisions
                    else f"{_pct(a.mean)} ± {100 * a.std:.1f} [{_pct(a.low)}, {_pct(a.high)}]"
                )
            lines.append(f"| {m} | " + " | ".join(cells) + " |")
        lines.append("")
    if report.paired:
        lines += [
            "## Paired comparisons (McNemar's exact test)",
            "",
            "| game | A | B | pairs | only A right | only B right | p |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {p.game} | {p.a} | {p.b} | {p.pairs} | {p.only_a} | {p.only_b} | {p.p_value:.3g} |"
            for p in report.paired
        ]
        lines.append("")
    if report.debate:
        lines += [
            "## Debate dynamics",
            "",
            "Conformity/Obstinacy and Subversion/Correction as in seed 003 (any disagreeing "
            "peer); error correction = all wrong at round 0 → some right at the end; negative "
            "persuasion = an initially right agent ends wrong (seed 001).",
            "",
            "| method | debates | conformity | obstinacy | gap | subversion | correction "
            "| error correction | negative persuasion |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {d.method} | {d.debates} | {_pct(d.conformity)} | {_pct(d.obstinacy)} "
            f"| {_signed(d.conformity - d.obstinacy)} | {_pct(d.subversion)} | {_pct(d.correction)} "
            f"| {d.error_correction} | {d.negative_persuasion} |"
            for d in report.debate
        ]
        lines.append("")
    if not report.win_rates and not report.accuracy:
        lines += ["No tournament episodes or evaluation decisions were found.", ""]
    for p in report.plots:
        lines += [f"![{Path(p).stem}]({Path(p).name})", ""]
    return "\n".join(lines)


def _pct(x: float) -> str:
    return "–" if x != x else f"{100 * x:.1f}%"


def _signed(x: float) -> str:
    return "–" if x != x else f"{100 * x:+.1f} pp"


def _text_table(headers: list[str], rows: list[list[Any]]) -> list[str]:
    cells = [headers, *[[str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*headers), fmt.format(*["-" * w for w in widths])] + [
        fmt.format(*r) for r in cells[1:]
    ]
