"""A model named once: its name, whether it is simulated, where it is served, whose key.

Every command names a model as text (`gpt-4o`, `sim-optimal`, `m@http://host:8080/v1`,
`m@http://a/v1|http://b/v1` for replicas). `ModelSpec.parse` reads it once, at the edge;
routing, keys, the run's identity and the run header all ask the spec, so no string is
split or prefix-tested twice.

A simulated model (`sim-...`) is served by the simulated server: the URL it names, else a
running `metanim serve-sim` named by `METANIM_SIM_URL`, else one the run starts
in-process. It never goes to `OPENAI_BASE_URL` (which may be a paid provider) and never
receives `OPENAI_API_KEY`: its key, if a `serve-sim --api-key-env` asks for one, comes from
`METANIM_SIM_API_KEY`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from metanim.llm.target import (
    AZURE_ENDPOINT_ENV,
    AZURE_PREFIX,
    DEFAULT_BASE_URL,
    SIM_PREFIX,
    ServerTarget,
    check_base_url,
    check_model,
    key_env,
    model_api_key,
    server_target,
)

#: A running `metanim serve-sim` for `sim-*` models that name no server.
SIM_URL_ENV = "METANIM_SIM_URL"
#: The server identity of a `sim-*` model with no URL: the in-process simulated server,
#: whose port changes on every run, so its URL must not enter a run's identity.
SIM_IN_PROCESS = "sim:in-process"


def sim_url_from_env() -> str | None:
    """The `serve-sim` URL named by `METANIM_SIM_URL`, or None."""
    return os.environ.get(SIM_URL_ENV, "").strip().rstrip("/") or None


@dataclass(frozen=True)
class ModelSpec:
    """A model and where it is served; `urls` empty means the default route."""

    name: str
    urls: tuple[str, ...] = ()

    @classmethod
    def parse(
        cls, text: str, base_url: str | None = None, *, source: str = "base URL"
    ) -> ModelSpec:
        """`model`, `model@url` or `model@url|url` (replicas); `base_url` applies when the
        text names no server.

        Raises:
            ValueError: an empty model name, or a URL a client cannot call (naming
                `source`, the flag or setting it came from).
        """
        name, _, url = text.partition("@")
        name = check_model(name.strip() or "")
        given = url.strip() or (base_url or "").strip()
        urls = tuple(check_base_url(u, source=source) for u in given.split("|") if u.strip())
        return cls(name, urls)

    def __str__(self) -> str:
        return f"{self.name}@{'|'.join(self.urls)}" if self.urls else self.name

    @property
    def simulated(self) -> bool:
        """Whether the simulated server answers for this model (its name is `sim-...`)."""
        return self.name.startswith(SIM_PREFIX)

    @property
    def azure(self) -> bool:
        """Whether this is an Azure OpenAI deployment (`azure:<deployment>`)."""
        return self.name.startswith(AZURE_PREFIX)

    @property
    def key_env(self) -> str:
        """The environment variable the key comes from (`metanim.llm.target.key_env`)."""
        return key_env(self.name)

    def api_key(self) -> str:
        """The key to send, read when a client is made and never kept
        (`metanim.llm.target.model_api_key`)."""
        return model_api_key(self.name)

    @property
    def needs_sim_server(self) -> bool:
        """Whether this model needs a simulated server the run must find or start."""
        return self.simulated and not self.urls

    def routed(self, sim_url: str | None) -> tuple[str, ...]:
        """The URLs it names, else `sim_url` for a simulated model, else () (the default
        route: `OPENAI_BASE_URL` or the OpenAI API; Azure's `AZURE_OPENAI_ENDPOINT`)."""
        if self.urls:
            return self.urls
        return (sim_url.rstrip("/"),) if self.simulated and sim_url else ()

    def target(self, sim_url: str | None) -> ServerTarget:
        """Where the calls go and the headers they carry (`metanim.llm.server_target`)."""
        # The key is read by `server_target` from the model's own variable (`key_env`),
        # named in any refusal.
        return server_target(self.name, list(self.routed(sim_url)) or None)

    @property
    def canonical_name(self) -> str:
        """The model's name as it enters a run's identity: a simulated model's parameters
        sorted (`metanim.llm.sim.spec.canonical_model_name`); any other name as given."""
        if not self.simulated:
            return self.name
        from metanim.llm.sim.spec import ModelSpecError, canonical_model_name

        try:
            return canonical_model_name(self.name)
        except ModelSpecError:  # a name the simulator refuses is refused before a run
            return self.name

    def server_identity(self, *, as_listed: bool = False) -> str:
        """The server as it enters a run's identity: the URLs given, sorted (replicas serve
        one model: which one answers changes no result, so their order is no part of
        it; `as_listed` keeps their order, as logs keyed by a config as spelled have it),
        the fixed token `sim:in-process` for a simulated model with none, else the
        default route."""
        if self.urls:
            return "|".join(self.urls if as_listed else sorted(self.urls))
        if self.simulated:
            return SIM_IN_PROCESS
        if self.azure:
            return (os.environ.get(AZURE_ENDPOINT_ENV) or "azure").rstrip("/")
        return (os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
