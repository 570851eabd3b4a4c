"""Each reasoning-model profile in metanim/profiles/ runs against the fake of its provider: the
settings its `[options]` and its model's defaults give are what the server takes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metanim.cli import main
from metanim.datasets import build, write_jsonl
from metanim.llm import forget_probes
from metanim.llm.sim.providers import ProviderServer

pytestmark = pytest.mark.slow


def _bodies_all(key, value):
    return lambda bodies: all(b.get(key) == value for b in bodies)


CASES = {
    "o4-mini-react": ("openai-reasoning", [
        _bodies_all("max_completion_tokens", 25_000), _bodies_all("reasoning_effort", "low"),
        lambda bodies: all("temperature" not in b for b in bodies),
    ]),
    "gpt-5-mini-dreamad": ("openai-reasoning", [
        _bodies_all("max_completion_tokens", 25_000), _bodies_all("reasoning_effort", "low"),
    ]),
    "o3-pro-react": ("openai-responses-only", [
        # Answered through the Responses API (the chat route answers 404 here).
        _bodies_all("max_completion_tokens", 25_000),
    ]),
    "deepseek-reasoner-react": ("deepseek", [
        _bodies_all("max_tokens", 32_768), lambda bodies: all("temperature" not in b for b in bodies),
    ]),
    "qwen3-llamacpp-react": ("llamacpp", [
        _bodies_all("max_tokens", 4096),
        lambda bodies: all(b["response_format"]["type"] == "json_schema" for b in bodies),
    ]),
    "r1-distill-vllm-mad": ("vllm", [_bodies_all("max_tokens", 8192)]),
    "claude-sonnet-4-5-react": ("anthropic", [
        lambda bodies: all(b["tools"][0]["function"]["name"] == "reply" for b in bodies),
    ]),
}  # fmt: skip


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("profiles") / "nim.jsonl"
    write_jsonl(build("nim-31-k3", n=2, seed=2), path)
    return path


@pytest.mark.parametrize("profile", sorted(CASES))
def test_each_reasoning_profile_runs_against_its_providers_fake(profile, dataset, tmp_path):
    behaviour, checks = CASES[profile]
    forget_probes()
    with ProviderServer(behaviour) as server:
        code = main(
            [
                "evaluate", "--profile", profile, "--base-url", server.base_url,
                "--dataset", str(dataset), "--repeats", "1", "--no-progress",
                "--results-dir", str(tmp_path),
            ]
        )  # fmt: skip
        bodies = [c["body"] for c in server.handlers.completions]
    assert code == 0 and bodies
    (summary_path,) = tmp_path.glob("*.summary.json")
    summary = json.loads(summary_path.read_text())
    (game,) = summary["games"]
    assert game["graded"] == 2 and game["forfeits"] == 0 and game["infrastructure_errors"] == 0
    for check in checks:
        assert check(bodies), profile
    if profile == "o3-pro-react":
        (sent,) = summary["calls_sent"].values()
        assert sent["api"] == "responses" and sent["timeout_s"] == 1800
