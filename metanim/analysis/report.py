"""`metanim report RESULTS`: a results folder as tables (terminal, Markdown) and PNG plots.

It reads what `metanim.arena` writes (docs/analysis.md lists the fields it relies on):
every `*.jsonl` log under the folder, each line either a tournament episode (has
`seat`, `status` win/loss/…, `moves`) or an evaluation decision (has `record_id`,
`correct`), with the run's config beside it (`<log>.config.json`, or `run.json` in
the same folder). Unknown lines are skipped, so a folder may also hold datasets or
other logs.

Rows are runs, grouped by the canonical run identity (`metanim.records.run_identity`):
method and every parameter, model(s), opponent and its model, settings, start rule,
seat policy, seed, prompt and call options. Two identities are never pooled into one
row; labels name the model and the opponent, and grow the fields two runs differ in
when their short labels would read the same. Units: the item for decision accuracy
(repeats kept together), the episode for win rates, the debate for debate metrics.
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

from metanim.agents import Decision, parse_spec
from metanim.analysis.debate import (
    OUTCOMES,
    DebateTrace,
    Rate,
    agent_accuracy,
    any_correct_rate,
    conformity_by_peers,
    conformity_obstinacy,
    error_correction_rate,
    identity_bias_ci,
    mixed_rate,
    negative_persuasion_rate,
    outcome_breakdown,
    rate_bootstrap,
    subversion_correction,
)
from metanim.analysis.plots import grouped_bars
from metanim.analysis.ratings import (
    Ratings,
    rate_results,
    ratings_markdown,
    ratings_plot,
    ratings_terminal,
)
from metanim.analysis.results import (
    DecisionGroup,
    EpisodeGroup,
    Results,
    Verdicts,
    WinCounts,
    read_results,
    run_dataset,
)
from metanim.analysis.tables import ACCURACY_TABLE, WIN_TABLE
from metanim.analysis.viewer import PAGE_RECORDS, write_viewer
from metanim.games import make_game
from metanim.records import (
    DecisionRecord,
    EpisodeRecord,
    Record,
    decision_of,
    distinguishing_labels,
    game_key,
    md,
    schema_breaks,
    signed,
    std_text,
)
from metanim.records import pct as _pct
from metanim.solver import winning_moves
from metanim.stats import (
    MAJORITY_RULE,
    item_accuracy,
    majority_verdict,
    mcnemar_exact,
    mcnemar_items,
    newcombe_difference,
    paired_episode_difference,
    paired_item_difference,
    wilson_interval,
)
from metanim.util import aio

FINISHED = ("win", "loss")


class WinRow(BaseModel):
    """A run's win rate on one setting: pooled over seats (`seat` "all", with a row per
    seat the run played in `seats`) or of one seat; with its episodes by start."""

    method: str  # the run's label (method, model, opponent)
    game: str
    wins: int
    finished: int
    low: float
    high: float
    failed: int = Field(0, description="infrastructure errors and errors: never a loss")
    identity: str = ""
    forfeit_losses: int = Field(0, description="losses by forfeit (format failures), not by play")
    on_failure: str = Field("forfeit", description="the run's policy after failed re-asks")
    seat: str = Field("all", description='the agent\'s seat: "first", "second" or "all"')
    start_n: int = Field(0, description="episodes starting at an N-position (first mover wins)")
    start_p: int = Field(0, description="episodes starting at a P-position (first mover loses)")
    wins_n: int = Field(0, description="wins of the finished episodes that start at N")
    finished_n: int = 0
    wins_p: int = Field(0, description="wins of the finished episodes that start at P")
    finished_p: int = 0
    seats: list[WinRow] = Field(default_factory=list, description="a row per seat played")

    @property
    def rate(self) -> float:
        return self.wins / self.finished if self.finished else math.nan

    @property
    def rate_n(self) -> float:
        """Win rate from N starts, where finished episodes start at both N and P."""
        return self.wins_n / self.finished_n if self.finished_n and self.finished_p else math.nan

    @property
    def rate_p(self) -> float:
        """Win rate from P starts, where finished episodes start at both N and P."""
        return self.wins_p / self.finished_p if self.finished_n and self.finished_p else math.nan


def win_row(method: str, game: str, counts: WinCounts, **fields: Any) -> WinRow:
    """The row of some episodes' win counts, with the win rate's 95% Wilson interval."""
    ci = wilson_interval(counts.wins, counts.finished)
    return WinRow(
        method=method, game=game, wins=counts.wins, finished=counts.finished, low=ci.low,
        high=ci.high, failed=counts.failed, forfeit_losses=counts.forfeit_losses,
        start_n=counts.starts["N"], start_p=counts.starts["P"],
        wins_n=counts.start_wins["N"], finished_n=counts.start_finished["N"],
        wins_p=counts.start_wins["P"], finished_p=counts.start_finished["P"], **fields,
    )  # fmt: skip


class WinDiffRow(BaseModel):
    game: str
    a: str
    b: str
    paired: bool  # same episode seeds, seats and starts: Tango's paired interval
    n: int
    diff: float
    low: float
    high: float


class AccuracyRow(BaseModel):
    method: str  # the run's label
    game: str
    repeats: int
    decisions: int
    mean: float
    std: float
    low: float
    high: float
    failed: int = 0
    items: int = 0
    identity: str = ""
    forfeits: int = 0  # format failures, graded wrong; counted apart from wrong moves


class PairedRow(BaseModel):
    game: str
    a: str
    b: str
    pairs: int  # items both runs answered
    only_a: int
    only_b: int
    p_value: float
    diff: float = math.nan  # accuracy(A) − accuracy(B), per-item means
    diff_low: float = math.nan  # Tango's interval on the per-item differences
    diff_high: float = math.nan


class DebateRow(BaseModel):
    method: str
    debates: int
    conformity: float
    obstinacy: float
    subversion: float
    correction: float
    error_correction: str
    negative_persuasion: str
    conformity_r1: float = math.nan
    obstinacy_r1: float = math.nan
    mixed: str = ""
    #: (n_D, n_A) -> (turns, conformity, obstinacy): seed 003 Eq. 19.
    by_peers: dict[str, tuple[int, float, float]] = Field(default_factory=dict)


class IdentityBiasRow(BaseModel):
    vanilla: str
    anonymized: str
    gap_vanilla: float
    gap_anonymized: float
    ibc: float
    low: float
    high: float
    debates: tuple[int, int]
    ibc_r1: float = math.nan


class CrossRow(BaseModel):
    """Seed 001's grading of one debate run: every agent before/after, any-correct, outcomes."""

    method: str
    game: str = ""  # the dataset (or tournament setting) the debates are on
    debates: int
    agents: dict[str, tuple[float, float]]  # agent -> (accuracy before, after)
    agent_ci: dict[str, tuple[float, float]]  # agent -> Wilson CI of the after accuracy
    #: agent -> seed 001's own interval of the after accuracy (bootstrap, 1,000 resamples).
    agent_paper_ci: dict[str, tuple[float, float]] = Field(default_factory=dict)
    any_before: float
    any_after: float
    any_ci: tuple[float, float]  # Wilson
    any_paper_ci: tuple[float, float] = (math.nan, math.nan)
    outcomes: dict[str, int]
    error_correction: str
    negative_persuasion: str
    baselines: list[PairedRow] = Field(default_factory=list)
    #: Wilson 95% intervals of the two rates (NaN where a rate has no debates to count).
    error_correction_ci: tuple[float, float] = (math.nan, math.nan)
    negative_persuasion_ci: tuple[float, float] = (math.nan, math.nan)


