"""lm-eval: the shipped task YAMLs, the one answer filter, and a run against the simulator."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from metanim.datasets import DEFAULT_SPECS, build, write_jsonl
from metanim.integrations.lm_eval import (
    INVALID,
    TASKS_DIR,
    canonical_move,
    canonical_reply,
    task_names,
    write_tasks,
)
from metanim.llm.sim import SimServer


@pytest.fixture(scope="module")
def small_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three records of every default file, written as the build writes them."""
    folder = tmp_path_factory.mktemp("data") / "datasets"
    for spec in DEFAULT_SPECS:
        write_jsonl(build(spec, n=3, seed=0), folder / f"{spec.name}.jsonl")
    return folder


def rows(folder: Path) -> list[dict]:
    """Rows as lm-eval hands them to a filter: the JSON of the file, strings included."""
    out = []
    for path in sorted(folder.glob("*.jsonl")):
        out += [json.loads(line) for line in path.read_text().splitlines()]
    return out


def test_one_filter_reads_every_game(small_build: Path) -> None:
    docs = rows(small_build)
    assert {d["game"] for d in docs} == {"nim", "fibonacci", "kayles", "chomp", "corner_queen"}
    resps = [[d["messages"][1]["content"], "no idea", d["input"]] for d in docs]
    out = canonical_move(resps, docs)
    for doc, (reference, garbage, prompt) in zip(docs, out, strict=True):
        assert reference == doc["target"]  # lists such as "[1, 0]" compare as text
        assert garbage == INVALID and prompt == INVALID
    # A legal move other than the target is its own text, never the target.
    others = [(d, m) for d in docs for m in d["legal_moves"][:3] if m != d["target"]]
    assert len({d["game"] for d, _ in others}) == 5
    for doc, wrong in others:
        reply = f'```json\n{{"action": {wrong}}}\n```'
        assert canonical_reply(reply, doc) == wrong != doc["target"]


def test_shipped_yamls_are_what_the_generator_writes(tmp_path: Path) -> None:
    write_tasks(tmp_path)
    shipped = {p.name: p.read_text() for p in TASKS_DIR.iterdir() if p.suffix in {".yaml", ".py"}}
    fresh = {p.name: p.read_text() for p in tmp_path.iterdir()}
    assert shipped == fresh
    assert sorted(n.removesuffix(".yaml") for n in fresh if n.endswith(".yaml")) == sorted(
        task_names()
    )


@pytest.mark.slow
def test_lm_eval_runs_every_task_against_the_simulator(small_build: Path, tmp_path: Path) -> None:
    lm_eval = pytest.importorskip("lm_eval")
    from lm_eval.tasks import TaskManager

    tasks = write_tasks(tmp_path / "tasks", small_build)
    # Only our tasks: indexing lm-eval's thousands of built-in YAMLs is most of the time.
    manager = TaskManager(include_path=str(tasks), include_defaults=False)
    scores = {}
    with SimServer() as server:
        os.environ.setdefault("OPENAI_API_KEY", "sim")
        for model in ("sim-optimal", "sim-random"):
            result = lm_eval.simple_evaluate(
                model="local-chat-completions",
                model_args=f"model={model},base_url={server.base_url}/chat/completions,"
                "num_concurrent=1,max_retries=1",
                tasks=["metanim"],
                apply_chat_template=True,
                task_manager=manager,
            )
            scores[model] = {
                name: r["exact_match,canonical_move"] for name, r in result["results"].items()
            }
    assert set(scores["sim-optimal"]) == set(task_names())
    assert all(v == 1.0 for v in scores["sim-optimal"].values())
    # Random legal moves miss the unique winning move most of the time.
    assert sum(scores["sim-random"].values()) / len(task_names()) < 0.5
