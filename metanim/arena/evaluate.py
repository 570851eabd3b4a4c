"""Decision accuracy: a method over critical-state datasets or question files, R times.

An item is a dataset record (graded by its unique optimal move) or a question (graded
by its gold answer: math-verify for open answers, exact label for multiple choice);
each line records the extracted answer and its verdict (`correct`, `wrong`, or
`forfeit` when the method gave no answer of its own), and for debates every agent's verdict
per round (`round_verdicts`).

Each decision is one `DecisionRecord` line, appended and fsynced the moment it is made; ids come
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
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import Field, field_validator

from metanim.agents import Counts, Method
from metanim.arena._config import RunConfig
from metanim.arena._items import GameItem, QuestionItem, load_items, round_verdicts
from metanim.arena._players import ClientPool, build_player, describe, parse_sides
from metanim.arena._preflight import check_listing, prepare_run
from metanim.arena._run import Run, RunResult
from metanim.datasets.questions import is_question_file, resolve_path
from metanim.games import SizeLimitError
from metanim.records import RESULT_STATUSES, DecisionRecord, EvaluationTally
from metanim.util import FileName, PositiveInt, aio, derive_seed


class EvaluationConfig(RunConfig):
    """A dataset evaluation: every field is a CLI flag of `metanim evaluate`."""

    name: FileName = Field("evaluation", description="run name, the stem of the result files")
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
    max_calls: PositiveInt | None = Field(
        None, description="budget: stop starting decisions after this many calls"
    )
    record_decisions: bool = Field(True, description="keep every decision's full record in the log")
    rerun_failed: bool = Field(
        True, description="on resume, rerun decisions that hit an infrastructure error"
    )

    @field_validator("dataset")
    @classmethod
    def _resolve(cls, paths: list[str]) -> list[str]:
        return [str(resolve_path(p)) for p in paths]


@dataclass(frozen=True)
class PlannedDecision:
    id: str
    record: GameItem | QuestionItem
    repeat: int
    seed: int
    file: str = ""  # the dataset or question file the item comes from


class Evaluation:
    """An evaluation as a run's job: its items loaded once, each decided `repeats` times."""

    unit = "decisions"
    finished = RESULT_STATUSES

    def __init__(self, config: EvaluationConfig) -> None:
        self.sides = parse_sides(config)
        # The mode chosen, not "auto", is the run's: in its identity, header and report.
        config, self.structured = prepare_run(config, self.sides)
        self.config = config
        self.digest, self.log_path, _ = config.log_choice(self.sides)
        # The in-process simulator answers the run's questions from their files.
        self.questions = [p for p in config.dataset if is_question_file(p)]
        self.items = {path: load_items(path)[: config.limit] for path in config.dataset}
        first: dict[str, str] = {}  # item id -> the file it came from
        for path, items in self.items.items():
            if not items:
                raise ValueError(f"no records in {path}: nothing to evaluate")
            for item in items:
                # An item is the unit of accuracy and the key of a resume: one id, one item
                # (two files holding the same records would grade each twice).
                seen = first.setdefault(item.id, path)
                if seen != path:
                    raise ValueError(
                        f"{path}: id {item.id!r} is already an item of {seen}; give each "
                        "file once, or files whose ids differ"
                    )
        self._check_listing()
        self.method: Method | None = None
        self.planned = self._plan()
        self.tally = EvaluationTally((*p.record.group, p.repeat) for p in self.planned)

    def _plan(self) -> list[PlannedDecision]:
        """Every decision of the config: each item of each file, `repeats` times."""
        out = []
        for path, items in self.items.items():
            for repeat in range(self.config.repeats):
                for item in items:
                    key = f"{self.digest}|{item.id}|{item.content_hash}|{repeat}"
                    decision_id = hashlib.sha256(key.encode()).hexdigest()[:16]
                    seed = derive_seed(self.config.seed, item.id, repeat)
                    out.append(PlannedDecision(decision_id, item, repeat, seed, path))
        return out

    def start(self, clients: ClientPool) -> str:
        """Build the method on `clients`; returns the run header."""
        defaults = self.config.method_defaults()
        self.call_options = defaults["options"]
        player = build_player(self.sides[0], clients, defaults=defaults)
        self.method = player.method  # type: ignore[attr-defined]
        return f"method: {describe(self.sides[0], clients)}; structured output {self.structured}"

    def _check_listing(self) -> None:
        """Refuse, before any decision, a record of a game too large for what lists its
        moves (a dataset not built here may hold one)."""
        simulated = any(m.needs_sim_server for m in self.sides[0].models())
        if not simulated and self.config.on_failure != "random" and not self.config.list_moves:
            return
        seen: set[tuple[str, str]] = set()
        for items in self.items.values():
            for item in items:
                if not isinstance(item, GameItem):
                    continue
                record = item.record
                key = (record.game, json.dumps(record.game_params, sort_keys=True))
                if key in seen:
                    continue
                seen.add(key)
                try:
                    check_listing(
                        record.make_game(), simulated=simulated, solver=False,
                        fallback=self.config.on_failure, listed=self.config.list_moves,
                    )  # fmt: skip
                except SizeLimitError as exc:
                    raise SizeLimitError(f"record {item.id}: {exc}") from None

    async def work(self, item: PlannedDecision) -> DecisionRecord:
        return await decide_one(
            self.method,
            item,
            record_decisions=self.config.record_decisions,
            list_moves=self.config.list_moves,
        )

    def failed(self, item: PlannedDecision, reason: str) -> DecisionRecord:
        return _record(item, None, "error", reason, record_decisions=False)

    def spent(self, record: DecisionRecord) -> tuple[int, int, float]:
        return record.calls, record.prompt_tokens + record.completion_tokens, record.cost_usd

    def decisions(self, record: DecisionRecord) -> list[DecisionRecord]:
        return [record] if record.status in RESULT_STATUSES else []

    def progress(self, counts: Counter[str]) -> str:
        return ""


