"""The simulator as an in-process `ChatModel`: the same answers, faults and log, no HTTP.

For work where the network adds nothing to what is measured (the recovery suite, large
analysis runs): `SimChatModel("sim-conform:self=1,peer=3")` answers through
`SimApp.complete`, the very function the HTTP handler calls.
"""

from __future__ import annotations

import json
import time
from typing import Any

from metanim.llm._types import CallOptions, Completion, InfrastructureError, Message, Usage
from metanim.llm.sim.server import SimApp
from metanim.llm.sim.spec import parse_model_spec

_KINDS = {400: "bad_request", 404: "not_found", 429: "rate_limit", 500: "server_error"}


class SimChatModel:
    """A simulated model called in-process.

    Args:
        model: a simulated model name (`sim-...`); checked at once.
        app: the simulator to ask (share one to share its log and attempt counts);
            a fresh `SimApp(seed=seed)` if None.
        seed: the fresh app's seed.

    A failure the simulator answers (a simulated 429 or 500) raises `InfrastructureError`
    at once: there are no retries here.
    """

    def __init__(self, model: str, app: SimApp | None = None, *, seed: int = 0) -> None:
        parse_model_spec(model)
        self._model = model
        self.app = app if app is not None else SimApp(seed=seed)

    @property
    def model(self) -> str:
        return self._model

    def __repr__(self) -> str:
        return f"SimChatModel({self._model!r})"

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
        if options is not None:
            max_tokens = options.max_tokens
        body: dict[str, Any] = {
            "model": self._model,
            "messages": list(messages),
            "temperature": temperature,
            "n": n,
            "seed": seed,
            "max_tokens": max_tokens,
        }
        start = time.perf_counter()
        status, payload, _ = await self.app.complete(json.dumps(body).encode())
        if status != 200:
            error = payload.get("error", {})
            kind = "quota" if error.get("code") == "insufficient_quota" else _KINDS.get(status)
            raise InfrastructureError(
                f"simulated server answered {status}: {error.get('message')}",
                kind=kind or "server_error",
                status=status,
            )
        usage = payload["usage"]
        return Completion(
            model=self._model,
            texts=[choice["message"]["content"] for choice in payload["choices"]],
            usage=Usage(
                prompt_tokens=usage["prompt_tokens"],
                completion_tokens=usage["completion_tokens"],
            ),
            latency_s=time.perf_counter() - start,
            request={
                "model": self._model,
                "temperature": temperature,
                "n": n,
                "seed": seed,
                "sample_index": sample_index,
                "max_tokens": max_tokens,
            },
        )