class Report(BaseModel):
    """Everything `metanim report` shows; `markdown` is also written as report.md."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    results_dir: str
    win_rates: list[WinRow] = Field(default_factory=list)
    win_diffs: list[WinDiffRow] = Field(default_factory=list)
    accuracy: list[AccuracyRow] = Field(default_factory=list)
    #: Decision accuracy per dataset difficulty tier (records with a `difficulty`).
    by_difficulty: list[AccuracyRow] = Field(default_factory=list)
    paired: list[PairedRow] = Field(default_factory=list)
    debate: list[DebateRow] = Field(default_factory=list)
    identity_bias: list[IdentityBiasRow] = Field(default_factory=list)
    cross: list[CrossRow] = Field(default_factory=list)
    runs: dict[str, dict[str, Any]] = Field(default_factory=dict)  # label -> identity
    skipped_files: list[str] = Field(default_factory=list)
    plots: list[str] = Field(default_factory=list)
    pages: list[str] = Field(default_factory=list, description="viewer.html and its run pages")
    ratings: Ratings | None = Field(None, description="None without tournament episodes")
    #: Per run whose calls sent a reply schema (structured output): one line, the replies
    #: that broke it (a server defect) of those sent one, per side.
    schema_notes: list[str] = Field(default_factory=list)
    markdown: str = ""

    def win_rows(self) -> list[WinRow]:
        """The win-rate table's rows: each run and setting pooled over seats, then its
        rows per seat."""
        return [row for pooled in self.win_rates for row in (pooled, *pooled.seats)]

    def terminal(self) -> str:
        """Plain-text tables for the terminal (100 columns; report.md has every column)."""
        out = [f"results: {self.results_dir}"]
        out += [f"structured output: {line}" for line in self.schema_notes]
        if self.win_rates:
            out += ["", WIN_TABLE.title, *WIN_TABLE.terminal(self.win_rows())]
        if self.accuracy:
            out += ["", ACCURACY_TABLE.title, *ACCURACY_TABLE.terminal(self.accuracy)]
        if self.ratings is not None:
            out += ["", ratings_terminal(self.ratings)]
        if not self.win_rates and not self.accuracy:
            out.append("no tournament episodes or evaluation decisions found")
        out += [f"plot: {p}" for p in self.plots]
        return "\n".join(out)

    def frames(self) -> dict[str, Any]:
        """The report's win-rate (`win_rows`) and accuracy tables as pandas DataFrames (a
        column per metric, intervals as `_low`/`_high`): the `data` extra."""
        import pandas as pd

        return {
            "win_rates": pd.DataFrame(WIN_TABLE.flat_rows(self.win_rows())),
            "accuracy": pd.DataFrame(ACCURACY_TABLE.flat_rows(self.accuracy)),
        }

    def json_rows(self) -> dict[str, list[dict[str, Any]]]:
        """The report's win-rate and accuracy tables as JSON rows."""
        return {
            "win_rates": WIN_TABLE.json_rows(self.win_rows()),
            "accuracy": ACCURACY_TABLE.json_rows(self.accuracy),
        }


