"""The OpenAI-compatible client against the simulated server, over real HTTP."""

from __future__ import annotations

import asyncio
import json
import logging
import pickle
import re
from collections.abc import Iterator

import pytest

from metanim.games import make_game
from metanim.llm import (
    ChatModel,
    Completion,
    InfrastructureError,
    OpenAIChatClient,
    Price,
    PriceTable,
    ResponseCache,
    SharedConnections,
    Usage,
    cache_key,
)
from metanim.llm.sim import SimServer

GAME = make_game("nim-31-k3")
PROMPT = (
    GAME.prompt(GAME.initial_state())
    + '\n#Output Format: ```json\n{"reasoning": "...", "action": <integer>}\n```'
)
MESSAGES = [{"role": "user", "content": PROMPT}]


@pytest.fixture(scope="module")
def sim_server() -> Iterator[SimServer]:
    """This module's own simulated server. A call that times out here (2 s of latency, a
    0.2 s timeout) is still served after its test, and its record lands in the log 2 s
    later: on the shared server it could reach another module's test that reads the log."""
    with SimServer(seed=0) as server:
        yield server


def client(server: SimServer, model: str = "sim-optimal", **kwargs) -> OpenAIChatClient:
    # Tiny backoff so retry tests stay fast; the schedule is still exponential and jittered.
    kwargs.setdefault("backoff_s", 0.005)
    kwargs.setdefault("backoff_max_s", 0.02)
    kwargs.setdefault("api_key", "sk-test")
    return OpenAIChatClient(model, base_url=server.base_url, **kwargs)


def action(text: str):
    block = re.search(r"```json\n(.*?)\n```", text, re.DOTALL)
    assert block, text
    return json.loads(block.group(1))["action"]


def test_client_is_a_chat_model_and_reports_usage(sim_server):
    sim_server.reset_log()
    c = client(sim_server)
    assert isinstance(c, ChatModel)
    result = asyncio.run(c.chat(MESSAGES, n=3, seed=5, sample_index=2, max_tokens=50))
    assert isinstance(result, Completion)
    assert len(result.texts) == 3
    assert all(action(t) == 3 for t in result.texts)  # 31 mod 4 = 3: take 3
    assert result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0
    assert result.cost_usd == 0.0  # simulated models are free
    assert not result.cached and result.retries == 0
    assert result.request["sample_index"] == 2 and result.request["seed"] == 5
    (record,) = sim_server.log
    assert record["n"] == 3 and record["seed"] == 5 and record["max_tokens"] == 50
    assert record["messages"] == MESSAGES
    assert record["task"]["game"] == "nim" and record["task"]["state"] == [31]


def test_client_reused_across_event_loops(sim_server):
    c = client(sim_server)
    first = asyncio.run(c.chat(MESSAGES, seed=1))
    second = asyncio.run(c.chat(MESSAGES, seed=1))
    assert first.texts == second.texts


def test_concurrency_limit_holds(sim_server):
    sim_server.reset_log()
    c = client(sim_server, "sim-optimal:latency=0.05", max_concurrency=2)

    async def many():
        return await asyncio.gather(*(c.chat(MESSAGES, seed=i) for i in range(6)))

    assert len(asyncio.run(many())) == 6
    spans = [(r["time"], r["finished"]) for r in sim_server.log]
    # At no request's arrival are more than 2 requests open at the server.
    overlap = max(sum(1 for s, e in spans if s <= t < e) for t, _ in spans)
    assert len(spans) == 6 and overlap <= 2


def test_burst_of_429_is_retried_then_answers(sim_server):
    sim_server.reset_log()
    result = asyncio.run(client(sim_server, "sim-faulty:burst429=3").chat(MESSAGES))
    assert result.retries == 3 and action(result.text) == 3
    assert [r["status"] for r in sim_server.log] == [429, 429, 429, 200]


def test_burst_of_500_beyond_the_retry_budget_is_an_infrastructure_error(sim_server):
    sim_server.reset_log()
    c = client(sim_server, "sim-faulty:burst500=10", max_retries=2)
    with pytest.raises(InfrastructureError) as info:
        asyncio.run(c.chat(MESSAGES))
    assert info.value.kind == "server_error" and info.value.status == 500
    assert info.value.attempts == 3 and "gave up after 3 attempts" in str(info.value)
    assert len(sim_server.log) == 3  # bounded: exactly 1 + max_retries attempts


