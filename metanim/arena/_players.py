"""Players: a side of a run read once, the narrow `Policy` protocol, and the one builder.

A `Side` is what a config says about one player (method spec, model spec, parameters),
parsed and checked once. `build_player` turns it into a `Policy`: a `SolverPolicy`
(optimal, random, epsilon:<p>: the env's own opponents, no model) or a `MethodPolicy`
(any prompting or debate method over shared clients). A policy turns a position into a
`Turn`: the legal move it plays, or a forfeit, or an infrastructure error, with the
decision's counters.
"""

from __future__ import annotations

import contextvars
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from metanim.agents import (
    METHODS,
    Counts,
    Decision,
    Method,
    MethodSpec,
    UnknownMethodError,
    build_method,
    game_problem,
)
from metanim.envs import EpisodeStream, is_solver_player, make_opponent, resolve_move
from metanim.games import Game, MoveError
from metanim.llm import (
    PROVIDERS,
    ApiSetting,
    ChatModel,
    Completion,
    CostBudget,
    Detected,
    InfrastructureError,
    Message,
    ModelSpec,
    ResponseCache,
    ServerTarget,
    detect_provider,
)
from metanim.llm import provider as provider_named
from metanim.llm.sim import check_simulated
from metanim.records import SIDES

if TYPE_CHECKING:
    from metanim.llm import OpenAIChatClient, SharedConnections

TurnStatus = Literal["ok", "fallback", "forfeit", "infrastructure_error"]


@dataclass(frozen=True)
class Side:
    """One player of a run: a solver player, or a method on a model, checked once.

    Raises `ValueError` (a user's mistake) for an unknown method or solver player, a
    parameter of the wrong name or type, or a `sim-...` name the simulator rejects.
    """

    method: str
    model: ModelSpec | None  # None for a solver player
    params: dict[str, Any] = field(default_factory=dict)
    spec: MethodSpec | None = None

    @classmethod
    def parse(
        cls,
        method: str,
        model: str,
        base_url: str | None,
        params: dict[str, Any],
        *,
        flags: str = "--",
        model_given: bool = True,
    ) -> Side:
        """`flags` starts the flags the values came from (`--`, `--opponent-`), named in a
        refusal of a bad model name or URL; `model_given` is False where `model` is the
        config's default, which a cross-model debate's own models then stand in for."""
        if is_solver_player(method):
            make_opponent(method.strip().lower())  # a bad epsilon:<p> fails here
            return cls(method.strip().lower(), None)
        try:
            spec = MethodSpec.parse(method, params)
        except UnknownMethodError:
            raise ValueError(
                f"unknown player {method!r}: a method ({', '.join(sorted(METHODS))}) or a "
                "solver player (optimal, random, epsilon:<p>)"
            ) from None
        try:
            named = ModelSpec.parse(spec.model or model, base_url, source=f"{flags}base-url")
        except ValueError as exc:
            raise ValueError(
                str(exc) if "base-url" in str(exc) else f"{flags}model: {exc}"
            ) from None
        # The spec names its model once: with the server the config gives it.
        side = cls(method, named, params, replace(spec, model=str(named)))
        called = side.models()
        if (
            named not in called
            and named.simulated
            and spec.model is None
            and not all(m.simulated for m in called)
        ):
            if model_given:
                # `--model sim-...` reads as "offline", but this debate calls its own models.
                raise ValueError(
                    f"cross-model debate calls the models in models= "
                    f"({'|'.join(map(str, called))}), not the model {named.name!r}; to run "
                    f"it on simulated models give --param 'models={named.name}|sim-random' "
                    "(any two sim-... models)"
                )
            # The default model is none of the debate's: its first model names the side
            # and its server (the one the debate's models share).
            side = cls(method, called[0], params, replace(spec, model=str(called[0])))
        for each in called:
            if each.simulated:
                check_simulated(each.name)
        return side

    def models(self) -> list[ModelSpec]:
        """Every model this player calls (each of `models=`; none for a solver),
        in the order its method names them."""
        if self.spec is None or self.model is None:
            return []
        if self.spec.per_agent:
            return [ModelSpec.parse(m) for m in self.spec.models(None)]
        return [self.model]

    @property
    def server_identity(self) -> str | None:
        """Its server as the run identity holds it; None for a solver player."""
        return None if self.model is None else self.model.server_identity()

    @property
    def name(self) -> str:
        """The player's name in records: the solver player, or `method@model`."""
        return self.method if self.model is None else f"{self.method}@{self.model}"


