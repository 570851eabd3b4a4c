"""A run's summary: the sums and rates a run writes beside its log, and its tables.

A tournament is summarized per setting and seat (plus "all" seats): win rate with a
95% Wilson interval over finished episodes; an evaluation per game: accuracy mean ± std
over repeats with a 95% interval over items. Failed and unplayed work stays visible, as
counts beside the rates. The tallies read typed records one at a time and keep sums
(and, for the item-level interval, one verdict list per item), never the records.
`TOURNAMENT_TABLE` and `EVALUATION_TABLE` declare each column once; the run's Markdown
report (`render_summary`), its terminal table (`summary_terminal`, 100 columns) and the
JSON summary's rows are rendered from them.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any

from metanim.envs import is_solver_player
from metanim.records._chance import random_win_probability
from metanim.records._episode import DecisionRecord, EpisodeRecord
from metanim.records._table import (
    WIDTH,
    Metric,
    Table,
    cap_text,
    cost_text,
    md,
    pct,
    seconds,
    signed,
    std_text,
    text_table,
)
from metanim.stats import (
    ALPHA,
    chance_test,
    item_accuracy,
    majority_chance,
    mean_ci,
    wilson_interval,
)

#: Evaluation statuses that carry a result (graded); the others are failures.
RESULT_STATUSES = ("ok", "fallback", "forfeit")
#: A graded decision's verdict: `forfeit` when the method gave no answer of its own (a
#: forfeit or a fallback), whatever its replies were (truncated, unparsable and illegal
#: replies are counted apart).
VERDICTS = ("correct", "wrong", "forfeit")

__all__ = [
    "EVALUATION_TABLE", "RESULT_STATUSES", "TOURNAMENT_TABLE", "VERDICTS", "EvaluationTally",
    "TournamentTally", "game_key", "md", "pct", "render_summary", "schema_breaks",
    "schema_by_model", "schema_notes", "seconds", "signed",
    "std_text", "summarize_evaluation", "summarize_tournament", "summary_terminal",
    "text_table", "vs_chance",
]  # fmt: skip


def rows_of(summary: dict[str, Any]) -> list[SimpleNamespace]:
    """A summary's rows (its JSON, as written), read by attribute."""
    key = "games" if "games" in summary else "groups"
    return [
        json.loads(json.dumps(row), object_hook=lambda d: SimpleNamespace(**d))
        for row in summary[key]
    ]


def render_summary(summary: dict[str, Any]) -> str:
    """A run's Markdown report (`<log>.report.md`) from its summary."""
    if "games" in summary:
        return _evaluation_markdown(summary)
    return _tournament_markdown(summary)


def summary_terminal(summary: dict[str, Any]) -> str:
    """A run's table for the terminal: the columns marked for it, 100 characters wide
    (every column is in `<log>.report.md`)."""
    table = EVALUATION_TABLE if "games" in summary else TOURNAMENT_TABLE
    lines = [table.title, *table.terminal(rows_of(summary))]
    lines += [textwrap.fill(n, WIDTH, subsequent_indent="  ") for n in _run_notes(summary)]
    return "\n".join(lines)


def summarize_tournament(
    records: Iterable[EpisodeRecord],
    *,
    planned: Iterable[tuple[str, str]] = (),
    stopped: str | None = None,
) -> dict[str, Any]:
    """Per setting and per seat (plus "all" seats): win rate with a 95% Wilson CI, counts.

    Failed and unplayed episodes stay visible: `infrastructure_errors`, `errors` and
    `not_run` are counted next to the win rate, whose denominator is wins + losses.
    """
    tally = TournamentTally(planned)
    for r in records:
        tally.add(r)
    return tally.finish(stopped=stopped)


class TournamentTally:
    """`summarize_tournament` built one record at a time: sums per group, no record kept.

    `planned` holds the (setting, seat) of every planned episode.
    """

    def __init__(self, planned: Iterable[tuple[str, str]] = ()) -> None:
        self.groups: dict[tuple[str, str], _GroupTally] = {}
        self.logged = 0
        self.planned = list(planned)

    def add(self, r: EpisodeRecord) -> None:
        self.logged += 1
        for seat in (r.seat, "all"):
            key = (r.setting, seat)
            group = self.groups.get(key)
            if group is None:
                group = self.groups[key] = _GroupTally()
            group.add(r)

    def finish(self, *, stopped: str | None = None) -> dict[str, Any]:
        """The summary of every record added, against the plan."""
        planned_counts: dict[tuple[str, str], int] = {}
        for setting, planned_seat in self.planned:
            for seat in (planned_seat, "all"):
                planned_counts[(setting, seat)] = planned_counts.get((setting, seat), 0) + 1
                self.groups.setdefault((setting, seat), _GroupTally())
        rows = []
        for (setting, seat), group in sorted(
            self.groups.items(), key=lambda kv: (kv[0][0], kv[0][1] != "all", kv[0][1])
        ):
            row = group.summary()
            planned_n = planned_counts.get((setting, seat), group.episodes)
            row.update(
                setting=setting, seat=seat, planned=planned_n, not_run=planned_n - group.episodes
            )
            rows.append(row)
        return {"groups": rows, "stopped": stopped, "episodes_logged": self.logged}


