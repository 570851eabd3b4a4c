"""Where the client's calls go and what they carry (hosted conventions, validation), how
it classifies replies with no content and how it times calls: each against a loopback
aiohttp server that records every request it gets (`tests.loopback`). That it closes its
sessions is in tests/e2e/test_interpreter.py."""

from __future__ import annotations

import asyncio
import json
import logging
import pickle
import socket
import threading
import types
import urllib.request

import pytest

from metanim.llm import (
    AZURE_PREFIX,
    InfrastructureError,
    OpenAIChatClient,
    PriceTable,
    Usage,
    auth_headers,
    check_api_key,
    check_base_url,
    check_model,
    is_loopback,
    server_target,
)
from tests.loopback import RecordingServer, reply

MESSAGES = [{"role": "user", "content": "Take 1, 2 or 3 of 7 stones."}]

_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_API_KEY",
    "OPENAI_API_VERSION",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)


# ------------------------------------------------------------- hosted conventions
def test_organization_and_project_headers_on_every_request(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-org-test")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-123")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj_456")
    with RecordingServer() as server:
        base = f"{server.url()}/v1"
        client = OpenAIChatClient("gpt-4o", base_url=base)  # check_server: GET /models too
        result = asyncio.run(client.chat(MESSAGES))
        # The pre-flight helper sends what the client sends.
        target = server_target("gpt-4o", base)
        request = urllib.request.Request(target.models_url(base), headers=auth_headers())
        urllib.request.urlopen(request, timeout=10).close()
    assert result.text == '{"action": 1}'
    paths = [(r["method"], r["path"]) for r in server.requests]
    assert paths == [
        ("GET", "/v1/models"),
        ("GET", "/props"),
        ("GET", "/api/version"),  # the provider probe: not llama.cpp, is it Ollama?
        ("POST", "/v1/chat/completions"),
        ("GET", "/v1/models"),
    ]
    for seen in server.requests:
        assert seen["headers"]["authorization"] == "Bearer sk-org-test", seen["path"]
        assert seen["headers"]["openai-organization"] == "org-123", seen["path"]
        assert seen["headers"]["openai-project"] == "proj_456", seen["path"]
        assert "api-key" not in seen["headers"] and seen["query"] == {}
    # Arguments win over the environment; unset, the headers are not sent at all.
    assert auth_headers("k", organization="org-x", project="p-y") == {
        "Authorization": "Bearer k",
        "OpenAI-Organization": "org-x",
        "OpenAI-Project": "p-y",
    }
    monkeypatch.delenv("OPENAI_ORG_ID")
    monkeypatch.delenv("OPENAI_PROJECT_ID")
    assert auth_headers() == {"Authorization": "Bearer sk-org-test"}


def test_azure_deployment_url_api_version_and_api_key_header(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-azure")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key-1")
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-a")
    with RecordingServer() as server:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.url() + "/")
        client = OpenAIChatClient(AZURE_PREFIX + "my-gpt4o")
        result = asyncio.run(client.chat(MESSAGES, seed=3))
        # A base URL given with the model is the endpoint (replicas: "a|b"), as in
        # `azure:my-gpt4o@https://<resource>.openai.azure.com`.
        other = OpenAIChatClient("azure:dep.2", base_url=server.url(), api_version="2025-01-01")
        asyncio.run(other.chat(MESSAGES))
        # The listing a pre-flight check reads: the resource's models, same auth.
        target = server_target("azure:my-gpt4o")
        request = urllib.request.Request(
            target.models_url(target.base_urls[0]), headers=target.headers
        )
        urllib.request.urlopen(request, timeout=10).close()
    first, second, listing = server.requests  # no /models or /props check for Azure
    assert (first["method"], first["path"]) == (
        "POST",
        "/openai/deployments/my-gpt4o/chat/completions",
    )
    assert first["query"] == {"api-version": "2024-10-21"}
    assert first["headers"]["api-key"] == "azure-key-1"
    assert first["headers"]["openai-organization"] == "org-a"
    assert "authorization" not in first["headers"]
    assert first["body"]["model"] == "my-gpt4o" and first["body"]["seed"] == 3
    assert second["path"] == "/openai/deployments/dep.2/chat/completions"
    assert second["query"] == {"api-version": "2025-01-01"}
    assert (listing["method"], listing["path"]) == ("GET", "/openai/models")
    assert listing["query"] == {"api-version": "2024-10-21"}
    assert listing["headers"]["api-key"] == "azure-key-1"
    # Records name the model as given and the deployment URL that answered.
    assert result.model == "azure:my-gpt4o" and client.model == "azure:my-gpt4o"
    assert result.endpoint == f"{server.url()}/openai/deployments/my-gpt4o"