def parse_sides(config: Any) -> list[Side]:
    """The players a run config names, in `SIDES` order (the agent, then any opponent).

    A model given to a solver player is dropped with a warning (the run's identity
    leaves it out), never silently.
    """
    sides = []
    for key, prefix in SIDES:
        if key not in type(config).model_fields:
            continue
        side = Side.parse(
            getattr(config, key),
            getattr(config, f"{prefix}model"),
            getattr(config, f"{prefix}base_url"),
            getattr(config, f"{prefix}params"),
            flags=f"--{prefix.replace('_', '-')}",
            model_given=f"{prefix}model" in config.model_fields_set,
        )
        if side.model is None and f"{prefix}model" in config.model_fields_set:
            warnings.warn(
                f"--{prefix.replace('_', '-')}model {getattr(config, f'{prefix}model')!r} is "
                f"ignored: {side.method!r} is a solver player that calls no model (name a "
                "method to play on that model)",
                stacklevel=1,  # one place: Python says it once however often a run parses
            )
        sides.append(side)
    return sides


@dataclass
class Turn:
    """One decision of one player, as the arena records it.

    `move` is a legal move when `status` is "ok" or "fallback" (a seeded random legal
    move the method played after every answer failed, recorded, never silent), else None.
    """

    move: Any
    status: TurnStatus
    counts: Counts = field(default_factory=Counts)
    error: str | None = None
    # The method's full `Decision`, kept as the model: the log serialises it once, in
    # pydantic-core, with the episode.
    detail: Decision | dict[str, Any] | None = None


@runtime_checkable
class Policy(Protocol):
    """A player: `await policy.act(game, state, seed=...)` returns a `Turn`.

    A policy that draws randomness seeds it from `seed`, so the same episode seed gives
    the same moves.
    """

    name: str

    async def act(self, game: Game[Any, Any], state: Any, *, seed: int) -> Turn: ...


@dataclass
class SolverPolicy:
    """A solver-backed player: "optimal", "random" or "epsilon:<p>" (no model calls).

    It draws from the env's counter-based stream of the ply seed (what the env's
    built-in opponents draw from), so the same seed gives the same moves.
    """

    name: str

    def __post_init__(self) -> None:
        self._choose = make_opponent(self.name)

    async def act(self, game: Game[Any, Any], state: Any, *, seed: int) -> Turn:
        start = time.perf_counter()
        move = resolve_move(game, state, self._choose(game, state, EpisodeStream(seed, 0)))
        return Turn(move, "ok", Counts(latency_s=time.perf_counter() - start))


@dataclass
class MethodPolicy:
    """An LLM player: a `metanim.agents` method.

    Infrastructure errors become an "infrastructure_error" turn, never a move or a
    forfeit; `record_decisions` keeps the method's full decision record in the turn.
    """

    name: str
    method: Method
    record_decisions: bool = True
    #: Its prompts list the legal moves (`--list-moves`).
    list_moves: bool = False

    async def act(self, game: Game[Any, Any], state: Any, *, seed: int) -> Turn:
        decision, status, error = await decide(
            self.method, *game_problem(game, state, self.list_moves), seed
        )
        move = decision.move if decision is not None and status in ("ok", "fallback") else None
        if move is not None and not game.is_legal(state, move):
            # A method must hand back a legal move; anything else is a bug to surface,
            # not a move to repair (docs/architecture.md, "What a run never does").
            raise MoveError(f"method {self.name} returned an illegal move {move!r}")
        return Turn(
            move,
            status,  # type: ignore[arg-type]
            Counts.of(decision) if decision is not None else Counts(),
            error,
            _kept(decision) if decision is not None and self.record_decisions else None,
        )