_SIDE_SUMS = (
    "moves", "optimal_moves", "illegal", "unparsable", "truncated", "forfeits", "fallbacks",
    "calls", "prompt_tokens", "completion_tokens", "cost_usd", "unpriced_calls",
    "reasoning_tokens", "schema_replies", "schema_violations", "call_latency_s", "queue_s",
)  # fmt: skip


#: Moves by the mover's position: in N-positions (played, and winning) and in P-positions.
_POSITION_SUMS = ("n_moves", "n_optimal_moves", "p_moves")


class _GroupTally:
    """One group's running sums; `summary()` is its row of the summary."""

    def __init__(self) -> None:
        self.episodes = 0
        self.finished = 0
        self.wins = 0
        self.losses_by_forfeit = 0
        self.wins_by_forfeit = 0
        self.infrastructure_errors = 0
        self.errors = 0
        self.start_outcomes = {"N": 0, "P": 0}
        self.end_reasons: dict[str, int] = {}
        self.wall_s: Any = 0
        self.sides = {
            side: {**dict.fromkeys(_SIDE_SUMS, 0), **dict.fromkeys(_POSITION_SUMS, 0),
                   "latency_s": 0, "decisions": 0}
            for side in ("agent", "opponent")
        }  # fmt: skip
        # Per finished episode: the uniform-random agent's chance to win it (None against a
        # model opponent); and each distinct game (start, seat, moves) with its outcome.
        self.chances: list[float | None] = []
        self.distinct: dict[str, tuple[bool, float | None]] = {}

    def add(self, r: EpisodeRecord) -> None:
        status = r.status
        self.episodes += 1
        if status in ("win", "loss"):
            self.finished += 1
            if status == "win":
                self.wins += 1
                self.wins_by_forfeit += r.end_reason == "opponent_forfeit"
            else:
                # A loss by forfeit (every answer stayed invalid: a format failure) is not
                # a loss by play; both are losses under on_failure=forfeit, shown apart.
                self.losses_by_forfeit += r.end_reason == "agent_forfeit"
            chance = random_win_probability(
                r.game, r.game_params, r.start_state, r.seat, r.opponent
            )
            self.chances.append(chance)
            game = json.dumps([r.start_state, r.seat, [m.move for m in r.moves]])
            self.distinct[game] = (status == "win", chance)
        self.infrastructure_errors += status == "infrastructure_error"
        self.errors += status == "error"
        if r.start_outcome in self.start_outcomes:
            self.start_outcomes[r.start_outcome] += 1
        self.end_reasons[r.end_reason] = self.end_reasons.get(r.end_reason, 0) + 1
        self.wall_s += r.wall_s
        for side, sums in self.sides.items():
            t = r.agent_totals if side == "agent" else r.opponent_totals
            for name in _SIDE_SUMS:
                sums[name] += getattr(t, name)
            sums["latency_s"] += t.latency_s
            sums["decisions"] += sum(1 for m in r.moves if m.actor == side)
            # Only an N-position offers a choice: in a P-position every move loses, and the
            # solver grades each one optimal, so those moves are counted apart.
            for m in r.moves:
                if m.actor == side and m.move is not None:
                    if m.position == "N":
                        sums["n_moves"] += 1
                        sums["n_optimal_moves"] += bool(m.optimal)
                    else:
                        sums["p_moves"] += 1

    def summary(self) -> dict[str, Any]:
        ci = wilson_interval(self.wins, self.finished)
        out: dict[str, Any] = {
            "episodes": self.episodes,
            "finished": self.finished,
            "wins": self.wins,
            "losses": self.finished - self.wins,
            "losses_by_forfeit": self.losses_by_forfeit,
            "wins_by_forfeit": self.wins_by_forfeit,
            "win_rate": self.wins / self.finished if self.finished else math.nan,
            "win_ci95": [ci.low, ci.high],
            "infrastructure_errors": self.infrastructure_errors,
            "errors": self.errors,
            "start_outcomes": dict(self.start_outcomes),
            "end_reasons": dict(self.end_reasons),
            # Identical copies (a deterministic method from one start) are one game.
            "distinct_episodes": len(self.distinct),
            **self._chance(),
        }
        for side, t in self.sides.items():
            moves, decisions = t["moves"], t["decisions"]
            out[side] = {
                "moves": moves,
                "optimal_moves": t["optimal_moves"],
                # The share that measures play: winning moves among moves in N-positions.
                "n_moves": t["n_moves"],
                "n_optimal_moves": t["n_optimal_moves"],
                "n_optimal_rate": t["n_optimal_moves"] / t["n_moves"] if t["n_moves"] else math.nan,
                "p_moves": t["p_moves"],
                # Illegal and unparsable replies per model call: a rule misread (a drawn
                # rule, a disguised story) shows here, apart from poor play.
                "illegal_rate": t["illegal"] / t["calls"] if t["calls"] else math.nan,
                "unparsable_rate": t["unparsable"] / t["calls"] if t["calls"] else math.nan,
                # The sums from illegal replies to cost as they are (the times become means).
                **{name: t[name] for name in _SIDE_SUMS[2:-2]},
                # A decision's wall time, waits for a server slot included.
                "mean_decision_latency_s": t["latency_s"] / decisions if decisions else math.nan,
                "latency_per_call_s": per_call(t["call_latency_s"], t["calls"]),
                "queue_per_call_s": per_call(t["queue_s"], t["calls"]),
            }
        out["mean_episode_wall_s"] = self.wall_s / self.episodes if self.episodes else math.nan
        return out

    def _chance(self) -> dict[str, Any]:
        """The random agent's expected win rate over the finished episodes, and the
        one-sided exact binomial test of the distinct games' wins against it."""
        known = self.chances and all(c is not None for c in self.chances)
        chance = sum(self.chances) / len(self.chances) if known else None  # type: ignore[arg-type]
        games = list(self.distinct.values())
        p0 = sum(c for _, c in games) / len(games) if known and games else None  # type: ignore[misc]
        p_value = chance_test(sum(w for w, _ in games), len(games), p0)
        return {
            "chance_win_rate": chance,
            "chance_p_value": p_value,
            "above_chance": None if p_value is None else p_value < ALPHA,
        }


