"""The OpenAI-compatible async chat client: concurrency limit, retries, cache, usage, cost.

The wire is a thin aiohttp transport (one `ClientSession` per client and event loop, its
connection pool sized to the concurrency), not the openai SDK: the SDK's request building,
httpx transport and response models cost about 3x the CPU of a plain aiohttp POST per call,
which at hundreds of calls in flight is what bounds a tournament (docs/llm.md, "Transport").
One retry loop lives here because the SDK's would also retry a 429 that means "quota
exhausted", and its backoff base is a module constant that tests cannot shorten.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import logging
import os
import random
import time
import weakref
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from metanim.llm._types import CallOptions, Completion, InfrastructureError, Message, Usage
from metanim.llm.cache import ResponseCache, cache_key
from metanim.llm.prices import PriceTable
from metanim.llm.replies import BadReply, Reply, completion_reply, split_reasoning  # noqa: F401
from metanim.llm.target import (
    API_KEY_ENV,
    AZURE_API_KEY_ENV,
    ServerTarget,
    auth_headers,
    server_target,
)
from metanim.util import fastjson

log = logging.getLogger("metanim.llm")

# A server asking us to wait longer than this is treated as if it had asked for the cap.
_MAX_RETRY_AFTER_S = 60.0


class OpenAIChatClient:
    """A `ChatModel` over any OpenAI-compatible `/v1/chat/completions` endpoint.

    Args:
        model: the model name sent to the server (e.g. "gpt-4o", "sim-optimal");
            `azure:<deployment>` calls that Azure OpenAI deployment (docs/llm.md).
        base_url: server URL; default `OPENAI_BASE_URL`, else the OpenAI API (for Azure:
            the resource endpoint, default `AZURE_OPENAI_ENDPOINT`). Several URLs (a list,
            or one string joined by "|") are replicas of one model: each call goes to the
            replica with the fewest calls in flight, each with its own limit.
        api_key: default `OPENAI_API_KEY` (Azure: `AZURE_OPENAI_API_KEY`). Never logged,
            printed, cached or put in a record.
        organization: the `OpenAI-Organization` header; default `OPENAI_ORG_ID`.
        project: the `OpenAI-Project` header; default `OPENAI_PROJECT_ID`.
        api_version: Azure's `api-version` query; default `OPENAI_API_VERSION`.
        target: where the calls go, already resolved (`server_target`, or
            `ModelSpec.target`); the five arguments above are then not read.
        max_concurrency: calls in flight at once per replica (per event loop); None: the
            server's slot count where it reports one (llama.cpp's `/props`), else 8.
        timeout_s: per-attempt timeout in seconds.
        max_retries: retries after the first attempt on 429 (not quota), 408/409, 5xx,
            timeouts, connection errors and unreadable responses; then `InfrastructureError`.
            A deterministic request (temperature 0) that timed out is resent once at most:
            the same greedy request would only time out again.
        backoff_s: first backoff; doubled on each retry, capped at `backoff_max_s`, and
            jittered to a uniform draw in [half, full] so that parallel callers spread out.
        backoff_max_s: largest backoff (a server's Retry-After is honoured up to 60 s).
        cache: an opt-in `ResponseCache`; used for temperature 0 unless the cache is forced.
        prices: the price table for `cost_usd` (default: `PriceTable.load()`).
        options: the default `CallOptions` of a call that passes none.
        check_server: before the first call, read the server's `/v1/models` (a WARNING when
            `model` is not listed) and `/props` (its slot count); not for Azure, whose
            listing names models, not deployments.

    Raises:
        ValueError: at construction, an empty model name, a base URL that is not an
            http(s) URL, a key no HTTP header can carry, or an Azure deployment without
            its endpoint, key or API version. The environment is read here, once.

    Use it as an async context manager, or `await client.aclose()`; a client used under
    several `asyncio.run` calls closes each loop's connections as that loop shuts down.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | Sequence[str] | None = None,
        api_key: str | None = None,
        organization: str | None = None,
        project: str | None = None,
        api_version: str | None = None,
        target: ServerTarget | None = None,
        max_concurrency: int | None = 8,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        backoff_max_s: float = 8.0,
        cache: ResponseCache | None = None,
        prices: PriceTable | None = None,
        options: CallOptions | None = None,
        check_server: bool = True,
    ) -> None:
        if max_concurrency is not None and max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if max_retries < 0:
            raise ValueError("max_retries must be non-negative")
        self._model = model
        # Everything read from the environment is read here, once, not per call.
        self._target = target or server_target(
            model,
            base_url,
            api_key=api_key or None,
            organization=organization,
            project=project,
            api_version=api_version,
        )
        self._header_args = (organization, project)
        self.base_urls = list(self._target.base_urls)
        # The first replica names the client in records, caches and the run's identity:
        # replicas serve one model, so which one answered does not change a result.
        self.base_url = self.base_urls[0]
        # Held only here and in the session's headers; never in a record, a log line or repr.
        self.__api_key = self._target.api_key
        self.max_concurrency = max_concurrency
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.cache = cache
        self.prices = prices if prices is not None else PriceTable.load()
        self.options = options or CallOptions()
        self.check_server = check_server
        #: Failed attempts so far, by kind (timeout, rate_limit, ...), retried or not: what
        #: a progress display shows while calls are slow to come back.
        self.failed_attempts: collections.Counter[str] = collections.Counter()
        #: Per replica: the slot count its server reported (None: not reported).
        self.server_slots: dict[str, int | None] = {}
        self._rng = random.Random()
        # Per-call work that depends only on the client or on one options object is done
        # once: the price lookup (prefix rules).
        self._price: tuple[PriceTable, Any] | None = None
        # A local server bills nothing: its missing price is not worth a warning.
        self._local = self._target.loopback
        # The HTTP session and an asyncio.Semaphore are bound to one event loop; a client
        # reused under several `asyncio.run` calls gets its endpoints per loop.
        self._per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def model(self) -> str:
        return self._model

    def __repr__(self) -> str:
        urls = self.base_url if len(self.base_urls) == 1 else "|".join(self.base_urls)
        return f"OpenAIChatClient(model={self._model!r}, base_url={urls!r})"

    def __getstate__(self) -> dict[str, Any]:
        # A pickle must not carry the key (or the loop-bound sessions): the copy reads
        # OPENAI_API_KEY (Azure: AZURE_OPENAI_API_KEY) again where it is unpickled.
        state = dict(self.__dict__)
        state["_OpenAIChatClient__api_key"] = None
        state["_target"] = dataclasses.replace(self._target, headers={}, api_key="")
        state["_per_loop"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        azure = self._target.azure
        key = os.environ.get(AZURE_API_KEY_ENV if azure else API_KEY_ENV) or ""
        organization, project = self._header_args
        headers = auth_headers(key, azure=azure, organization=organization, project=project)
        self._target = dataclasses.replace(self._target, headers=headers, api_key=key)
        self.__api_key = key
        self._per_loop = weakref.WeakKeyDictionary()

    async def __aenter__(self) -> OpenAIChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _loop_state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._per_loop.get(loop)
        if state is None:
            state = _LoopState()
            self._per_loop[loop] = state
        if state.endpoints:
            return state
        async with state.lock:
            if state.session is None:
                state.session = self._new_session()
                # Closes the session when this loop shuts down (asyncio.run's
                # shutdown_asyncgens), or when the client is dropped while its loop runs
                # (the loop's finalizer hook), so a notebook's repeated asyncio.run calls
                # leave no unclosed session behind.
                state.closer = _close_with_loop(state.session)
                await state.closer.__anext__()
            if not state.endpoints:
                endpoints = []
                for url in self.base_urls:
                    limit = self.max_concurrency
                    if self.check_server and not self._target.azure:
                        slots = await self._check_endpoint(state.session, url)
                        if limit is None and slots is not None:
                            limit = slots
                    endpoints.append(
                        _Endpoint(
                            url,
                            self._target.chat_url(url),
                            asyncio.Semaphore(limit or _DEFAULT_CONCURRENCY),
                        )
                    )
                state.endpoints = endpoints
        return state

    def _new_session(self) -> aiohttp.ClientSession:
        # One pool for every replica, as large as the calls that may be in flight (the
        # per-replica limit times the replicas, plus the two server checks), so a call
        # holding a semaphore slot never waits for a connection. With the limit taken from
        # the servers' slot counts (not known yet), the pool is left unbounded: the
        # semaphores alone bound it.
        limit = self.max_concurrency
        connector = aiohttp.TCPConnector(
            limit=limit * len(self.base_urls) + 2 if limit else 0,
            limit_per_host=0,
            ttl_dns_cache=None,
        )
        return aiohttp.ClientSession(
            connector=connector,
            headers={
                **self._target.headers,
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
            timeout=aiohttp.ClientTimeout(total=self.timeout_s),
            skip_auto_headers=("User-Agent",),
        )

    async def _check_endpoint(self, session: aiohttp.ClientSession, url: str) -> int | None:
        """Warn if the model is not listed; return the server's slot count, if it gives one."""
        listed: list[str] = []
        try:
            async with session.get(self._target.models_url(url)) as response:
                if response.status == 200:
                    body = json.loads(await response.read())
                    listed = [str(m["id"]) for m in body.get("data") or []]
        except Exception:  # a server without a listing is not an error
            listed = []
        # A parameterised name (the simulator's "sim-biased:p=0.3") is listed by its base.
        bases = {m.split(":")[0] for m in listed}
        if listed and self._model not in listed and self._model.split(":")[0] not in bases:
            log.warning(
                "model %r is not listed by %s/models (it lists %s); the server may answer "
                "with another model or refuse",
                self._model,
                url,
                ", ".join(repr(m) for m in listed[:8]) + (" ..." if len(listed) > 8 else ""),
            )
        slots = None
        try:
            # llama.cpp serves /props beside /v1, at the server's root.
            root = url[: -len("/v1")] if url.endswith("/v1") else url
            async with session.get(f"{root}/props") as response:
                if response.status == 200:
                    value = json.loads(await response.read()).get("total_slots")
                    slots = int(value) if isinstance(value, int) and value > 0 else None
        except Exception:
            slots = None
        self.server_slots[url] = slots
        return slots

    async def aclose(self) -> None:
        """Close the HTTP connections of the current event loop (a later call reopens)."""
        loop = asyncio.get_running_loop()
        state = self._per_loop.pop(loop, None)
        if state is None:
            return
        await state.close()

    def build_request(
        self,
        messages: list[Message],
        *,
        temperature: float,
        n: int,
        seed: int | None,
        options: CallOptions,
    ) -> dict[str, Any]:
        """The request body (`extra_body` apart): the options in the server's dialect."""
        request: dict[str, Any] = {
            "model": self._target.model,
            "messages": [dict(m) for m in messages],
            "temperature": temperature,
            "n": n,
        }
        if seed is not None:
            request["seed"] = seed
        if options.max_tokens is not None:
            request["max_tokens"] = options.max_tokens
        if options.top_p is not None:
            request["top_p"] = options.top_p
        if options.stop:
            request["stop"] = list(options.stop)
        extra = dict(options.extra_body)
        schema = options.schema_
        if options.structured_output != "off" and schema is not None:
            if options.structured_output == "json_schema":
                request["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "reply", "schema": schema, "strict": True},
                }
            elif options.structured_output == "guided_json":
                extra["guided_json"] = schema
            else:
                extra["json_schema"] = schema
        if extra:
            request["extra_body"] = extra
        return request

    async def chat(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        n: int = 1,
        seed: int | None = None,
        sample_index: int = 0,
        max_tokens: int | None = None,
        options: CallOptions | None = None,
    ) -> Completion:
        """One chat completion with `n` choices.

        `options` (else the client's default options, with `max_tokens` if given) sets the
        cap, top_p, stop, extra body fields and the reply schema.

        Raises:
            InfrastructureError: auth, permission, quota, unknown model, bad request (a
                rejected reply schema says so), or a retryable failure that outlived its
                retries (see `kind`).
        """
        if n < 1:
            raise ValueError("n must be at least 1")
        if options is None:
            options = self.options
            if max_tokens is not None:
                options = options.with_(max_tokens=max_tokens)
        request = self.build_request(
            messages, temperature=temperature, n=n, seed=seed, options=options
        )
        record = {
            "base_url": self.base_url,
            "model": self._model,
            "temperature": temperature,
            "n": n,
            "seed": seed,
            "sample_index": sample_index,
            "max_tokens": options.max_tokens,
            "options": options.record(),
        }
        created = time.perf_counter()
        key = None
        if self.cache is not None and self.cache.applies(temperature):
            key = cache_key(self.base_url, request, sample_index)
            hit = self.cache.get(key)
            if hit is not None:
                texts, usage = hit
                # No money was spent: the tokens are kept (what the answer took), the cost is 0.
                # Only complete replies are cached, so each finished with "stop".
                return Completion(
                    model=self._model,
                    texts=texts,
                    usage=usage,
                    cost_usd=0.0,
                    latency_s=time.perf_counter() - created,
                    cached=True,
                    request=record,
                    finish_reasons=["stop"] * len(texts),
                    reasoning=[None] * len(texts),
                )
        state = await self._loop_state()
        endpoint = state.pick()
        endpoint.in_flight += 1
        try:
            async with endpoint.semaphore:
                sent = time.perf_counter()
                reply = await self._call_with_retries(state.session, endpoint, request, options)
            received = time.perf_counter()
        finally:
            endpoint.in_flight -= 1
        complete = all(r != "length" for r in reply.finish_reasons)
        if key is not None and self.cache is not None and complete:
            self.cache.put(
                key,
                base_url=self.base_url,
                request=request,
                sample_index=sample_index,
                texts=reply.texts,
                usage=reply.usage,
            )
        latency = received - sent
        log.debug("chat %s n=%d: %.3f s, %d retries", self._model, n, latency, len(reply.errors))
        # Validated, not `model_construct`: pydantic-core's validation is the faster of
        # the two (model_construct loops over the fields in Python).
        return Completion(
            model=self._model,
            texts=reply.texts,
            usage=reply.usage,
            cost_usd=self._cost(reply.usage),
            latency_s=latency,
            queue_s=sent - created,
            cached=False,
            request=record,
            retries=len(reply.errors),
            finish_reasons=reply.finish_reasons,
            reasoning=reply.reasoning,
            attempt_errors=reply.errors,
            endpoint=endpoint.url,
        )

    def _cost(self, usage: Usage) -> float:
        """`prices.cost` with the model's price looked up once per price table."""
        if self._price is None or self._price[0] is not self.prices:
            price = self.prices.lookup(self._model)
            if price is None and not self._local:
                self.prices.warn_unpriced(self._model)
            self._price = (self.prices, price)
        price = self._price[1]
        if price is None:
            return 0.0
        return (usage.prompt_tokens * price.input + usage.completion_tokens * price.output) / 1e6

    async def _call_with_retries(
        self,
        session: aiohttp.ClientSession,
        endpoint: _Endpoint,
        request: dict[str, Any],
        options: CallOptions,
    ) -> Reply:
        attempt = 0
        errors: list[dict[str, Any]] = []
        deterministic = request.get("temperature", 1.0) == 0
        # The body the server gets: extra_body's fields sit at the top level (as the SDK
        # sends them); serialised once, however many attempts it takes.
        extra = request.get("extra_body")
        body = {k: v for k, v in request.items() if k != "extra_body"}
        if extra:
            body.update(extra)
        data = fastjson.dumps(body)
        while True:
            try:
                async with session.post(endpoint.chat_url, data=data) as response:
                    raw = await response.read()
                    status = response.status
                    if status >= 400:
                        raise _HTTPStatus(status, raw, response.headers)
                return _parse_reply(raw, errors)
            except Exception as exc:
                error, retry_after = self._classify(exc, endpoint.url)
                if error is None:
                    raise
                if (
                    error.kind == "bad_request"
                    and options.structured_output != "off"
                    and options.schema_ is not None
                ):
                    error = InfrastructureError(
                        f"{error} -- the request carried a reply schema (structured output "
                        f"{options.structured_output!r}); the server may not take that form: "
                        "try --structured-output off, json_schema, guided_json or "
                        "llama_json_schema",
                        kind="bad_request",
                        status=error.status,
                    )
                retryable = error.kind in _RETRYABLE
                limit = self.max_retries
                if error.kind == "timeout" and deterministic:
                    limit = min(limit, 1)
                if not retryable or attempt >= limit:
                    self.failed_attempts[error.kind] += 1
                    if retryable:
                        error = InfrastructureError(
                            f"gave up after {attempt + 1} attempts: {error}",
                            kind=error.kind,
                            status=error.status,
                            attempts=attempt + 1,
                        )
                    else:
                        error.attempts = attempt + 1
                    raise error from None
                errors.append({"kind": error.kind, "status": error.status})
                self.failed_attempts[error.kind] += 1
                delay = min(self.backoff_s * 2**attempt, self.backoff_max_s)
                delay *= 0.5 + 0.5 * self._rng.random()
                if retry_after is not None:
                    delay = max(delay, min(retry_after, _MAX_RETRY_AFTER_S))
                log.info(
                    "%s from %s (attempt %d): retrying in %.3f s",
                    error.kind,
                    endpoint.url,
                    attempt + 1,
                    delay,
                )
                attempt += 1
                await asyncio.sleep(delay)

    def _classify(
        self, exc: BaseException, url: str | None = None
    ) -> tuple[InfrastructureError | None, float | None]:
        """The infrastructure error a transport exception stands for, and the Retry-After."""
        where = f"{url or self.base_url} (model {self._model!r})"
        if isinstance(exc, asyncio.TimeoutError | TimeoutError):
            # aiohttp's ServerTimeoutError and ConnectionTimeoutError are TimeoutErrors too.
            return InfrastructureError(
                f"timed out after {self.timeout_s} s at {where}", kind="timeout"
            ), None
        if isinstance(exc, aiohttp.ClientError | ConnectionError) and not isinstance(
            exc, aiohttp.ClientResponseError
        ):
            return InfrastructureError(_connection_failure(exc, where), kind="connection"), None
        if isinstance(exc, BadReply):
            return InfrastructureError(
                f"unreadable response from {where}: {exc}", kind="bad_response"
            ), None
        if isinstance(exc, ValueError | KeyError | TypeError | AttributeError):
            # A 200 whose body is not JSON (json.JSONDecodeError is a ValueError) or lacks
            # the fields of a chat completion.
            return InfrastructureError(
                f"unreadable response from {where}", kind="bad_response"
            ), None
        if not isinstance(exc, _HTTPStatus):
            return None, None
        status = exc.status
        retry_after = _retry_after(exc.headers)
        # Auth messages from some servers echo part of the key; ours never quote the server.
        if status == 401:
            msg = f"authentication failed (HTTP 401) at {where}: check OPENAI_API_KEY"
            return InfrastructureError(msg, kind="auth", status=status), None
        message, code = _server_error(exc.body, status)
        detail = self._redact(message)
        if status == 403:
            kind = "permission"
        elif status == 429 and code in _QUOTA_CODES:
            kind = "quota"
        elif status == 429:
            kind = "rate_limit"
        elif status == 404:
            kind = "not_found"
        elif status in (408, 409) or status >= 500:
            kind = "server_error"
        else:
            kind = "bad_request"
        return InfrastructureError(
            f"HTTP {status} {kind} at {where}: {detail}", kind=kind, status=status
        ), retry_after

    def _redact(self, text: str) -> str:
        return text.replace(self.__api_key, "***") if self.__api_key else text


@dataclass
class _Endpoint:
    url: str
    chat_url: str
    semaphore: asyncio.Semaphore
    in_flight: int = 0


@dataclass
class _LoopState:
    endpoints: list[_Endpoint] = field(default_factory=list)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    session: aiohttp.ClientSession | None = None
    closer: AsyncGenerator[None, None] | None = None

    def pick(self) -> _Endpoint:
        # Fewest calls in flight; ties go to the first listed, so one replica is used
        # alone until it is busy.
        return min(self.endpoints, key=lambda e: e.in_flight)

    async def close(self) -> None:
        self.endpoints = []
        self.session = None
        if self.closer is not None:
            await self.closer.aclose()  # runs its `finally`: closes the session


# Every open session, by event loop. Held here, not only by its client, so that a client
# collected in a reference cycle never takes its open session into the same garbage
# (aiohttp's destructors warn there, before the closer below can run); each leaves the set
# as its closer closes it, and a loop's set goes with the loop.
_OPEN_SESSIONS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, set[aiohttp.ClientSession]] = (
    weakref.WeakKeyDictionary()
)


async def _close_with_loop(session: aiohttp.ClientSession) -> AsyncGenerator[None, None]:
    """Suspended for the life of the session; closes it when finalized.

    asyncio finalizes the async generators a loop started (`shutdown_asyncgens` in
    `asyncio.run`, or its finalizer hook when one is dropped while the loop runs), which
    is the one hook a library gets at the end of a loop it did not create.
    """
    live = _OPEN_SESSIONS.setdefault(asyncio.get_running_loop(), set())
    live.add(session)
    try:
        yield
    finally:
        live.discard(session)
        await session.close()


def _parse_reply(raw: bytes, errors: list[dict[str, Any]]) -> Reply:
    """A chat completion's texts, usage, finish reasons and thinking, from its JSON body."""
    reply = completion_reply(fastjson.loads(raw))
    reply.errors = errors
    return reply


class _HTTPStatus(Exception):
    """A response with an error status (kept apart from aiohttp's own exceptions)."""

    def __init__(self, status: int, body: bytes, headers: Any) -> None:
        super().__init__(f"HTTP {status}")
        self.status, self.body, self.headers = status, body, headers


_DEFAULT_CONCURRENCY = 8
_RETRYABLE = frozenset({"rate_limit", "server_error", "timeout", "connection", "bad_response"})
_QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached", "quota_exceeded"})


def _connection_failure(exc: BaseException, where: str) -> str:
    """What went wrong on the wire, named for what happened."""
    if isinstance(exc, aiohttp.ClientConnectorError | ConnectionRefusedError):
        return f"cannot connect to {where}"
    if isinstance(exc, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError):
        # A closed socket, or a body shorter than its Content-Length / unfinished chunks.
        return f"the connection to {where} closed before the response was complete ({exc})"
    if isinstance(exc, aiohttp.ClientOSError | ConnectionError):
        return f"the connection to {where} broke ({type(exc).__name__}: {exc})"
    return f"connection error with {where} ({type(exc).__name__}: {exc})"


def _server_error(body: bytes, status: int) -> tuple[str, str | None]:
    """The server's error message (at most 300 characters) and its error code, if any."""
    try:
        parsed = json.loads(body)
    except ValueError:
        text = body.decode("utf-8", "replace").strip()
        return (text or f"HTTP {status}")[:300], None
    if isinstance(parsed, dict):
        inner = parsed.get("error", parsed)
        if isinstance(inner, dict):
            code = inner.get("code")
            message = inner.get("message") or json.dumps(inner)
            return str(message)[:300], str(code) if code is not None else None
        if isinstance(inner, str):
            return inner[:300], None
    return json.dumps(parsed)[:300], None


def _retry_after(headers: Any) -> float | None:
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return max(0.0, float(value) / divisor)
            except ValueError:
                continue
    return None