# ------------------------------------------------------------------------- report
def render_report(
    results_dir: str | Path,
    *,
    write: bool = True,
    plots: bool = True,
    page_records: int | None = PAGE_RECORDS,
) -> Report:
    """Read a results folder; with `write`, save report.md, the page (each run's first
    `page_records` records; None: all) and (with `plots`) PNGs there.

    The folder is read once, streamed (`read_results`): per-group sums and small
    per-record keys, so memory stays flat in the number of episodes; the page then
    streams the same records again, a part at a time (`write_viewer`).
    """
    # A folder is thousands of small records made and dropped: the cyclic collector
    # would rescan the live ones each time (most of a big page's time, measured).
    with aio.quiet_gc():
        return _render_report(Path(results_dir), write, plots, page_records)


def _render_report(results_dir: Path, write: bool, plots: bool, page_records: int | None) -> Report:
    traces: dict[tuple[str, str], list[DebateTrace]] = defaultdict(list)
    datasets_n: list[str] = []

    def on_record(n: int, h: str, record: Record) -> None:
        if isinstance(record, DecisionRecord):
            trace = trace_from_decision(record)
            if trace is not None and trace.rounds >= 2:
                key = game_key(record.game, record.variant)
                traces[(h, f"{key}\0{n}")].append(trace)
        else:
            traces[(h, record.setting)].extend(t for t in _move_traces(record) if t.rounds >= 2)

    results = read_results([results_dir], on_record=on_record)
    identities = results.identities
    # One game column per dataset content: two different files of one game stay apart.
    datasets_of: dict[tuple[str, str], set[str]] = defaultdict(set)
    for h, game, dataset in results.decisions:
        datasets_of[(h, game)].add(dataset)

    def column(h: str, game: str, dataset: str) -> str:
        return game if len(datasets_of[(h, game)]) == 1 else f"{game} [{dataset[:8]}]"

    decisions = {
        (h, column(h, game, dataset)): group
        for (h, game, dataset), group in results.decisions.items()
    }
    for _, kind, config, _ in results.logs:
        datasets_n.append(",".join(map(str, run_dataset(config))) if kind == "decisions" else "")
    per_game: dict[tuple[str, str], list[DebateTrace]] = defaultdict(list)
    for (h, key), items in traces.items():
        if "\0" in key:
            game, n = key.split("\0")
            key = column(h, game, datasets_n[int(n)])
        per_game[(h, key)].extend(items)
    labels = distinguishing_labels(identities)

    report = Report(results_dir=str(results_dir))
    report.runs = {labels[h]: identities[h] for h in sorted(identities, key=labels.get)}
    episodes = results.episodes
    for (h, game), g in sorted(episodes.items(), key=lambda kv: (labels[kv[0][0]], kv[0][1])):
        on_failure = str(identities[h].get("on_failure") or "forfeit")
        seats = [
            win_row(labels[h], game, g.seats[seat], seat=seat, identity=h, on_failure=on_failure)
            for seat in ("first", "second")
            if seat in g.seats
        ]
        report.win_rates.append(
            win_row(labels[h], game, g, identity=h, on_failure=on_failure, seats=seats)
        )
    report.win_diffs = _win_diffs(episodes, labels)
    for (h, game), group in sorted(decisions.items(), key=lambda kv: (labels[kv[0][0]], kv[0][1])):
        row = _accuracy_row(labels[h], game, group.all)
        report.accuracy.append(row.model_copy(update={"identity": h}))
    report.by_difficulty = _difficulty_rows(decisions, labels)
    report.paired = _paired(decisions, labels)
    traces_by_run = _pooled({k: v for k, v in per_game.items() if v})
    report.debate = _debate_rows(traces_by_run, labels)
    report.identity_bias = _identity_bias_rows(traces_by_run, identities, labels)
    report.cross = _cross_rows(
        {k: v for k, v in per_game.items() if v}, decisions, identities, labels
    )
    report.schema_notes = _schema_notes(results, labels)
    if episodes:
        report.ratings = rate_results(results)
    if write and plots and (report.win_rates or report.accuracy):
        report.plots = _plots(report, results_dir)
    report.markdown = to_markdown(report)
    if write:
        (results_dir / "report.md").write_text(report.markdown, encoding="utf-8")
        pages = write_viewer(report, results_dir, page_records=page_records)
        report.pages = [str(p) for p in pages]
    return report


def _schema_notes(results: Results, labels: dict[str, str]) -> list[str]:
    """`run · side (model): the server broke the schema in k of n replies`, per run and side
    whose calls sent a reply schema."""
    lines = []
    for (h, side), (broken, replies) in sorted(
        results.schema.items(), key=lambda kv: (labels[kv[0][0]], kv[0][1])
    ):
        identity = results.identities[h]
        model = identity.get("opponent_model" if side == "opponent" else "model")
        who = " · ".join(str(x) for x in (labels[h], side) if x)
        lines.append(
            f"{who} (`{model}`): {schema_breaks(broken, replies)}"
            + (" (a server defect)" if broken else "")
        )
    return lines


