"""The OpenAI-compatible async chat client: concurrency limit, retries, cache, usage, cost.

The wire is a thin aiohttp transport (one `ClientSession` per client and event loop, its
connection pool sized to the concurrency), not the openai SDK: the SDK's request building,
httpx transport and response models cost about 3x the CPU of a plain aiohttp POST per call,
which at hundreds of calls in flight is what bounds a tournament (docs/llm.md, "Transport").
One retry loop lives here because the SDK's would also retry a 429 that means "quota
exhausted", and its backoff base is a module constant that tests cannot shorten.

What differs between servers is data (`metanim.llm.providers`): the request is built in
the server's dialect (`metanim.llm.dialect`), the reply read by one reader whatever its
shape (`metanim.llm.replies`). Calls stream by default on real servers, so the timeout
measures silence and a long reasoning call shows life; a call that may have been billed
without an answer is not sent again unless asked (`resend_timeouts`).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import logging
import random
import re
import time
import weakref
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from metanim.llm._types import CallOptions, Completion, InfrastructureError, Message
from metanim.llm.budget import CostBudget, prompt_token_bound
from metanim.llm.cache import ResponseCache, cache_key
from metanim.llm.dialect import (
    Adapted,
    Api,
    ApiSetting,
    about_schema,
    fix_for,
    refused_field,
    request_body,
)
from metanim.llm.prices import Price, PriceTable
from metanim.llm.probe import Detected, detect_provider
from metanim.llm.providers import CAP_FIELDS, HOSTS, PROVIDERS, ModelDefaults, Provider
from metanim.llm.providers import provider as provider_named
from metanim.llm.replies import (  # noqa: F401  (split_reasoning: the public name here)
    BadReply,
    Reply,
    StreamReply,
    completion_reply,
    responses_reply,
    split_reasoning,
)
from metanim.llm.target import (
    ServerTarget,
    auth_headers,
    key_env,
    model_api_key,
    server_target,
)
from metanim.util import fastjson

log = logging.getLogger("metanim.llm")

# A server asking us to wait longer than this is treated as if it had asked for the cap.
_MAX_RETRY_AFTER_S = 60.0
#: A wait longer than this is named on the progress line (`OpenAIChatClient.waits`).
WAIT_SHOWN_S = 3.0
#: aiohttp's connect timeout (nothing was sent: safe to send again); older aiohttp has none.
_CONNECT_TIMEOUT = getattr(aiohttp, "ConnectionTimeoutError", ())


class OpenAIChatClient:
    """A `ChatModel` over any OpenAI-compatible `/v1/chat/completions` endpoint (or the
    Responses API, `api="responses"`).

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
        timeout_s: seconds of silence a call may take (streamed: between two pieces of the
            reply; else until the reply); None: the model's default (60 s for a chat model,
            more for a reasoning model, `metanim.llm.providers`).
        max_retries: retries after the first attempt on 429 (not quota), 408/409, 5xx,
            connection errors (nothing was sent, or nothing answered) and unreadable
            responses; then `InfrastructureError`.
        resend_timeouts: how many times a call that timed out after it was sent is sent
            again (default 0: the server may run it to the end and bill it, so it is not
            resent; each resend is counted, and its worst case charged to a cost cap).
        backoff_s: first backoff; doubled on each retry, capped at `backoff_max_s`, and
            jittered to a uniform draw in [half, full] so that parallel callers spread out.
        backoff_max_s: largest backoff (a server's Retry-After is honoured up to 60 s).
        cache: an opt-in `ResponseCache`; used for temperature 0 unless the cache is forced.
        prices: the price table for `cost_usd` (default: `PriceTable.load()`).
        options: the default `CallOptions` of a call that passes none.
        check_server: before the first call, read the server's `/v1/models` (a WARNING when
            `model` is not listed) and `/props` (its slot count), and detect its provider
            profile when none is given; not for Azure, whose listing names models, not
            deployments.
        provider: the server's profile (`metanim.llm.providers`, or its kind's name); None:
            detected (its host, else what it answers; `metanim.llm.probe`).
        api: "chat" (chat completions), "responses" (the Responses API), or "auto": the
            Responses API for the models OpenAI serves only there (o3-pro, the gpt-5 pro
            and codex models), else chat completions.
        stream: stream replies (server-sent events); None: on, except on the simulator.
        budget: a `CostBudget` every call reserves its worst case from before it is sent.
        connections: a `SharedConnections` whose pool this client's calls use (with the
            other clients given it), instead of a pool of its own.

    Raises:
        ValueError: at construction, an empty model name, a base URL that is not an
            http(s) URL, a key no HTTP header can carry, an Azure deployment without
            its endpoint, key or API version, or an unknown provider. The environment is
            read here, once.

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
        timeout_s: float | None = None,
        max_retries: int = 4,
        resend_timeouts: int = 0,
        backoff_s: float = 0.5,
        backoff_max_s: float = 8.0,
        cache: ResponseCache | None = None,
        prices: PriceTable | None = None,
        options: CallOptions | None = None,
        check_server: bool = True,
        provider: Provider | str | None = None,
        api: ApiSetting = "auto",
        stream: bool | None = None,
        budget: CostBudget | None = None,
        connections: SharedConnections | None = None,
    ) -> None:
        if max_concurrency is not None and max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if max_retries < 0 or resend_timeouts < 0:
            raise ValueError("max_retries and resend_timeouts must be non-negative")
        if timeout_s is not None and timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if api not in ("auto", "chat", "responses"):
            raise ValueError(f"api must be 'auto', 'chat' or 'responses', got {api!r}")
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
        # The first replica names the client in records and messages; the cache keys on
        # the replicas sorted: they serve one model, so which one answered, or in which
        # order they are listed, changes no reply.
        self.base_url = self.base_urls[0]
        self.cache_server = "|".join(sorted(self.base_urls))
        # Held only here and in the session's headers; never in a record, a log line or repr.
        self.__api_key = self._target.api_key
        self.max_concurrency = max_concurrency
        self._timeout_s = timeout_s
        self.max_retries = max_retries
        self.resend_timeouts = resend_timeouts
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.cache = cache
        self.prices = prices if prices is not None else PriceTable.load()
        self.options = options or CallOptions()
        self.check_server = check_server
        self._api: ApiSetting = api
        self._stream = stream
        self.budget = budget
        self.connections = connections
        given = provider_named(provider) if isinstance(provider, str) else provider
        #: The server's profile and how it was found; detected on the first call when
        #: not given (or known from the host, without a request).
        self.detected: Detected | None = (
            Detected(given, "named", self.base_url) if given is not None else _by_host(self._target)
        )
        #: What the server refused by name and how later requests differ (said once).
        self.adapted = Adapted()
        #: Failed attempts so far, by kind (timeout, rate_limit, ...), retried or not: what
        #: a progress display shows while calls are slow to come back.
        self.failed_attempts: collections.Counter[str] = collections.Counter()
        # The calls waiting now, for the progress line (`waits`): token -> since when (s,
        # monotonic) a request awaits its reply; token -> (until when, the server's
        # Retry-After or None) a failed call waits before it is sent again.
        self._awaiting: dict[object, float] = {}
        self._backing_off: dict[object, tuple[float, float | None]] = {}
        #: Reply pieces received in streams so far (tokens arriving, for a progress display).
        self.streamed = 0
        #: The server's own busy time, where it reports it (llama.cpp's `timings`), in s.
        self.server_busy_s = 0.0
        #: Per replica: the slot count its server reported (None: not reported).
        self.server_slots: dict[str, int | None] = {}
        self._rng = random.Random()
        # Per-call work that depends only on the client or on one options object is done
        # once: the price lookup (prefix rules).
        self._price: tuple[PriceTable, Price | None] | None = None
        self._defaults: tuple[Provider, ModelDefaults] | None = None
        # The HTTP session and an asyncio.Semaphore are bound to one event loop; a client
        # reused under several `asyncio.run` calls gets its endpoints per loop.
        self._per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def model(self) -> str:
        return self._model

    @property
    def provider(self) -> Provider:
        """The server's profile (`generic` until detected)."""
        return self.detected.provider if self.detected is not None else PROVIDERS["generic"]

    @property
    def defaults(self) -> ModelDefaults:
        """What this model needs on its server (cap, timeout, temperature), worked out
        once per profile."""
        profile = self.provider
        known = self._defaults
        if known is None or known[0] is not profile:
            known = self._defaults = (profile, profile.defaults(self._model))
        return known[1]

    @property
    def api(self) -> Api:
        """The API calls go to: as asked, or for "auto" the one the model is served on."""
        return self.defaults.api if self._api == "auto" else self._api

    @property
    def timeout_s(self) -> float:
        """Seconds of silence a call may take (see the class)."""
        return self._timeout_s if self._timeout_s is not None else self.defaults.timeout_s

    @property
    def stream(self) -> bool:
        """Whether calls stream (see the class)."""
        if self._stream is not None:
            return self._stream
        return self.provider.kind != "sim" and not self._model.startswith("sim-")

    def __repr__(self) -> str:
        urls = self.base_url if len(self.base_urls) == 1 else "|".join(self.base_urls)
        return f"OpenAIChatClient(model={self._model!r}, base_url={urls!r})"

    def __getstate__(self) -> dict[str, Any]:
        # A pickle must not carry the key (or the loop-bound sessions): the copy reads the
        # model's own key variable (`key_env`) again where it is unpickled.
        state = dict(self.__dict__)
        state["_OpenAIChatClient__api_key"] = None
        state["_target"] = dataclasses.replace(self._target, headers={}, api_key="")
        state["_per_loop"] = None
        state["budget"] = None
        state["connections"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        azure = self._target.azure
        key = model_api_key(self._model)
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
            if self.detected is None and self.check_server:
                # The same cached probe the run header asked (one request per server).
                self.detected = await asyncio.to_thread(detect_provider, self._target)
            if state.session is None:
                shared = await self.connections.connector() if self.connections else None
                state.session = self._new_session(shared)
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
                    chat_url = (
                        f"{url}/responses{self._target.query}"
                        if self.api == "responses"
                        else self._target.chat_url(url)
                    )
                    endpoints.append(
                        _Endpoint(url, chat_url, asyncio.Semaphore(limit or _DEFAULT_CONCURRENCY))
                    )
                state.endpoints = endpoints
        return state

    def _new_session(self, shared: aiohttp.TCPConnector | None = None) -> aiohttp.ClientSession:
        # One pool for every replica, as large as the calls that may be in flight (the
        # per-replica limit times the replicas, plus the two server checks), so a call
        # holding a semaphore slot never waits for a connection. With the limit taken from
        # the servers' slot counts (not known yet), the pool is left unbounded: the
        # semaphores alone bound it. A shared pool is unbounded too (`SharedConnections`).
        if shared is not None:
            connector, owned = shared, False
        else:
            limit = self.max_concurrency
            connector, owned = _connector(limit * len(self.base_urls) + 2 if limit else 0), True
        return aiohttp.ClientSession(
            connector=connector,
            connector_owner=owned,
            headers={
                **self._target.headers,
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
            # Each request sets its own: the timeout measures silence (see `_post`).
            timeout=aiohttp.ClientTimeout(total=None),
            skip_auto_headers=("User-Agent",),
        )

    def _timeout(self) -> aiohttp.ClientTimeout:
        """Silence, not total time: the connection, then every read, each within the
        timeout (a reply streaming for ten minutes is alive; one silent for the timeout
        is not)."""
        t = self.timeout_s
        return aiohttp.ClientTimeout(total=None, sock_connect=t, sock_read=t)

    async def _check_endpoint(self, session: aiohttp.ClientSession, url: str) -> int | None:
        """Warn if the model is not listed; return the server's slot count, if it gives one.

        What the provider probe read of this replica is used instead of asking again.
        """
        probed = self.detected if self.detected is not None and self.detected.url == url else None
        if probed is not None and probed.probed:
            self._warn_unlisted(list(probed.models or ()), url)
            self.server_slots[url] = probed.slots
            return probed.slots
        listed: list[str] = []
        timeout = aiohttp.ClientTimeout(total=self.timeout_s)
        try:
            async with session.get(self._target.models_url(url), timeout=timeout) as response:
                if response.status == 200:
                    body = json.loads(await response.read())
                    listed = [str(m["id"]) for m in body.get("data") or []]
        except Exception:  # a server without a listing is not an error
            listed = []
        self._warn_unlisted(listed, url)
        slots = None
        try:
            # llama.cpp serves /props beside /v1, at the server's root.
            root = url[: -len("/v1")] if url.endswith("/v1") else url
            async with session.get(f"{root}/props", timeout=timeout) as response:
                if response.status == 200:
                    value = json.loads(await response.read()).get("total_slots")
                    slots = int(value) if isinstance(value, int) and value > 0 else None
        except Exception:
            slots = None
        self.server_slots[url] = slots
        return slots

    def _warn_unlisted(self, listed: list[str], url: str) -> None:
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
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """(the request body, what it sends where servers differ), in the server's dialect
        (`metanim.llm.dialect.request_body`), with what the server refused adapted."""
        return request_body(
            self.api, self.provider, self.defaults, self._target.model, messages,
            temperature=temperature, n=n, seed=seed, options=options, adapted=self.adapted,
            stream=self.stream,
        )  # fmt: skip

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
                rejected reply schema says so; a refused parameter is `unsupported_parameter`
                naming the flag that changes it), a cost cap with no room left (`budget`),
                or a retryable failure that outlived its retries (see `kind`).
        """
        if n < 1:
            raise ValueError("n must be at least 1")
        if options is None:
            options = self.options
            if max_tokens is not None:
                options = options.with_(max_tokens=max_tokens)
        created = time.perf_counter()
        state = await self._loop_state()
        request, sent = self.build_request(
            messages, temperature=temperature, n=n, seed=seed, options=options
        )
        record = {
            "base_url": self.base_url,
            "model": self._model,
            "temperature": temperature,
            "n": n,
            "seed": seed,
            "sample_index": sample_index,
            "max_tokens": sent["cap"],
            "options": options.record(),
        }
        key = None
        if self.cache is not None and self.cache.applies(temperature):
            keyed = {k: v for k, v in request.items() if k not in ("stream", "stream_options")}
            key = cache_key(self.cache_server, keyed, sample_index)
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
                    sent=sent,
                )
        if self.budget is not None and sent["cap"] is None:
            raise InfrastructureError(
                f"a cost cap is set but a call to {self._model!r} has no completion cap, so "
                "its worst case is unbounded: set --max-completion-tokens",
                kind="budget",
            )
        endpoint = state.pick()
        endpoint.in_flight += 1
        try:
            async with endpoint.semaphore:
                sent_at = time.perf_counter()
                reply = await self._call_with_retries(
                    state.session, endpoint, messages, temperature, n, seed, options, request
                )
            received = time.perf_counter()
        finally:
            endpoint.in_flight -= 1
        if reply.sent is not None:  # the request changed after a refusal: record the last
            sent = reply.sent
            record["max_tokens"] = sent["cap"]
        complete = all(r != "length" for r in reply.finish_reasons)
        if key is not None and self.cache is not None and complete:
            self.cache.put(
                key,
                base_url=self.cache_server,
                request={k: v for k, v in request.items() if k not in ("stream", "stream_options")},
                sample_index=sample_index,
                texts=reply.texts,
                usage=reply.usage,
            )
        latency = received - sent_at
        log.debug("chat %s n=%d: %.3f s, %d retries", self._model, n, latency, len(reply.errors))
        cost, priced = self._priced(reply)
        # Validated, not `model_construct`: pydantic-core's validation is the faster of
        # the two (model_construct loops over the fields in Python).
        return Completion(
            model=self._model,
            texts=reply.texts,
            usage=reply.usage,
            cost_usd=cost,
            latency_s=latency,
            queue_s=sent_at - created,
            cached=False,
            priced=priced,
            request=record,
            retries=len(reply.errors),
            finish_reasons=reply.finish_reasons,
            reasoning=reply.reasoning,
            attempt_errors=reply.errors,
            endpoint=endpoint.url,
            sent=sent,
            server_s=_busy_s(reply.timings),
        )

    # ------------------------------------------------------------------ money
    def price(self) -> Price | None:
        """The model's price (looked up once per price table)."""
        if self._price is None or self._price[0] is not self.prices:
            self._price = (self.prices, self.prices.lookup(self._model))
        return self._price[1]

    @property
    def bills(self) -> bool:
        """Whether calls may cost money: not on a self-hosted server (llama.cpp, vLLM,
        SGLang, Ollama, the simulator), whose calls cost $0, known."""
        return not self.provider.self_hosted

    def _priced(self, reply: Reply) -> tuple[float, bool]:
        """(dollars, whether known) of one reply: the server's own figure if it gives one,
        else the price table's; unknown (0.0, False) for an unpriced model that bills."""
        if reply.cost_usd is not None:
            return reply.cost_usd, True
        price = self.price()
        if price is not None:
            if self.bills and reply.usage.total_tokens == 0 and any(reply.texts):
                # A reply with text and no usage (a stream that sent none): tokens unknown.
                return 0.0, False
            return price.cost(reply.usage), True
        if not self.bills:
            return 0.0, True
        self.prices.warn_unpriced(self._model)
        return 0.0, False

    def worst_case_usd(self, messages: list[Message], n: int, cap: int | None) -> float:
        """The most a call can cost: its prompt bound at the input price plus `n` x its
        cap at the output price (`metanim.llm.budget`); 0 on a server that bills nothing.

        Raises:
            InfrastructureError: (kind "budget") the model has no price, or no cap.
        """
        if not self.bills:
            return 0.0
        price = self.price()
        if price is None or cap is None:
            what = "no price" if price is None else "no completion cap"
            raise InfrastructureError(
                f"a cost cap is set but {self._model!r} has {what}: its worst case is unknown",
                kind="budget",
            )
        return (prompt_token_bound(messages) * price.input + n * cap * price.output) / 1e6

    # ------------------------------------------------------------------ the wire
    async def _call_with_retries(
        self,
        session: aiohttp.ClientSession,
        endpoint: _Endpoint,
        messages: list[Message],
        temperature: float,
        n: int,
        seed: int | None,
        options: CallOptions,
        request: dict[str, Any],
    ) -> _Answer:
        attempt = 0
        resent = 0
        errors: list[dict[str, Any]] = []
        changed: dict[str, Any] | None = None  # what was sent, after an adaptation
        cap = request.get(
            "max_output_tokens", request.get("max_completion_tokens", request.get("max_tokens"))
        )
        worst = self.worst_case_usd(messages, n, cap) if self.budget is not None else 0.0
        # Serialised once, however many attempts it takes (again after an adaptation).
        data = fastjson.dumps(request)
        while True:
            held = await self.budget.reserve(worst) if self.budget is not None else 0.0
            charge = 0.0
            token = object()
            try:
                self._awaiting[token] = time.monotonic()
                try:
                    reply = await self._post(session, endpoint, data)
                finally:
                    del self._awaiting[token]
                reply.errors = errors
                charge = self._priced(reply)[0]
                return _Answer(reply, changed)
            except Exception as exc:
                error, retry_after = self._classify(exc, endpoint.url)
                if error is None:
                    raise
                if error.kind == "timeout" and not isinstance(exc, _CONNECT_TIMEOUT):
                    # It was sent: the server may run it to the end and bill it.
                    charge = worst
                if isinstance(exc, _HTTPStatus) and exc.status in (400, 422):
                    adapted = self._adapt(exc, options, request)
                    if adapted is not None:
                        errors.append({"kind": "adapted", "status": exc.status, "field": adapted})
                        request, changed = self.build_request(
                            messages, temperature=temperature, n=n, seed=seed, options=options
                        )
                        data = fastjson.dumps(request)
                        continue
                    error = self._refusal(exc, error, options)
                retryable = error.kind in _RETRYABLE
                limit = self.max_retries
                sent_timeout = error.kind == "timeout" and not isinstance(exc, _CONNECT_TIMEOUT)
                if sent_timeout:
                    limit = resent + self.resend_timeouts
                    retryable = self.resend_timeouts > resent
                if not retryable or attempt >= limit:
                    self.failed_attempts[error.kind] += 1
                    if sent_timeout and not self.resend_timeouts:
                        error = InfrastructureError(
                            f"{error}; not sent again: the server may still run it and bill it "
                            "(--resend-timeouts N allows N resends, --timeout-s waits longer)",
                            kind=error.kind,
                            status=error.status,
                            attempts=attempt + 1,
                        )
                    elif retryable or sent_timeout:
                        error = InfrastructureError(
                            f"gave up after {attempt + 1} attempts: {error}",
                            kind=error.kind,
                            status=error.status,
                            attempts=attempt + 1,
                        )
                    else:
                        error.attempts = attempt + 1
                    raise error from None
                entry: dict[str, Any] = {"kind": error.kind, "status": error.status}
                if sent_timeout:
                    entry.update(may_be_billed=True, worst_case_usd=worst)
                    resent += 1
                errors.append(entry)
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
                self._backing_off[token] = (time.monotonic() + delay, retry_after)
                try:
                    await asyncio.sleep(delay)
                finally:
                    del self._backing_off[token]
            finally:
                if self.budget is not None:
                    await self.budget.settle(held, charge)

    def waits(self, longer_than_s: float | None = None) -> list[str]:
        """What this client's calls wait for now, when a wait has lasted or will last more
        than `longer_than_s` seconds: a reply (against the --timeout-s of silence), or the
        time before a failed call is sent again (the server's Retry-After, as capped)."""
        if longer_than_s is None:
            longer_than_s = WAIT_SHOWN_S
        now = time.monotonic()
        out = []
        silent = [now - since for since in self._awaiting.values() if now - since > longer_than_s]
        if silent:
            out.append(
                f"{len(silent)} call(s) waiting {max(silent):.0f} s for a reply "
                f"(timeout: {self.timeout_s:g} s of silence, --timeout-s)"
            )
        for until, asked in self._backing_off.values():
            left = until - now
            if left > longer_than_s or (asked is not None and asked > longer_than_s):
                why = (
                    f"the server asked for {asked:g} s (Retry-After; at most "
                    f"{_MAX_RETRY_AFTER_S:g} s at a time)"
                    if asked is not None
                    else "backing off after a failed call"
                )
                out.append(f"a call is sent again in {max(left, 0):.0f} s: {why}")
        return out

    async def _post(
        self, session: aiohttp.ClientSession, endpoint: _Endpoint, data: bytes
    ) -> Reply:
        """One attempt: the reply, read whole or as a stream."""
        # A redirect is not followed: a POST sent on as a GET, or to another host, fails
        # there and would blame this server; the 3xx itself names where it points.
        async with session.post(
            endpoint.chat_url, data=data, timeout=self._timeout(), allow_redirects=False
        ) as response:
            status = response.status
            if status >= 300:
                raise _HTTPStatus(status, await response.read(), response.headers)
            if "text/event-stream" not in response.headers.get("Content-Type", ""):
                reply = self._read_body(await self._read_whole(response))
            else:
                reply = await self._read_stream(response)
        busy = _busy_s(reply.timings)
        if busy is not None:
            self.server_busy_s += busy
        return reply

    async def _read_whole(self, response: aiohttp.ClientResponse) -> bytes:
        """A body not streamed, whole within the timeout of its headers: a finished
        completion's body comes at once, and one that drips (a byte now and then, never
        silent for the timeout) would hold the call for ever."""
        chunks: list[bytes] = []
        try:
            async with asyncio.timeout(self.timeout_s) as window:
                async for chunk in response.content.iter_any():
                    chunks.append(chunk)
        except TimeoutError:
            if not window.expired():
                raise  # a read silent for the timeout (aiohttp's own)
            raise _SlowBody(sum(map(len, chunks))) from None
        return b"".join(chunks)

    def _read_body(self, raw: bytes) -> Reply:
        """A whole (non-streamed) reply body, read; a body that is no completion is a
        BadReply quoting its start."""
        try:
            body = fastjson.loads(raw)
        except ValueError as exc:
            raise BadReply(f"the body is not JSON ({exc}): {_excerpt(raw)}") from None
        if not isinstance(body, dict):
            raise BadReply(f"the body is not a JSON object: {_excerpt(raw)}")
        try:
            return responses_reply(body) if self.api == "responses" else completion_reply(body)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            what = "a Responses API reply" if self.api == "responses" else "a chat completion"
            raise BadReply(
                f"the body is not {what} ({type(exc).__name__}: {exc}): {_excerpt(raw)}"
            ) from None

    async def _read_stream(self, response: aiohttp.ClientResponse) -> Reply:
        """Server-sent events gathered into one reply (chat chunks, or Responses events)."""
        gathered = StreamReply()
        final: dict[str, Any] | None = None
        seen = 0
        async for line in _lines(response.content):
            if not line.startswith(b"data:"):
                continue
            payload = line[5:].strip()
            if payload == b"[DONE]":
                break
            try:
                event = fastjson.loads(payload)
            except ValueError:
                raise BadReply(f"a stream event is not JSON: {_excerpt(line)}") from None
            if not isinstance(event, dict):
                raise BadReply(f"a stream event is not a JSON object: {_excerpt(line)}")
            if self.api == "responses":
                kind = event.get("type", "")
                if kind.endswith(".delta"):
                    self.streamed += 1
                elif kind in ("response.completed", "response.incomplete", "response.failed"):
                    final = event.get("response") or {}
                elif kind == "error":
                    raise BadReply(f"the stream ended in an error: {event.get('message')}")
                continue
            gathered.add(event)
            self.streamed += gathered.tokens - seen
            seen = gathered.tokens
        if self.api == "responses":
            if final is None:
                raise BadReply("the stream ended before the response was complete")
            return responses_reply(final)
        return gathered.reply()

    def _adapt(self, exc: _HTTPStatus, options: CallOptions, request: dict[str, Any]) -> str | None:
        """Change the request once, visibly, if the server refused the cap's field name or
        a temperature the model does not take; returns the field adapted, else None (a
        call built before another call's adaptation is simply built again)."""
        name = refused_field(exc.body)
        if name in CAP_FIELDS and options.cap_field is None and name in request:
            current = self.adapted.cap_field or self.provider.cap_field
            if current != name:  # another call adapted it meanwhile
                return name
            if self.adapted.cap_field is None:
                other = next(f for f in CAP_FIELDS if f != name)
                self.adapted.cap_field = other
                return self._note(f"the completion cap is sent as {other} ({name} refused)", name)
        if name == "temperature" and "temperature" in request:
            if "temperature" not in self.adapted.omit:
                self.adapted.omit.add("temperature")
                self._note(
                    "no temperature is sent: the model takes only its default (the server's)",
                    name,
                )
            return name
        return None

    def _note(self, note: str, name: str) -> str:
        self.adapted.notes.append(note)
        log.warning("%s refused %s for model %r: %s", self.base_url, name, self._model, note)
        return name

    def _refusal(
        self, exc: _HTTPStatus, error: InfrastructureError, options: CallOptions
    ) -> InfrastructureError:
        """A 400/422 that names what it refuses: one line naming the flag that changes it."""
        name = refused_field(exc.body)
        if name is not None and not about_schema(name, str(error)):
            return InfrastructureError(
                f"{error} -- the server refuses the request field {name!r}: "
                f"{fix_for(name, options.extra_body)}",
                kind="unsupported_parameter",
                status=error.status,
            )
        if options.structured_output != "off" and about_schema(name, str(error)):
            # No rerun mends it: the run stops at the first (`unsupported_parameter`).
            return InfrastructureError(
                f"{error} -- the request carried a reply schema (structured output "
                f"{options.structured_output!r}); the server may not take that form: "
                "try --structured-output off, json_schema, tools, guided_json or "
                "llama_json_schema",
                kind="unsupported_parameter",
                status=error.status,
            )
        return error

    def _classify(
        self, exc: BaseException, url: str | None = None
    ) -> tuple[InfrastructureError | None, float | None]:
        """The infrastructure error a transport exception stands for, and the Retry-After."""
        where = f"{url or self.base_url} (model {self._model!r})"
        if isinstance(exc, _SlowBody):
            return InfrastructureError(
                f"the reply from {where} took over {self.timeout_s:g} s to arrive after its "
                f"headers ({exc.received:,} bytes by then); a reply not streamed comes whole "
                "once the model is done",
                kind="timeout",
            ), None
        if isinstance(exc, asyncio.TimeoutError | TimeoutError):
            # aiohttp's ServerTimeoutError and ConnectionTimeoutError are TimeoutErrors too.
            what = "no connection" if isinstance(exc, _CONNECT_TIMEOUT) else "silence"
            return InfrastructureError(
                f"timed out after {self.timeout_s:g} s of {what} at {where}", kind="timeout"
            ), None
        if isinstance(exc, aiohttp.ClientError | ConnectionError) and not isinstance(
            exc, aiohttp.ClientResponseError
        ):
            return InfrastructureError(_connection_failure(exc, where), kind="connection"), None
        if isinstance(exc, BadReply):
            return InfrastructureError(
                f"unreadable response from {where}: {self._redact(str(exc))}", kind="bad_response"
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
            msg = f"authentication failed (HTTP 401) at {where}: check {key_env(self._model)}"
            return InfrastructureError(msg, kind="auth", status=status), None
        if 300 <= status < 400:
            target = exc.headers.get("Location", "(no Location)")
            msg = (
                f"HTTP {status} at {where}: the server redirects the chat call to {target}; "
                "a call is not sent on: give the URL the server points to as the base URL"
            )
            return InfrastructureError(msg, kind="bad_request", status=status), None
        message, code = _server_error(exc.body, status)
        detail = self._redact(message)
        if _context_overflow(exc.body):
            detail += f" -- {_CONTEXT_FIX}"
        if status == 403:
            kind = "permission"
        elif status == 402 or (status == 429 and code in _QUOTA_CODES):
            kind = "quota"  # OpenRouter: 402, out of credits
        elif status == 429:
            kind = "rate_limit"
        elif status == 404:
            kind = "not_found"
            if "v1/responses" in message:
                detail += " -- the model is served only by the Responses API: --api responses"
            elif _no_path(url or self.base_url) and not self._target.azure:
                base = (url or self.base_url).rstrip("/")
                detail += (
                    f" -- the base URL has no path, and most servers serve the API under "
                    f"/v1: did you mean {base}/v1?"
                )
        elif status in (408, 409) or status >= 500:
            kind = "server_error"
        else:
            kind = "bad_request"
        return InfrastructureError(
            f"HTTP {status} {kind} at {where}: {detail}", kind=kind, status=status
        ), retry_after

    def _redact(self, text: str) -> str:
        """`text` with the API key masked where it stands as a whole token: a short key
        (the simulated server's "sim") is no secret inside a word ("simulated")."""
        if not self.__api_key:
            return text
        token = rf"(?<![\w-]){re.escape(self.__api_key)}(?![\w-])"
        return re.sub(token, "***", text)


def _busy_s(timings: dict[str, Any] | None) -> float | None:
    """A server's own busy time for one reply (llama.cpp: prompt_ms + predicted_ms)."""
    if not timings:
        return None
    return (float(timings.get("prompt_ms") or 0) + float(timings.get("predicted_ms") or 0)) / 1000


async def _lines(stream: aiohttp.StreamReader) -> AsyncGenerator[bytes, None]:
    """The lines of a response body as they arrive (however long: an SSE event may hold a
    whole completion)."""
    buffer = b""
    async for chunk in stream.iter_any():
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            yield line.strip()
    if buffer.strip():
        yield buffer.strip()


def _by_host(target: ServerTarget) -> Detected | None:
    """The profile a hosted API's host names (no request), or None."""
    if target.azure:
        return Detected(PROVIDERS["azure"], "an Azure OpenAI deployment", target.base_urls[0])
    import urllib.parse

    host = (urllib.parse.urlsplit(target.base_urls[0]).hostname or "").lower()
    for known, kind in HOSTS.items():
        if host == known or host.endswith("." + known):
            return Detected(PROVIDERS[kind], f"{host} is a hosted API", target.base_urls[0])
    return None


class SharedConnections:
    """One connection pool per event loop for several clients (a run's models).

    Two models on one server (a tournament's agent and opponent) each with a pool of its
    own open a connection for every call in flight of each, though an episode's calls
    alternate between them: with the pool shared, a connection freed by one model's call
    carries the other's next, and a server sees as many connections as calls in flight,
    not twice as many. Unbounded: each client's semaphores bound its calls in flight.
    Closed with its event loop, or by `aclose`.
    """

    def __init__(self) -> None:
        self._per_loop: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop,
            tuple[aiohttp.TCPConnector, AsyncGenerator[None, None]],
        ] = weakref.WeakKeyDictionary()

    async def connector(self) -> aiohttp.TCPConnector:
        """The current event loop's pool (made on first use)."""
        loop = asyncio.get_running_loop()
        held = self._per_loop.get(loop)
        if held is None or held[0].closed:
            connector = _connector(0)
            closer = _close_with_loop(connector)
            await closer.__anext__()  # the generator waits here for the loop's end or `aclose`
            held = self._per_loop[loop] = (connector, closer)
        return held[0]

    async def aclose(self) -> None:
        """Close the current event loop's pool (its clients' sessions first)."""
        held = self._per_loop.pop(asyncio.get_running_loop(), None)
        if held is not None:
            await held[1].aclose()


def _connector(limit: int) -> aiohttp.TCPConnector:
    """A connection pool of at most `limit` connections (0: unbounded), any host."""
    return aiohttp.TCPConnector(limit=limit, limit_per_host=0, ttl_dns_cache=None)


@dataclass
class _Answer:
    """A reply and, if a refusal changed the request, what the last attempt sent."""

    reply: Reply
    sent: dict[str, Any] | None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.reply, name)


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


