"""The simulated OpenAI-compatible server: a real aiohttp server on loopback.

`SimServer` runs it in a background thread (a context manager with `base_url` and a
request `log`); `serve` runs it in the foreground for `metanim serve-sim`.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import itertools
import json
import math
import os
import random
import socket
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from aiohttp import hdrs, web

from metanim.games import SizeLimitError
from metanim.llm.sim.policies import Prompt, Task
from metanim.llm.sim.questions import AnswerKey
from metanim.llm.sim.responses import responses_handler
from metanim.llm.sim.spec import LISTED_MODELS, ModelSpecError, SimModelSpec, parse_model_spec
from metanim.llm.sim.wire import as_tool_call, chunks, forced_function, send_events
from metanim.llm.templates import read_layout
from metanim.util import aio, fastjson

#: Records `log` keeps in memory by default (`log_limit=`); `--log FILE` keeps all of them.
LOG_LIMIT = 10_000
#: Request bodies whose attempt counts are remembered (at least `log_limit`).
ATTEMPT_LIMIT = 10_000
#: Distinct message lists whose reading (task, layout, seed text...) is kept.
PROMPT_LIMIT = 1024
#: Connections the listening socket queues before they are accepted: uvicorn's default
#: (the server under vLLM and SGLang; https://www.uvicorn.org/settings/, `--backlog`),
#: not aiohttp's 128. A run's first wave opens one connection per call in flight, and a
#: queue that overflows drops the excess SYNs, which the client resends only after a
#: second: with 256 calls in flight that second is most of a 0.2 s tournament's wall.
BACKLOG = 2048


def count_tokens(text: str) -> int:
    """A rough, deterministic token count: words x 1.3, rounded up."""
    return math.ceil(len(text.split()) * 1.3)


Reply = tuple[int, dict[str, Any], dict[str, str]]  # status, JSON body, headers


def _fail(status: int, message: str, kind: str, code: str | None = None, **headers: str) -> Reply:
    body = {"error": {"message": message, "type": kind, "code": code, "param": None}}
    return status, body, headers


def _error(
    status: int, message: str, kind: str, code: str | None = None, **headers: str
) -> web.Response:
    return _respond(*_fail(status, message, kind, code, **headers))


def _respond(status: int, body: dict[str, Any], headers: dict[str, str]) -> web.Response:
    # orjson: a response's JSON in a fraction of `web.json_response`'s json.dumps.
    return web.Response(
        body=fastjson.dumps(body), status=status, headers=headers, content_type="application/json"
    )


#: The fault generator of a model whose fault rates are all zero (its draws never count).
_NO_FAULTS = random.Random(0)


def _rng(*parts: Any) -> random.Random:
    """A generator seeded by `parts`: the first 8 bytes of the SHA-256 of
    `json.dumps(parts, sort_keys=True, default=str)` (`_seed_text` writes that text)."""
    return _seeded(_seed_text(*map(_json_part, parts)))


def _seeded(text: str) -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))


def _seed_text(*parts_json: str) -> str:
    """`json.dumps` of a tuple whose items' JSON is given (its list syntax)."""
    return "[" + ", ".join(parts_json) + "]"


#: What `json.dumps` writes for a str (ensure_ascii, the default).
_str_json = json.encoder.encode_basestring_ascii


def _json_part(value: Any) -> str:
    """`json.dumps(value, sort_keys=True, default=str)`; a str or an int without building
    an encoder (most parts are one)."""
    kind = type(value)
    if kind is str:
        return _str_json(value)
    if kind is int:
        return int.__repr__(value)
    return json.dumps(value, sort_keys=True, default=str)


def _messages_json(messages: list[dict[str, str]]) -> str:
    """`_json_part(messages)` for messages of a str role and content (keys sorted)."""
    return _seed_text(
        *(
            f'{{"content": {_str_json(m["content"])}, "role": {_str_json(m["role"])}}}'
            for m in messages
        )
    )


def _answer_head(base: Any, model: str, messages_json: str) -> str:
    """The seed text of `_rng("answer", base, model, messages, index)` up to `index`, with
    the messages' JSON (`_messages_json`) written once per message list."""
    return f'["answer", {_json_part(base)}, {_json_part(model)}, {messages_json}, '