def _accuracy_row(method: str, game: str, v: Verdicts) -> AccuracyRow:
    if not v.verdicts:
        return AccuracyRow(
            method=method, game=game, repeats=0, decisions=0, mean=math.nan, std=math.nan,
            low=math.nan, high=math.nan, failed=v.failed,
        )  # fmt: skip
    s = item_accuracy(v.verdicts, v.repeats)
    return AccuracyRow(
        method=method, game=game, repeats=s.repeats, decisions=s.decisions, mean=s.mean,
        std=s.std, low=s.low, high=s.high, failed=v.failed, items=s.items, forfeits=v.forfeits,
    )  # fmt: skip


def _difficulty_rows(
    decisions: dict[tuple[str, str], DecisionGroup], labels: dict[str, str]
) -> list[AccuracyRow]:
    """Accuracy per (run, game, difficulty tier); `game` reads "nim · hard"."""
    out = []
    for (h, game), group in sorted(decisions.items(), key=lambda kv: (labels[kv[0][0]], kv[0][1])):
        for tier in ("easy", "medium", "hard"):
            v = group.tiers.get(tier)
            if v is not None and (v.verdicts or v.failed):
                out.append(_accuracy_row(labels[h], f"{game} · {tier}", v))
    return out


def _paired(
    decisions: dict[tuple[str, str], DecisionGroup], labels: dict[str, str]
) -> list[PairedRow]:
    """McNemar's exact test (one verdict per item) between every two runs on one game,
    with Tango's interval of the accuracy difference over items."""
    by_game: dict[str, dict[str, dict[str, list[bool]]]] = defaultdict(dict)
    for (h, game), group in decisions.items():
        if group.all.verdicts:
            by_game[game][labels[h]] = group.all.verdicts
    out = []
    for game, per_run in sorted(by_game.items()):
        for a, b in combinations(sorted(per_run), 2):
            out.extend(_paired_row(game, a, b, per_run[a], per_run[b]))
    return out


def _paired_row(
    game: str, a: str, b: str, va: dict[Any, list[bool]], vb: dict[Any, list[bool]]
) -> list[PairedRow]:
    shared = [k for k in va if k in vb]
    if not shared:
        return []
    test = mcnemar_items(va, vb)
    ci = paired_item_difference(va, vb)
    diff, low, high = ci.estimate, ci.low, ci.high
    return [
        PairedRow(
            game=game, a=a, b=b, pairs=len(shared), only_a=test.only_a, only_b=test.only_b,
            p_value=test.p_value, diff=diff, diff_low=low, diff_high=high,
        )
    ]  # fmt: skip


def _win_diffs(
    episodes: dict[tuple[str, str], EpisodeGroup], labels: dict[str, str]
) -> list[WinDiffRow]:
    """Win-rate differences between every two runs of one setting: paired (Tango's interval
    over episodes with the same seed, seat and start) when they share episodes, else Newcombe."""
    by_game: dict[str, dict[str, dict[Any, bool]]] = defaultdict(dict)
    for (h, game), group in episodes.items():
        by_game[game][labels[h]] = group.pairs
    out = []
    for game, per_run in sorted(by_game.items()):
        for a, b in combinations(sorted(per_run), 2):
            ka, kb = per_run[a], per_run[b]
            if not ka or not kb:
                continue
            shared = [k for k in ka if k in kb]
            if shared:
                ci = paired_episode_difference([ka[k] for k in shared], [kb[k] for k in shared])
                paired, n = True, len(shared)
            else:
                wa, wb = sum(ka.values()), sum(kb.values())
                ci = newcombe_difference(wa, len(ka), wb, len(kb))
                paired, n = False, len(ka) + len(kb)
            out.append(
                WinDiffRow(
                    game=game, a=a, b=b, paired=paired, n=n, diff=ci.estimate, low=ci.low,
                    high=ci.high,
                )
            )  # fmt: skip
    return out


# ------------------------------------------------------------------------- debates
def trace_from_decision(
    record: DecisionRecord, correct: list[str] | None = None
) -> DebateTrace | None:
    """A `DebateTrace` from an evaluation's record whose decision kept debate rounds
    (`decision.rounds`: one {agent: answer text} per round); None if it has none.

    Questions are graded by equivalence (0.75 = \\frac{3}{4}): every answer text the
    record's per-round verdicts (`round_verdicts`) mark right is a correct answer too.
    """
    decision = decision_of(record.decision)
    if decision is None:
        return None
    if correct is None:
        right = {str(record.optimal_move or "")}
        for verdicts, said in zip(record.round_verdicts or [], decision.rounds, strict=False):
            right |= {said[a] for a, ok in verdicts.items() if ok and said.get(a) is not None}
        correct = sorted(right)
    return _trace(decision, record.record_id, correct)


def _trace(decision: Decision, item_id: str, correct: list[str]) -> DebateTrace | None:
    """A debate's trace: each agent's answer per round. A debate that stopped early on
    consensus is padded with every agent's last answer to its planned `rounds + 1`
    answer rounds (round 0 plus `rounds` updates), so every trace of one run reaches the
    same debate step."""
    rounds = decision.rounds
    if not rounds:
        return None
    agents = list(dict.fromkeys(a for r in rounds for a in r))
    if len(agents) < 2:
        return None
    planned = decision.params.get("rounds")
    total = max(len(rounds), int(planned) + 1 if isinstance(planned, int) else 0)
    answers: list[list[str | None]] = []
    for agent in agents:
        seq: list[str | None] = []
        for k in range(total):
            last = seq[-1] if seq else None
            seq.append(rounds[k].get(agent, last) if k < len(rounds) else last)
        answers.append(seq)
    peers = decision.extra.get("peers")
    return DebateTrace(
        item_id=item_id,
        agents=agents,
        answers=answers,
        correct=correct,
        peers=peers if isinstance(peers, dict) else None,
        anonymized=decision.method.startswith("anonymous"),
    )