def per_call(total: float, calls: int) -> float:
    """A per-call mean; NaN without calls."""
    return total / calls if calls else math.nan


class EvaluationTally:
    """`summarize_evaluation` fed one record at a time, in flat memory: sums per game, and
    per item its verdicts and repeats (the interval over items needs them, not the
    records). `planned` holds the (game, variant, repeat) of every planned decision."""

    def __init__(self, planned: Iterable[tuple[str, str, int]] = ()) -> None:
        self.planned_counts: dict[str, int] = {}
        self.repeats: set[int] = set()
        for game, variant, repeat in planned:
            key = game_key(game, variant)
            self.planned_counts[key] = self.planned_counts.get(key, 0) + 1
            self.repeats.add(repeat)
        self.games: dict[str, _GameTally] = {k: _GameTally() for k in self.planned_counts}
        self.logged = 0

    def add(self, r: DecisionRecord) -> None:
        self.logged += 1
        self.repeats.add(r.repeat)
        key = game_key(r.game, r.variant)
        game = self.games.get(key)
        if game is None:
            game = self.games[key] = _GameTally()
        game.add(r)

    def finish(self, *, stopped: str | None = None) -> dict[str, Any]:
        rows = [
            game.summary(key, self.planned_counts.get(key, game.decisions), sorted(self.repeats))
            for key, game in sorted(self.games.items())
        ]
        return {"games": rows, "stopped": stopped, "decisions_logged": self.logged}


def summarize_evaluation(
    records: Iterable[DecisionRecord],
    *,
    planned: Iterable[tuple[str, str, int]] = (),
    stopped: str | None = None,
) -> dict[str, Any]:
    """Per game: accuracy mean ± std and 95% CI over repeats, rates, usage and failure
    counts; `planned` holds the (game, variant, repeat) of every planned decision."""
    tally = EvaluationTally(planned)
    for r in records:
        tally.add(r)
    return tally.finish(stopped=stopped)


_DECISION_SUMS = (
    "samples", "unparsable", "illegal", "truncated", "calls", "prompt_tokens",
    "completion_tokens", "cost_usd", "unpriced_calls", "reasoning_tokens", "latency_s",
    "call_latency_s", "queue_s", "schema_replies", "schema_violations",
)  # fmt: skip


