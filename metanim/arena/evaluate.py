"""Decision accuracy: a method over critical-state datasets or question files, R times.

An item is a dataset record (graded by its unique optimal move) or a question (graded
by its gold answer: math-verify for open answers, exact label for multiple choice);
each line records the extracted answer and its verdict (`correct`, `wrong`, or
`unparsable` when no reply named any answer), and for debates every agent's verdict
per round (`round_verdicts`).

Each decision is one JSONL line, appended and fsynced the moment it is made; ids come
from the config hash, the record id and the repeat, so rerunning the same command
resumes. Accuracy per game is computed per repeat over the decisions that produced a
result (ok, fallback or forfeit; a fallback or a forfeit is wrong), then reported as
mean ± std over repeats, with a 95% interval over items (the record is the unit;
its repeats are kept together). Infrastructure errors are never wrong
answers: they are counted apart, like decisions never run.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
import traceback
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from metanim.analysis.stats import item_accuracy
from metanim.arena._budget import Spent
from metanim.arena._config import RunConfig
from metanim.arena._identity import config_identity, identity_hash
from metanim.arena._items import VERDICTS, GameItem, QuestionItem, load_items, round_verdicts
from metanim.arena._players import build_method, sim_server_if_needed
from metanim.arena._preflight import preflight_players, preflight_servers
from metanim.arena._run import (
    RunResult,
    client_pool,
    pct,
    qualified_model,
    refuse_unpriced,
    run_logged,
)
from metanim.arena._stats import mean_std_ci
from metanim.arena.episodes import derive_seed
from metanim.llm._types import InfrastructureError
from metanim.util import aio

RESULT_STATUSES = ("ok", "fallback", "forfeit")


class EvaluationConfig(RunConfig):
    """A dataset evaluation: every field is a CLI flag of `metanim evaluate`."""

    name: str = Field("evaluation", description="run name, the stem of the result files")
    dataset: list[str] = Field(
        description="critical-state dataset or question JSONL file(s); samples/NAME finds a "
        "shipped sample (samples/math.jsonl, gsm8k, math_solutions, mc, csqa, arc)"
    )
    method: str = Field("react", description="method spec (react, dreamad, mad:agents=3, ...)")
    model: str = Field("sim-biased:heuristic=max_take,p=0.3", description="the model")
    base_url: str | None = Field(
        None,
        description="the server (default: the simulated server for sim-* models, else OPENAI_BASE_URL)",
    )
    params: dict[str, Any] = Field(default_factory=dict, description="method parameters")
    repeats: int = Field(5, ge=1, le=10_000, description="passes over the dataset (R)")
    limit: int | None = Field(None, ge=1, description="use only the first N records of each file")
    seed: int = Field(0, description="base seed: the same seed gives the same decisions")
    concurrency: int = Field(16, ge=1, description="decisions made at once")
    max_retries: int = Field(
        4, ge=0, description="retries before a call is an infrastructure error"
    )
    max_calls: int | None = Field(
        None, description="budget: stop starting decisions after this many calls"
    )
    record_decisions: bool = Field(True, description="keep every decision's full record in the log")
    rerun_failed: bool = Field(
        True, description="on resume, rerun decisions that hit an infrastructure error"
    )

    @field_validator("dataset")
    @classmethod
    def _resolve(cls, paths: list[str]) -> list[str]:
        from metanim.datasets.questions import resolve_path

        return [str(resolve_path(p)) for p in paths]

    def config_hash(self) -> str:
        """Hash of the run's identity (`metanim.arena._identity.run_identity`): the
        dataset by content, the server normalized, run-only settings left out."""
        return identity_hash(config_identity(self.model_dump(mode="json")))

    @property
    def log_path(self) -> Path:
        return Path(self.results_dir) / f"{self.name}-{self.config_hash()}.jsonl"


@dataclass(frozen=True)
class PlannedDecision:
    id: str
    record: GameItem | QuestionItem
    repeat: int
    seed: int
    file: str = ""  # the dataset or question file the item comes from


def plan(config: EvaluationConfig) -> list[PlannedDecision]:
    """Every decision of the config: each item of each file, `repeats` times."""
    digest = config.config_hash()
    out = []
    for path in config.dataset:
        records = load_items(path)[: config.limit]
        for repeat in range(config.repeats):
            for record in records:
                key = f"{digest}|{record.id}|{record.content_hash}|{repeat}"
                decision_id = hashlib.sha256(key.encode()).hexdigest()[:16]
                seed = derive_seed(config.seed, record.id, repeat)
                out.append(PlannedDecision(decision_id, record, repeat, seed, path))
    return out


@dataclass
class EvaluationResult(RunResult):
    config: EvaluationConfig


def run_evaluation(config: EvaluationConfig) -> EvaluationResult:
    """Run (or resume) an evaluation; blocks until done."""
    return aio.run(arun_evaluation(config))


async def arun_evaluation(config: EvaluationConfig) -> EvaluationResult:
    """Make every planned decision not yet logged, then summarize the whole log."""
    refuse_unpriced(config.max_cost_usd, [config.model])
    players = [(config.method, config.model, config.base_url, config.params)]
    needed = preflight_players(players)
    from metanim.datasets.questions import is_question_file

    # The in-process simulator answers the run's questions from their files (its answer key).
    questions = [p for p in config.dataset if is_question_file(p)]
    with sim_server_if_needed(
        needed, seed=config.seed, questions=questions, log_path=config.log_path
    ) as sim_url:
        preflight_servers(players, sim_url)
        return await _run(config, sim_url)


async def _run(config: EvaluationConfig, sim_url: str | None) -> EvaluationResult:
    planned = plan(config)
    _check_listing(planned, simulated=sim_url is not None, fallback=config.on_failure)
    clients = client_pool(config, sim_url)
    model = qualified_model(config.model, config.base_url)
    method = build_method(config.method, model, config.params, clients, config.method_defaults())
    return await run_logged(
        config,
        planned,
        clients,
        lambda item: decide_one(method, item, config),
        finished=RESULT_STATUSES,
        charge=_charge,
        summarize=summarize,
        render_report=render_report,
        unit="dec",
        result=EvaluationResult,
        failed=_failed_decision,
    )


def _check_listing(planned: list[PlannedDecision], *, simulated: bool, fallback: str) -> None:
    """Refuse, before any decision, a record of a game too large for what lists its
    moves (a dataset not built here may hold one)."""
    from metanim.arena._preflight import check_listing
    from metanim.games import SizeLimitError

    if not simulated and fallback != "random":
        return
    seen: set[tuple[str, str]] = set()
    for item in planned:
        record = item.record
        if not isinstance(record, GameItem):
            continue
        key = (record.record.game, json.dumps(record.record.game_params, sort_keys=True))
        if key not in seen:
            seen.add(key)
            try:
                check_listing(
                    record.record.make_game(), simulated=simulated, solver=False,
                    fallback=fallback,
                )  # fmt: skip
            except SizeLimitError as exc:
                raise SizeLimitError(f"record {record.id}: {exc}") from None


def _failed_decision(item: PlannedDecision, reason: str) -> dict[str, Any]:
    """The log line of a decision that raised outside the method (status `error`)."""
    return {
        "id": item.id, **item.record.fields(), "repeat": item.repeat, "seed": item.seed,
        "optimal_move": item.record.gold_text, "status": "error", "answer": None, "correct": None,
        "extracted": None, "verdict": None, "round_verdicts": None,
        "illegal": 0, "unparsable": 0, "truncated": 0, "samples": 0, "calls": 0, "prompt_tokens": 0,
        "completion_tokens": 0, "cost_usd": 0.0, "latency_s": 0.0, "error": reason,
        "decision": None,
    }  # fmt: skip


def _charge(spent: Spent, line: dict[str, Any]) -> None:
    spent.add(line["calls"], line["prompt_tokens"] + line["completion_tokens"], line["cost_usd"])


async def decide_one(
    method: Any, item: PlannedDecision, config: EvaluationConfig
) -> dict[str, Any]:
    """One decision on one item, as a log line (never raises for the model's faults)."""
    record = item.record
    line: dict[str, Any] = {
        "id": item.id,
        **record.fields(),
        "repeat": item.repeat,
        "seed": item.seed,
        "optimal_move": record.gold_text,
    }
    start = time.perf_counter()
    decision = None
    try:
        decision = await record.decide(method, item.seed)
        status, error = decision.status, decision.error
    except InfrastructureError as exc:
        decision = getattr(exc, "decision", None)
        status, error = "infrastructure_error", f"{exc.kind}: {exc}"
    except Exception as exc:  # a bug in a method: mark it, never grade it
        status, error = "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"
    move = decision.move if decision is not None and status in ("ok", "fallback") else None
    # A fallback is a random move the method did not choose: recorded, and never correct.
    correct = extracted = verdict = None
    if status in RESULT_STATUSES:
        extracted, verdict = record.verdict(decision, status)
        correct = verdict == "correct"
    rounds = decision.rounds if decision is not None else []
    usage = decision.usage if decision is not None else None
    line.update(
        status=status,
        answer=None if move is None else decision.answer_text,
        correct=correct,
        extracted=extracted,
        verdict=verdict,
        round_verdicts=round_verdicts(record, rounds) if rounds else None,
        illegal=decision.illegal if decision else 0,
        unparsable=decision.unparsable if decision else 0,
        truncated=getattr(decision, "truncated", 0) if decision else 0,
        samples=len(decision.samples) if decision else 0,
        calls=len(decision.calls) if decision else 0,
        prompt_tokens=usage.prompt_tokens if usage else 0,
        completion_tokens=usage.completion_tokens if usage else 0,
        cost_usd=decision.cost_usd if decision else 0.0,
        latency_s=time.perf_counter() - start,
        error=error,
        decision=decision.model_dump(mode="json", exclude={"move"})
        if decision is not None and config.record_decisions
        else None,
    )
    return line


def _group_key(game: str, variant: str) -> str:
    return game if variant == "normal" else f"{game} ({variant})"


def summarize(
    records: Iterable[dict[str, Any]],
    *,
    planned: list[PlannedDecision] | None = None,
    stopped: str | None = None,
) -> dict[str, Any]:
    """Per game: accuracy mean ± std and 95% CI over repeats, rates, usage and failure counts."""
    records = list(records)
    planned_counts: dict[str, int] = {}
    repeats: set[int] = set()
    for p in planned or []:
        key = _group_key(*p.record.group)
        planned_counts[key] = planned_counts.get(key, 0) + 1
        repeats.add(p.repeat)
    groups: dict[str, list[dict[str, Any]]] = {k: [] for k in planned_counts}
    for r in records:
        groups.setdefault(_group_key(r["game"], r["variant"]), []).append(r)
        repeats.add(r["repeat"])
    rows = []
    for key, group in sorted(groups.items()):
        graded = [r for r in group if r["status"] in RESULT_STATUSES]
        per_repeat = []
        for rep in sorted(repeats):
            rows_rep = [r for r in graded if r["repeat"] == rep]
            if rows_rep:
                per_repeat.append(sum(bool(r["correct"]) for r in rows_rep) / len(rows_rep))
        mean, std, _, _ = mean_std_ci(per_repeat)
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
                "mean_latency_s": sum(r["latency_s"] for r in group) / len(group)
                if group
                else math.nan,
            }
        )
    return {"games": rows, "stopped": stopped, "decisions_logged": len(records)}


