"""The OpenAI-compatible async chat client: concurrency limit, retries, cache, usage, cost.

One retry loop lives here (not in the SDK) because the SDK would also retry a 429 that
means "quota exhausted", and its backoff base is a module constant that tests cannot
shorten. The SDK's own retries are therefore switched off (`max_retries=0`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import time
import weakref
from typing import Any

import openai

from metanim.llm._types import Completion, InfrastructureError, Message, Usage
from metanim.llm.cache import ResponseCache, cache_key
from metanim.llm.prices import PriceTable

log = logging.getLogger("metanim.llm")

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Local OpenAI-compatible servers ignore the key, but the SDK refuses an empty one.
_NO_KEY = "no-key-set"
# A server asking us to wait longer than this is treated as if it had asked for the cap.
_MAX_RETRY_AFTER_S = 60.0


class OpenAIChatClient:
    """A `ChatModel` over any OpenAI-compatible `/v1/chat/completions` endpoint.

    Args:
        model: the model name sent to the server (e.g. "gpt-4o", "sim-optimal").
        base_url: server URL; default `OPENAI_BASE_URL`, else the OpenAI API.
        api_key: default `OPENAI_API_KEY`. Never logged, printed, cached or put in a record.
        max_concurrency: calls in flight at once (per event loop).
        timeout_s: per-attempt timeout in seconds.
        max_retries: retries after the first attempt on 429 (not quota), 408/409, 5xx,
            timeouts, connection errors and unreadable responses; then `InfrastructureError`.
        backoff_s: first backoff; doubled on each retry, capped at `backoff_max_s`, and
            jittered to a uniform draw in [half, full] so that parallel callers spread out.
        backoff_max_s: largest backoff (a server's Retry-After is honoured up to 60 s).
        cache: an opt-in `ResponseCache`; used for temperature 0 unless the cache is forced.
        prices: the price table for `cost_usd` (default: `PriceTable.load()`).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_concurrency: int = 8,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        backoff_max_s: float = 8.0,
        cache: ResponseCache | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if max_retries < 0:
            raise ValueError("max_retries must be non-negative")
        self._model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip(
            "/"
        )
        # Held only here and inside the SDK clients; never in a record, a log line or repr.
        self.__api_key = api_key or os.environ.get("OPENAI_API_KEY") or ""
        self.max_concurrency = max_concurrency
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.cache = cache
        self.prices = prices if prices is not None else PriceTable.load()
        self._rng = random.Random()
        # The SDK's connection pool and an asyncio.Semaphore are bound to one event loop;
        # a client reused under several `asyncio.run` calls gets one pair per loop.
        self._per_loop: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[openai.AsyncOpenAI, asyncio.Semaphore]
        ] = weakref.WeakKeyDictionary()

    @property
    def model(self) -> str:
        return self._model

    def __repr__(self) -> str:
        return f"OpenAIChatClient(model={self._model!r}, base_url={self.base_url!r})"

    def __getstate__(self) -> dict[str, Any]:
        # A pickle must not carry the key (or the loop-bound SDK clients): the copy
        # reads OPENAI_API_KEY again in the process that unpickles it.
        state = dict(self.__dict__)
        state["_OpenAIChatClient__api_key"] = None
        state["_per_loop"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__api_key = os.environ.get("OPENAI_API_KEY") or ""
        self._per_loop = weakref.WeakKeyDictionary()

    def _loop_state(self) -> tuple[openai.AsyncOpenAI, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        state = self._per_loop.get(loop)
        if state is None:
            sdk = openai.AsyncOpenAI(
                api_key=self.__api_key or _NO_KEY,
                base_url=self.base_url,
                timeout=self.timeout_s,
                max_retries=0,
            )
            state = (sdk, asyncio.Semaphore(self.max_concurrency))
            self._per_loop[loop] = state
        return state

    async def aclose(self) -> None:
        """Close the HTTP connections of the current event loop."""
        loop = asyncio.get_running_loop()
        state = self._per_loop.pop(loop, None)
        if state is not None:
            await state[0].close()

    async def chat(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        n: int = 1,
        seed: int | None = None,
        sample_index: int = 0,
        max_tokens: int | None = None,
    ) -> Completion:
        """One chat completion with `n` choices.

        Raises:
            InfrastructureError: auth, permission, quota, unknown model, bad request, or a
                retryable failure that outlived `max_retries` (see `kind`).
        """
        if n < 1:
            raise ValueError("n must be at least 1")
        request: dict[str, Any] = {
            "model": self._model,
            "messages": [dict(m) for m in messages],
            "temperature": temperature,
            "n": n,
        }
        if seed is not None:
            request["seed"] = seed
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        record = {
            "base_url": self.base_url,
            "model": self._model,
            "temperature": temperature,
            "n": n,
            "seed": seed,
            "sample_index": sample_index,
            "max_tokens": max_tokens,
        }
        start = time.perf_counter()
        key = None
        if self.cache is not None and self.cache.applies(temperature):
            key = cache_key(self.base_url, request, sample_index)
            hit = self.cache.get(key)
            if hit is not None:
                texts, usage = hit
                # No money was spent: the tokens are kept (what the answer took), the cost is 0.
                return Completion(
                    model=self._model,
                    texts=texts,
                    usage=usage,
                    cost_usd=0.0,
                    latency_s=time.perf_counter() - start,
                    cached=True,
                    request=record,
                )
        sdk, semaphore = self._loop_state()
        async with semaphore:
            texts, usage, retries = await self._call_with_retries(sdk, request)
        if key is not None and self.cache is not None:
            self.cache.put(
                key,
                base_url=self.base_url,
                request=request,
                sample_index=sample_index,
                texts=texts,
                usage=usage,
            )
        latency = time.perf_counter() - start
        log.debug("chat %s n=%d: %.3f s, %d retries", self._model, n, latency, retries)
        return Completion(
            model=self._model,
            texts=texts,
            usage=usage,
            cost_usd=self.prices.cost(self._model, usage),
            latency_s=latency,
            cached=False,
            request=record,
            retries=retries,
        )

    async def _call_with_retries(
        self, sdk: openai.AsyncOpenAI, request: dict[str, Any]
    ) -> tuple[list[str], Usage, int]:
        attempt = 0
        while True:
            try:
                response = await sdk.chat.completions.create(**request)
                texts = [choice.message.content or "" for choice in response.choices]
                if not texts:
                    raise _BadResponse("the server returned no choices")
                usage = Usage(
                    prompt_tokens=response.usage.prompt_tokens if response.usage else 0,
                    completion_tokens=response.usage.completion_tokens if response.usage else 0,
                )
                return texts, usage, attempt
            except Exception as exc:
                error, retry_after = self._classify(exc)
                if error is None:
                    raise
                retryable = error.kind in _RETRYABLE
                if not retryable or attempt >= self.max_retries:
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
                delay = min(self.backoff_s * 2**attempt, self.backoff_max_s)
                delay *= 0.5 + 0.5 * self._rng.random()
                if retry_after is not None:
                    delay = max(delay, min(retry_after, _MAX_RETRY_AFTER_S))
                log.info(
                    "%s from %s (attempt %d): retrying in %.3f s",
                    error.kind,
                    self.base_url,
                    attempt + 1,
                    delay,
                )
                attempt += 1
                await asyncio.sleep(delay)

    def _classify(self, exc: BaseException) -> tuple[InfrastructureError | None, float | None]:
        """The infrastructure error an SDK exception stands for, and the server's Retry-After."""
        where = f"{self.base_url} (model {self._model!r})"
        if isinstance(exc, openai.APITimeoutError):
            return InfrastructureError(
                f"timed out after {self.timeout_s} s at {where}", kind="timeout"
            ), None
        if isinstance(exc, openai.APIConnectionError):
            return InfrastructureError(_connection_failure(exc, where), kind="connection"), None
        if isinstance(exc, _BadResponse | openai.APIResponseValidationError | json.JSONDecodeError):
            return InfrastructureError(
                f"unreadable response from {where}", kind="bad_response"
            ), None
        if not isinstance(exc, openai.APIStatusError):
            return None, None
        status = exc.status_code
        code = getattr(exc, "code", None)
        retry_after = _retry_after(exc.response.headers)
        # Auth messages from some servers echo part of the key; ours never quote the server.
        if isinstance(exc, openai.AuthenticationError):
            msg = f"authentication failed (HTTP 401) at {where}: check OPENAI_API_KEY"
            return InfrastructureError(msg, kind="auth", status=status), None
        detail = self._redact(_server_message(exc))
        if isinstance(exc, openai.PermissionDeniedError):
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


class _BadResponse(Exception):
    pass


_RETRYABLE = frozenset({"rate_limit", "server_error", "timeout", "connection", "bad_response"})
_QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached", "quota_exceeded"})


def _connection_failure(exc: openai.APIConnectionError, where: str) -> str:
    """What went wrong on the wire, named for what happened (the SDK says "Connection error").

    The cause is an httpx or httpcore exception (which one depends on where the read
    failed), so it is recognised by its class name.
    """
    cause = exc.__cause__
    name = type(cause).__name__ if cause is not None else ""
    if name in ("ConnectError", "ConnectTimeout"):
        return f"cannot connect to {where}"
    if name == "RemoteProtocolError":
        return f"the connection to {where} closed before the response was complete ({cause})"
    if name == "ReadError":
        return f"the connection to {where} broke while reading the response ({cause})"
    if name == "WriteError":
        return f"the connection to {where} broke while sending the request ({cause})"
    return f"connection error with {where} ({name or 'unknown cause'}: {cause or exc})"


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
    return str(exc.message)[:300]


def _retry_after(headers: Any) -> float | None:
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return max(0.0, float(value) / divisor)
            except ValueError:
                continue
    return None