class _GameTally:
    """One game's running sums of an evaluation; `summary()` is its row."""

    def __init__(self) -> None:
        self.decisions = 0
        self.status = dict.fromkeys(
            ("ok", "fallback", "forfeit", "infrastructure_error", "error"), 0
        )
        self.sums = dict.fromkeys(_DECISION_SUMS, 0)
        self.graded = 0
        self.correct = 0
        self.wrong_by_play = 0
        self.verdicts = dict.fromkeys(VERDICTS, 0)
        self.by_repeat: dict[int, list[int]] = {}  # repeat -> [correct, graded]
        self.items: dict[str, list[bool]] = {}  # record id -> verdicts, in order
        self.item_repeats: dict[str, list[int]] = {}
        # Chance baselines: the sums over graded decisions, and each item's chance of a
        # right answer (None where a decision has no finite answer set).
        self.chance_sum = 0.0
        self.first_sum = 0
        self.known = True
        self.item_chance: dict[str, float] = {}

    def add(self, r: DecisionRecord) -> None:
        self.decisions += 1
        self.status[r.status] = self.status.get(r.status, 0) + 1
        for name in _DECISION_SUMS:
            self.sums[name] += getattr(r, name)
        if r.status not in RESULT_STATUSES:
            return
        right = bool(r.correct)
        self.graded += 1
        self.correct += right
        self.wrong_by_play += r.status == "ok" and not right
        if r.verdict in self.verdicts:
            self.verdicts[r.verdict] += 1
        rep = self.by_repeat.setdefault(r.repeat, [0, 0])
        rep[0] += right
        rep[1] += 1
        self.items.setdefault(r.record_id, []).append(right)
        self.item_repeats.setdefault(r.record_id, []).append(r.repeat)
        if r.legal_answers:
            self.chance_sum += 1 / r.legal_answers
            self.first_sum += bool(r.first_is_gold)
            self.item_chance.setdefault(r.record_id, 1 / r.legal_answers)
        else:
            self.known = False

    def summary(self, key: str, planned: int, repeats: list[int]) -> dict[str, Any]:
        per_repeat = [
            c / g for rep in repeats if (c_g := self.by_repeat.get(rep)) for c, g in [c_g]
        ]
        mean = std = math.nan
        if per_repeat:
            # With one repeat the spread cannot be estimated: no std rather than 0.
            spread = mean_ci(per_repeat)
            mean, std = spread.mean, spread.std if spread.n > 1 else math.nan
        # The interval has the item as its unit (repeats of one record together), so a
        # deterministic method on 20 records never gets a zero-width interval.
        low = high = math.nan
        if self.items:
            acc = item_accuracy(self.items, self.item_repeats)
            low, high = acc.low, acc.high
        sums, samples, calls = self.sums, self.sums["samples"], self.sums["calls"]
        answered = self.status["ok"]
        return {
            "game": key,
            "planned": planned,
            "decisions": self.decisions,
            "graded": self.graded,
            "correct": self.correct,
            "accuracy_per_repeat": per_repeat,
            # A repeat with no graded decision has no accuracy: it is left out of
            # the mean, and this says so (n of the mean ± std, against all repeats).
            "repeats_in_mean": len(per_repeat),
            "repeats": len(repeats),
            "accuracy_mean": mean,
            "accuracy_std": std,
            "accuracy_ci95": [low, high],
            "items": len(self.items),
            "forfeits": self.status["forfeit"],
            # Wrong by play: a valid answer that is not the optimal move; forfeits and
            # fallbacks (format failures) are wrong too, but counted apart.
            "wrong_by_play": self.wrong_by_play,
            # Accuracy among the decisions that gave a valid answer (format failures out).
            "accuracy_answered": self.correct / answered if answered else math.nan,
            "truncated": sums["truncated"],
            "fallbacks": self.status["fallback"],
            # Per graded decision: the final answer's verdict (unparsable apart from wrong).
            **{f"verdict_{v}": self.verdicts[v] for v in VERDICTS},
            "infrastructure_errors": self.status["infrastructure_error"],
            "errors": self.status["error"],
            "not_run": planned - self.decisions,
            "samples": samples,
            "unparsable": sums["unparsable"],
            "illegal": sums["illegal"],
            "unparsable_rate": sums["unparsable"] / samples if samples else math.nan,
            "illegal_rate": sums["illegal"] / samples if samples else math.nan,
            "calls": calls,
            "prompt_tokens": sums["prompt_tokens"],
            "completion_tokens": sums["completion_tokens"],
            "cost_usd": sums["cost_usd"],
            "unpriced_calls": sums["unpriced_calls"],
            "reasoning_tokens": sums["reasoning_tokens"],
            "schema_replies": sums["schema_replies"],
            "schema_violations": sums["schema_violations"],
            # A decision's wall time, waits for a server slot included.
            "mean_latency_s": sums["latency_s"] / self.decisions if self.decisions else math.nan,
            "latency_per_call_s": per_call(sums["call_latency_s"], calls),
            "queue_per_call_s": per_call(sums["queue_s"], calls),
            **self._chance(),
        }

    def _chance(self) -> dict[str, Any]:
        """Chance baselines of the accuracy on the same graded decisions: the uniform-random
        legal policy's expected accuracy (1/legal answers per decision), the constant
        answer's (always the first legal move, always option A), and the one-sided exact
        binomial test of the item-level outcomes (right in a strict majority of repeats)
        against the random answer. None where an item has no finite answer set (an open
        question) or its line predates the fields."""
        if not self.graded or not self.known:
            return {"chance_accuracy": None, "first_answer_accuracy": None,
                    "chance_p_value": None, "above_chance": None}  # fmt: skip
        wins = sum(2 * sum(v) > len(v) for v in self.items.values())
        chances = [majority_chance(self.item_chance[k], len(v)) for k, v in self.items.items()]
        p_value = chance_test(wins, len(self.items), sum(chances) / len(chances))
        return {
            "chance_accuracy": self.chance_sum / self.graded,
            "first_answer_accuracy": self.first_sum / self.graded,
            "chance_p_value": p_value,
            "above_chance": None if p_value is None else p_value < ALPHA,
        }