def _move_traces(episode: EpisodeRecord) -> Iterator[DebateTrace]:
    """Traces of the agent's debate decisions in one episode, graded by the solver."""
    game = None
    for move in episode.moves:
        decision = decision_of(move.decision)
        if move.actor != "agent" or move.position != "N" or decision is None:
            continue
        if len(decision.rounds) < 1:
            continue
        if game is None:
            try:
                game = make_game(episode.game, **episode.game_params)
            except (TypeError, ValueError):
                return
        state = game.validate_state(move.state)
        correct = [game.move_text(m) for m in winning_moves(game, state)]
        trace = _trace(decision, f"{episode.id}:{move.ply}", correct)
        if trace is not None:
            yield trace


def _pooled(traces: dict[tuple[str, str], list[DebateTrace]]) -> dict[str, list[DebateTrace]]:
    """Traces per run, every game of the run together."""
    out: dict[str, list[DebateTrace]] = defaultdict(list)
    for (h, _game), items in sorted(traces.items()):
        out[h].extend(items)
    return dict(out)


def _debate_rows(traces: dict[str, list[DebateTrace]], labels: dict[str, str]) -> list[DebateRow]:
    out = []
    for h, items in sorted(traces.items(), key=lambda kv: labels[kv[0]]):
        bias, first = conformity_obstinacy(items), conformity_obstinacy(items, round=1)
        sc = subversion_correction(items)
        ec, npr, mixed = (
            error_correction_rate(items),
            negative_persuasion_rate(items),
            mixed_rate(items),
        )
        out.append(
            DebateRow(
                method=labels[h], debates=len(items), conformity=bias.conformity.value,
                obstinacy=bias.obstinacy.value, subversion=sc["subversion"].value,
                correction=sc["correction"].value, error_correction=f"{ec.hits}/{ec.n}",
                negative_persuasion=f"{npr.hits}/{npr.n}", conformity_r1=first.conformity.value,
                obstinacy_r1=first.obstinacy.value, mixed=f"{mixed.hits}/{mixed.n}",
                by_peers={
                    f"{n_d},{n_a}": (b.conformity.n, b.conformity.value, b.obstinacy.value)
                    for (n_d, n_a), b in conformity_by_peers(items).items()
                },
            )
        )  # fmt: skip
    return out


def _identity_bias_rows(
    traces: dict[str, list[DebateTrace]],
    identities: dict[str, dict[str, Any]],
    labels: dict[str, str],
) -> list[IdentityBiasRow]:
    """IBC for every vanilla/anonymized pair of runs identical but for the method name."""

    def canonical(identity: dict[str, Any]) -> tuple[str, str]:
        try:
            name, model, params = parse_spec(str(identity.get("method", "")))
        except ValueError:
            return "", ""
        kind = {"anonymous_mad": "anon", "anon_mad": "anon", "mad": "mad"}.get(name, "")
        rest = {k: v for k, v in identity.items() if k != "method"}
        return kind, json.dumps([model, params, rest], sort_keys=True)

    keyed = {h: canonical(identities[h]) for h in traces}
    out = []
    for hv, (kind, rest) in keyed.items():
        if kind != "mad":
            continue
        for ha, (kind_a, rest_a) in keyed.items():
            if kind_a != "anon" or rest_a != rest:
                continue
            try:
                ci = identity_bias_ci(traces[hv], traces[ha])
            except ValueError:
                continue
            try:
                r1 = identity_bias_ci(traces[hv], traces[ha], round=1, resamples=1).estimate
            except ValueError:
                r1 = math.nan
            out.append(
                IdentityBiasRow(
                    vanilla=labels[hv], anonymized=labels[ha],
                    gap_vanilla=conformity_obstinacy(traces[hv]).gap,
                    gap_anonymized=conformity_obstinacy(traces[ha]).gap,
                    ibc=ci.estimate, low=ci.low, high=ci.high,
                    debates=(len(traces[hv]), len(traces[ha])), ibc_r1=r1,
                )
            )  # fmt: skip
    return out