class _Messages:
    """One distinct message list and what the server works out from it, once: retries,
    samples, seats and episodes that reach the same position resend the same messages."""

    def __init__(self, messages: list[dict[str, str]], questions: AnswerKey) -> None:
        self.messages = messages
        self.layout = read_layout(messages)
        self._questions = questions
        self._prompt: Prompt | None = None
        self._json: str | None = None
        self._tokens: int | None = None
        self._describe: dict[str, Any] | None = None

    @property
    def prompt(self) -> Prompt:
        """The policies' reading of the messages (built on first use, so an error in it
        comes where answering starts, as before)."""
        if self._prompt is None:
            self._prompt = Prompt(self.messages, self._questions, self.layout)
        return self._prompt

    @property
    def json(self) -> str:
        """The messages' JSON in the answer seeds' text."""
        if self._json is None:
            self._json = _messages_json(self.messages)
        return self._json

    @property
    def prompt_tokens(self) -> int:
        if self._tokens is None:
            self._tokens = sum(count_tokens(m["content"]) for m in self.messages)
        return self._tokens

    def describe(self) -> dict[str, Any] | None:
        """`task.describe()` for the log (a fresh outer dict per record)."""
        task: Task | None = self.prompt.task
        if task is None:
            return None
        if self._describe is None:
            self._describe = task.describe()
        return dict(self._describe)


#: `count_tokens` of reply texts: most replies are texts given before.
_completion_tokens = functools.lru_cache(maxsize=4096)(count_tokens)


def _id_counter() -> Iterator[int]:
    """Numbers of reply ids: a counter from a random start, so ids are unique in a process
    for 2**48 replies (`uuid4` read the OS's random source on every reply). A counter,
    not a generator: `next` on it is atomic, so threads can share it."""
    return itertools.count(int.from_bytes(os.urandom(6), "big"))