def _title(kind: str, name: str) -> str:
    """`# Tournament` for the default name, else `# Tournament: name` (no "Tournament tournament")."""
    return f"# {kind}" if name in ("", kind.lower()) else f"# {kind}: {name}"


def _player_label(method: str, model: str) -> str:
    """`method` on `model`, or the solver policy alone (it calls no model)."""
    return f"`{method}`" if is_solver_player(method) else f"`{method}` on `{model}`"


def _replies_line(cfg: dict[str, Any]) -> str:
    """The header line of a run's report on invalid replies and how calls were made."""
    return (
        f"- invalid replies: up to {cfg.get('max_reasks', 2)} re-asks, then "
        f"on_failure=`{cfg.get('on_failure', 'forfeit')}`; structured output "
        f"`{cfg.get('structured_output', 'off')}`; completion cap "
        f"{cap_text(cfg.get('max_completion_tokens'))}"
    )


def _copies_note(g: Any) -> str:
    return (
        f"- **identical episodes:** {g.setting}: the {g.finished} finished episodes are "
        f"{g.distinct_episodes} distinct game{'s' if g.distinct_episodes != 1 else ''} "
        "(the same moves from the same start, as a deterministic method plays); the test against "
        "chance counts each distinct game once"
    )


def _run_notes(summary: dict[str, Any]) -> list[str]:
    """The lines every run report shows under its header: a stop, the hint, the timing."""
    lines = []
    if summary.get("stopped"):
        lines.append(f"- **stopped early:** {summary['stopped']}")
    hint = summary.get("hint")
    if hint and hint != summary.get("stopped"):
        lines.append(f"- **hint:** {hint}")
    lines += [f"- **server defect:** {line}" for line in schema_notes(summary)]
    timing = summary.get("timing")
    if timing and timing.get("decisions"):
        lines.append(
            f"- time (this run): {timing['decisions']} model decisions finished in "
            f"{timing['wall_s']:.1f} s of wall time, {timing['s_per_decision']:.2f} s/decision; "
            "latency per call (request sent to response) and queue wait per call (call made "
            "to request sent: waiting for a server slot) are in the table"
        )
    return lines


def schema_breaks(violations: int, replies: int) -> str:
    """The server-defect line of `violations` of `replies` under structured output."""
    return f"the server broke the schema in {violations} of {replies} replies"