def _cross_rows(
    traces: dict[tuple[str, str], list[DebateTrace]],
    decisions: dict[tuple[str, str], DecisionGroup],
    identities: dict[str, dict[str, Any]],
    labels: dict[str, str],
) -> list[CrossRow]:
    """Seed 001's view of every cross-model run, per dataset: each model graded before and
    after, with Wilson intervals and seed 001's own bootstrap beside them."""
    out = []
    debated = {h for h, _ in traces}
    for (h, game), items in sorted(traces.items(), key=lambda kv: (labels[kv[0][0]], kv[0][1])):
        if not str(identities[h].get("method", "")).startswith("cross"):
            continue
        per_agent = agent_accuracy(items)
        agent_ci, agent_paper = {}, {}
        for name in per_agent:
            hits = [
                t.is_correct(t.answers[t.agents.index(name)][-1]) for t in items if name in t.agents
            ]
            ci, paper = wilson_interval(sum(hits), len(hits)), rate_bootstrap(hits)
            agent_ci[name], agent_paper[name] = (ci.low, ci.high), (paper.low, paper.high)
        anyc = [any(t.is_correct(a[-1]) for a in t.answers) for t in items]
        any_ci, any_paper = wilson_interval(sum(anyc), len(anyc)), rate_bootstrap(anyc)
        ec, npr = error_correction_rate(items), negative_persuasion_rate(items)
        row = CrossRow(
            method=labels[h], game=game, debates=len(items),
            agents={k: (b.value, a.value) for k, (b, a) in per_agent.items()}, agent_ci=agent_ci,
            agent_paper_ci=agent_paper,
            any_before=any_correct_rate(items, round=0).value, any_after=any_correct_rate(items).value,
            any_ci=(any_ci.low, any_ci.high), any_paper_ci=(any_paper.low, any_paper.high),
            outcomes=outcome_breakdown(items),
            error_correction=f"{ec.hits}/{ec.n}", negative_persuasion=f"{npr.hits}/{npr.n}",
            error_correction_ci=_wilson_pair(ec), negative_persuasion_ci=_wilson_pair(npr),
        )  # fmt: skip
        # McNemar against every single-model run on the same items (any-correct vs its verdict).
        anyv = {t.item_id: any(t.is_correct(a[-1]) for a in t.answers) for t in items}
        for (hb, game_b), group in decisions.items():
            if hb == h or hb in debated or game_b != game:
                continue
            verdicts = group.all.verdicts
            shared = [k for k in anyv if k in verdicts]
            if not shared:
                continue
            test = mcnemar_exact(
                [anyv[k] for k in shared], [majority_verdict(verdicts[k]) for k in shared]
            )
            row.baselines.append(
                PairedRow(game=game, a="any correct", b=labels[hb], pairs=len(shared),
                          only_a=test.only_a, only_b=test.only_b, p_value=test.p_value)
            )  # fmt: skip
        out.append(row)
    return out


def _wilson_pair(rate: Rate) -> tuple[float, float]:
    if rate.n == 0:
        return (math.nan, math.nan)
    ci = wilson_interval(rate.hits, rate.n)
    return (ci.low, ci.high)


def _plots(report: Report, results_dir: Path) -> list[str]:
    # Row names are run-identity labels (method, model, opponent): the legend names them.
    out = []
    try:
        if report.win_rates:
            bars: dict[str, dict[str, tuple[float, float, float]]] = defaultdict(dict)
            seats: dict[str, dict[str, dict[str, tuple[float, float, float]]]] = defaultdict(
                lambda: defaultdict(dict)
            )
            for r in report.win_rates:
                if r.finished:
                    bars[r.method][r.game] = (r.low, r.rate, r.high)
                    for s in r.seats:
                        if s.finished:
                            seats[r.method][r.game][s.seat] = (s.low, s.rate, s.high)
            out.append(
                str(
                    grouped_bars(
                        bars,
                        results_dir / "win_rates.png",
                        title="Win rate per game (bars: all seats; ▲ first, ▼ second seat; "
                        "episodes, 95% Wilson CI)",
                        ylabel="win rate (%)",
                        marks=seats,
                    )
                )
            )
        if report.accuracy:
            acc: dict[str, dict[str, tuple[float, float, float]]] = defaultdict(dict)
            for a in report.accuracy:
                if a.decisions:
                    acc[a.method][a.game] = (a.low, a.mean, a.high)
            out.append(
                str(
                    grouped_bars(
                        acc,
                        results_dir / "accuracy.png",
                        title="Decision accuracy per game (95% CI over items)",
                        ylabel="accuracy (%)",
                        empty="no graded decisions",
                    )
                )
            )
        table = next(
            (t for t in (report.ratings.tables if report.ratings else []) if t.anchored), None
        )
        if table is not None:
            out.append(str(ratings_plot(table, results_dir / "ratings.png")))
    except ImportError:
        return out
    return out


# ------------------------------------------------------------------------ markdown
def accuracy_table(
    rows: list[AccuracyRow], *, average: bool = True, games: list[str] | None = None
) -> list[str]:
    """Seed 000's Table 1 layout: a row per run, a column per game (in `games` order,
    default alphabetical), and their Average."""
    present = {a.game for a in rows}
    games = [g for g in games if g in present] if games else sorted(present)
    runs = list(dict.fromkeys(a.method for a in rows))
    cell = {(a.method, a.game): a for a in rows}
    head = ["run", *games, *(["Average"] if average and len(games) > 1 else [])]
    lines = ["| " + " | ".join(md(h) for h in head) + " |", "|---" * len(head) + "|"]
    for m in runs:
        cells = []
        means = []
        for g in games:
            a = cell.get((m, g))
            if a is None or not a.decisions:
                cells.append("–")
                continue
            means.append(a.mean)
            cells.append(
                f"{_pct(a.mean)} ± {std_text(a.std)} [{_pct(a.low)}, {_pct(a.high)}] "
                f"({a.items} items × {a.repeats})"
                # Forfeits (format failures) count as wrong; shown apart.
                + (f" ({a.forfeits} forfeits)" if a.forfeits else "")
            )
        if len(head) > len(games) + 1:
            cells.append(_pct(sum(means) / len(means)) if len(means) == len(games) else "–")
        lines.append(f"| {md(m)} | " + " | ".join(cells) + " |")
    return lines