async def decide(
    method: Method, problem: Any, state: Any, seed: int
) -> tuple[Decision | None, str, str | None]:
    """One decision and its status and error; an unreachable model is a status, never a
    move. The one place a method's answer or failure becomes what a record says."""
    try:
        decision = await method.decide(problem, state, seed=seed)
    except InfrastructureError as exc:
        return getattr(exc, "decision", None), "infrastructure_error", f"{exc.kind}: {exc}"
    return decision, decision.status, decision.error


def _kept(decision: Any) -> Decision | dict[str, Any]:
    """A decision as a move record keeps it: a `Decision` as it is (dumped once, with its
    episode's line); another method's record as its JSON form."""
    if isinstance(decision, Decision):
        return decision
    return decision.model_dump(mode="json", exclude={"move"})


# --------------------------------------------------------------- clients, builder
@dataclass(frozen=True)
class CallCarriage:
    """How a run's calls are carried, read once from its config: the server's profile
    (or "auto"), the API, streaming, and resends of calls that timed out after sending."""

    provider: str = "auto"
    api: ApiSetting = "auto"
    stream: bool | None = None
    resend_timeouts: int = 0


class ClientPool:
    """One client per model and server for the whole run, every client on one connection
    pool (`SharedConnections`), each with one concurrency limit that serves every
    episode. Simulated models with no server go to `sim_url`."""

    def __init__(
        self,
        sim_url: str | None,
        *,
        in_process: bool = False,
        max_concurrency: int | None,
        timeout_s: float | None,
        max_retries: int,
        backoff_s: float = 0.5,
        cache_path: str | None = None,
        carried: CallCarriage | None = None,
        items_in_flight: int = 0,
    ) -> None:
        carried = carried or CallCarriage()
        #: Calls in flight per simulated model when the run sets none (see `__call__`).
        self.sim_concurrency = max(64, items_in_flight)
        self.sim_url = sim_url
        self.in_process = in_process  # the simulated server runs in this process
        # Of a call's silence (None: each model's default); the server check takes at most
        # this or a minute.
        self.timeout_s = timeout_s if timeout_s is not None else 60.0
        # One response cache (a SQLite file) shared by every client of the run.
        self.cache = ResponseCache(cache_path) if cache_path else None
        self.provider = carried.provider
        self.kwargs: dict[str, Any] = {
            "max_concurrency": max_concurrency,
            "timeout_s": timeout_s,
            "max_retries": max_retries,
            "resend_timeouts": carried.resend_timeouts,
            "backoff_s": backoff_s,
            "cache": self.cache,
            "api": carried.api,
            "stream": carried.stream,
        }
        #: The run's cost cap, shared by every client (set before the first client is made).
        self.budget: CostBudget | None = None
        self.connections: SharedConnections | None = None  # made with the first client
        self.clients: dict[ModelSpec, TimedModel] = {}
        self.targets: dict[ModelSpec, ServerTarget] = {}
        self.detected: dict[ModelSpec, Detected] = {}

    def target(self, spec: ModelSpec) -> ServerTarget:
        """Where `spec`'s calls go, resolved once per run: the server check, the run
        header and the client all read this one."""
        if spec not in self.targets:
            self.targets[spec] = spec.target(self.sim_url)
        return self.targets[spec]

    def where(self, spec: ModelSpec) -> str:
        """The address `spec`'s calls go to, for a run header."""
        address = "|".join(self.target(spec).base_urls)
        if spec.needs_sim_server and self.in_process:
            return address + " (the simulated server, in-process)"
        return address

    def detect(self, spec: ModelSpec) -> Detected:
        """The provider profile of `spec`'s server: named (`--provider`), or detected once
        (the probe is cached per server; the run header and the client share it)."""
        if spec not in self.detected:
            target = self.target(spec)
            if self.provider != "auto":
                found = Detected(provider_named(self.provider), "named", target.base_urls[0])
            elif spec.simulated:
                found = Detected(PROVIDERS["sim"], "a simulated model", target.base_urls[0])
            else:
                found = detect_provider(target, timeout_s=min(self.timeout_s, 60.0))
            self.detected[spec] = found
        return self.detected[spec]

    def __call__(self, model: ModelSpec | str) -> TimedModel:
        spec = model if isinstance(model, ModelSpec) else ModelSpec.parse(model)
        if spec not in self.clients:
            kwargs = dict(self.kwargs)
            if kwargs["max_concurrency"] is None and spec.simulated:
                # The simulator has no slots to report and answers at once: as many calls
                # as the run has items in flight (at least 64), so that its calls in
                # flight are never capped below its items.
                kwargs["max_concurrency"] = self.sim_concurrency
            # here: aiohttp loads with a client
            from metanim.llm import OpenAIChatClient, SharedConnections

            if self.connections is None:
                self.connections = SharedConnections()
            client = OpenAIChatClient(
                spec.name,
                target=self.target(spec),
                budget=self.budget,
                connections=self.connections,
                **kwargs,
            )
            client.detected = self.detect(spec)
            self.clients[spec] = TimedModel(client)
        return self.clients[spec]

    def streamed(self) -> int:
        """Reply pieces received in streams so far, every client (tokens arriving)."""
        return sum(c.inner.streamed for c in self.clients.values())  # type: ignore[attr-defined]

    def report(self) -> dict[str, dict[str, Any]]:
        """What each model's calls went out as, for the run's summary: the provider
        profile and how it was found, cap and field, temperature, timeout, streaming,
        the API, and what was adapted after a refusal."""
        out = {}
        for spec, timed in self.clients.items():
            client: OpenAIChatClient = timed.inner  # type: ignore[assignment]
            out[str(spec)] = call_settings(client)
        return out

    def waits(self) -> list[str]:
        """What the calls of every client wait for now, when a wait is long
        (`OpenAIChatClient.waits`)."""
        return [w for client in self.clients.values() for w in client.inner.waits()]  # type: ignore[attr-defined]

    def failed_attempts(self) -> Counter[str]:
        """Failed call attempts of every client so far, by kind (retried ones included)."""
        total: Counter[str] = Counter()
        for client in self.clients.values():
            total.update(client.inner.failed_attempts)  # type: ignore[attr-defined]
        return total

    async def aclose(self) -> None:
        for client in self.clients.values():
            await client.inner.aclose()  # type: ignore[attr-defined]
        if self.connections is not None:
            await self.connections.aclose()
        if self.cache is not None:
            self.cache.close()


