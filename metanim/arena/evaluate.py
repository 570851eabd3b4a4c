"""Decision accuracy: a method over a critical-state dataset, R times.

Each decision is one JSONL line, appended and fsynced the moment it is made; ids come
from the config hash, the record id and the repeat, so rerunning the same command
resumes. Accuracy per game is computed per repeat over the decisions that produced a
result (ok, fallback or forfeit; a fallback or a forfeit is wrong), then reported as
mean ± std over repeats with a 95% t interval. Infrastructure errors are never wrong
answers: they are counted apart, like decisions never run.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
import traceback
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from metanim.arena._budget import Spent
from metanim.arena._config import RUN_ONLY, RunConfig
from metanim.arena._players import build_method, sim_server_if_needed
from metanim.arena._preflight import preflight_players, preflight_servers
from metanim.arena._run import (
    RunResult,
    client_pool,
    config_digest,
    pct,
    qualified_model,
    refuse_unpriced,
    run_logged,
    server_identity,
)
from metanim.arena._stats import mean_std_ci
from metanim.arena.episodes import derive_seed
from metanim.llm._types import InfrastructureError

#: Also left out of the config hash: a rerun with more repeats resumes the same log.
_RUN_ONLY = RUN_ONLY | {"repeats", "limit"}

RESULT_STATUSES = ("ok", "fallback", "forfeit")


class EvaluationConfig(RunConfig):
    """A dataset evaluation: every field is a CLI flag of `metanim evaluate`."""

    name: str = Field("evaluation", description="run name, the stem of the result files")
    dataset: list[str] = Field(description="critical-state dataset JSONL file(s)")
    method: str = Field("react", description="method spec (react, dreamad, mad:agents=3, ...)")
    model: str = Field("sim-biased:heuristic=max_take,p=0.3", description="the model")
    base_url: str | None = Field(
        None,
        description="the server (default: the simulated server for sim-* models, else OPENAI_BASE_URL)",
    )
    params: dict[str, Any] = Field(default_factory=dict, description="method parameters")
    repeats: int = Field(5, ge=1, description="passes over the dataset (R)")
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

    def config_hash(self) -> str:
        body = self.model_dump(mode="json", exclude=set(_RUN_ONLY))
        # The dataset is identified by its content, not by where the file lies.
        body["dataset"] = [_file_digest(p) for p in self.dataset]
        # Another server is another run; the in-process simulator hashes stably.
        body["base_url"] = server_identity(self.model, self.base_url)
        return config_digest(body)

    @property
    def log_path(self) -> Path:
        return Path(self.results_dir) / f"{self.name}-{self.config_hash()}.jsonl"


def _file_digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


@dataclass(frozen=True)
class PlannedDecision:
    id: str
    record: Any  # DatasetRecord
    repeat: int
    seed: int


def plan(config: EvaluationConfig) -> list[PlannedDecision]:
    """Every decision of the config: each record of each file, `repeats` times."""
    from metanim.datasets import load_dataset

    digest = config.config_hash()
    out = []
    for path in config.dataset:
        records = load_dataset(path)[: config.limit]
        for repeat in range(config.repeats):
            for record in records:
                key = f"{digest}|{record.id}|{record.content_hash}|{repeat}"
                decision_id = hashlib.sha256(key.encode()).hexdigest()[:16]
                seed = derive_seed(config.seed, record.id, repeat)
                out.append(PlannedDecision(decision_id, record, repeat, seed))
    return out


@dataclass
class EvaluationResult(RunResult):
    config: EvaluationConfig


def run_evaluation(config: EvaluationConfig) -> EvaluationResult:
    """Run (or resume) an evaluation; blocks until done."""
    return asyncio.run(arun_evaluation(config))


async def arun_evaluation(config: EvaluationConfig) -> EvaluationResult:
    """Make every planned decision not yet logged, then summarize the whole log."""
    refuse_unpriced(config.max_cost_usd, [config.model])
    players = [(config.method, config.model, config.base_url, config.params)]
    needed = preflight_players(players)
    with sim_server_if_needed(needed, seed=config.seed) as sim_url:
        preflight_servers(players, sim_url)
        return await _run(config, sim_url)


async def _run(config: EvaluationConfig, sim_url: str | None) -> EvaluationResult:
    planned = plan(config)
    clients = client_pool(config, sim_url)
    model = qualified_model(config.model, config.base_url)
    method = build_method(config.method, model, config.params, clients)
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


def _failed_decision(item: PlannedDecision, reason: str) -> dict[str, Any]:
    """The log line of a decision that raised outside the method (status `error`)."""
    record = item.record
    return {
        "id": item.id, "record_id": record.id, "game": record.game, "variant": record.variant,
        "stratum": record.features.stratum, "repeat": item.repeat, "seed": item.seed,
        "optimal_move": record.optimal_move, "status": "error", "answer": None, "correct": None,
        "illegal": 0, "unparsable": 0, "samples": 0, "calls": 0, "prompt_tokens": 0,
        "completion_tokens": 0, "cost_usd": 0.0, "latency_s": 0.0, "error": reason,
        "decision": None,
    }  # fmt: skip


def _charge(spent: Spent, line: dict[str, Any]) -> None:
    spent.add(line["calls"], line["prompt_tokens"] + line["completion_tokens"], line["cost_usd"])


async def decide_one(
    method: Any, item: PlannedDecision, config: EvaluationConfig
) -> dict[str, Any]:
    """One decision on one dataset record, as a log line (never raises for the model's faults)."""
    record = item.record
    game = record.make_game()
    state = record.game_state()
    line: dict[str, Any] = {
        "id": item.id,
        "record_id": record.id,
        "game": record.game,
        "variant": record.variant,
        "stratum": record.features.stratum,
        "repeat": item.repeat,
        "seed": item.seed,
        "optimal_move": record.optimal_move,
    }
    start = time.perf_counter()
    decision = None
    try:
        decision = await method.decide(game, state, seed=item.seed)
        status, error = decision.status, decision.error
    except InfrastructureError as exc:
        decision = getattr(exc, "decision", None)
        status, error = "infrastructure_error", f"{exc.kind}: {exc}"
    except Exception as exc:  # a bug in a method: mark it, never grade it
        status, error = "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"
    move = decision.move if decision is not None and status in ("ok", "fallback") else None
    # A fallback is a random move the method did not choose: recorded, and never correct.
    correct = None
    if status in RESULT_STATUSES:
        correct = status == "ok" and game.action_id(move) == record.optimal_action
    usage = decision.usage if decision is not None else None
    line.update(
        status=status,
        answer=None if move is None else game.move_text(move),
        correct=correct,
        illegal=decision.illegal if decision else 0,
        unparsable=decision.unparsable if decision else 0,
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
        key = _group_key(p.record.game, p.record.variant)
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
        mean, std, low, high = mean_std_ci(per_repeat)
        # An accuracy lies in [0, 1]; the t interval does not know that.
        if not math.isnan(low):
            low, high = max(0.0, low), min(1.0, high)
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
                "forfeits": sum(r["status"] == "forfeit" for r in group),
                "fallbacks": sum(r["status"] == "fallback" for r in group),
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
    if summary.get("stopped"):
        lines.append(f"- **stopped early:** {summary['stopped']}")
    lines += [
        "",
        "Accuracy: share of decisions choosing the unique optimal move, per repeat, then mean ± "
        "std over the repeats with at least one graded decision (repeats in mean: how many of "
        "all), with a 95% t interval. Forfeits and fallbacks count as wrong; "
        "infrastructure errors and unrun decisions are not graded and are counted apart. "
        "Rates are per sampled answer.",
        "",
        "| game | graded/planned | repeats in mean | accuracy mean ± std [95% CI] | unparsable | illegal | forfeit | "
        "fallback | infra err | errors | not run | calls | tokens | cost $ | s/decision |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for g in summary["games"]:
        low, high = g["accuracy_ci95"]
        std = "–" if g["accuracy_std"] != g["accuracy_std"] else f"{100 * g['accuracy_std']:.1f}"
        lines.append(
            f"| {g['game']} | {g['graded']}/{g['planned']} | {g['repeats_in_mean']}/{g['repeats']} "
            f"| {pct(g['accuracy_mean'])} ± {std} "
            f"[{pct(low)}, {pct(high)}] | {pct(g['unparsable_rate'])} | {pct(g['illegal_rate'])} "
            f"| {g['forfeits']} | {g['fallbacks']} | {g['infrastructure_errors']} | {g['errors']} "
            f"| {g['not_run']} | {g['calls']} | {g['prompt_tokens'] + g['completion_tokens']} "
            f"| {g['cost_usd']:.4f} | {g['mean_latency_s']:.3f} |"
        )
    return "\n".join(lines) + "\n"
