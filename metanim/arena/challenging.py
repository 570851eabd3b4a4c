"""Seed 004's challenging subset: the items a single-agent baseline keeps failing.

AceMAD (seed 004, App. B.2) builds its benchmarks' "challenging interval" by running a
naive single-agent baseline 5 times per item at temperature 0.7 and keeping the items
answered correctly in fewer than 40% of the runs. `run_challenging` does that with any
method and model: the runs are an ordinary evaluation (same log, same resume, same
config hash as `metanim evaluate` with `--param temperature=T`), and the kept items are
written as the original lines of their file, so the subset is a dataset or question file
of the same shape. (The paper's third step, checking by hand that the failures are
systematic, is left to the reader of the per-item accuracies written beside it.)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from metanim.arena._run import Run
from metanim.arena.evaluate import Evaluation, EvaluationConfig, EvaluationResult
from metanim.datasets.questions import is_question_file, question_from_row
from metanim.records import DecisionRecord
from metanim.util import FileName, aio


class ChallengingConfig(EvaluationConfig):
    """A challenging-subset run: every field is a flag of `metanim challenging`."""

    name: FileName = Field("challenging", description="run name, the stem of the result files")
    method: str = Field(
        "standard", description="the single-agent baseline whose failures define the subset"
    )
    repeats: int = Field(5, ge=1, le=10_000, description="runs per item (seed 004: 5)")
    temperature: float = Field(0.7, ge=0, description="sampling temperature (seed 004: 0.7)")
    below: float = Field(
        0.4, gt=0, le=1, description="keep items whose accuracy over the runs is below this"
    )

    def evaluation(self) -> EvaluationConfig:
        """The evaluation that makes the runs (the temperature becomes a method parameter)."""
        body = self.model_dump(exclude={"temperature", "below"})
        body["params"] = {**self.params, "temperature": self.temperature}
        return EvaluationConfig(**body)


@dataclass
class ItemAccuracy:
    file: str
    id: str
    correct: int
    graded: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.graded if self.graded else float("nan")


@dataclass
class ChallengingResult:
    evaluation: EvaluationResult
    items: list[ItemAccuracy]
    kept: dict[str, list[str]]  # input file -> ids kept
    written: dict[str, Path]  # input file -> subset file
    below: float

    def report(self) -> str:
        lines = [
            f"Challenging subset: items answered correctly in less than {100 * self.below:g}% "
            f"of the graded runs (seed 004, App. B.2).",
            "",
            "| file | items | measured | kept | subset |",
            "|---|---|---|---|---|",
        ]
        for path, out in self.written.items():
            items = [i for i in self.items if i.file == path]
            measured = sum(i.graded > 0 for i in items)
            lines.append(f"| {path} | {len(items)} | {measured} | {len(self.kept[path])} | {out} |")
        return "\n".join(lines) + "\n"


def _raw_lines(path: str) -> dict[str, str]:
    """Item id -> its original line, read the way `evaluate` reads the file."""
    out: dict[str, str] = {}
    question_file = is_question_file(path)
    with Path(path).open(encoding="utf-8-sig") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            row = json.loads(line)
            item_id = question_from_row(row, str(number)).id if question_file else str(row["id"])
            out[item_id] = line if line.endswith("\n") else line + "\n"
    return out


def per_item(records: Iterable[DecisionRecord], planned: list[Any]) -> list[ItemAccuracy]:
    """Correct and graded runs per planned item, from the latest record per decision."""
    latest = {r.id: r for r in records}
    counts: dict[tuple[str, str], list[int]] = {}
    for p in planned:
        tally = counts.setdefault((p.file, p.record.id), [0, 0])  # every item, even unrun
        line = latest.get(p.id)
        if line is not None and line.correct is not None:
            tally[0] += line.correct
            tally[1] += 1
    return [ItemAccuracy(f, i, c, g) for (f, i), (c, g) in counts.items()]


def run_challenging(
    config: ChallengingConfig, announce: Callable[[str], None] | None = None
) -> ChallengingResult:
    """Run the baseline R times over every item, then write each file's challenging subset.

    Items with no graded run (infrastructure errors only, or a budget stop) are neither
    kept nor dropped silently: they are counted as not measured.
    """
    evaluation = config.evaluation()
    run = Run(Evaluation(evaluation), announce)
    result = EvaluationResult(**vars(aio.run(run.execute())))
    items = per_item(result.records, list(run.planned))
    out_dir = Path(config.results_dir)
    kept: dict[str, list[str]] = {}
    written: dict[str, Path] = {}
    for path in evaluation.dataset:
        chosen = [i.id for i in items if i.file == path and i.graded and i.accuracy < config.below]
        raw = _raw_lines(path)
        stem = Path(path).name.removesuffix(".jsonl")
        out = out_dir / f"{stem}-challenging.jsonl"
        out.write_text("".join(raw[i] for i in chosen), encoding="utf-8")
        accuracies = {
            i.id: {"correct": i.correct, "graded": i.graded} for i in items if i.file == path
        }
        out.with_suffix(".items.json").write_text(
            json.dumps(
                {
                    "source": path,
                    "log": str(result.log_path),
                    "method": config.method,
                    "model": config.model,
                    "runs": config.repeats,
                    "temperature": config.temperature,
                    "below": config.below,
                    "kept": chosen,
                    "items": accuracies,
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
        kept[path], written[path] = chosen, out
    return ChallengingResult(result, items, kept, written, config.below)