def build_player(
    side: Side,
    clients: ClientPool,
    *,
    defaults: dict[str, Any] | None = None,
    record: bool = True,
    list_moves: bool = False,
) -> Policy:
    """The one way a player is made: a solver policy, or a method over `clients`.

    `defaults` (the run's call options, re-asks and failure policy) come first; the
    spec's and the config's parameters override them. `list_moves`: a method's prompts
    list the legal moves.
    """
    if side.spec is None or side.model is None:
        return SolverPolicy(side.method)
    by_text = dict(zip(side.spec.models(None), side.models(), strict=True))
    method = build_method(
        side.spec, client_factory=lambda t: clients(by_text[t]), defaults=defaults
    )
    return MethodPolicy(
        name=side.name, method=method, record_decisions=record, list_moves=list_moves
    )


def describe(side: Side, clients: ClientPool, *, default: bool = False) -> str:
    """Who a side is and where its calls go, for a run header (no hidden default model)."""
    if side.model is None:
        return f"{side.method} (solver, no model)"
    where = [f"{m.name} at {clients.where(m)}" for m in side.models()]
    return f"{side.method} on " + " and ".join(where) + (" (default model)" if default else "")


def call_settings(client: OpenAIChatClient, options: Any = None) -> dict[str, Any]:
    """How `client`'s calls go out (see `ClientPool.report`)."""
    defaults = client.defaults
    detected = client.detected
    temperature = (
        "the server's default" if defaults.temperature == "server" else "as each method asks"
    )
    if "temperature" in client.adapted.omit or (
        options is not None and "temperature" in options.omit
    ):
        temperature = "the server's default"
    return {
        "provider": client.provider.kind,
        "detected": detected.reason if detected is not None else "not detected",
        "model_defaults": defaults.why,
        "cap_default": defaults.cap,
        "cap_field": client.adapted.cap_field or client.provider.cap_field,
        "temperature": temperature,
        "timeout_s": client.timeout_s,
        "stream": client.stream,
        "api": client.api,
        "adapted": list(client.adapted.notes),
    }


