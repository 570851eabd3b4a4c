"""Requests each server accepts, and what the client does when one is refused.

Each fake (`metanim.llm.sim.providers`) answers with its provider's documented bodies;
what the tests expect on the wire is written out from those documents.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from metanim.games import make_game
from metanim.llm import (
    CallOptions,
    InfrastructureError,
    OpenAIChatClient,
    detect_provider,
    forget_probes,
    server_target,
    structured_output_for,
)
from metanim.llm.sim.providers import BEHAVIOURS, ProviderServer, with_

GAME = make_game("nim-31-k3")  # a heap of 31, takes of 1 to 3: the winning take is 3
PROMPT = [
    {
        "role": "user",
        "content": GAME.prompt(GAME.initial_state())
        + '\n#Output Format: ```json\n{"reasoning": "...", "action": <integer>}\n```',
    }
]
SCHEMA = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "action": {"enum": [1, 2, 3]}},
    "required": ["reasoning", "action"],
}


def _client(server: ProviderServer, model: str, **kwargs) -> OpenAIChatClient:
    forget_probes()
    return OpenAIChatClient(model, base_url=server.base_url, api_key="k", **kwargs)


@pytest.mark.parametrize(
    ("behaviour", "kind"),
    [
        ("openai", "openai"), ("openai-reasoning", "openai"), ("deepseek", "deepseek"),
        ("vllm", "vllm"), ("vllm-old", "vllm"), ("sglang", "sglang"), ("llamacpp", "llamacpp"),
        ("ollama", "ollama"), ("anthropic", "anthropic"), ("gemini", "gemini"),
        ("openrouter", "openrouter"), ("mistral", "mistral"),
    ],
)  # fmt: skip
def test_each_server_is_detected_from_what_it_answers(behaviour, kind):
    with ProviderServer(behaviour) as server:
        forget_probes()
        model = next(iter(BEHAVIOURS[behaviour].models))
        found = detect_provider(server_target(model, server.base_url, api_key=""))
    assert found.kind == kind, found.reason


def test_auto_sends_schemas_to_ollama_as_to_llama_cpp():
    with ProviderServer("ollama") as server:
        forget_probes()
        choice = structured_output_for(server_target("qwen3:8b", server.base_url, api_key=""))
    assert choice.mode == "json_schema" and "Ollama" in choice.reason


def test_an_openai_reasoning_model_gets_its_request_right_first_time():
    with ProviderServer("openai-reasoning") as server:
        completion = asyncio.run(_client(server, "o4-mini").chat(PROMPT, temperature=0.0))
        (answered,) = [c["body"] for c in server.handlers.completions]
        calls = server.handlers.calls
    assert calls == 1 and "max_tokens" not in answered and "temperature" not in answered
    assert answered["max_completion_tokens"] == 25_000
    assert completion.sent["temperature"] is None  # it ran at the server's default
    assert completion.sent["cap_field"] == "max_completion_tokens"
    assert completion.usage.reasoning_tokens > 0


def test_a_refused_cap_field_and_temperature_are_adapted_once_visibly(caplog):
    # An unknown model name on the reasoning server: sent as a chat model would be, then
    # adapted after each refusal names its `param`, and every later call sent right.
    server_behaviour = with_("openai-reasoning", models={"house-model": "sim-optimal"})
    caplog.set_level(logging.WARNING, logger="metanim.llm")
    with ProviderServer(server_behaviour) as server:
        client = _client(server, "house-model", provider="generic")
        first = asyncio.run(client.chat(PROMPT, temperature=0.0))
        second = asyncio.run(client.chat(PROMPT, temperature=0.7))
        calls = server.handlers.calls
        answered = [c["body"] for c in server.handlers.completions]
    assert calls == 4  # max_tokens refused, temperature refused, then two answers
    assert [e["field"] for e in first.attempt_errors] == ["max_tokens", "temperature"]
    assert first.retries == 2 and second.retries == 0
    for body in answered:
        assert "max_tokens" not in body and "temperature" not in body
        assert body["max_completion_tokens"] == 512
    notes = second.sent["adapted"]
    assert any("max_completion_tokens" in n for n in notes)
    assert any("temperature" in n for n in notes)
    warned = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(warned) == 2  # once each, not per call


def test_any_other_refused_field_names_the_flag_that_changes_it():
    with ProviderServer("mistral") as server:
        client = _client(server, "magistral-medium-latest", provider="generic")
        with pytest.raises(InfrastructureError) as caught:
            asyncio.run(client.chat(PROMPT, seed=7))
        calls = server.handlers.calls
    assert caught.value.kind == "unsupported_parameter" and calls == 1
    assert "--omit-param seed" in str(caught.value)


def test_mistral_gets_random_seed_and_left_out_params_are_left_out():
    with ProviderServer("mistral") as server:
        client = _client(server, "magistral-medium-latest")
        asyncio.run(client.chat(PROMPT, seed=7))
        asyncio.run(client.chat(PROMPT, seed=7, options=CallOptions(omit=("seed", "temperature"))))
        first, second = [c["body"] for c in server.handlers.completions]
    assert first["random_seed"] == 7 and "seed" not in first and first["max_tokens"] == 8192
    assert "random_seed" not in second and "temperature" not in second


@pytest.mark.parametrize(
    ("behaviour", "model", "field", "value"),
    [
        ("openai-reasoning", "o4-mini", "reasoning_effort", "low"),
        ("gemini", "gemini-2.5-flash", "reasoning_effort", "low"),
        ("openrouter", "openai/o4-mini", "reasoning", {"effort": "low"}),
        ("anthropic", "claude-sonnet-4-5", None, None),  # documented as ignored: not sent
        ("deepseek", "deepseek-reasoner", None, None),
    ],
)
def test_reasoning_effort_goes_as_each_server_reads_it(behaviour, model, field, value):
    with ProviderServer(behaviour) as server:
        completion = asyncio.run(
            _client(server, model).chat(PROMPT, options=CallOptions(reasoning_effort="low"))
        )
        (body,) = [c["body"] for c in server.handlers.completions]
    if field is None:
        assert "reasoning_effort" not in body and "reasoning" not in body
        assert "ignores it" in completion.sent["reasoning_effort"]
    else:
        assert body[field] == value


def test_tools_mode_sends_the_schema_as_a_forced_function_call():
    with ProviderServer("anthropic") as server:
        options = CallOptions(structured_output="tools", schema=SCHEMA)
        completion = asyncio.run(_client(server, "claude-sonnet-4-5").chat(PROMPT, options=options))
        (body,) = [c["body"] for c in server.handlers.completions]
    assert body["tools"][0]["function"]["parameters"] == SCHEMA
    assert body["tool_choice"] == {"type": "function", "function": {"name": "reply"}}
    assert "response_format" not in body  # ignored there (docs.claude.com/en/api/openai-sdk)
    assert '"action": 3' in completion.text  # the call's arguments are the answer


def test_the_simulator_itself_streams_and_answers_tool_calls(sim_server):
    options = CallOptions(structured_output="tools", schema=SCHEMA)
    forget_probes()
    client = OpenAIChatClient("sim-optimal", base_url=sim_server.base_url, stream=True)
    completion = asyncio.run(client.chat(PROMPT, options=options))
    assert completion.sent["stream"] and client.streamed > 0
    assert '"action": 3' in completion.text and completion.finish_reason == "tool_calls"


def test_the_responses_api_reads_output_items_and_usage():
    with ProviderServer("openai-responses-only") as server:
        client = _client(server, "o3-pro")
        completion = asyncio.run(client.chat(PROMPT, options=CallOptions(reasoning_effort="low")))
        requests = server.handlers.calls
        (answered,) = server.handlers.completions
    assert client.api == "responses" and requests == 1
    assert (
        completion.sent["api"] == "responses"
        and completion.sent["cap_field"] == "max_output_tokens"
    )
    assert '"action": 3' in completion.text
    usage = answered["usage"]
    assert completion.usage.completion_tokens == usage["completion_tokens"]
    assert (
        completion.usage.reasoning_tokens == usage["completion_tokens_details"]["reasoning_tokens"]
    )
    # o3-pro: $20 in, $80 out per 1M (https://platform.openai.com/docs/pricing).
    want = (usage["prompt_tokens"] * 20 + usage["completion_tokens"] * 80) / 1e6
    assert completion.cost_usd == pytest.approx(want)


def test_reasoning_without_an_answer_is_the_models_failure_not_the_servers():
    silent = with_("vllm", answer_omitted=True)
    with ProviderServer(silent) as server:
        completion = asyncio.run(_client(server, "Qwen/Qwen3-8B").chat(PROMPT))
        calls = server.handlers.calls
    # One call, no resend: an empty answer with the thinking kept.
    assert calls == 1 and completion.retries == 0
    assert completion.text == "" and completion.reasoning[0].startswith("Let me weigh")


def test_cached_prompt_tokens_are_priced_at_the_cached_rate():
    with ProviderServer("openai") as server:
        client = _client(server, "gpt-4o-mini")
        asyncio.run(client.chat(PROMPT, seed=1))
        again = asyncio.run(client.chat(PROMPT, seed=2))
        usage = server.handlers.completions[1]["usage"]
    cached = usage["prompt_tokens_details"]["cached_tokens"]
    assert cached > 0 and again.usage.cached_tokens == cached
    # gpt-4o-mini: $0.15 in, $0.075 cached in, $0.60 out per 1M.
    want = ((usage["prompt_tokens"] - cached) * 0.15 + cached * 0.075
            + usage["completion_tokens"] * 0.60) / 1e6  # fmt: skip
    assert again.cost_usd == pytest.approx(want)


def test_openrouter_reports_its_own_cost_and_vendor_names_are_priced():
    from metanim.llm import PriceTable

    table = PriceTable.load()
    assert table.lookup("openai/o4-mini") == table.lookup("o4-mini")
    assert table.lookup("anthropic/claude-sonnet-4.5") == table.lookup("claude-sonnet-4-5")
    assert table.lookup("google/gemini-2.5-flash") == table.lookup("gemini-2.5-flash")
    with ProviderServer("openrouter") as server:
        completion = asyncio.run(_client(server, "openai/o4-mini").chat(PROMPT))
        (answered,) = server.handlers.completions
    assert completion.cost_usd == pytest.approx(answered["usage"]["cost"])