@pytest.mark.parametrize(
    ("unset", "message"),
    [
        ("AZURE_OPENAI_ENDPOINT", "needs an endpoint: set AZURE_OPENAI_ENDPOINT"),
        ("OPENAI_API_VERSION", "needs an API version: set OPENAI_API_VERSION"),
        ("AZURE_OPENAI_API_KEY", "needs a key: set AZURE_OPENAI_API_KEY"),
    ],
)
def test_azure_without_its_settings_is_refused_at_construction(monkeypatch, unset, message):
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://res.openai.azure.com")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-other")  # not a substitute for Azure's key
    monkeypatch.delenv(unset)
    with pytest.raises(ValueError, match=message):
        OpenAIChatClient("azure:dep")
    with pytest.raises(ValueError, match="names no Azure deployment"):
        OpenAIChatClient("azure:")


def test_azure_key_never_appears_in_logs_records_or_pickles(monkeypatch, caplog):
    secret = "azure-SECRET-0123456789abcdef"
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", secret)
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    caplog.set_level(logging.DEBUG)

    def answer(seen):
        if seen["headers"].get("api-key") != secret:
            return 401, json.dumps({"error": {"message": f"bad key {seen['headers']}"}}).encode()
        return 200, reply('{"action": 2}')

    with RecordingServer(answer) as server:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.url())
        client = OpenAIChatClient("azure:dep")
        result = asyncio.run(client.chat(MESSAGES))
        copy = pickle.loads(pickle.dumps(client))
        again = asyncio.run(copy.chat(MESSAGES))  # reads the key again where unpickled
        wrong = OpenAIChatClient("azure:dep", api_key=secret[::-1])
        with pytest.raises(InfrastructureError) as info:
            asyncio.run(wrong.chat(MESSAGES))
    assert result.text == again.text == '{"action": 2}'
    assert info.value.kind == "auth"
    pickled = pickle.dumps(client)
    text = "\n".join(
        [
            result.model_dump_json(),
            repr(client),
            repr(client._target),
            str(info.value),
            caplog.text,
        ]
    )
    assert secret not in text and secret[::-1] not in text
    assert secret.encode() not in pickled


# ------------------------------------------------------------------- validation
@pytest.mark.parametrize("key", ["abc\ndef", "abc\rdef", "sk-\x7f", "sk-€uro", "sk-киев"])
def test_an_api_key_no_header_can_carry_is_refused_before_any_request(monkeypatch, key):
    with RecordingServer() as server:
        monkeypatch.setenv("OPENAI_API_KEY", key)
        with pytest.raises(ValueError) as info:
            OpenAIChatClient("m", base_url=server.url() + "/v1")
        with pytest.raises(ValueError, match="no HTTP header can carry"):
            OpenAIChatClient("m", base_url=server.url() + "/v1", api_key="x" + key)
        with pytest.raises(ValueError, match="no HTTP header can carry"):
            auth_headers()  # what a pre-flight check sends: refused the same way
    assert server.requests == []
    message = str(info.value)
    assert "the API key (from OPENAI_API_KEY) holds characters no HTTP header can carry" in message
    assert key not in message and key[:3] not in message.replace("API", "")  # never quoted


def test_the_header_rule_matches_rfc_9110_field_values():
    # A field value is HTAB, SP, visible ASCII (VCHAR) and obs-text (0x80-0xFF); clients
    # encode headers as Latin-1, so nothing past U+00FF can be sent.
    for code in range(0x180):
        ch = chr(code)
        allowed = ch == "\t" or ch == " " or 0x21 <= code <= 0x7E or 0x80 <= code <= 0xFF
        if allowed:
            assert check_api_key("sk-" + ch) == "sk-" + ch, hex(code)
        else:
            with pytest.raises(ValueError):
                check_api_key("sk-" + ch)
    assert check_api_key("") == ""  # local servers need no key


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("notaurl", "is not a URL: it needs http:// or https://"),
        ("ftp://x/v1", "has the scheme 'ftp'"),
        ("", "is empty"),
        ("http://", "is not a URL"),
        ("http://:8000/v1", "names no host"),
        ("http://x:99999/v1", "is not a valid URL"),
        ("http://x:port/v1", "is not a valid URL"),
        ("http://x/v1?a=1", "holds a query or fragment"),
        ("http://x/v 1", "holds spaces"),
    ],
)
def test_an_invalid_base_url_is_refused_naming_what_is_wrong(url, message):
    with pytest.raises(ValueError, match=message) as info:
        check_base_url(url, source="--base-url")
    assert str(info.value).startswith("--base-url")
    with pytest.raises(ValueError, match=message if url else "names no server"):
        OpenAIChatClient("m", base_url=url or "|")


