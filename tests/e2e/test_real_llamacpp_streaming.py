"""The real llama.cpp server (SmolLM2-135M-Instruct, 1 thread): found to be llama.cpp with
no flag, called streamed, its usage read from the stream's last chunk and its own busy
time (`timings`) recorded with each call. Skipped without METANIM_TEST_GGUF."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from metanim.llm.local import GGUF_ENV

GGUF = os.environ.get(GGUF_ENV)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.e2e,
    pytest.mark.skipif(
        not GGUF or not Path(GGUF).is_file(),
        reason=f"no local model: set {GGUF_ENV} to a GGUF file (.ci/run fetches SmolLM2-135M)",
    ),
]


def test_a_real_llama_cpp_call_streams_and_reports_the_servers_busy_time():
    from metanim.games import make_game
    from metanim.llm import OpenAIChatClient, forget_probes
    from metanim.llm.local import LocalServer

    game = make_game("nim-31-k3")
    prompt = [{"role": "user", "content": game.prompt(game.initial_state())}]
    with LocalServer(GGUF, threads=1, slots=1, ctx=2048, alias="smollm2") as server:
        forget_probes()
        client = OpenAIChatClient("smollm2", base_url=server.base_url)
        completion = asyncio.run(client.chat(prompt, max_tokens=16))
    assert client.provider.kind == "llamacpp" and client.detected.probed
    assert completion.sent["stream"] is True and client.streamed > 0
    assert completion.sent["cap_field"] == "max_tokens" and completion.sent["cap"] == 16
    # Counted by the server: a 16-token cap cuts the reply at 16 or fewer.
    assert 0 < completion.usage.completion_tokens <= 16
    assert completion.usage.prompt_tokens > 0
    assert completion.server_s is not None and completion.server_s > 0
    assert completion.priced and completion.cost_usd == 0.0  # self-hosted: $0, known
