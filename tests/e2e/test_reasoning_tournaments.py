"""DReaMAD and AceMAD against a fake OpenAI reasoning server, named only by --model and
--base-url: every call goes out as the server takes it (max_completion_tokens, no
temperature, the reasoning model's cap in every phase), so nothing forfeits and nothing
fails."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from metanim.llm.sim.providers import ProviderServer

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


@pytest.mark.parametrize("method", [None, "acemad"])  # None: the default, DReaMAD
def test_a_reasoning_model_tournament_needs_no_flag_but_model_and_server(method, tmp_path):
    with ProviderServer("openai-reasoning") as server:
        words = ["tournament", "--model", "o4-mini", "--base-url", server.base_url]
        if method:
            words += ["--method", method]
        done = subprocess.run(
            [sys.executable, "-m", "metanim", *words],
            cwd=tmp_path, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        sent = [c["body"] for c in server.handlers.completions]
    assert done.returncode == 0, done.stderr[-2000:]
    (summary_path,) = Path(tmp_path, "results").glob("*.summary.json")
    summary = json.loads(summary_path.read_text())
    (group,) = [g for g in summary["groups"] if g["seat"] == "all"]
    assert group["finished"] == group["planned"] == 50
    assert group["infrastructure_errors"] == 0 and group["errors"] == 0
    assert group["agent"]["forfeits"] == 0 and group["agent"]["truncated"] == 0
    # As the server takes it: the cap as max_completion_tokens, no temperature, no
    # refusal answered (each request was answered on its first attempt).
    assert sent and all("max_completion_tokens" in b and "max_tokens" not in b for b in sent)
    assert all("temperature" not in b for b in sent)
    assert server.handlers.calls == len(sent)
    calls = summary["calls_sent"]["o4-mini@" + server.base_url]
    assert calls["provider"] == "openai" and calls["temperature"] == "the server's default"