class SimApp:
    """The request handlers and the request log (shared by `SimServer` and `serve`).

    Args:
        api_key: if set, requests must carry `Authorization: Bearer <api_key>` (else 401).
            It is never logged or echoed.
        seed: seeds the fault draws and the answers of unseeded sampled calls.
        log_path: also append every log record to this JSONL file.
        questions: question files whose questions the models answer (the answer key).
        session: which run of a resumable job this server serves (0 for the first). Faults
            are drawn from (seed, session, request, attempt), so a resumed run that resends
            a request that failed gets fresh draws instead of the same failure.
        log_limit: how many recent records `log` keeps in memory (the file keeps all).
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        seed: int = 0,
        log_path: str | Path | None = None,
        questions: list[str | Path] | None = None,
        session: int = 0,
        log_limit: int = LOG_LIMIT,
    ) -> None:
        if log_limit < 1:
            raise ValueError(f"log_limit must be >= 1, got {log_limit}")
        self._api_key = api_key
        self.questions = AnswerKey.from_files(questions or [])
        self.seed = seed
        self.session = session
        self.log_path = Path(log_path) if log_path else None
        if self.log_path is not None and self.log_path.is_dir():
            # Refused now: each request would otherwise fail to append and answer 500.
            raise ValueError(f"the request log {self.log_path} is a folder: give a file")
        # Bounded, so a long run keeps flat memory (the file, if any, keeps everything).
        self._log: deque[dict[str, Any]] = deque(maxlen=log_limit)
        self._lock = threading.Lock()
        # Attempt counts per request body, least recently used first; retries of a body
        # come within seconds, so the oldest counts can be forgotten.
        self._attempts: OrderedDict[str, int] = OrderedDict()
        self._attempt_limit = max(ATTEMPT_LIMIT, log_limit)
        self._unseeded = random.Random(seed)
        # Distinct message lists, least recently used first (bounded: see `_Messages`).
        self._messages: OrderedDict[tuple[tuple[str, str], ...], _Messages] = OrderedDict()
        self._ids = _id_counter()

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/v1/models", self.models)
        app.router.add_post("/v1/chat/completions", self.chat)
        # The Responses API (inspect_ai's default openai provider), answered by `chat`.
        app.router.add_post("/v1/responses", responses_handler(self.chat))
        return app

    @property
    def log(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._log)

    def reset_log(self) -> None:
        with self._lock:
            self._log.clear()
            self._attempts.clear()

    def _read(self, messages: list[dict[str, str]]) -> _Messages:
        key = tuple([(m["role"], m["content"]) for m in messages])
        with self._lock:
            known = self._messages.get(key)
            if known is not None:
                self._messages.move_to_end(key)
                return known
        # Its own copy: `messages` goes into a log record, which its reader may change.
        known = _Messages([{"role": r, "content": c} for r, c in key], self.questions)
        with self._lock:
            self._messages[key] = known
            if len(self._messages) > PROMPT_LIMIT:
                self._messages.popitem(last=False)
        return known

    def _attempt(self, body_hash: str) -> int:
        with self._lock:
            attempt = self._attempts.pop(body_hash, 0)
            self._attempts[body_hash] = attempt + 1
            if len(self._attempts) > self._attempt_limit:
                self._attempts.popitem(last=False)
        return attempt

    def _record(self, record: dict[str, Any]) -> None:
        record["finished"] = time.time()
        with self._lock:
            self._log.append(record)
            if self.log_path is not None:
                with self.log_path.open("a") as f:
                    f.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")

    def _authorized(self, request: web.Request) -> bool:
        if self._api_key is None:
            return True
        given = request.headers.get("Authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {self._api_key}".encode())

    async def models(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _error(
                401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key"
            )
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": "metanim-sim"}
            for name in LISTED_MODELS
        ]
        return web.json_response({"object": "list", "data": data})

    async def chat(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _error(
                401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key"
            )
        raw = await request.read()
        status, body, headers = await self.complete(raw)
        # A stream or a forced tool call is asked for by a few requests: the body is
        # read again only for those.
        if status == 200 and (b'"stream"' in raw or b'"tool_choice"' in raw):
            return await self._shaped(request, fastjson.loads(raw), body)
        return _respond(status, body, headers)

    async def _shaped(
        self, request: web.Request, asked: dict[str, Any], completion: dict[str, Any]
    ) -> web.StreamResponse:
        """A completion as a forced tool call and/or a stream, as the request asked."""
        name = forced_function(asked)
        if name is not None:
            for number, choice in enumerate(completion["choices"]):
                call_id = f"call_{completion['id'][-12:]}_{number}"
                choice["message"] = as_tool_call(choice["message"], name, call_id)
                choice["finish_reason"] = "tool_calls"
        if not asked.get("stream"):
            return _respond(200, completion, {})
        include = bool((asked.get("stream_options") or {}).get("include_usage"))
        return await send_events(request, chunks(completion, include_usage=include))

    async def complete(self, raw: bytes) -> Reply:
        """Answer one chat-completions request body: (status, JSON body, headers).

        The HTTP handler and the in-process transport (`SimTransport`) both call this, so
        the answers, faults and log are the same either way.
        """
        try:
            body = fastjson.loads(raw)
            model = str(body["model"])
            messages = [
                {"role": str(m["role"]), "content": str(m.get("content") or "")}
                for m in body["messages"]
            ]
        except (ValueError, KeyError, TypeError):
            return _fail(
                400, "the body must be JSON with 'model' and 'messages'", "invalid_request_error"
            )
        try:
            spec = parse_model_spec(model)
        except ModelSpecError as exc:
            return _fail(404, str(exc), "invalid_request_error", "model_not_found")
        temperature = float(
            body.get("temperature", 1.0) if body.get("temperature") is not None else 1.0
        )
        n = int(body.get("n") or 1)
        seed = body.get("seed")
        read = self._read(messages)  # the layout, and more, once per message list
        layout = read.layout
        record: dict[str, Any] = {
            "time": time.time(),
            "model": model,
            "policy": spec.policy,
            "messages": messages,
            "temperature": temperature,
            "n": n,
            "seed": seed,
            "max_tokens": body.get("max_tokens"),
            # Which method layout the simulator recognised (see metanim.llm.templates).
            "layout": layout.kind,
        }
        # Retries resend the same body; counting attempts per body lets faults differ
        # between attempts (so retries can succeed) while staying reproducible.
        body_hash = hashlib.sha256(raw).hexdigest()
        attempt = self._attempt(body_hash)
        record["session"] = self.session
        record["attempt"] = attempt
        if spec["latency"] > 0:
            await asyncio.sleep(spec["latency"])
        fault = self._http_fault(spec, body_hash, attempt)
        if fault is not None:
            self._record(
                {
                    **record,
                    "status": fault[0],
                    "task": None,
                    "answers": [],
                    "actions": [],
                    "faults": [],
                }
            )
            return fault
        if n < 1 or n > 1000:
            return _fail(400, "n must be between 1 and 1000", "invalid_request_error")
        try:
            texts, actions, faults = self._answer(
                spec, read, temperature, n, seed, body_hash, attempt
            )
        except SizeLimitError as exc:  # a position too large to simulate: the request's fault
            self._record({**record, "status": 400, "error": repr(exc), "task": None, "answers": []})
            return _fail(400, str(exc), "invalid_request_error")
        except Exception as exc:
            self._record({**record, "status": 500, "error": repr(exc), "task": None, "answers": []})
            return _fail(500, f"simulator error: {exc}", "server_error")
        self._record(
            {
                **record,
                "status": 200,
                "task": read.describe(),
                "answers": texts,
                "actions": actions,
                "faults": faults,
            }
        )
        prompt_tokens = read.prompt_tokens
        completion_tokens = sum(map(_completion_tokens, texts))
        return (
            200,
            {
                "id": f"chatcmpl-sim-{next(self._ids) & 0xFFFFFFFFFFFF:012x}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "system_fingerprint": "metanim-sim",
                "choices": [
                    {
                        "index": i,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                        "logprobs": None,
                    }
                    for i, text in enumerate(texts)
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
            {},
        )

    def _http_fault(self, spec: SimModelSpec, body_hash: str, attempt: int) -> Reply | None:
        if attempt < spec["burst429"]:
            return _fail(
                429, "Rate limit reached (simulated burst).", "requests", "rate_limit_exceeded"
            )
        if attempt < spec["burst500"]:
            return _fail(500, "The server had an error (simulated burst).", "server_error")
        if not (spec["quota"] or spec["http429"] or spec["http500"]):
            return None  # no draw can fall below three zero rates: skip hashing for one
        rng = _rng("http", self.seed, self.session, body_hash, attempt)
        if rng.random() < spec["quota"]:
            return _fail(
                429,
                "You exceeded your current quota (simulated).",
                "insufficient_quota",
                "insufficient_quota",
            )
        if rng.random() < spec["http429"]:
            return _fail(429, "Rate limit reached (simulated).", "requests", "rate_limit_exceeded")
        if rng.random() < spec["http500"]:
            return _fail(500, "The server had an error (simulated).", "server_error")
        return None

    def _answer(
        self,
        spec: SimModelSpec,
        read: _Messages,
        temperature: float,
        n: int,
        seed: Any,
        body_hash: str,
        attempt: int,
    ) -> tuple[list[str], list[Any], list[str | None]]:
        if seed is None and temperature > 0:
            # An unseeded sample is a fresh draw, as from a real model.
            base: Any = self._unseeded.getrandbits(64)
        else:
            base = seed if seed is not None else 0  # temperature 0 without seed: greedy, fixed
        texts, actions, faults = [], [], []
        # With zero fault rates no fault draw can matter: a fixed generator spares the hash.
        answer_faults = spec["malformed"] > 0 or spec["illegal"] > 0
        prompt = read.prompt
        # Only a generator that draws is seeded (seeding one is most of an answer's CPU).
        head = _answer_head(base, spec.name, read.json) if prompt.draws(spec, temperature) else None
        for index in range(n):
            rng = _seeded(f"{head}{index}]") if head is not None else None
            # Answer faults, like HTTP faults, come from the request and its attempt.
            faults_rng = (
                _rng("fault", self.seed, self.session, body_hash, attempt, index)
                if answer_faults
                else _NO_FAULTS
            )
            text, action, fault = prompt.reply(spec, rng, temperature, faults_rng)
            texts.append(text)
            actions.append(action)
            faults.append(fault)
        return texts, actions, faults


def _route_directly(server: web.Server | None, app: web.Application) -> None:
    """Have `server` call the handler of a plain route itself, as the app's router would
    have chosen it (the first route registered for the method and path), and pass every
    other request (unknown paths and methods, `Expect:` headers) to the app as before.

    The app's routing (resolve the path, build and freeze the match, look for
    middlewares) was about a tenth of the server's CPU per request. Only an app of plain
    routes, without middlewares or response signals, is routed so: there the router
    could do nothing else, and the simulator's handlers read no match info.
    """
    if server is None or app.middlewares or app.on_response_prepare:
        return
    table: dict[tuple[str, str], Any] = {}
    for resource in app.router.resources():
        if not isinstance(resource, web.PlainResource):
            return
        for route in resource:
            if route.method == hdrs.METH_ANY:
                return
            table.setdefault((route.method, resource.canonical), route.handler)
    routed = server.request_handler

    async def handle(request: web.BaseRequest) -> web.StreamResponse:
        handler = table.get((request.method, request.rel_url.path_safe))
        if handler is None or hdrs.EXPECT in request.headers:
            return await routed(request)
        return await handler(request)

    server.request_handler = handle


class SimServer:
    """The simulated server on loopback, in a background thread.

    Args:
        host: interface to bind (loopback by default).
        port: 0 picks a free port.
        api_key: if set, the server refuses other keys with 401.
        seed: seeds fault draws and unseeded samples.
        log_path: also append the request log to this JSONL file.
        questions: question files the models can answer (looked up by question text).
        session: which run of a resumable job this is (faults differ between sessions).
        log_limit: how many recent records `log` keeps in memory.
        app: the handlers to serve instead of a `SimApp` made from the arguments above.

    Example:
        >>> with SimServer() as server:  # doctest: +SKIP
        ...     client = OpenAIChatClient("sim-optimal", base_url=server.base_url)
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        api_key: str | None = None,
        seed: int = 0,
        log_path: str | Path | None = None,
        questions: list[str | Path] | None = None,
        session: int = 0,
        log_limit: int = LOG_LIMIT,
        app: SimApp | None = None,
    ) -> None:
        self.host = host
        self.port = port
        # `app` answers instead (a provider fake, `metanim.llm.sim.providers`).
        self.handlers = app or SimApp(
            api_key=api_key,
            seed=seed,
            log_path=log_path,
            questions=questions,
            session=session,
            log_limit=log_limit,
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None

    def __repr__(self) -> str:
        return f"SimServer(host={self.host!r}, port={self.port})"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, e.g. http://127.0.0.1:54321/v1."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def log(self) -> list[dict[str, Any]]:
        """A copy of the latest request records (model, messages, parameters, task, answers)."""
        return self.handlers.log

    def reset_log(self) -> None:
        """Forget the records and the per-request attempt counts."""
        self.handlers.reset_log()

    def start(self) -> SimServer:
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = aio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                app = self.handlers.app()
                self._runner = web.AppRunner(app, access_log=None)
                loop.run_until_complete(self._runner.setup())
                _route_directly(self._runner.server, app)
                site = web.TCPSite(self._runner, self.host, self.port, backlog=BACKLOG)
                loop.run_until_complete(site.start())
                self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            except BaseException as exc:
                failure.append(exc)
                started.set()
                return
            started.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

        self._thread = threading.Thread(target=run, name="metanim-sim-server", daemon=True)
        self._thread.start()
        started.wait()
        if failure:
            if isinstance(failure[0], socket.gaierror):
                raise OSError(
                    f"cannot serve at {self.host}: not an address or a known host name "
                    f"({failure[0].strerror})"
                ) from None
            raise failure[0]
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._loop = self._thread = None

    def __enter__(self) -> SimServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    api_key: str | None = None,
    seed: int = 0,
    log_path: str | Path | None = None,
    questions: list[str | Path] | None = None,
    session: int = 0,
    app: SimApp | None = None,
    banner: str = "",
) -> None:
    """Run the simulated server in the foreground until interrupted.

    `app` answers instead of a plain simulator (a fake provider,
    `metanim.llm.sim.providers.ProviderApp`); `banner` is added to the line printed.
    """
    server = SimServer(
        host,
        port,
        api_key=api_key,
        seed=seed,
        log_path=log_path,
        questions=questions,
        session=session,
        app=app,
    ).start()
    known = len(server.handlers.questions)
    extra = f", answering {known} questions" if questions else ""
    print(
        f"MetaNIM simulated server at {server.base_url}{extra}{banner} (Ctrl-C to stop)", flush=True
    )
    try:
        with aio.quiet_gc():  # the process is the server's alone
            threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