def test_quota_429_is_not_retried(sim_server):
    sim_server.reset_log()
    with pytest.raises(InfrastructureError) as info:
        asyncio.run(client(sim_server, "sim-faulty:quota=1").chat(MESSAGES))
    assert info.value.kind == "quota" and info.value.attempts == 1
    assert len(sim_server.log) == 1


def test_slow_answer_times_out(sim_server):
    # Sent, then silent: it may be billed, so it is not sent again unless asked.
    c = client(sim_server, "sim-faulty:latency=2", timeout_s=0.2, max_retries=1)
    with pytest.raises(InfrastructureError) as info:
        asyncio.run(c.chat(MESSAGES))
    assert info.value.kind == "timeout" and info.value.attempts == 1
    c = client(sim_server, "sim-faulty:latency=2", timeout_s=0.2, resend_timeouts=1)
    with pytest.raises(InfrastructureError) as info:
        asyncio.run(c.chat(MESSAGES))
    assert info.value.kind == "timeout" and info.value.attempts == 2


def test_slow_answer_within_the_timeout_completes(sim_server):
    c = client(sim_server, "sim-faulty:latency=0.1", timeout_s=5)
    assert action(asyncio.run(c.chat(MESSAGES)).text) == 3


def test_unknown_model_and_unreachable_server():
    with SimServer() as server:
        with pytest.raises(InfrastructureError) as info:
            asyncio.run(client(server, "gpt-nonexistent").chat(MESSAGES))
        assert info.value.kind == "not_found"
        url = server.base_url
    # The server is gone: connection refused, retried, then a clear error.
    c = OpenAIChatClient("sim-optimal", base_url=url, api_key="x", max_retries=1, backoff_s=0.001)
    with pytest.raises(InfrastructureError) as info:
        asyncio.run(c.chat(MESSAGES))
    assert info.value.kind == "connection" and info.value.attempts == 2


def test_mixed_faults_each_call_completes_or_fails_clearly(sim_server):
    spec = "sim-faulty:malformed=0.3,illegal=0.2,http429=0.3,http500=0.1,latency=0.01"
    c = client(sim_server, spec, max_retries=3, max_concurrency=8)

    async def one(i):
        try:
            return await c.chat(MESSAGES, seed=i, temperature=0.7)
        except InfrastructureError as exc:
            return exc

    async def all_calls():
        return await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(40))), 30)

    results = asyncio.run(all_calls())
    completions = [r for r in results if isinstance(r, Completion)]
    errors = [r for r in results if isinstance(r, InfrastructureError)]
    assert len(completions) + len(errors) == 40
    assert all(e.kind in ("rate_limit", "server_error") for e in errors)
    assert len(completions) > 30  # P(4 straight HTTP faults) = 0.37^4 ~ 2%
    kinds = set()
    for r in completions:
        try:
            kinds.add("illegal" if action(r.text) not in (1, 2, 3) else "ok")
        except (AssertionError, json.JSONDecodeError):
            kinds.add("malformed")
    assert kinds == {"ok", "illegal", "malformed"}


def test_cache_hits_and_separates_samples(sim_server, tmp_path):
    sim_server.reset_log()
    cache = ResponseCache(tmp_path / "cache.sqlite")
    c = client(sim_server, "sim-random", cache=cache)
    first = asyncio.run(c.chat(MESSAGES))
    again = asyncio.run(c.chat(MESSAGES))
    assert again.cached and again.texts == first.texts and again.usage == first.usage
    other_sample = asyncio.run(c.chat(MESSAGES, sample_index=1))
    assert not other_sample.cached
    # Count this test's requests only: a slow request an earlier test timed out on can
    # still land in the shared server's log after the reset.
    mine = [r for r in sim_server.log if r.get("model") == "sim-random"]
    assert len(mine) == 2 and len(cache) == 2
    # Sampled calls are not cached unless the cache is forced.
    asyncio.run(c.chat(MESSAGES, temperature=0.7))
    assert not asyncio.run(c.chat(MESSAGES, temperature=0.7)).cached
    forced = client(
        sim_server, "sim-random", cache=ResponseCache(tmp_path / "f.sqlite", force=True)
    )
    asyncio.run(forced.chat(MESSAGES, temperature=0.7, sample_index=4))
    assert asyncio.run(forced.chat(MESSAGES, temperature=0.7, sample_index=4)).cached
    assert not asyncio.run(forced.chat(MESSAGES, temperature=0.7, sample_index=5)).cached
    # A fresh process (a new cache object on the same file) sees the stored answer.
    cache.close()
    reopened = client(sim_server, "sim-random", cache=ResponseCache(tmp_path / "cache.sqlite"))
    assert asyncio.run(reopened.chat(MESSAGES)).cached