def render_report(summary: dict[str, Any]) -> str:
    """A Markdown report of an evaluation summary."""
    cfg = summary.get("config", {})
    name = cfg.get("name", "")
    lines = [f"# Evaluation: {name}" if name not in ("", "evaluation") else "# Evaluation", ""]
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
    if summary.get("stopped"):
        lines.append(f"- **stopped early:** {summary['stopped']}")
    lines += [
        "",
        "Accuracy: share of decisions choosing the unique optimal move (games) or the gold "
        "answer (questions), per repeat, then mean ± "
        "std over the repeats with at least one graded decision (repeats in mean: how many of "
        "all), as the paper reports it. The 95% CI has the item (dataset record) as its unit: "
        "Wilson on the effective number of items, the repeats of a record kept together. Forfeits and fallbacks count as wrong; "
        "infrastructure errors and unrun decisions are not graded and are counted apart. "
        "Verdicts: correct / wrong / unparsable (no reply named any answer) per graded "
        "decision. Rates are per sampled answer. Wrong answers are split: wrong by play (a "
        "valid, non-optimal answer) and forfeits/fallbacks (format failures); accuracy among "
        "answered leaves the format failures out.",
        "",
        "| game | graded/planned | repeats in mean | accuracy mean ± std [95% CI] "
        "| accuracy among answered | verdicts ✓/✗/? | wrong by play | unparsable | illegal "
        "| truncated | forfeit | "
        "fallback | infra err | errors | not run | calls | tokens | cost $ | s/decision |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for g in summary["games"]:
        low, high = g["accuracy_ci95"]
        std = "–" if g["accuracy_std"] != g["accuracy_std"] else f"{100 * g['accuracy_std']:.1f}"
        lines.append(
            f"| {g['game']} | {g['graded']}/{g['planned']} | {g['repeats_in_mean']}/{g['repeats']} "
            f"| {pct(g['accuracy_mean'])} ± {std} "
            f"[{pct(low)}, {pct(high)}] | {pct(g['accuracy_answered'])} "
            f"| {g['verdict_correct']}/{g['verdict_wrong']}/{g['verdict_unparsable']} "
            f"| {g['wrong_by_play']} "
            f"| {pct(g['unparsable_rate'])} | {pct(g['illegal_rate'])} | {g['truncated']} "
            f"| {g['forfeits']} | {g['fallbacks']} | {g['infrastructure_errors']} | {g['errors']} "
            f"| {g['not_run']} | {g['calls']} | {g['prompt_tokens'] + g['completion_tokens']} "
            f"| {g['cost_usd']:.4f} | {g['mean_latency_s']:.3f} |"
        )
    return "\n".join(lines) + "\n"
