"""The simulated server answers exactly as before its CPU work was cut.

tests/data/sim_golden.json.gz was recorded from the unoptimised server (see
tests/sim_golden.py) on a corpus of real prompts of every method layout, with varied
models, temperatures, n, seeds, sessions, retries and bad bodies: the reply texts,
finish reasons, usage, statuses, error bodies, faults and request log records must be
the same, request by request.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random

import aiohttp

from metanim.llm.sim import SimServer
from tests import sim_golden


def _where(run: int, index: int) -> str:
    kwargs, bodies = sim_golden.plan()[run]
    return f"server {kwargs.get('seed')}/{kwargs.get('session', 0)}, request {index}: {bodies[index][:300]!r}"


def test_answers_records_and_errors_match_the_recorded_ones() -> None:
    expected = sim_golden.load()
    got = sim_golden.replay()
    assert [len(run) for run in got] == [len(run) for run in expected]
    for run, (got_run, want_run) in enumerate(zip(got, expected, strict=True)):
        for index, (g, w) in enumerate(zip(got_run, want_run, strict=True)):
            assert g == w, _where(run, index)


def test_the_corpus_covers_what_it_must() -> None:
    """The golden file is only as good as its coverage: every layout, fault and status."""
    results = [r for run in sim_golden.load() for r in run]
    records = [r["record"] for r in results if r.get("record")]
    layouts = {r["layout"] for r in records}
    assert layouts >= {"single", "history", "mad", "anonymous", "cross", "mpd", "judge"}
    assert layouts >= {"acemad_argue", "acemad_commit"}
    faults = {f for r in records for f in r.get("faults") or []}
    assert faults >= {None, "malformed", "illegal", "no_task"}
    assert {r.get("status") for r in results} >= {200, 400, 404, 429, 500}
    assert {r["task"]["kind"] for r in records if r.get("task")} == {"game", "question"}
    assert any(r["n"] == 3 and len(set(r["answers"])) > 1 for r in records)
    assert {r["temperature"] for r in records} >= {0.0, 0.7, 1.0}
    assert any("Reason about it through" in a for r in records for a in r.get("answers") or [])


def test_http_replies_match_the_recorded_ones() -> None:
    """The same requests through HTTP (aiohttp's server, as `serve-sim` runs it): statuses,
    JSON bodies, content types and the log; ids unique."""
    kwargs, bodies = sim_golden.plan()[0]
    expected = sim_golden.load()[0]

    async def send(url: str) -> list[tuple[int, str, bytes]]:
        async with aiohttp.ClientSession() as session:
            out = []
            for raw in bodies:
                async with session.post(
                    f"{url}/chat/completions",
                    data=raw,
                    headers={"Content-Type": "application/json"},
                ) as r:
                    out.append((r.status, r.content_type, await r.read()))
            return out

    with SimServer(**kwargs) as server:
        replies = asyncio.run(send(server.base_url))
        log = server.log
    ids = set()
    for i, ((status, content_type, raw), want) in enumerate(zip(replies, expected, strict=True)):
        if "raises" in want:  # the handler raised: aiohttp's own 500
            assert status == 500, _where(0, i)
            continue
        assert content_type == "application/json", _where(0, i)
        body = json.loads(raw)
        if status == 200:
            assert body["id"].startswith("chatcmpl-sim-") and len(body["id"]) == 25
            assert isinstance(body["created"], int)
            ids.add(body["id"])
        got = sim_golden._clean(status, body, {}, None)
        assert (got["status"], got["body"]) == (want["status"], want["body"]), _where(0, i)
    assert len(ids) == sum(1 for status, _, _ in replies if status == 200)
    records = [sim_golden._clean(0, None, {}, r)["record"] for r in log]
    assert records == [w["record"] for w in expected if w.get("record")]


def _old_seed(*parts: object) -> int:
    """The answer and fault seeds as the server first derived them (from the rules of
    that formula, not from the server's code)."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def _text(rng: random.Random) -> str:
    alphabet = 'ab "\\\n\t\x00\x1féü✓😀\u2028\ud800{}[]:,0'
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))


def _value(rng: random.Random, depth: int = 0) -> object:
    """Any JSON value a request's seed can be, and a few a caller might pass."""
    kind = rng.randrange(11 if depth < 2 else 8)
    return [
        lambda: rng.randrange(-(2**70), 2**70),
        lambda: rng.randrange(-5, 5),
        lambda: rng.choice([True, False, None]),
        lambda: rng.uniform(-1e6, 1e6),
        lambda: rng.choice([0.0, -0.0, 1e-7, 1e300, 2.5]),
        lambda: _text(rng),
        lambda: _text(rng),
        lambda: rng.choice([(1, 2), b"x", ValueError("x")]),
        lambda: [_value(rng, depth + 1) for _ in range(rng.randrange(3))],
        lambda: {_text(rng): _value(rng, depth + 1) for _ in range(rng.randrange(3))},
        lambda: {rng.randrange(9): 1, rng.randrange(9): [None]},
    ][kind]()