def to_markdown(report: Report) -> str:
    lines = [f"# Results: `{report.results_dir}`", ""]
    if report.schema_notes:
        lines += [
            "## Structured output",
            "",
            "Replies to calls that sent a reply schema, and those that broke it: a server "
            "that constrains output cannot write such a reply, so each is the server's "
            "defect. Such a reply is still read by the tolerant parser and scored as the "
            "model's answer (a legal answer stands; an illegal or unparsable one counts "
            "as the model's).",
            "",
            *(f"- {line}" for line in report.schema_notes),
            "",
        ]
    if report.win_rates:
        lines += [
            "## Win rates (seed 000, Figure 6)",
            "",
            "Unit: the episode. Wins over finished episodes (wins + losses), 95% Wilson CI. "
            "Failed episodes (infrastructure errors, errors) are never losses; they are "
            "counted apart. Losses by forfeit (no valid reply after the re-asks) are shown "
            "apart from losses by play, under each run's on_failure policy. A run is "
            "method · model vs opponent · model.",
            "",
            *WIN_TABLE.markdown(report.win_rows()),
        ]
        lines.append("")
    if report.win_diffs:
        lines += [
            "### Win-rate differences",
            "",
            "A − B with a 95% interval: Tango's score interval over paired episodes (same "
            "seed, seat and start) when the runs share them, else Newcombe's interval for "
            "independent proportions.",
            "",
            "| game | A | B | A − B | 95% CI | interval | n |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {md(d.game)} | {md(d.a)} | {md(d.b)} | {signed(d.diff)} "
            f"| [{signed(d.low)}, {signed(d.high)}] "
            f"| {'Tango (paired)' if d.paired else 'Newcombe'} | {d.n} |"
            for d in report.win_diffs
        ]
        lines.append("")
    if report.ratings is not None:
        lines += ratings_markdown(report.ratings)
    if report.accuracy:
        lines += [
            "## Decision accuracy (seed 000, Table 1)",
            "",
            "Share of decisions that pick the unique optimal move. Unit: the item (dataset "
            "record). Each cell: mean ± std over the R repeats (the paper's summary), then a "
            "95% CI over items (Wilson on the effective number of items; an item's repeats "
            "stay together, so a deterministic method never gets a zero-width interval), "
            "then items × R. Average: the mean of the game means.",
            "",
            *accuracy_table(report.accuracy),
            "",
        ]
    if report.by_difficulty:
        lines += [
            "## Decision accuracy by difficulty",
            "",
            "The same accuracy per dataset difficulty tier (`difficulty` of each record: "
            "legal moves, distance to the end, fullness; see docs/datasets.md).",
            "",
            "| run | game · difficulty | accuracy | 95% CI | items × R |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {md(a.method)} | {md(a.game)} | {_pct(a.mean)} ± {std_text(a.std)} "
            f"| [{_pct(a.low)}, {_pct(a.high)}] | {a.items} × {a.repeats} |"
            for a in report.by_difficulty
        ]
        lines.append("")
    if report.paired:
        lines += [
            "## Paired comparisons (McNemar's exact test on items)",
            "",
            "| game | A | B | items | only A right | only B right | p | A − B [95% CI] |",
            "|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {md(p.game)} | {md(p.a)} | {md(p.b)} | {p.pairs} | {p.only_a} | {p.only_b} "
            f"| {p.p_value:.3g} | "
            + (
                "–"
                if p.diff != p.diff
                else f"{signed(p.diff)} [{signed(p.diff_low)}, {signed(p.diff_high)}]"
            )
            + " |"
            for p in report.paired
        ]
        lines += [
            "",
            f"McNemar: {MAJORITY_RULE}. A − B: accuracy difference of per-item means, "
            "95% Tango score interval over items (an item's share of right repeats under A "
            "minus under B counts as its discordance).",
            "",
        ]
    if report.debate:
        lines += [
            "## Debate dynamics",
            "",
            "Unit: the (agent, round) turn with a disagreeing peer, pooled over debates. "
            "Conformity/Obstinacy (all rounds, and round 1 alone) and Subversion/Correction "
            "as in seed 003; error correction = every agent wrong at round 0 → one right at "
            "the end; negative persuasion = a right agent ends wrong while none gains; "
            "mixed = both at once (seed 001 Table 5 keeps it apart).",
            "",
            "| run | debates | conformity | obstinacy | gap | conf. r1 | obst. r1 | subversion "
            "| correction | error correction | negative persuasion | mixed |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {md(d.method)} | {d.debates} | {_pct(d.conformity)} | {_pct(d.obstinacy)} "
            f"| {signed(d.conformity - d.obstinacy)} | {_pct(d.conformity_r1)} "
            f"| {_pct(d.obstinacy_r1)} | {_pct(d.subversion)} | {_pct(d.correction)} "
            f"| {d.error_correction} | {d.negative_persuasion} | {d.mixed} |"
            for d in report.debate
        ]
        lines += [
            "",
            "Conformity and Obstinacy by the numbers of disagreeing (n_D) and agreeing (n_A) "
            "peers (seed 003 Eq. 19; bandwagon pressure shows as conformity rising with n_D):",
            "",
            "| run | n_D | n_A | turns | conformity | obstinacy |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {md(d.method)} | {key.split(',')[0]} | {key.split(',')[1]} | {n} | {_pct(c)} | {_pct(o)} |"
            for d in report.debate
            for key, (n, c, o) in d.by_peers.items()
        ]
        lines.append("")
    if report.identity_bias:
        lines += [
            "## Identity bias (seed 003)",
            "",
            "Δ = Conformity − Obstinacy; IBC = Δ(vanilla) − Δ(anonymized) (> 0 sycophancy, "
            "< 0 self-bias), 95% bootstrap CI resampling whole debates in each condition.",
            "",
            "| vanilla | anonymized | Δ vanilla | Δ anonymized | IBC | 95% CI | IBC round 1 | debates |",
            "|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {md(b.vanilla)} | {md(b.anonymized)} | {signed(b.gap_vanilla)} "
            f"| {signed(b.gap_anonymized)} | {signed(b.ibc)} | [{signed(b.low)}, {signed(b.high)}] "
            f"| {signed(b.ibc_r1)} | {b.debates[0]} / {b.debates[1]} |"
            for b in report.identity_bias
        ]
        lines.append("")
    lines += cross_sections(report.cross)
    if not report.win_rates and not report.accuracy:
        lines += ["No tournament episodes or evaluation decisions were found.", ""]
    if report.runs:
        lines += ["## Runs", "", "| run | identity |", "|---|---|"]
        lines += [
            # GFM reads `\|` as a pipe even inside a code span; a bare one ends the cell.
            f"| {md(label)} | `{json.dumps(identity, sort_keys=True).replace('|', chr(92) + '|')}` |"
            for label, identity in report.runs.items()
        ]
        lines.append("")
    for p in report.plots:
        lines += [f"![{Path(p).stem}]({Path(p).name})", ""]
    return "\n".join(lines)


