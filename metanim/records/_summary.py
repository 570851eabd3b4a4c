"""A run's summary: the sums and rates a run writes beside its log, and its Markdown.

A tournament is summarized per setting and seat (plus "all" seats): win rate with a
95% Wilson interval over finished episodes; an evaluation per game: accuracy mean ± std
over repeats with a 95% interval over items. Failed and unplayed work stays visible, as
counts beside the rates. `render_summary` is the one renderer of a run's report; the
table helpers below it serve every Markdown and terminal table of the package.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from metanim.envs import is_solver_player
from metanim.records._chance import (
    ALPHA,
    chance_test,
    item_outcomes,
    random_win_probability,
)
from metanim.records._stats import item_accuracy, mean_ci, wilson_interval

#: Evaluation statuses that carry a result (graded); the others are failures.
RESULT_STATUSES = ("ok", "fallback", "forfeit")
#: A graded decision's verdict: `forfeit` when the method gave no answer of its own (a
#: forfeit or a fallback), whatever its replies were (truncated, unparsable and illegal
#: replies are counted apart).
VERDICTS = ("correct", "wrong", "forfeit")


def render_summary(summary: dict[str, Any]) -> str:
    """A run's Markdown report (`<log>.report.md`) from its summary."""
    if "games" in summary:
        return _evaluation_markdown(summary)
    return _tournament_markdown(summary)


def summarize_tournament(
    records: Iterable[dict[str, Any]],
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

    def add(self, r: dict[str, Any]) -> None:
        self.logged += 1
        for seat in (r["seat"], "all"):
            key = (r["setting"], seat)
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
    "calls", "prompt_tokens", "completion_tokens", "cost_usd", "call_latency_s", "queue_s",
)  # fmt: skip
#: Counters an older log's lines may lack (read as 0).
_NEWER = frozenset({"truncated", "call_latency_s", "queue_s"})


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
            side: {**dict.fromkeys(_SIDE_SUMS, 0), "latency_s": 0, "decisions": 0}
            for side in ("agent", "opponent")
        }
        # Per finished episode: the uniform-random agent's chance to win it (None against a
        # model opponent); and each distinct game (start, seat, moves) with its outcome.
        self.chances: list[float | None] = []
        self.distinct: dict[str, tuple[bool, float | None]] = {}

    def add(self, r: dict[str, Any]) -> None:
        status = r["status"]
        self.episodes += 1
        if status in ("win", "loss"):
            self.finished += 1
            if status == "win":
                self.wins += 1
                self.wins_by_forfeit += r["end_reason"] == "opponent_forfeit"
            else:
                # A loss by forfeit (every answer stayed invalid: a format failure) is not
                # a loss by play; both are losses under on_failure=forfeit, shown apart.
                self.losses_by_forfeit += r["end_reason"] == "agent_forfeit"
            chance = random_win_probability(
                r["game"], r["game_params"], r["start_state"], r["seat"], r["opponent"]
            )
            self.chances.append(chance)
            game = json.dumps([r["start_state"], r["seat"], [m["move"] for m in r["moves"]]])
            self.distinct[game] = (status == "win", chance)
        self.infrastructure_errors += status == "infrastructure_error"
        self.errors += status == "error"
        if r["start_outcome"] in self.start_outcomes:
            self.start_outcomes[r["start_outcome"]] += 1
        self.end_reasons[r["end_reason"]] = self.end_reasons.get(r["end_reason"], 0) + 1
        self.wall_s += r["wall_s"]
        for side, sums in self.sides.items():
            t = r[f"{side}_totals"]
            for name in _SIDE_SUMS:
                sums[name] += t.get(name, 0) if name in _NEWER else t[name]
            sums["latency_s"] += t["latency_s"]
            sums["decisions"] += sum(1 for m in r["moves"] if m["actor"] == side)

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
                "optimal_rate": t["optimal_moves"] / moves if moves else math.nan,
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


def _title(kind: str, name: str) -> str:
    """`# Tournament` for the default name, else `# Tournament: name` (no "Tournament tournament")."""
    return f"# {kind}" if name in ("", kind.lower()) else f"# {kind}: {name}"