def test_seeds_are_the_old_formulas_on_many_inputs() -> None:
    from metanim.llm.sim import server

    rng = random.Random(0)
    for _ in range(3000):
        messages = [{"role": _text(rng), "content": _text(rng)} for _ in range(rng.randrange(0, 4))]
        base, model, index = _value(rng), _text(rng), rng.randrange(0, 1001)
        head = server._answer_head(base, model, server._messages_json(messages))
        want = random.Random(_old_seed("answer", base, model, messages, index)).getstate()
        assert server._seeded(f"{head}{index}]").getstate() == want, (base, model, messages)
        parts = [_value(rng) for _ in range(rng.randrange(1, 7))]
        assert server._rng(*parts).getstate() == random.Random(_old_seed(*parts)).getstate()


def _steady(value: object) -> object:
    """A reply without its ids and times."""
    if isinstance(value, dict):
        drop = ("id", "created", "created_at")
        return {k: _steady(v) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def test_routes_answer_as_the_apps_own_router_would() -> None:
    """`SimServer` calls plain routes' handlers itself: every route, method and odd path
    must come back as from the app's router (a plain `AppRunner` of the same app)."""
    import threading

    from aiohttp import web

    from metanim.llm.sim import SimApp

    game = sim_golden._prompts()[0]
    chat = json.dumps({"model": "sim-optimal", "messages": game, "seed": 1}).encode()
    requests = [
        ("GET", "/v1/models", b"", {}),
        ("HEAD", "/v1/models", b"", {}),
        ("POST", "/v1/models", b"", {}),
        ("POST", "/v1/chat/completions", chat, {}),
        ("POST", "/v1/chat/completions?x=1", chat, {}),
        ("POST", "/v1/chat/completions", chat, {"Expect": "100-continue"}),
        ("POST", "/v1/chat/completions/", chat, {}),
        ("POST", "/v1/chat%2Fcompletions", chat, {}),
        ("POST", "/v1//chat/completions", chat, {}),
        ("GET", "/v1/chat/completions", b"", {}),
        ("PUT", "/v1/chat/completions", chat, {}),
        ("POST", "/v1/responses", b'{"model": "sim-optimal", "input": "hi"}', {}),
        ("GET", "/", b"", {}),
        ("POST", "/v1/chat/completions", chat, {"Authorization": "Bearer wrong"}),
    ]

    async def send(url: str, key: str | None) -> list[tuple[int, dict[str, str], bytes]]:
        out = []
        async with aiohttp.ClientSession() as session:
            for method, path, data, headers in requests:
                if key and not headers:
                    headers = {"Authorization": f"Bearer {key}"}
                async with session.request(
                    method, url + path, data=data, headers=headers, skip_auto_headers=["Date"]
                ) as r:
                    body = await r.read()
                    kept = {k: v for k, v in r.headers.items() if k not in ("Date",)}
                    if r.status == 200 and body:
                        body = json.dumps(_steady(json.loads(body))).encode()
                    out.append((r.status, kept, body))
        return out

    def plain(handlers: SimApp, key: str | None) -> list[tuple[int, dict[str, str], bytes]]:
        loop = asyncio.new_event_loop()
        runner = web.AppRunner(handlers.app(), access_log=None)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()
        try:
            return asyncio.run(send(f"http://127.0.0.1:{port}", key))
        finally:
            asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
            # Handlers of kept-alive connections may still be pending: end them first.
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()

            async def drain() -> None:
                await asyncio.gather(*pending, return_exceptions=True)

            loop.run_until_complete(drain())
            loop.close()

    for key in (None, "secret"):
        with SimServer(api_key=key) as server:
            direct = asyncio.run(send(server.base_url.removesuffix("/v1"), key))
        expected = plain(SimApp(api_key=key), key)
        for request, got, want in zip(requests, direct, expected, strict=True):
            assert got == want, request
        assert {status for status, _, _ in direct} >= {200, 401 if key else 200, 404, 405}


def test_a_changed_log_record_changes_no_later_answer() -> None:
    """The server keeps what it read from a message list; the log's copy is the reader's."""
    from metanim.llm.sim import SimApp

    def ask(app: SimApp, model: str) -> list[str]:
        raw = json.dumps({"model": model, "messages": messages, "temperature": 0}).encode()
        return [c["message"]["content"] for c in asyncio.run(app.complete(raw))[1]["choices"]]

    # A cue word in its instructions turns this model from its heuristic to optimal play.
    cued = "sim-biased:heuristic=max_take,p=1.0,cue=nothing,cue_p=0.0"
    for messages in sim_golden._prompts():
        fresh = ask(SimApp(seed=0), cued)
        app = SimApp(seed=0)
        ask(app, "sim-random")
        for logged in app.log[-1]["messages"]:
            logged["content"] += " nothing"
        assert ask(app, cued) == fresh
        assert app.log[-1]["messages"] == [
            {"role": m["role"], "content": str(m.get("content") or "")} for m in messages
        ]