# Every open session (and shared pool), by event loop. Held here, not only by its client,
# so that a client collected in a reference cycle never takes its open session into the
# same garbage (aiohttp's destructors warn there, before the closer below can run); each
# leaves the set as its closer closes it, and a loop's set goes with the loop.
_OPEN_SESSIONS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, set[aiohttp.ClientSession | aiohttp.TCPConnector]
] = weakref.WeakKeyDictionary()


async def _close_with_loop(
    session: aiohttp.ClientSession | aiohttp.TCPConnector,
) -> AsyncGenerator[None, None]:
    """Suspended for the life of the session (or pool); closes it when finalized.

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


class _SlowBody(Exception):
    """A body not streamed that did not arrive whole within the timeout of its headers."""

    def __init__(self, received: int) -> None:
        super().__init__(f"{received} bytes")
        self.received = received


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


#: What mends a prompt longer than a llama.cpp server's context (per slot).
_CONTEXT_FIX = (
    "the prompt does not fit the server's context: restart it with a larger one "
    "(metanim serve-local --ctx N; llama-server --ctx-size N)"
)


def _no_path(url: str) -> bool:
    """Whether a base URL is a bare host (http://host:port), with no path."""
    import urllib.parse

    return urllib.parse.urlsplit(url).path in ("", "/")


def _context_overflow(body: bytes) -> bool:
    """Whether an error body is llama.cpp's refusal of a prompt past its context, an
    HTTP 400 `{"error": {"code": 400, "message": "request (N tokens) exceeds the available
    context size (M tokens), try increasing it", "type": "exceed_context_size_error",
    "n_prompt_tokens": N, "n_ctx": M}}` (llama-server, ERROR_TYPE_EXCEED_CONTEXT_SIZE:
    https://github.com/ggml-org/llama.cpp/tree/master/tools/server)."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return False
    return isinstance(error, dict) and error.get("type") == "exceed_context_size_error"


def _excerpt(body: bytes, limit: int = 100) -> str:
    """The start of a body a server sent, quoted: at most `limit` bytes, as text."""
    text = body[:limit].decode("utf-8", "replace")
    return repr(text) + (f" (first {limit} of {len(body):,} bytes)" if len(body) > limit else "")


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