def schema_by_model(summary: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """Per model of a run: (replies that broke their schema, replies sent a schema), for
    the models whose calls sent one; a tournament's from its "all" seats rows."""
    cfg = summary.get("config", {})
    out: dict[str, list[int]] = {}
    for g in rows_of(summary):
        if getattr(g, "seat", "all") != "all":
            continue
        sides = [(g, cfg.get("model", ""))]
        if "games" not in summary:
            sides = [(g.agent, cfg.get("model", "")), (g.opponent, cfg.get("opponent_model", ""))]
        for side, model in sides:
            replies = getattr(side, "schema_replies", 0)
            if replies:
                sums = out.setdefault(str(model), [0, 0])
                sums[0] += getattr(side, "schema_violations", 0)
                sums[1] += replies
    return {model: (v, n) for model, (v, n) in out.items()}


def schema_notes(summary: dict[str, Any]) -> list[str]:
    """One line per model whose server broke the reply schema of a structured-output run."""
    return [
        f"{schema_breaks(v, n)} (`{model}`); each such reply is still read by the tolerant "
        "parser and scored as the model's answer"
        for model, (v, n) in schema_by_model(summary).items()
        if v
    ]


def vs_chance(row: Any) -> str:
    """The p-value of a rate against chance, flagged when it is not significant."""
    p = getattr(row, "chance_p_value", None)
    if p is None:
        return "–"
    text = "p < 0.001" if p < 0.001 else f"p = {p:.3f}"
    return text if p < ALPHA else f"{text} ⚠ not above chance"


def _vs_chance_brief(row: Any) -> str:
    """`vs_chance` for the terminal: the flag without its words (report.md has them)."""
    return vs_chance(row).replace(" not above chance", "")


def game_key(game: str, variant: str) -> str:
    """A game's column name: `nim`, or `nim (misere)` for another variant."""
    return game if variant in ("", "normal") else f"{game} ({variant})"


# ------------------------------------------------------------------------ the tables
def _failed(g: Any) -> int:
    return g.infrastructure_errors + g.errors + g.not_run


def _failures(unit: str, never: str) -> list[Metric]:
    """What did not finish, counted alike for episodes and decisions."""
    return [
        Metric("infrastructure_errors", "infra err", "count",
               f"{unit} the model could not be reached in ({never})",
               lambda g: g.infrastructure_errors),
        Metric("errors", "errors", "count", f"{unit} a bug stopped", lambda g: g.errors),
        Metric("not_run", "not run", "count", f"planned {unit} not run", lambda g: g.not_run),
        Metric("failed", "failed", "count", "infrastructure errors + errors + not run",
               _failed, json=False, table=False, terminal=True),
    ]  # fmt: skip


def _side(side: Any, name: str) -> Any:
    """A side's figure; a summary written before it was counted reads NaN."""
    return getattr(side, name, math.nan)


def _both(g: Any, name: str) -> Any:
    return getattr(g.agent, name) + getattr(g.opponent, name)


def _schema_cell(violations: int, replies: int) -> str:
    """`k/n` replies that broke their schema; – where no call sent one."""
    return f"{violations}/{replies}" if replies else "–"


def _per_call(g: Any, what: str) -> float:
    """Both sides' mean per call (an older summary has no per-call times: NaN)."""
    total = calls = 0.0
    for side in (g.agent, g.opponent):
        value = getattr(side, f"{what}_per_call_s", None)
        if value is not None and value == value and side.calls:
            total += value * side.calls
            calls += side.calls
    return total / calls if calls else math.nan


def _ci(name: str) -> Any:
    """The interval a summary row holds under `name`, as (low, high)."""
    return lambda g: tuple(getattr(g, name)[:2])


TOURNAMENT_TABLE = Table(
    title="Win rate per setting and seat (episodes; 95% Wilson CI)",
    note="",
    metrics=(
        Metric("setting", "setting", "text", "the game setting", lambda g: g.setting, terminal=True),
        Metric("seat", "seat", "text", "the agent's seat, or all seats", lambda g: g.seat, terminal=True),
        Metric("finished", "finished", "count", "wins + losses", lambda g: g.finished, table=False),
        Metric("planned", "planned", "count", "episodes planned", lambda g: g.planned, table=False),
        Metric("finished/planned", "finished/planned", "text", "finished of planned",
               lambda g: f"{g.finished}/{g.planned}", json=False, terminal=True),
        Metric("win_rate", "win rate [95% CI]", "rate", "wins / finished episodes",
               lambda g: g.win_rate, interval=_ci("win_ci95"), interval_key="win_ci95",
               interval_how="Wilson score interval over finished episodes", terminal=True),
        Metric("chance_win_rate", "chance", "rate",
               "a uniformly random agent's exact win rate from the same starts and seats",
               lambda g: getattr(g, "chance_win_rate", None)),
        Metric("chance_p_value", "vs chance", "p",
               "one-sided exact binomial test of the distinct games' wins against chance",
               lambda g: getattr(g, "chance_p_value", None), cell=vs_chance, brief=_vs_chance_brief,
               terminal=True),
        Metric("losses play/forfeit", "losses play/forfeit", "text",
               "losses by play / by forfeit (no valid answer after every re-ask)",
               lambda g: f"{g.losses - g.losses_by_forfeit}/{g.losses_by_forfeit}", json=False),
        Metric("wins_by_forfeit", "wins by opp. forfeit", "count",
               "wins by the opponent's forfeit", lambda g: g.wins_by_forfeit),
        Metric("start N/P", "start N/P", "text", "episodes starting at an N- / a P-position",
               lambda g: f"{g.start_outcomes.N}/{g.start_outcomes.P}", json=False),
        *_failures("episodes", "never a loss"),
        Metric("agent replies", "agent illegal/unparsable/truncated/forfeit/fallback", "text",
               "the agent's invalid replies by kind, forfeits and fallbacks",
               lambda g: "/".join(str(getattr(g.agent, k)) for k in
                                  ("illegal", "unparsable", "truncated", "forfeits", "fallbacks")),
               json=False),
        Metric("agent replies %", "agent illegal/unparsable % of replies", "text",
               "the agent's illegal and unparsable replies per model call: a misread rule (a "
               "drawn rule, a disguised story) shows here, apart from poor play",
               lambda g: f"{pct(getattr(g.agent, 'illegal_rate', math.nan))}/"
                         f"{pct(getattr(g.agent, 'unparsable_rate', math.nan))}",
               json=False),
        Metric("schema_violations", "schema broken", "text",
               "replies that broke the schema their call sent under structured output (the "
               "server's defect), of the replies sent one, both sides; – without a schema",
               lambda g: None, json=False,
               cell=lambda g: _schema_cell(*(
                   sum(getattr(side, k, 0) for side in (g.agent, g.opponent))
                   for k in ("schema_violations", "schema_replies")))),
        Metric("agent.n_optimal_rate", "agent opt. N", "rate",
               "the agent's winning moves among its moves in N-positions (where a choice "
               "matters; in a P-position every move loses)",
               lambda g: _side(g.agent, "n_optimal_rate"), terminal=True),
        Metric("agent.p_moves", "agent P moves", "count",
               "the agent's moves in P-positions (every move loses: not graded)",
               lambda g: _side(g.agent, "p_moves")),
        Metric("opponent.n_optimal_rate", "opp. opt. N", "rate",
               "the opponent's winning moves among its moves in N-positions",
               lambda g: _side(g.opponent, "n_optimal_rate")),
        Metric("opponent.forfeits", "opp. forfeits", "count", "the opponent's forfeits",
               lambda g: g.opponent.forfeits),
        Metric("calls", "calls", "count", "model calls, both sides", lambda g: _both(g, "calls"),
               json=False, terminal=True),
        Metric("tokens", "tokens", "tokens", "prompt + completion tokens, both sides",
               lambda g: _both(g, "prompt_tokens") + _both(g, "completion_tokens"), json=False),
        Metric("cost_usd", "cost $", "$", "both sides' cost (unknown where a model has no price)",
               lambda g: _both(g, "cost_usd"), json=False, terminal=True,
               cell=lambda g: cost_text(_both(g, "cost_usd"), _both(g, "unpriced_calls"))),
        Metric("latency_per_call_s", "latency s/call", "s",
               "request sent to response received, per call", lambda g: _per_call(g, "latency"),
               json=False),
        Metric("queue_per_call_s", "queue s/call", "s",
               "call made to request sent (waiting for a server slot), per call",
               lambda g: _per_call(g, "queue"), json=False),
    ),
)  # fmt: skip


def _tournament_markdown(summary: dict[str, Any]) -> str:
    cfg = summary.get("config", {})
    lines = [_title("Tournament", cfg.get("name", "")), ""]
    if cfg:
        lines += [
            f"- agent: {_player_label(cfg['method'], cfg['model'])}; "
            f"opponent: {_player_label(cfg['opponent'], cfg['opponent_model'])}",
            f"- {cfg['episodes']} episode{'s' if cfg['episodes'] != 1 else ''} per setting, "
            f"seat policy `{cfg['seat']}`, start "
            f"`{cfg['start'] or 'auto'}`, seed {cfg['seed']}; log `{summary.get('log', '')}`",
            _replies_line(cfg),
        ]
    rows = rows_of(summary)
    lines += _run_notes(summary)
    lines += [
        _copies_note(g)
        for g in rows
        if g.seat == "all" and getattr(g, "distinct_episodes", g.finished) < g.finished
    ]
    lines += [
        "",
        "Win rate over finished episodes (wins + losses) with a 95% Wilson CI. Chance: the "
        "win rate a uniformly random agent has from the same starts and seats against this "
        "opponent (exact; none against a model opponent); vs chance: the one-sided exact "
        "binomial p-value of the wins against it, each distinct game counted once, flagged "
        f"when not below {ALPHA}. Infrastructure "
        "errors and unplayed episodes are never a loss; they are counted apart. Start: how many "
        "episodes began at an N- or P-position for the first mover. Optimal: moves graded by the "
        "solver. Losses by play and by forfeit (no valid answer after every re-ask: a format "
        "failure) are shown apart, and so are wins by the opponent's forfeit; the win rate "
        "counts them under the run's on_failure policy, named above.",
        "",
        *TOURNAMENT_TABLE.markdown(rows),
    ]
    return "\n".join(lines) + "\n"


EVALUATION_TABLE = Table(
    title="Decision accuracy per game (mean ± std over repeats; 95% CI over items)",
    note="",
    metrics=(
        Metric("game", "game", "text", "the game (or question set) and variant", lambda g: g.game,
               terminal=True),
        Metric("graded/planned", "graded/planned", "text", "graded decisions of planned",
               lambda g: f"{g.graded}/{g.planned}", json=False, terminal=True),
        Metric("repeats in mean", "repeats in mean", "text",
               "repeats with a graded decision, of all", lambda g: f"{g.repeats_in_mean}/{g.repeats}",
               json=False),
        Metric("accuracy_mean", "accuracy mean ± std [95% CI]", "rate",
               "per repeat, the share of graded decisions right; then mean ± std over repeats",
               lambda g: g.accuracy_mean, interval=_ci("accuracy_ci95"), interval_key="accuracy_ci95",
               interval_how="Wilson on the effective number of items (repeats kept together)",
               cell=lambda g: f"{pct(g.accuracy_mean)} ± {std_text(g.accuracy_std)} "
               f"[{pct(g.accuracy_ci95[0])}, {pct(g.accuracy_ci95[1])}]", terminal=True),
        Metric("chance", "chance: random / first", "text",
               "a uniformly random legal answer's expected accuracy / always the first answer's",
               lambda g: f"{pct(getattr(g, 'chance_accuracy', None))} / "
               f"{pct(getattr(g, 'first_answer_accuracy', None))}", json=False),
        Metric("chance_p_value", "vs chance", "p",
               "one-sided exact binomial test of the items right against the random answer",
               lambda g: getattr(g, "chance_p_value", None), cell=vs_chance, brief=_vs_chance_brief,
               terminal=True),
        Metric("accuracy_answered", "accuracy among answered", "rate",
               "right / decisions with a valid answer", lambda g: g.accuracy_answered),
        Metric("verdicts", "verdicts ✓/✗/forfeit", "text", "graded decisions by verdict",
               lambda g: f"{g.verdict_correct}/{g.verdict_wrong}/{getattr(g, 'verdict_forfeit', 0)}",
               json=False),
        Metric("wrong_by_play", "wrong by play", "count", "valid answers that are wrong",
               lambda g: g.wrong_by_play),
        Metric("unparsable_rate", "unparsable", "rate", "unparsable replies per sampled answer",
               lambda g: g.unparsable_rate),
        Metric("illegal_rate", "illegal", "rate", "illegal replies per sampled answer",
               lambda g: g.illegal_rate),
        Metric("truncated", "truncated", "count", "replies cut at the completion cap",
               lambda g: g.truncated),
        Metric("schema_violations", "schema broken", "text",
               "replies that broke the schema their call sent under structured output (the "
               "server's defect), of the replies sent one; – without a schema",
               lambda g: None, json=False,
               cell=lambda g: _schema_cell(getattr(g, "schema_violations", 0),
                                           getattr(g, "schema_replies", 0))),
        Metric("forfeits", "forfeit", "count", "decisions forfeited", lambda g: g.forfeits),
        Metric("fallbacks", "fallback", "count", "decisions given the random fallback",
               lambda g: g.fallbacks),
        *_failures("decisions", "never wrong"),
        Metric("calls", "calls", "count", "model calls", lambda g: g.calls, terminal=True),
        Metric("tokens", "tokens", "tokens", "prompt + completion tokens",
               lambda g: g.prompt_tokens + g.completion_tokens, json=False),
        Metric("cost_usd", "cost $", "$", "cost (unknown where the model has no price)",
               lambda g: g.cost_usd, terminal=True,
               cell=lambda g: cost_text(g.cost_usd, getattr(g, "unpriced_calls", 0))),
        Metric("latency_per_call_s", "latency s/call", "s",
               "request sent to response received, per call",
               lambda g: getattr(g, "latency_per_call_s", None)),
        Metric("queue_per_call_s", "queue s/call", "s",
               "call made to request sent (waiting for a server slot), per call",
               lambda g: getattr(g, "queue_per_call_s", None)),
    ),
)  # fmt: skip


def _evaluation_markdown(summary: dict[str, Any]) -> str:
    cfg = summary.get("config", {})
    lines = [_title("Evaluation", cfg.get("name", "")), ""]
    if cfg:
        lines.append(
            f"- `{cfg['method']}` on `{cfg['model']}`, {cfg['repeats']} "
            f"repeat{'s' if cfg['repeats'] != 1 else ''}, seed {cfg['seed']}; "
            f"log `{summary.get('log', '')}`"
        )
        lines.append(_replies_line(cfg))
    lines += _run_notes(summary)
    lines += [
        "",
        "Chance: the expected accuracy of a uniformly random legal answer on the same graded "
        "decisions / of always giving the first legal move (always option A); vs chance: the "
        "one-sided exact binomial p-value of the items answered right (in a majority of their "
        f"repeats) against the random answer, flagged when not below {ALPHA}; none for open "
        "questions.",
        "",
        "Accuracy: share of decisions choosing the unique optimal move (games) or the gold "
        "answer (questions), per repeat, then mean ± "
        "std over the repeats with at least one graded decision (repeats in mean: how many of "
        "all), as the paper reports it. The 95% CI has the item (dataset record) as its unit: "
        "Wilson on the effective number of items, the repeats of a record kept together. Forfeits and fallbacks count as wrong; "
        "infrastructure errors and unrun decisions are not graded and are counted apart. "
        "Verdicts: correct / wrong / forfeit (the method gave no answer of its own) per graded "
        "decision. Rates are per sampled answer. Wrong answers are split: wrong by play (a "
        "valid, non-optimal answer) and forfeits/fallbacks (format failures); accuracy among "
        "answered leaves the format failures out.",
        "",
        *EVALUATION_TABLE.markdown(rows_of(summary)),
    ]
    return "\n".join(lines) + "\n"