def test_valid_base_urls_and_model_names_pass(monkeypatch):
    assert check_base_url("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000/v1"
    assert check_base_url("HTTPS://api.openai.com/v1") == "HTTPS://api.openai.com/v1"
    assert check_base_url("http://[::1]:8080/v1") == "http://[::1]:8080/v1"
    client = OpenAIChatClient("m", base_url="http://a:1/v1|http://b:2/v1/", api_key="k")
    assert client.base_urls == ["http://a:1/v1", "http://b:2/v1"]
    assert check_model("sim-biased:p=0.3") == "sim-biased:p=0.3"
    for bad in ("", "   ", " gpt-4o"):
        with pytest.raises(ValueError, match="model name"):
            check_model(bad)
        with pytest.raises(ValueError, match="model name"):
            OpenAIChatClient(bad, base_url="http://a/v1")
    monkeypatch.setenv("OPENAI_BASE_URL", "ftp://x/v1")
    with pytest.raises(ValueError, match=r"^OPENAI_BASE_URL 'ftp://x/v1' has the scheme"):
        OpenAIChatClient("m")


# ------------------------------------------------------- replies with no content
def test_null_content_is_a_server_fault_at_stop_and_truncated_at_the_cap():
    replies = {
        "stop": reply(None, "stop"),
        "missing": json.dumps(
            {"choices": [{"message": {"role": "assistant"}, "finish_reason": "stop"}]}
        ).encode(),
        "one-of-two": json.dumps(
            {
                "choices": [
                    {"message": {"content": "1"}, "finish_reason": "stop"},
                    {"message": {"content": None}, "finish_reason": "stop"},
                ]
            }
        ).encode(),
        "length": json.dumps(
            {
                "choices": [
                    {
                        "message": {"content": None, "reasoning_content": "Let me think"},
                        "finish_reason": "length",
                    }
                ],
                "usage": {"prompt_tokens": 5, "completion_tokens": 16},
            }
        ).encode(),
        "empty": reply("", "stop"),  # an empty answer is the model's: not a fault
    }
    with RecordingServer(lambda seen: (200, replies[seen["body"]["model"]])) as server:

        def call(model):
            client = OpenAIChatClient(
                model, base_url=server.url() + "/v1", api_key="k", check_server=False,
                max_retries=1, backoff_s=0.001, backoff_max_s=0.001,
            )  # fmt: skip
            return asyncio.run(client.chat(MESSAGES, n=2 if model == "one-of-two" else 1))

        for model in ("stop", "missing", "one-of-two"):
            with pytest.raises(InfrastructureError) as info:
                call(model)
            assert info.value.kind == "bad_response" and info.value.attempts == 2, model
            assert "no content (null) and finish_reason 'stop'" in str(info.value), model
        cut = call("length")
        empty = call("empty")
    assert cut.texts == [""] and cut.finish_reasons == ["length"] and cut.truncated
    assert cut.reasoning == ["Let me think"] and cut.usage.completion_tokens == 16
    assert empty.texts == [""] and not empty.truncated
    # Each fault was retried once; the two answers were one request each.
    assert len(server.requests) == 3 * 2 + 2


# ------------------------------------------------------------- timing per call
def test_queue_wait_and_latency_are_measured_apart(monkeypatch):
    # A clock only the server moves: serving request 1 takes 100 units, request 2 takes 7.
    # With one slot, call 2 (created while call 1 is served) waits 100 for the slot.
    clock = [0.0]
    fake_time = types.SimpleNamespace(perf_counter=lambda: clock[0], monotonic=lambda: clock[0])
    monkeypatch.setattr("metanim.llm.client.time", fake_time)
    release = threading.Event()

    async def answer(seen):
        if seen["body"]["seed"] == 1:
            await asyncio.get_running_loop().run_in_executor(None, release.wait, 10)
            clock[0] += 100
        else:
            clock[0] += 7
        return 200, reply('{"action": 1}')

    with RecordingServer(answer) as server:
        client = OpenAIChatClient(
            "m", base_url=server.url() + "/v1", api_key="k", max_concurrency=1,
            check_server=False,
        )  # fmt: skip

        async def run():
            first = asyncio.create_task(client.chat(MESSAGES, seed=1))
            while not server.requests:  # request 1 is at the server, holding the slot
                await asyncio.sleep(0.005)
            second = asyncio.create_task(client.chat(MESSAGES, seed=2))
            await asyncio.sleep(0.05)
            assert len(server.requests) == 1  # call 2 is waiting for the slot
            release.set()
            return await first, await second

        one, two = asyncio.run(run())
    assert (one.queue_s, one.latency_s) == (0, 100)
    assert (two.queue_s, two.latency_s) == (100, 7)
    # A record written before the field existed still parses.
    from metanim.llm import Completion

    old = json.loads(one.model_dump_json())
    del old["queue_s"]
    assert Completion.model_validate(old).queue_s == 0.0


# ------------------------------------------------------------------ price warning
def _non_loopback_ip() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("198.51.100.1", 9))  # a UDP connect picks a route, sends nothing
            ip = sock.getsockname()[0]
        except OSError:
            return None
    return None if is_loopback(f"http://{ip}/") else ip


