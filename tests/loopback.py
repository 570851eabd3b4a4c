"""Loopback servers that tests script: `RecordingServer` records every request it gets
and answers as a test says (a hosted API, llama.cpp, vLLM, SGLang or an unknown server)."""

from __future__ import annotations

import asyncio
import json
import threading


def reply(content, finish="stop", n=1) -> bytes:
    """A chat completion body: `n` choices of `content`, ended by `finish`."""
    choice = {"message": {"role": "assistant", "content": content}, "finish_reason": finish}
    return json.dumps(
        {"choices": [choice] * n, "usage": {"prompt_tokens": 5, "completion_tokens": 3}}
    ).encode()


class RecordingServer:
    """A loopback aiohttp server that records each request (method, path, query, headers,
    body) and answers from `answer(request_record) -> (status, body)`, run on its loop."""

    def __init__(self, answer=None, host: str = "127.0.0.1") -> None:
        self.answer = answer or (lambda seen: (200, reply('{"action": 1}')))
        self.host = host
        self.requests: list[dict] = []

    async def _handle(self, request):
        from aiohttp import web

        body = await request.read()
        seen = {
            "method": request.method,
            "path": request.path,
            "query": dict(request.query),
            # HTTP header names are case-insensitive (urllib sends "Openai-project").
            "headers": {k.lower(): v for k, v in request.headers.items()},
            "body": json.loads(body) if body else None,
            # The client's end of the connection: one per connection it opened.
            "peer": request.transport.get_extra_info("peername") if request.transport else None,
        }
        self.requests.append(seen)
        result = self.answer(seen)
        if asyncio.iscoroutine(result):
            result = await result
        status, payload = result
        return web.Response(status=status, body=payload, content_type="application/json")

    def __enter__(self) -> RecordingServer:
        from aiohttp import web

        ready = threading.Event()

        def run() -> None:
            self.loop = asyncio.new_event_loop()
            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", self._handle)
            self.runner = web.AppRunner(app)
            self.loop.run_until_complete(self.runner.setup())
            site = web.TCPSite(self.runner, self.host, 0)
            self.loop.run_until_complete(site.start())
            self.port = site._server.sockets[0].getsockname()[1]
            ready.set()
            self.loop.run_forever()
            self.loop.run_until_complete(self.runner.cleanup())
            self.loop.close()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert ready.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    def url(self, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}"


def listing(owner: str | None) -> bytes:
    """A /models listing of the one model `m`, with its `owned_by` when given."""
    model = {"id": "m", "object": "model"} | ({"owned_by": owner} if owner else {})
    return json.dumps({"object": "list", "data": [model]}).encode()


def playing(owner: str | None = None, props: bool = False, delay: float = 0.0):
    """A scripted server's answers: a model listing with `owned_by`, llama.cpp's /props."""

    async def answer(seen):
        if delay:
            await asyncio.sleep(delay)
        if seen["path"].endswith("/models"):
            return 200, listing(owner)
        if seen["path"] == "/props" and props:
            return 200, json.dumps({"default_generation_settings": {}, "total_slots": 1}).encode()
        if seen["path"].endswith("/chat/completions"):
            return 200, reply('{"action": 1}')
        return 404, b'{"error": "not found"}'

    return answer
