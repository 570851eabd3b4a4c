"""`metanim evaluate` against fake servers whose replies hide a wrong move in the reasoning.

Each decision is graded here by the closed form of single-heap NIM with takes of 1..3
(the winning take from a heap of n is n mod 4), not by the code under test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from metanim.arena import EvaluationConfig, run_evaluation
from metanim.datasets import build, write_jsonl
from metanim.llm import forget_probes
from metanim.llm.sim.providers import ProviderServer


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("data") / "nim.jsonl"
    write_jsonl(build("nim-31-k3", n=10, seed=0), path)
    return path


def _evaluate(server: ProviderServer, model: str, dataset: Path, results: Path, **kw):
    forget_probes()
    config = EvaluationConfig(
        dataset=[str(dataset)], method="react", model=model, base_url=server.base_url,
        repeats=1, results_dir=str(results), progress=False, **kw,
    )  # fmt: skip
    return run_evaluation(config)


def _graded(result) -> list[bool]:
    """Per decision: whether its move is the closed-form winning take."""
    out = []
    for row in result.records:
        state = row.decision.task["state"]
        heap = state[0] if isinstance(state, list) else int(state)
        out.append(int(row.answer) == heap % 4)
    return out


def test_r1_lone_closing_think_decisions_are_read_from_the_answer(dataset, tmp_path):
    with ProviderServer("r1-open-think") as server:
        result = _evaluate(server, "DeepSeek-R1-Distill-Qwen-1.5B", dataset, tmp_path)
        assert len(server.handlers.completions) == 10
    graded = _graded(result)
    assert len(graded) == 10 and all(graded)
    for row in result.records:
        call = row.decision.calls[0]
        assert "first draft" in call.reasoning[0]  # the decoy is kept, as reasoning
        assert "first draft" not in call.texts[0]


def test_mistral_list_content_is_valid(dataset, tmp_path):
    with ProviderServer("mistral") as server:
        result = _evaluate(server, "magistral-medium-latest", dataset, tmp_path)
        sent = [c["body"] for c in server.handlers.completions]
    assert result.complete and all(_graded(result))
    assert all("seed" not in body and "random_seed" in body for body in sent)
    for row in result.records:
        assert row.decision.calls[0].reasoning[0].startswith("Let me weigh")
