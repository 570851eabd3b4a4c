"""Structured output `auto`: which servers get a reply schema (those that say they
constrain output: llama.cpp, vLLM, SGLang), asked once per server and process, never
of a hosted API; and a refused request blames the schema only when it carried one.

The servers are scripted loopback ones (`tests.loopback`); the real-model version is in
tests/e2e/test_local_model.py."""

from __future__ import annotations

import asyncio

import pytest

from metanim.llm import server_target, structured_output_for
from tests.loopback import RecordingServer, playing

pytestmark = pytest.mark.usefixtures("fresh_probes")


@pytest.mark.parametrize(
    ("owner", "props", "mode"),
    [
        ("llamacpp", False, "json_schema"),
        ("vllm", False, "json_schema"),
        ("sglang", False, "json_schema"),
        (None, True, "json_schema"),  # an older llama.cpp: no owned_by, but /props
        ("system", False, "off"),  # what the OpenAI API says of its models
        (None, False, "off"),
    ],
)
def test_auto_sends_schemas_only_to_servers_that_constrain_output(owner, props, mode):
    with RecordingServer(playing(owner, props)) as server:
        target = server_target("m", server.url() + "/v1", api_key="")
        choice = structured_output_for(target)
        again = structured_output_for(target)
        asked = len(server.requests)
    assert choice.mode == mode and again == choice
    assert asked <= 3  # once per server and process: the second answer is remembered
    if mode == "off":
        assert "does not say it constrains output" in choice.reason


@pytest.mark.slow
def test_auto_is_off_when_the_probe_times_out_or_nothing_listens():
    with RecordingServer(playing("llamacpp", delay=1.0)) as server:
        slow = structured_output_for(
            server_target("m", server.url() + "/v1", api_key=""), timeout_s=0.1
        )
    assert slow.mode == "off" and "did not answer" in slow.reason
    from metanim.llm.local import free_port

    dead = structured_output_for(
        server_target("m", f"http://127.0.0.1:{free_port()}/v1", api_key="")
    )
    assert dead.mode == "off" and "did not answer" in dead.reason


def test_auto_never_probes_a_hosted_api(monkeypatch):
    def no_request(*args, **kwargs):
        raise AssertionError("a hosted API is never probed")

    monkeypatch.setattr("urllib.request.urlopen", no_request)
    openai = structured_output_for(server_target("gpt-4o", "https://api.openai.com/v1"))
    azure = structured_output_for(
        server_target(
            "azure:dep", "https://r.openai.azure.com", api_key="k", api_version="2024-10-21"
        )
    )
    assert openai.mode == azure.mode == "off"


def test_a_refused_request_blames_the_schema_only_when_the_error_is_about_it():
    # llama.cpp's context-size error is no schema's fault, schema or not; an error about
    # response_format is, when the request carried one.
    from metanim.llm import CallOptions, InfrastructureError, OpenAIChatClient

    too_long = b'{"error": {"message": "request (4225 tokens) exceeds the available context"}}'
    bad_format = b'{"error": {"message": "Invalid schema for response_format: reply"}}'
    on = CallOptions(structured_output="json_schema")
    schema = on.with_(schema={"type": "object"})
    messages = [{"role": "user", "content": "hi"}]
    cases = ((too_long, on, False), (too_long, schema, False), (bad_format, schema, True))
    for body, options, blamed in cases:
        with RecordingServer(lambda seen, body=body: (400, body)) as server:
            client = OpenAIChatClient(
                "m", base_url=server.url() + "/v1", api_key="", max_retries=0, check_server=False
            )
            with pytest.raises(InfrastructureError) as caught:
                asyncio.run(client.chat(messages, options=options))
        assert ("carried a reply schema" in str(caught.value)) is blamed
