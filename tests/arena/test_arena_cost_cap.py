"""`--max-cost-usd` is a hard cap: the spend never exceeds it, however many calls run at once.

The spend is computed here from what the fake server itself answered (its usage per
completion) at OpenAI's listed gpt-4o-mini prices, written out below, not by the code
under test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from metanim.arena import EvaluationConfig, run_evaluation
from metanim.datasets import build, write_jsonl
from metanim.llm import forget_probes
from metanim.llm.sim.providers import ProviderServer

#: gpt-4o-mini, dollars per 1M tokens: input, cached input, output
#: (https://platform.openai.com/docs/pricing).
INPUT, CACHED, OUTPUT = 0.15, 0.075, 0.60
CAP = 0.002


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cost") / "nim.jsonl"
    write_jsonl(build("nim-31-k3", n=20, seed=1), path)
    return path


def _spent(completions: list[dict]) -> float:
    total = 0.0
    for c in completions:
        usage = c["usage"]
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
        total += (
            (usage["prompt_tokens"] - cached) * INPUT
            + cached * CACHED
            + usage["completion_tokens"] * OUTPUT
        ) / 1e6
    return total


@pytest.mark.slow
@pytest.mark.parametrize("concurrency", [1, 8, 32, 64])
def test_the_cost_cap_is_never_exceeded(concurrency, dataset, tmp_path):
    forget_probes()
    with ProviderServer("openai") as server:
        config = EvaluationConfig(
            dataset=[str(dataset)], method="sc:n=3", model="gpt-4o-mini",
            base_url=server.base_url, repeats=6, concurrency=concurrency,
            call_concurrency=concurrency, max_cost_usd=CAP, results_dir=str(tmp_path),
            progress=False,
        )  # fmt: skip
        result = run_evaluation(config)
        spent = _spent(server.handlers.completions)
    assert spent <= CAP
    # The cap bit: the work stopped short of the plan, close to the cap (within the worst
    # case of the calls that could not fit), and the stop line says the final spend.
    assert not result.complete and "not run" in result.failures
    assert spent > CAP / 2
    assert result.stopped.startswith(f"cost cap ${CAP:g} reached: ${spent:.4f} spent")
    cost = result.summary["cost_cap"]
    assert cost["spent_usd"] == pytest.approx(spent, rel=1e-9)
    assert cost["peak_committed_usd"] <= CAP + 1e-12
    # No decision was cut into a forfeit: those the cap stopped are infrastructure errors.
    assert not [r for r in result.records if r.status in ("forfeit", "fallback")]


def test_a_cap_without_a_completion_cap_or_a_price_is_refused(dataset, tmp_path):
    with pytest.raises(ValueError, match="--max-cost-usd needs a completion cap"):
        EvaluationConfig(dataset=[str(dataset)], max_completion_tokens=None, max_cost_usd=1.0)
    forget_probes()
    with ProviderServer("openai") as server, pytest.raises(ValueError, match="has no price"):
        run_evaluation(
            EvaluationConfig(
                dataset=[str(dataset)],
                model="gpt-4o-mini-unpriced-variant",
                base_url=server.base_url,
                max_cost_usd=1.0,
                results_dir=str(tmp_path),
                progress=False,
            )
        )