def cross_markdown(rows: list[CrossRow]) -> list[str]:
    """Seed 001's Tables 2/3 (each model before/after, any correct) per dataset and its
    Table 5 (outcomes) with one column per dataset, for the rows of one run."""
    if not rows:
        return []
    games = [r.game or "all" for r in rows]
    lines = [
        f"## Cross-model debate: {md(rows[0].method)} (seed 001)",
        "",
        f"{' / '.join(f'{r.debates} debates on {md(g)}' for r, g in zip(rows, games, strict=True))}. "
        "Each model's own answer is graded before and after the debate (no vote between "
        "models). 95% CI: Wilson over debates; beside it the paper's interval (seed 001: "
        "percentile bootstrap, 1,000 resamples), which collapses to a point when every "
        "debate agrees.",
        "",
        "| dataset | answer | before | after | 95% CI (after) | paper's bootstrap (after) |",
        "|---|---|---|---|---|---|",
    ]
    for c, game in zip(rows, games, strict=True):
        for name, (before, after) in c.agents.items():
            (low, high), (plow, phigh) = c.agent_ci[name], c.agent_paper_ci[name]
            lines.append(
                f"| {md(game)} | {md(name)} | {_pct(before)} | {_pct(after)} "
                f"| [{_pct(low)}, {_pct(high)}] | [{_pct(plow)}, {_pct(phigh)}] |"
            )
        lines.append(
            f"| {md(game)} | any correct | {_pct(c.any_before)} | {_pct(c.any_after)} "
            f"| [{_pct(c.any_ci[0])}, {_pct(c.any_ci[1])}] "
            f"| [{_pct(c.any_paper_ci[0])}, {_pct(c.any_paper_ci[1])}] |"
        )
    head = " | ".join(f"{md(g)} count | {md(g)} %" for g in games)
    lines += ["", f"| outcome | {head} |", "|---" * (1 + 2 * len(games)) + "|"]
    for name in OUTCOMES:
        cells = []
        for c in rows:
            total = max(sum(c.outcomes.values()), 1)
            cells.append(f"{c.outcomes[name]} | {100 * c.outcomes[name] / total:.1f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("")
    for c, game in zip(rows, games, strict=True):
        lines.append(
            f"{md(game)}: error correction (all wrong → one right) "
            f"{_rate_ci(c.error_correction, c.error_correction_ci)}; negative persuasion "
            f"(of all debates, mixed ones apart) "
            f"{_rate_ci(c.negative_persuasion, c.negative_persuasion_ci)} (95% Wilson)."
        )
    lines.append("")
    baselines = [b for c in rows for b in c.baselines]
    if baselines:
        lines += [
            "| game | any correct vs | items | only debate right | only baseline right | p |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {md(b.game)} | {md(b.b)} | {b.pairs} | {b.only_a} | {b.only_b} | {b.p_value:.3g} |"
            for b in baselines
        ]
        lines += ["", f"McNemar's exact test; baseline: {MAJORITY_RULE}.", ""]
    return lines


def _rate_ci(count: str, ci: tuple[float, float]) -> str:
    """`hits/n = x% [low, high]`; a rate with no debates to count says so."""
    hits, n = (int(x) for x in count.split("/"))
    if n == 0:
        return f"{count} (no debate to count)"
    return f"{count} = {_pct(hits / n)} [{_pct(ci[0])}, {_pct(ci[1])}]"


def cross_sections(cross: list[CrossRow]) -> list[str]:
    """Every cross-model run's section (`cross_markdown`), one per run."""
    by_run: dict[str, list[CrossRow]] = defaultdict(list)
    for c in cross:
        by_run[c.method].append(c)
    return [line for rows in by_run.values() for line in cross_markdown(rows)]