def header_line(spec: ModelSpec, clients: ClientPool, options: Any) -> str:
    """One run-header line on how `spec`'s calls go out: the server's profile and the
    model's defaults, as they will be sent."""
    client: OpenAIChatClient = clients(spec).inner  # type: ignore[assignment]
    s = call_settings(client, options)
    cap = options.max_tokens
    if cap == "auto":
        cap_text = f"cap auto = {s['cap_default']} ({s['model_defaults']})"
    else:
        cap_text = f"cap {cap}" if cap is not None else "the server's own cap"
    field = options.cap_field or s["cap_field"]
    effort = options.reasoning_effort
    parts = [
        f"{spec.name}: provider {s['provider']} ({s['detected']})",
        f"{cap_text} sent as {field}",
        f"temperature {s['temperature']}",
        f"timeout {s['timeout_s']:g} s of silence",
        "streamed" if s["stream"] else "not streamed",
    ]
    if s["api"] != "chat":
        parts.append("the Responses API")
    if effort is not None:
        parts.append(
            f"reasoning effort {effort}"
            + (f" (ignored by {s['provider']})" if client.provider.effort == "ignored" else "")
        )
    if options.omit:
        parts.append("left out: " + ", ".join(options.omit))
    return "; ".join(parts)


# --------------------------------------------------------------- call timing
@dataclass
class CallTimes:
    """Start and end times of every model call made inside one episode or decision."""

    spans: list[tuple[float, float]] = field(default_factory=list)

    def chain(self) -> int:
        """Length of the longest chain of calls each starting after the previous ended.

        With a fixed per-call latency this is the critical path in calls: no schedule,
        however concurrent, can finish the episode in fewer sequential latencies.
        """
        spans = sorted(self.spans)
        best: list[int] = []
        for i, (start, _) in enumerate(spans):
            prior = [best[j] for j in range(i) if spans[j][1] <= start]
            best.append(1 + max(prior, default=0))
        return max(best, default=0)


_CALL_TIMES: contextvars.ContextVar[CallTimes | None] = contextvars.ContextVar(
    "metanim_arena_call_times", default=None
)


def track_calls() -> CallTimes:
    """Start recording call spans in the current task (child tasks inherit the recorder)."""
    times = CallTimes()
    _CALL_TIMES.set(times)
    return times


class TimedModel:
    """A `ChatModel` wrapper that records each call's span into the current `CallTimes`."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner

    @property
    def model(self) -> str:
        return self.inner.model

    async def chat(self, messages: list[Message], **kwargs: Any) -> Completion:
        start = time.perf_counter()
        try:
            return await self.inner.chat(messages, **kwargs)
        finally:
            times = _CALL_TIMES.get()
            if times is not None:
                times.spans.append((start, time.perf_counter()))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