def test_the_cache_is_keyed_on_the_replicas_not_their_order(sim_server, tmp_path):
    # Replicas serve one model: listed in another order, the same call is a hit. The
    # second client's first listed replica refuses connections, so only a hit answers.
    dead = "http://127.0.0.1:9/v1"
    cache = ResponseCache(tmp_path / "cache.sqlite")
    kw = {"cache": cache, "check_server": False, "max_retries": 0}
    first = asyncio.run(
        OpenAIChatClient("sim-optimal", base_url=[sim_server.base_url, dead], **kw).chat(MESSAGES)
    )
    again = asyncio.run(
        OpenAIChatClient("sim-optimal", base_url=[dead, sim_server.base_url], **kw).chat(MESSAGES)
    )
    assert not first.cached and again.cached and again.texts == first.texts


def test_cached_answer_keeps_its_tokens_but_costs_nothing(sim_server, tmp_path):
    prices = PriceTable({"sim-": Price(input=2.0, output=4.0)})
    c = client(sim_server, "sim-optimal", cache=ResponseCache(tmp_path / "c.sqlite"), prices=prices)
    paid = asyncio.run(c.chat(MESSAGES))
    expected = (paid.usage.prompt_tokens * 2.0 + paid.usage.completion_tokens * 4.0) / 1e6
    assert not paid.cached and paid.cost_usd == pytest.approx(expected) and expected > 0
    hit = asyncio.run(c.chat(MESSAGES))
    assert hit.cached and hit.usage == paid.usage and hit.usage.total_tokens > 0
    assert hit.cost_usd == 0.0  # budgets count money actually spent


def test_cache_key_covers_base_url_request_and_sample():
    request = {"model": "m", "messages": MESSAGES, "temperature": 0.0, "n": 1}
    key = cache_key("http://a/v1", request, 0)
    assert key == cache_key("http://a/v1/", dict(reversed(request.items())), 0)
    assert key != cache_key("http://b/v1", request, 0)
    assert key != cache_key("http://a/v1", request, 1)
    assert key != cache_key("http://a/v1", {**request, "n": 2}, 0)


def test_price_table_prefix_and_override(tmp_path, monkeypatch):
    table = PriceTable.load()
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000)
    assert table.cost("gpt-4o", usage) == pytest.approx(12.5)
    assert table.lookup("gpt-4o-mini-2024-07-18") == table.lookup("gpt-4o-mini")
    assert table.cost("sim-biased:p=0.5", usage) == 0.0
    assert table.cost("unknown-model", usage) is None  # unknown, never $0
    assert not table.is_priced("unknown-model") and table.is_priced("sim-optimal")
    override = tmp_path / "prices.json"
    override.write_text(json.dumps({"models": {"gpt-4o": {"input": 1, "output": 2}}}))
    monkeypatch.setenv("METANIM_PRICES", str(override))
    assert PriceTable.load().cost("gpt-4o", usage) == pytest.approx(3.0)
    assert PriceTable.load().cost("gpt-4o-mini", usage) == pytest.approx(0.75)


def test_price_prefixes_only_cover_dated_snapshots():
    table = PriceTable.load()
    assert table.is_priced("o1") and table.lookup("o1-2024-12-17") == table.lookup("o1")
    assert table.lookup("gpt-4o-2024-08-06") == table.lookup("gpt-4o")
    assert table.lookup("gpt-4o-mini-2024-07-18") == table.lookup("gpt-4o-mini")
    assert table.lookup("gpt-3.5-turbo-0125") == table.lookup("gpt-3.5-turbo")
    # Another model, not a snapshot: unpriced rather than priced as its prefix.
    for model in (
        "o1-preview",
        "o1pro",
        "o10",
        "gpt-4o-search-preview",
        "gpt-4.1o",
        "deepseek-chatx",
    ):
        assert not table.is_priced(model), model
        assert table.lookup(model) is None
    assert table.lookup("o1-mini") == table.lookup("o1-mini-2024-09-12") != table.lookup("o1")
    custom = PriceTable({"acme-": Price(input=1, output=1), "acme-big": Price(input=9, output=9)})
    assert custom.lookup("acme-small").input == 1 and custom.lookup("acme-big").input == 9


