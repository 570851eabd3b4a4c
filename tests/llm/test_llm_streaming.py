"""Streaming: the timeout measures silence, usage comes from the last chunk, progress
shows pieces arriving; a call silent past the timeout is not sent again."""

from __future__ import annotations

import asyncio

import pytest

from metanim.games import make_game
from metanim.llm import InfrastructureError, OpenAIChatClient, forget_probes
from metanim.llm.sim.providers import ProviderServer, with_

GAME = make_game("nim-31-k3")  # a heap of 31, takes of 1 to 3: the winning take is 3
PROMPT = [
    {
        "role": "user",
        "content": GAME.prompt(GAME.initial_state())
        + '\n#Output Format: ```json\n{"reasoning": "...", "action": <integer>}\n```',
    }
]


def _client(server: ProviderServer, model: str, **kwargs) -> OpenAIChatClient:
    forget_probes()
    return OpenAIChatClient(model, base_url=server.base_url, api_key="k", **kwargs)


def test_a_long_stream_outlives_the_timeout_while_pieces_keep_arriving():
    # ~40 events, 0.05 s apart: 2 s in all, never 0.5 s of silence.
    slow = with_("vllm", chunk_s=0.05)
    with ProviderServer(slow) as server:
        client = _client(server, "Qwen/Qwen3-8B", timeout_s=0.5)
        completion = asyncio.run(client.chat(PROMPT))
    # The server waited 0.05 s before each piece: far more than the timeout in all.
    assert client.streamed * 0.05 > 2 * 0.5
    assert completion.finish_reason == "stop" and "action" in completion.text
    assert completion.sent["stream"] is True
    assert completion.usage.completion_tokens > 0 and completion.usage.reasoning_tokens > 0
    assert client.streamed > 10  # the pieces a progress display counts


def test_silence_past_the_timeout_fails_once_and_is_not_resent():
    hidden = with_("openai-reasoning", think_s=1.0)
    with ProviderServer(hidden) as server:
        client = _client(server, "o4-mini", timeout_s=0.3)
        with pytest.raises(InfrastructureError) as caught:
            asyncio.run(client.chat(PROMPT))
        calls = server.handlers.calls
    assert caught.value.kind == "timeout" and "of silence" in str(caught.value)
    assert "not sent again" in str(caught.value) and calls == 1


def test_usage_is_read_from_the_last_chunk_and_priced():
    with ProviderServer("openai-reasoning") as server:
        client = _client(server, "o4-mini")
        completion = asyncio.run(client.chat(PROMPT))
        (answered,) = server.handlers.completions
    usage = answered["usage"]
    assert completion.usage.prompt_tokens == usage["prompt_tokens"]
    assert completion.usage.completion_tokens == usage["completion_tokens"]
    assert (
        completion.usage.reasoning_tokens == usage["completion_tokens_details"]["reasoning_tokens"]
    )
    # o4-mini: $1.10 in, $4.40 out per 1M (https://platform.openai.com/docs/pricing).
    want = (usage["prompt_tokens"] * 1.10 + usage["completion_tokens"] * 4.40) / 1e6
    assert completion.priced and completion.cost_usd == pytest.approx(want)


def test_a_stream_without_usage_has_an_unknown_cost():
    quiet = with_("openai", stream_usage=False)
    with ProviderServer(quiet) as server:
        completion = asyncio.run(_client(server, "gpt-4o-mini").chat(PROMPT))
    assert completion.text and not completion.priced