def test_no_price_is_unknown_wherever_served_and_warned_once_per_process(monkeypatch, caplog):
    # A self-hosted server (llama.cpp, vLLM, SGLang, Ollama) bills nothing: $0, known. Any
    # other unpriced model costs an unknown amount, on loopback too (a proxy to a paid API
    # can listen there), warned once per process and model.
    from metanim.llm import prices

    monkeypatch.setattr(prices, "_WARNED", set())
    caplog.set_level(logging.WARNING, logger="metanim.llm")
    ip = _non_loopback_ip()
    if ip is None:
        pytest.skip("this machine has no non-loopback address to serve on")
    with RecordingServer(host="0.0.0.0") as server:
        for host in ("127.0.0.1", "localhost", "127.0.0.2"):
            local = OpenAIChatClient(
                "my-local-llama", base_url=f"{server.url(host)}/v1", provider="llamacpp"
            )
            assert asyncio.run(local.chat(MESSAGES)).priced
        assert "no price" not in caplog.text
        proxy = OpenAIChatClient("my-proxied-llm", base_url=f"{server.url()}/v1")
        assert not asyncio.run(proxy.chat(MESSAGES)).priced
        for _ in range(3):  # one run builds several clients, each its own price table
            remote = OpenAIChatClient("my-remote-llm", base_url=f"{server.url(ip)}/v1")
            asyncio.run(remote.chat(MESSAGES))
            assert not asyncio.run(remote.chat(MESSAGES)).priced
    warnings = [r.getMessage() for r in caplog.records if "no price" in r.getMessage()]
    assert warnings == [
        f"no price for model {m!r}: its cost is unknown (add it to a METANIM_PRICES file)"
        for m in ("my-proxied-llm", "my-remote-llm")
    ]
    assert PriceTable.load().cost("my-remote-llm", Usage(prompt_tokens=9)) is None


def test_loopback_addresses():
    for url in ("http://127.0.0.1:8080/v1", "http://localhost/v1", "http://[::1]:80/v1",
                "http://127.8.9.10/v1", "http://LOCALHOST:1/v1"):  # fmt: skip
        assert is_loopback(url), url
    for url in ("https://api.openai.com/v1", "http://10.0.0.1/v1", "http://[::2]/v1",
                "http://localhost.example.com/v1", "http://128.0.0.1/v1"):  # fmt: skip
        assert not is_loopback(url), url


def test_a_simulated_model_never_receives_openai_api_key(monkeypatch, tmp_path):
    """Every path that makes a simulated model's calls sends its own key (the placeholder
    "sim", or METANIM_SIM_API_KEY), never OPENAI_API_KEY: a client made by name, by
    `make_client`, unpickled, a run's pre-flight target and a whole run."""
    from metanim.agents import make_client
    from metanim.cli import main
    from metanim.llm import ModelSpec
    from tests.loopback import playing

    secret = "sk-SECRET-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.delenv("METANIM_SIM_API_KEY", raising=False)
    with RecordingServer(playing()) as server:
        url = server.url() + "/v1"
        named = OpenAIChatClient("sim-optimal", base_url=url)
        clients = [named, make_client(f"sim-optimal@{url}"), pickle.loads(pickle.dumps(named))]
        for client in clients:
            asyncio.run(client.chat(MESSAGES))
        target = ModelSpec.parse(f"sim-optimal@{url}").target(None)
        code = main(
            ["tournament", "--game", "nim-31-k3", "--method", "react", "--opponent", "optimal",
             "--model", f"sim-optimal@{url}", "--episodes", "1", "--no-progress",
             "--results-dir", str(tmp_path), "--keep-going"]
        )  # fmt: skip
        sent = [r["headers"] for r in server.requests]
        monkeypatch.setenv("METANIM_SIM_API_KEY", "sim-key")
        server.requests.clear()
        asyncio.run(pickle.loads(pickle.dumps(named)).chat(MESSAGES))
        own = server.requests[0]["headers"]["authorization"]
    assert code in (0, 3)
    assert len(sent) > len(clients) + 1  # the run's own calls are among them
    assert all(secret not in json.dumps(headers) for headers in sent)
    assert {h.get("authorization") for h in sent} == {"Bearer sim"}
    assert target.api_key == "sim" and secret not in json.dumps(target.headers)
    assert own == "Bearer sim-key"  # the simulated model's own variable, read where unpickled