def test_api_key_never_appears_in_logs_records_or_files(tmp_path, caplog, monkeypatch):
    secret = "sk-metanim-test-SECRET-0123456789abcdef"
    monkeypatch.setenv("METANIM_SIM_API_KEY", secret)  # the simulated models' own key
    caplog.set_level(logging.DEBUG)  # the SDK's and httpx's debug logs included
    log_file = tmp_path / "sim.jsonl"
    seen: list[str] = []
    with SimServer(api_key=secret, log_path=log_file) as server:
        cache = ResponseCache(tmp_path / "cache.sqlite")
        good = OpenAIChatClient(
            "sim-faulty:burst429=1", base_url=server.base_url, cache=cache, backoff_s=0.001
        )
        result = asyncio.run(good.chat(MESSAGES))
        seen += [result.model_dump_json(), repr(good), str(pickle.loads(pickle.dumps(good)))]
        wrong = OpenAIChatClient("sim-optimal", base_url=server.base_url, api_key=secret[::-1])
        with pytest.raises(InfrastructureError) as info:
            asyncio.run(wrong.chat(MESSAGES))
        assert info.value.kind == "auth"
        seen += [str(info.value), repr(info.value), json.dumps(server.log)]
        cache.close()
    assert len(server.log) == 2  # the 429 and the answer; the refused call is not a request
    files = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"sim-optimal" in files or b"sim-faulty" in files  # the files are not empty
    assert secret.encode() not in files and secret[::-1].encode() not in files
    text = "\n".join([*seen, caplog.text])
    assert "Retrying" in caplog.text or "retrying" in caplog.text
    assert secret not in text and secret[::-1] not in text


class _ScriptedServer:
    """A loopback aiohttp server answering chat calls from a list of (status, body, headers)."""

    def __init__(self, script: list[tuple[int, bytes, dict[str, str]]]) -> None:
        self.script, self.seen = list(script), 0

    async def _chat(self, request):
        from aiohttp import web

        await request.read()
        status, body, headers = self.script[min(self.seen, len(self.script) - 1)]
        self.seen += 1
        return web.Response(status=status, body=body, headers=headers)

    def __enter__(self):
        import threading

        from aiohttp import web

        ready = threading.Event()

        def run() -> None:
            self.loop = asyncio.new_event_loop()
            app = web.Application()
            app.router.add_post("/v1/chat/completions", self._chat)
            runner = web.AppRunner(app)
            self.loop.run_until_complete(runner.setup())
            site = web.TCPSite(runner, "127.0.0.1", 0)
            self.loop.run_until_complete(site.start())
            self.port = site._server.sockets[0].getsockname()[1]
            ready.set()
            self.loop.run_forever()
            self.loop.run_until_complete(runner.cleanup())

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        ready.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