@dataclass
class EvaluationResult(RunResult):
    config: EvaluationConfig


def run_evaluation(
    config: EvaluationConfig, announce: Callable[[str], None] | None = None
) -> EvaluationResult:
    """Run (or resume) an evaluation; blocks until done."""
    return aio.run(arun_evaluation(config, announce))


async def arun_evaluation(
    config: EvaluationConfig, announce: Callable[[str], None] | None = None
) -> EvaluationResult:
    """Make every planned decision not yet logged, then summarize the whole log."""
    result = await Run(Evaluation(config), announce).execute()
    return EvaluationResult(**vars(result))


async def decide_one(
    method: Any, item: PlannedDecision, *, record_decisions: bool = True, list_moves: bool = False
) -> DecisionRecord:
    """One decision on one item, as its record (never raises for the model's faults);
    `list_moves`: a game's prompt lists the legal moves."""
    decision, status, error = await item.record.decide(method, item.seed, list_moves=list_moves)
    return _record(item, decision, status, error, record_decisions=record_decisions)


def _record(
    item: PlannedDecision,
    decision: Any,
    status: str,
    error: str | None,
    *,
    record_decisions: bool,
) -> DecisionRecord:
    """A decision's record: the item, the verdict, the decision's counters and record."""
    record = item.record
    # A fallback is a random move the method did not choose: recorded, and never correct.
    correct = extracted = verdict = None
    if status in RESULT_STATUSES:
        extracted, verdict = record.verdict(decision, status)
        correct = verdict == "correct"
    moved = decision is not None and status in ("ok", "fallback") and decision.move is not None
    counts = Counts.of(decision) if decision is not None else Counts()
    return DecisionRecord(
        id=item.id, **record.fields(), repeat=item.repeat, seed=item.seed,
        optimal_move=record.gold_text, status=status,
        answer=decision.answer_text if moved else None,
        correct=correct, extracted=extracted, verdict=verdict,
        round_verdicts=round_verdicts(record, decision.rounds)
        if decision is not None and decision.rounds else None,
        **dict(counts),
        samples=len(decision.samples) if decision is not None else 0,
        error=error,
        decision=decision if decision is not None and record_decisions else None,
    )  # fmt: skip
