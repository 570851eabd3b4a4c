"""Building players from config: solver policies, or methods over shared HTTP clients.

Clients are shared per (model, server) within a run, so one connection pool and one
concurrency limit serve every episode. A simulated model (`sim-...`) with no server
URL gets the simulated server started in-process, so every command runs offline.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from metanim.arena._policies import MethodPolicy, Policy, SolverPolicy, TimedModel, is_solver_spec


class ClientPool:
    """One `OpenAIChatClient` (wrapped in `TimedModel`) per `model@base_url`.

    A `sim-...` model without a URL goes to `sim_base_url`; any other model without a
    URL goes to `OPENAI_BASE_URL` or the OpenAI API (the client's default).
    """

    def __init__(
        self,
        sim_base_url: str | None,
        *,
        max_concurrency: int | None,
        timeout_s: float,
        max_retries: int,
        backoff_s: float = 0.5,
        cache_path: str | None = None,
    ) -> None:
        from metanim.llm import ResponseCache

        self.sim_base_url = sim_base_url
        # One response cache (a SQLite file) shared by every client of the run.
        self.cache = ResponseCache(cache_path) if cache_path else None
        self.kwargs = {
            "max_concurrency": max_concurrency,
            "timeout_s": timeout_s,
            "max_retries": max_retries,
            "backoff_s": backoff_s,
            "cache": self.cache,
        }
        self.clients: dict[tuple[str, str | None], TimedModel] = {}

    def __call__(self, spec: str) -> TimedModel:
        from metanim.llm import OpenAIChatClient

        model, _, url = spec.partition("@")
        model, url = model.strip(), url.strip() or None
        if url is None and model.startswith("sim-"):
            url = self.sim_base_url
        key = (model, url)
        if key not in self.clients:
            kwargs = dict(self.kwargs)
            if kwargs["max_concurrency"] is None and url is not None and url == self.sim_base_url:
                # The in-process simulator has no slots to report and answers at once.
                kwargs["max_concurrency"] = 64
            client = OpenAIChatClient(key[0], base_url=key[1], **kwargs)  # type: ignore[arg-type]
            self.clients[key] = TimedModel(client)
        return self.clients[key]

    async def aclose(self) -> None:
        for client in self.clients.values():
            await client.inner.aclose()  # type: ignore[attr-defined]
        if self.cache is not None:
            self.cache.close()


def build_method(
    method: str,
    model: str,
    params: dict[str, Any],
    clients: ClientPool,
    defaults: dict[str, Any] | None = None,
) -> Any:
    """A `metanim.agents` method from a spec (`name[:k=v,...]`) plus `params` on top.

    `defaults` (the run's call options, re-asks and failure policy) come first; the spec's
    and the profile's parameters override them.
    """
    from metanim.agents.registry import METHODS, check_parameters, parse_spec

    name, spec_model, spec_params = parse_spec(method)
    merged = {**spec_params, **params}
    cls, fixed = METHODS[name]
    check_parameters(name, merged, method)  # a bad profile parameter is one clear error
    if name == "cross":
        # Cross-model debate names its models in `models=a|b`, in the spec or (overriding
        # it, so a profile's models can be swapped from the CLI) in the parameters; every
        # other parameter (temperatures, play) applies as for any method.
        models = [m.strip() for m in str(merged.pop("models", "") or "").split("|") if m.strip()]
        if len(models) < 2:
            raise ValueError(f"cross-model debate {method!r} needs models=a|b")
        return cls([clients(m) for m in models], **{**fixed, **(defaults or {}), **merged})  # type: ignore[call-arg]
    return cls(clients(spec_model or model), **{**fixed, **(defaults or {}), **merged})  # type: ignore[call-arg]


def build_policy(
    method: str,
    model: str,
    params: dict[str, Any],
    clients: ClientPool,
    *,
    record: bool = True,
    defaults: dict[str, Any] | None = None,
) -> Policy:
    """A solver policy ("optimal", "random", "epsilon:p") or an LLM method policy."""
    if is_solver_spec(method):
        return SolverPolicy(method.strip().lower())
    built = build_method(method, model, params, clients, defaults)
    return MethodPolicy(name=f"{method}@{model}", method=built, record_decisions=record)


def needs_sim_server(*pairs: tuple[str, str, str | None]) -> bool:
    """Whether any (method, model, base_url) is an LLM method on a simulated model with no URL."""
    return any(
        not is_solver_spec(method) and model.startswith("sim-") and not base_url
        for method, model, base_url in pairs
    )


#: The one place `sim-*` models go besides the in-process server: a running
#: `metanim serve-sim` named here (never OPENAI_BASE_URL, which may be a paid provider).
SIM_URL_ENV = "METANIM_SIM_URL"


def sim_url_from_env() -> str | None:
    """The `serve-sim` URL named by `METANIM_SIM_URL`, or None."""
    url = os.environ.get(SIM_URL_ENV, "").strip().rstrip("/")
    return url or None


@contextlib.contextmanager
def sim_server_if_needed(
    needed: bool,
    seed: int = 0,
    questions: list[str] | None = None,
    log_path: Path | None = None,
) -> Iterator[str | None]:
    """Where `sim-*` models without a URL go, when `needed`: yields its base URL (or None).

    `METANIM_SIM_URL` if set (a running `metanim serve-sim`), else the simulated server
    started in-process for the duration. `questions`: question files the simulated models
    answer (their answer key). A resumed run continues where its log stopped: the server's
    session is the number of result lines the log already holds, so the simulated faults
    of a rerun are fresh draws (reproducible from the log) rather than the failures of the
    first run again.
    """
    if not needed:
        yield None
        return
    if sim_url_from_env():
        yield sim_url_from_env()
        return
    import logging

    from metanim.arena._log import read_records
    from metanim.llm.sim import SimServer

    session = len(read_records(log_path)) if log_path is not None else 0
    # When a run is interrupted its clients hang up on requests in flight; aiohttp logs
    # each as "Error handling request" with a traceback. For our own in-process server
    # that is the run stopping, not a fault: those records are dropped.
    server_log = logging.getLogger("aiohttp.server")
    server_log.addFilter(_client_left)
    try:
        with SimServer(seed=seed, questions=questions, session=session) as server:
            yield server.base_url
    finally:
        server_log.removeFilter(_client_left)


def _client_left(record: Any) -> bool:
    import asyncio

    exc = record.exc_info[1] if record.exc_info else None
    return not isinstance(exc, ConnectionError | asyncio.CancelledError)