_OK = json.dumps(
    {
        "choices": [{"message": {"content": '{"action": 1}'}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3},
    }
).encode()


def test_retry_after_is_honoured_and_an_unreadable_body_is_retried(monkeypatch):
    waits: list[float] = []
    real_sleep = asyncio.sleep

    async def record_sleep(delay, *args, **kwargs):
        waits.append(delay)
        return await real_sleep(0)

    monkeypatch.setattr("metanim.llm.client.asyncio.sleep", record_sleep)
    script = [
        (429, b'{"error": {"message": "slow down"}}', {"Retry-After": "7"}),
        (503, b"upstream down", {"retry-after-ms": "1500"}),
        (200, b"not json at all", {}),
        (200, _OK, {}),
    ]
    with _ScriptedServer(script) as server:
        c = OpenAIChatClient(
            "m", base_url=f"http://127.0.0.1:{server.port}/v1", api_key="k",
            backoff_s=0.001, backoff_max_s=0.002, check_server=False,
        )  # fmt: skip
        result = asyncio.run(c.chat(MESSAGES))
    assert result.text == '{"action": 1}' and result.usage.total_tokens == 8
    assert [e["kind"] for e in result.attempt_errors] == [
        "rate_limit",
        "server_error",
        "bad_response",
    ]
    assert [e["status"] for e in result.attempt_errors] == [429, 503, None]
    # The server's waits win over the tiny backoff; the unreadable body waits the backoff.
    assert waits[:2] == [7.0, 1.5] and waits[2] <= 0.002
    # A non-JSON error body still names the status and what the server said.
    with _ScriptedServer([(400, b"context too long", {})]) as server:
        c = OpenAIChatClient(
            "m", base_url=f"http://127.0.0.1:{server.port}/v1", api_key="k", check_server=False
        )
        with pytest.raises(InfrastructureError, match=r"HTTP 400 bad_request .*context too long"):
            asyncio.run(c.chat(MESSAGES))


def test_an_options_record_is_never_stale_or_shared() -> None:
    from metanim.llm._types import CallOptions

    plain = CallOptions(max_tokens=64)
    first = plain.record()
    first["max_tokens"] = 1  # a reader changing its copy
    assert plain.record()["max_tokens"] == 64
    assert plain.with_(max_tokens=8).record()["max_tokens"] == 8
    extra = CallOptions(extra_body={"top_k": 5})
    before = extra.record()
    extra.extra_body["top_k"] = 9  # the model is frozen, its dict is not
    assert before["extra_body"] == {"top_k": 5} and extra.record()["extra_body"] == {"top_k": 9}


@pytest.mark.parametrize("shared", [True, False])
def test_clients_on_shared_connections_carry_each_others_calls(shared: bool) -> None:
    from tests.loopback import RecordingServer, reply

    async def answer(seen: dict) -> tuple[int, bytes]:
        await asyncio.sleep(0.02)  # the calls of a wave overlap
        return 200, reply('{"action": 1}')

    # Four chains at once, each alternating between two models on one server (a
    # tournament's agent and opponent): never more than four calls in flight.
    with RecordingServer(answer) as server:

        async def chains() -> None:
            pool = SharedConnections() if shared else None
            url = server.url() + "/v1"
            a, b = (
                OpenAIChatClient(m, base_url=url, api_key="k", check_server=False, connections=pool)
                for m in ("model-a", "model-b")
            )

            async def chain() -> None:
                for step in range(4):
                    await (a if step % 2 == 0 else b).chat(MESSAGES)

            await asyncio.gather(*(chain() for _ in range(4)))
            await a.aclose()
            await b.aclose()
            if pool is not None:
                await pool.aclose()

        asyncio.run(chains())
    assert len(server.requests) == 16
    # One pool: a connection freed by one model's call carries the other's next, so the
    # server sees as many connections as calls in flight; a pool each: twice as many.
    assert len({r["peer"] for r in server.requests}) == (4 if shared else 8)


def _scripted_client(server: _ScriptedServer, **kwargs) -> OpenAIChatClient:
    """A client of model "m" on a scripted server, with no pre-flight check."""
    return OpenAIChatClient(
        "m", base_url=f"http://127.0.0.1:{server.port}/v1", api_key="k", check_server=False,
        **kwargs,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("body", "headers", "quoted"),
    [
        (b'{"id": "x", "choices": [{"mess', {}, "the body is not JSON"),
        (b"hello world", {"Content-Type": "application/json"}, "the body is not JSON"),
        (b"[1, 2, 3]", {}, "the body is not a JSON object"),
        (b'{"choices": [{"text": "hi"}]}', {}, "the body is not a chat completion (KeyError"),
        (b"data: {not json}\n\n", {"Content-Type": "text/event-stream"},
         "a stream event is not JSON"),
    ],
    ids=["cut JSON", "text", "array", "no message", "stream event"],
)  # fmt: skip
def test_an_unreadable_body_is_quoted(body: bytes, headers: dict, quoted: str) -> None:
    # A server that answered is named as one that answered: the error quotes what it sent.
    with _ScriptedServer([(200, body, headers)]) as server:
        c = _scripted_client(server, max_retries=0)
        with pytest.raises(InfrastructureError) as info:
            asyncio.run(c.chat(MESSAGES))
    assert info.value.kind == "bad_response"
    message = str(info.value)
    assert quoted in message, message
    start = body.removeprefix(b"data: ").split(b"\n")[0].decode()[:20]
    assert repr(start)[1:-1] in message, message


def test_a_long_bad_body_is_quoted_briefly() -> None:
    body = b"<html>" + b"x" * 5000
    with _ScriptedServer([(200, body, {})]) as server:
        c = _scripted_client(server, max_retries=0)
        with pytest.raises(InfrastructureError) as info:
            asyncio.run(c.chat(MESSAGES))
    assert "'<html>xxx" in str(info.value) and "(first 100 of 5,006 bytes)" in str(info.value)
    assert "x" * 101 not in str(info.value)


def test_only_the_whole_key_is_masked_in_a_quoted_message(sim_server) -> None:
    # The simulated server's own key "sim" is a word's start in its quota message.
    short = client(sim_server, "sim-faulty:quota=1", api_key="sim", max_retries=0)
    with pytest.raises(InfrastructureError) as info:
        asyncio.run(short.chat(MESSAGES))
    assert info.value.kind == "quota"
    assert "You exceeded your current quota (simulated)." in str(info.value)
    # A key the server quotes whole is masked.
    key = "sk-echoed-0123"
    body = json.dumps({"error": {"message": f"key {key} is not allowed for model m."}})
    with _ScriptedServer([(403, body.encode(), {})]) as server:
        c = OpenAIChatClient(
            "m", base_url=f"http://127.0.0.1:{server.port}/v1", api_key=key, check_server=False
        )
        with pytest.raises(InfrastructureError) as info:
            asyncio.run(c.chat(MESSAGES))
    assert "key *** is not allowed" in str(info.value) and key not in str(info.value)


def test_a_prompt_past_a_llamacpp_context_says_how_to_mend_it() -> None:
    # llama-server's refusal as it answers it (HTTP 400, ERROR_TYPE_EXCEED_CONTEXT_SIZE).
    body = json.dumps({"error": {
        "code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": 375, "n_ctx": 256,
        "message": "request (375 tokens) exceeds the available context size (256 tokens), "
                   "try increasing it",
    }}).encode()  # fmt: skip
    other = json.dumps({"error": {"code": 400, "message": "context too long"}}).encode()
    seen = []
    for answer in (body, other):
        with (
            _ScriptedServer([(400, answer, {})]) as server,
            pytest.raises(InfrastructureError) as info,
        ):
            asyncio.run(_scripted_client(server).chat(MESSAGES))
        seen.append(str(info.value))
    assert "exceeds the available context size (256 tokens)" in seen[0]
    assert seen[0].endswith("restart it with a larger one (metanim serve-local --ctx N; "
                            "llama-server --ctx-size N)")  # fmt: skip
    assert "serve-local" not in seen[1]  # only the error that says so gets the hint


def test_a_redirected_call_names_the_redirect_not_its_target() -> None:
    # The target refuses connections: followed, the call would fail there as "cannot
    # connect" to the server that answered.
    with _ScriptedServer([(302, b"", {"Location": "http://127.0.0.1:1/x"})]) as server:
        c = _scripted_client(server)
        with pytest.raises(InfrastructureError) as info:
            asyncio.run(c.chat(MESSAGES))
        assert server.seen == 1  # refused at once, not retried
    message = str(info.value)
    assert message.startswith(f"HTTP 302 at http://127.0.0.1:{server.port}/v1 (model 'm')")
    assert "redirects the chat call to http://127.0.0.1:1/x" in message
    assert "cannot connect" not in message


def test_a_body_that_drips_times_out() -> None:
    # One byte every 0.1 s: never silent for the 0.5 s timeout, never done within it.
    from aiohttp import web

    class Dripping(_ScriptedServer):
        async def _chat(self, request):
            await request.read()
            self.seen += 1
            response = web.StreamResponse(headers={"Content-Type": "application/json"})
            await response.prepare(request)
            for byte in _OK:
                await response.write(bytes([byte]))
                await asyncio.sleep(0.1)
            return response

    with Dripping([]) as server:
        c = _scripted_client(server, timeout_s=0.5, max_retries=0, resend_timeouts=0)

        async def bounded():
            return await asyncio.wait_for(c.chat(MESSAGES), 10)

        with pytest.raises(InfrastructureError) as info:
            asyncio.run(bounded())
    assert info.value.kind == "timeout"
    assert "took over 0.5 s to arrive after its headers (" in str(info.value)


def test_a_404_at_a_base_url_with_no_path_suggests_v1() -> None:
    from tests.loopback import RecordingServer

    # A server that serves the API under /v1 only (vLLM, OpenAI): 404 elsewhere.
    def answer(seen):
        return (200, _OK) if seen["path"].startswith("/v1/") else (404, b'{"detail":"Not Found"}')

    with RecordingServer(answer) as server:
        seen = []
        for base in (server.url(), server.url() + "/api"):
            c = OpenAIChatClient("m", base_url=base, api_key="k", check_server=False)
            with pytest.raises(InfrastructureError) as info:
                asyncio.run(c.chat(MESSAGES))
            seen.append(str(info.value))
        ok = OpenAIChatClient("m", base_url=server.url() + "/v1", api_key="k", check_server=False)
        assert asyncio.run(ok.chat(MESSAGES)).text == '{"action": 1}'  # the suggestion works
    assert seen[0].endswith(f"did you mean {server.url()}/v1?")
    assert "did you mean" not in seen[1]  # a path given is the user's choice