def _player_label(method: str, model: str) -> str:
    """`method` on `model`, or the solver policy alone (it calls no model)."""
    return f"`{method}`" if is_solver_player(method) else f"`{method}` on `{model}`"


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
            f"- invalid replies: up to {cfg.get('max_reasks', 2)} re-asks, then "
            f"on_failure=`{cfg.get('on_failure', 'forfeit')}`; structured output "
            f"`{cfg.get('structured_output', 'off')}`; completion cap "
            f"{cfg.get('max_completion_tokens', 'none')} tokens",
        ]
    lines += _run_notes(summary)
    lines += [
        _copies_note(g)
        for g in summary["groups"]
        if g["seat"] == "all" and g.get("distinct_episodes", g["finished"]) < g["finished"]
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
        "| setting | seat | finished/planned | win rate [95% CI] | chance | vs chance "
        "| losses play/forfeit "
        "| wins by opp. forfeit | start N/P | infra err | errors | not run "
        "| agent illegal/unparsable/truncated/forfeit/fallback "
        "| agent illegal/unparsable % of replies | agent optimal | opp. optimal "
        "| opp. forfeits | calls | tokens | cost $ | latency s/call | queue s/call |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for g in summary["groups"]:
        a, o = g["agent"], g["opponent"]
        low, high = g["win_ci95"]
        lines.append(
            f"| {g['setting']} | {g['seat']} | {g['finished']}/{g['planned']} "
            f"| {pct(g['win_rate'])} [{pct(low)}, {pct(high)}] "
            f"| {pct(g.get('chance_win_rate'))} | {vs_chance(g)} "
            f"| {g['losses'] - g['losses_by_forfeit']}/{g['losses_by_forfeit']} "
            f"| {g['wins_by_forfeit']} "
            f"| {g['start_outcomes']['N']}/{g['start_outcomes']['P']} "
            f"| {g['infrastructure_errors']} | {g['errors']} | {g['not_run']} "
            f"| {a['illegal']}/{a['unparsable']}/{a['truncated']}/{a['forfeits']}/{a['fallbacks']} "
            f"| {pct(a.get('illegal_rate'))}/{pct(a.get('unparsable_rate'))} "
            f"| {pct(a['optimal_rate'])} | {pct(o['optimal_rate'])} | {o['forfeits']} "
            f"| {a['calls'] + o['calls']} "
            f"| {a['prompt_tokens'] + a['completion_tokens'] + o['prompt_tokens'] + o['completion_tokens']} "
            f"| {a['cost_usd'] + o['cost_usd']:.4f} "
            f"| {seconds(_per_call(a, o, 'latency'))} | {seconds(_per_call(a, o, 'queue'))} |"
        )
    return "\n".join(lines) + "\n"


def _per_call(a: dict[str, Any], o: dict[str, Any], what: str) -> float:
    """Both sides' mean per call (an older summary has no per-call times: NaN)."""
    total = calls = 0.0
    for side in (a, o):
        value = side.get(f"{what}_per_call_s")
        if value is not None and value == value and side["calls"]:
            total += value * side["calls"]
            calls += side["calls"]
    return total / calls if calls else math.nan


def _copies_note(g: dict[str, Any]) -> str:
    return (
        f"- **identical episodes:** {g['setting']}: the {g['finished']} finished episodes are "
        f"{g['distinct_episodes']} distinct game{'s' if g['distinct_episodes'] != 1 else ''} "
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
    timing = summary.get("timing")
    if timing and timing.get("decisions"):
        lines.append(
            f"- time (this run): {timing['decisions']} model decisions finished in "
            f"{timing['wall_s']:.1f} s of wall time, {timing['s_per_decision']:.2f} s/decision; "
            "latency per call (request sent to response) and queue wait per call (call made "
            "to request sent: waiting for a server slot) are in the table"
        )
    return lines


def vs_chance(row: dict[str, Any]) -> str:
    """The p-value of a rate against chance, flagged when it is not significant."""
    p = row.get("chance_p_value")
    if p is None:
        return "–"
    text = "p < 0.001" if p < 0.001 else f"p = {p:.3f}"
    return text if p < ALPHA else f"{text} ⚠ not above chance"


def seconds(x: float | None) -> str:
    """Seconds with three decimals; an en dash for NaN or None."""
    return "–" if x is None or x != x else f"{x:.3f}"


def game_key(game: str, variant: str) -> str:
    """A game's column name: `nim`, or `nim (misere)` for another variant."""
    return game if variant in ("", "normal") else f"{game} ({variant})"


class EvaluationTally:
    """`summarize_evaluation` fed one record at a time (the records are kept: the
    interval over items needs them all). `planned` holds the (game, variant, repeat) of
    every planned decision."""

    def __init__(self, planned: Iterable[tuple[str, str, int]] = ()) -> None:
        self.planned = list(planned)
        self.records: list[dict[str, Any]] = []

    def add(self, record: dict[str, Any]) -> None:
        self.records.append(record)

    def finish(self, *, stopped: str | None = None) -> dict[str, Any]:
        return summarize_evaluation(self.records, planned=self.planned, stopped=stopped)


def summarize_evaluation(
    records: Iterable[dict[str, Any]],
    *,
    planned: Iterable[tuple[str, str, int]] = (),
    stopped: str | None = None,
) -> dict[str, Any]:
    """Per game: accuracy mean ± std and 95% CI over repeats, rates, usage and failure
    counts; `planned` holds the (game, variant, repeat) of every planned decision."""
    records = list(records)
    planned_counts: dict[str, int] = {}
    repeats: set[int] = set()
    for game, variant, repeat in planned:
        key = game_key(game, variant)
        planned_counts[key] = planned_counts.get(key, 0) + 1
        repeats.add(repeat)
    groups: dict[str, list[dict[str, Any]]] = {k: [] for k in planned_counts}
    for r in records:
        groups.setdefault(game_key(r["game"], r["variant"]), []).append(r)
        repeats.add(r["repeat"])
    rows = []
    for key, group in sorted(groups.items()):
        graded = [r for r in group if r["status"] in RESULT_STATUSES]
        per_repeat = []
        for rep in sorted(repeats):
            rows_rep = [r for r in graded if r["repeat"] == rep]
            if rows_rep:
                per_repeat.append(sum(bool(r["correct"]) for r in rows_rep) / len(rows_rep))
        mean = std = math.nan
        if per_repeat:
            # With one repeat the spread cannot be estimated: no std rather than 0.
            spread = mean_ci(per_repeat)
            mean, std = spread.mean, spread.std if spread.n > 1 else math.nan
        # The interval has the item as its unit (repeats of one record together), so a
        # deterministic method on 20 records never gets a zero-width interval.
        low = high = math.nan
        items = len({r["record_id"] for r in graded})
        if graded:
            verdicts: dict[str, list[bool]] = {}
            reps: dict[str, list[int]] = {}
            for r in graded:
                verdicts.setdefault(r["record_id"], []).append(bool(r["correct"]))
                reps.setdefault(r["record_id"], []).append(int(r["repeat"]))
            acc = item_accuracy(verdicts, reps)
            low, high = acc.low, acc.high
        samples = sum(r["samples"] for r in group)
        calls = sum(r["calls"] for r in group)
        rows.append(
            {
                "game": key,
                "planned": planned_counts.get(key, len(group)),
                "decisions": len(group),
                "graded": len(graded),
                "correct": sum(bool(r["correct"]) for r in graded),
                "accuracy_per_repeat": per_repeat,
                # A repeat with no graded decision has no accuracy: it is left out of
                # the mean, and this says so (n of the mean ± std, against all repeats).
                "repeats_in_mean": len(per_repeat),
                "repeats": len(repeats),
                "accuracy_mean": mean,
                "accuracy_std": std,
                "accuracy_ci95": [low, high],
                "items": items,
                "forfeits": sum(r["status"] == "forfeit" for r in group),
                # Wrong by play: a valid answer that is not the optimal move; forfeits and
                # fallbacks (format failures) are wrong too, but counted apart.
                "wrong_by_play": sum(r["status"] == "ok" and not r["correct"] for r in graded),
                # Accuracy among the decisions that gave a valid answer (format failures out).
                "accuracy_answered": (
                    sum(bool(r["correct"]) for r in graded) / answered
                    if (answered := sum(r["status"] == "ok" for r in graded))
                    else math.nan
                ),
                "truncated": sum(r.get("truncated", 0) for r in group),
                "fallbacks": sum(r["status"] == "fallback" for r in group),
                # Per graded decision: the final answer's verdict (unparsable apart from wrong).
                **{f"verdict_{v}": sum(r.get("verdict") == v for r in graded) for v in VERDICTS},
                "infrastructure_errors": sum(r["status"] == "infrastructure_error" for r in group),
                "errors": sum(r["status"] == "error" for r in group),
                "not_run": planned_counts.get(key, len(group)) - len(group),
                "samples": samples,
                "unparsable": sum(r["unparsable"] for r in group),
                "illegal": sum(r["illegal"] for r in group),
                "unparsable_rate": sum(r["unparsable"] for r in group) / samples
                if samples
                else math.nan,
                "illegal_rate": sum(r["illegal"] for r in group) / samples if samples else math.nan,
                "calls": sum(r["calls"] for r in group),
                "prompt_tokens": sum(r["prompt_tokens"] for r in group),
                "completion_tokens": sum(r["completion_tokens"] for r in group),
                "cost_usd": sum(r["cost_usd"] for r in group),
                # A decision's wall time, waits for a server slot included.
                "mean_latency_s": sum(r["latency_s"] for r in group) / len(group)
                if group
                else math.nan,
                "latency_per_call_s": per_call(
                    sum(r.get("call_latency_s", 0.0) for r in group), calls
                ),
                "queue_per_call_s": per_call(sum(r.get("queue_s", 0.0) for r in group), calls),
                **_accuracy_chance(graded),
            }
        )
    return {"games": rows, "stopped": stopped, "decisions_logged": len(records)}


def _accuracy_chance(graded: list[dict[str, Any]]) -> dict[str, Any]:
    """Chance baselines of an accuracy on the same graded decisions: the uniform-random
    legal policy's expected accuracy (1/legal answers per decision), the constant answer's
    (always the first legal move, always option A), and the one-sided exact binomial
    test of the item-level outcomes against the random answer. None where an item has no
    finite answer set (an open question) or its line predates the fields."""
    known = bool(graded) and all(r.get("legal_answers") for r in graded)
    if not known:
        return {"chance_accuracy": None, "first_answer_accuracy": None,
                "chance_p_value": None, "above_chance": None}  # fmt: skip
    p_value = chance_test(
        *item_outcomes(
            [(r["record_id"], bool(r["correct"]), 1 / r["legal_answers"]) for r in graded]
        )
    )
    return {
        "chance_accuracy": sum(1 / r["legal_answers"] for r in graded) / len(graded),
        "first_answer_accuracy": sum(bool(r["first_is_gold"]) for r in graded) / len(graded),
        "chance_p_value": p_value,
        "above_chance": None if p_value is None else p_value < ALPHA,
    }


def _evaluation_markdown(summary: dict[str, Any]) -> str:
    cfg = summary.get("config", {})
    lines = [_title("Evaluation", cfg.get("name", "")), ""]
    if cfg:
        lines.append(
            f"- `{cfg['method']}` on `{cfg['model']}`, {cfg['repeats']} "
            f"repeat{'s' if cfg['repeats'] != 1 else ''}, seed {cfg['seed']}; "
            f"log `{summary.get('log', '')}`"
        )
        lines.append(
            f"- invalid replies: up to {cfg.get('max_reasks', 2)} re-asks, then "
            f"on_failure=`{cfg.get('on_failure', 'forfeit')}`; structured output "
            f"`{cfg.get('structured_output', 'off')}`; completion cap "
            f"{cfg.get('max_completion_tokens', 'none')} tokens"
        )
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
        "| game | graded/planned | repeats in mean | accuracy mean ± std [95% CI] "
        "| chance: random / first | vs chance "
        "| accuracy among answered | verdicts ✓/✗/forfeit | wrong by play | unparsable | illegal "
        "| truncated | forfeit | fallback | infra err | errors | not run | calls | tokens "
        "| cost $ | latency s/call | queue s/call |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for g in summary["games"]:
        low, high = g["accuracy_ci95"]
        std = std_text(g["accuracy_std"])
        lines.append(
            f"| {g['game']} | {g['graded']}/{g['planned']} | {g['repeats_in_mean']}/{g['repeats']} "
            f"| {pct(g['accuracy_mean'])} ± {std} "
            f"[{pct(low)}, {pct(high)}] "
            f"| {pct(g.get('chance_accuracy'))} / {pct(g.get('first_answer_accuracy'))} "
            f"| {vs_chance(g)} | {pct(g['accuracy_answered'])} "
            f"| {g['verdict_correct']}/{g['verdict_wrong']}/{g.get('verdict_forfeit', 0)} "
            f"| {g['wrong_by_play']} "
            f"| {pct(g['unparsable_rate'])} | {pct(g['illegal_rate'])} | {g['truncated']} "
            f"| {g['forfeits']} | {g['fallbacks']} | {g['infrastructure_errors']} | {g['errors']} "
            f"| {g['not_run']} | {g['calls']} | {g['prompt_tokens'] + g['completion_tokens']} "
            f"| {g['cost_usd']:.4f} | {seconds(g.get('latency_per_call_s'))} "
            f"| {seconds(g.get('queue_per_call_s'))} |"
        )
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ table helpers
#: Characters that change a Markdown table cell's meaning.
_MD_SPECIAL = "\\|`*_[]<>#"


def md(text: object) -> str:
    """`text` escaped for a Markdown table cell (a `|` in a method spec no longer splits it)."""
    return "".join("\\" + c if c in _MD_SPECIAL else c for c in str(text)).replace("\n", " ")


def pct(x: float | None) -> str:
    """A rate as a percentage; an en dash for NaN or None (no denominator)."""
    return "–" if x is None or x != x else f"{100 * x:.1f}%"


def std_text(x: float | None) -> str:
    """A standard deviation of rates, in percentage points; an en dash for NaN or None."""
    return "–" if x is None or x != x else f"{100 * x:.1f}"


def signed(x: float) -> str:
    """A difference of rates in signed percentage points; an en dash for NaN."""
    return "–" if x != x else f"{100 * x:+.1f} pp"


def text_table(headers: list[str], rows: list[list[Any]]) -> list[str]:
    """A plain-text table, columns padded to their widest cell."""
    cells = [headers, *[[str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*headers), fmt.format(*["-" * w for w in widths])] + [
        fmt.format(*r) for r in cells[1:]
    ]
