"""The canonical identity of a run: what it plays or decides, never how it is run.

One function for every consumer: a run's config hash (file names and resume), the
report's grouping (`metanim report` never pools two identities into one row) and its
labels. The identity is the config minus the run settings (`RUN_SETTINGS`: concurrency, budgets,
results folder, progress, ...; plus `episodes`, `repeats` and `limit`, so a longer run
resumes the same log). Every other field is part of it, so a field a later version adds
to a config (call options, structured output, prompt versions) joins the identity
without a change here. The identity is taken from parsed values, here only: one run
spelled two ways (a method's alias, a default written out, parameters in another order,
a game by preset or by parameters, replicas in another order) is one identity.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import metanim.games
from metanim.agents import MethodSpec, canonical_method, explicit_params, parse_spec, prompts
from metanim.envs import is_solver_player
from metanim.games.settings import canonical_key
from metanim.llm import ModelSpec
from metanim.records._episode import EpisodeRecord
from metanim.records._log import first_decision, iter_log

#: Config fields that say how a run is run, not what it plays or decides (its name, and
#: every run setting but the seed): a rerun with another concurrency or budget resumes
#: the same log. `metanim.arena.RunConfig` declares exactly these besides the seed and
#: the call options (a test holds the two together).
RUN_SETTINGS = frozenset(
    {
        "name",
        "concurrency",
        "call_concurrency",
        "timeout_s",
        "max_retries",
        "max_calls",
        "budget_tokens",
        "max_cost_usd",
        "results_dir",
        "record_decisions",
        "cache",
        "rerun_failed",
        "progress",
        "keep_going",
        # how calls are phrased and carried, not what they ask: the server's dialect
        "cap_field",
        "provider",
        "api",
        "stream",
        "resend_timeouts",
    }
)
#: Fields that only say how much to run: a rerun with more of them resumes the same log.
AMOUNT_ONLY = frozenset({"episodes", "repeats", "limit"})
NOT_IDENTITY = RUN_SETTINGS | AMOUNT_ONLY
#: The two sides of a run: (method field, prefix of its model/params/base_url fields).
SIDES = (("method", ""), ("opponent", "opponent_"))


def _file_digest(path: str) -> str:
    p = Path(path)
    # A report may read a log whose dataset file has moved: keep its name then.
    return hashlib.sha256(p.read_bytes()).hexdigest()[:16] if p.is_file() else path


def current_prompt_versions(disguised: bool = False, list_moves: bool = False) -> dict[str, str]:
    """The prompt versions this code sends: the methods' templates and the game prompts
    (marked when they list the legal moves, `metanim.games.game_prompt_version`), and
    the disguised variant's words when a game is shown disguised."""
    # Read when asked, not at import: the versions are module constants a test may change.
    versions = {
        "method": prompts.METHOD_PROMPT_VERSION,
        "game": metanim.games.game_prompt_version(list_moves, metanim.games.PROMPT_VERSION),
    }
    if disguised:
        versions["disguise"] = metanim.games.DISGUISE_VERSION
    return versions


def is_disguised(config: Mapping[str, Any]) -> bool:
    """Whether a tournament's game settings (`NAME:JSON`) show any game disguised (an
    evaluation's dataset enters by its digest, which covers its prompts)."""
    for setting in config.get("games") or []:
        _, sep, raw = str(setting).partition(":")
        try:
            params = json.loads(raw) if sep else {}
        except ValueError:
            continue
        if isinstance(params, dict) and params.get("disguise") is True:
            return True
    return False


Servers = Mapping[str, str | None]


def solver_name(spec: str) -> str:
    """A solver player written one way: lower case, `epsilon:<p>` with p as `%g`
    (`epsilon:0.50` is `epsilon:0.5`)."""
    name = spec.strip().lower()
    if name.startswith("epsilon:"):
        try:
            return f"epsilon:{float(name.split(':', 1)[1]):g}"
        except ValueError:  # refused before any run; a log read back keeps its text
            return name
    return name


def _side_model(config: Mapping[str, Any], key: str, prefix: str) -> str | None:
    """The model a side calls: its method spec's own (`react:gpt-4o`), else its model field."""
    try:
        own = parse_spec(str(config[key]))[1]
    except ValueError:  # a method this code does not know (a log read back): its field
        own = None
    model = own or config.get(prefix + "model")
    return None if model is None else str(model)


def side_servers(config: Mapping[str, Any], *, as_listed: bool = False) -> dict[str, str | None]:
    """Each side's server as it enters the identity (`ModelSpec.server_identity`: replicas
    sorted), by its method field; None for a solver side (optimal, random, epsilon), ""
    for a model side whose config names no model. `as_listed` keeps replicas in the order
    given (the identity of logs keyed by the config as spelled, see `run_identity`)."""
    out: dict[str, str | None] = {}
    for key, prefix in SIDES:
        if key not in config:
            continue
        model = _side_model(config, key, prefix)
        if is_solver_player(str(config[key])):
            out[key] = None
        elif model is None:
            out[key] = ""
        else:
            spec = ModelSpec.parse(model, config.get(prefix + "base_url"))
            out[key] = spec.server_identity(as_listed=as_listed)
    return out


def _canonical_model(text: str) -> str:
    """A model text with its name canonical (`ModelSpec.canonical_name`) and its server."""
    spec = ModelSpec.parse(text)
    return spec.canonical_name + (f"@{spec.server_identity()}" if spec.urls else "")


def _canonical_side(body: dict[str, Any], key: str, prefix: str) -> None:
    """A model side of an identity spelled one way: the method's registry name and every
    parameter it takes (inline, given and declared defaults: `canonical_method`), the
    model's canonical name. A spec this code cannot read (an old log's) stays as written."""
    try:
        spec = MethodSpec.parse(str(body[key]), dict(body.get(prefix + "params") or {}))
        model = spec.model or body.get(prefix + "model")
        name, params = canonical_method(spec.name, spec.params)
        if "models" in params:
            params["models"] = "|".join(_canonical_model(m) for m in spec.models(None))
        # The name alone: its server enters as `servers` says (read once, warned once).
        name_only = None if model is None else str(model).partition("@")[0].strip()
        canonical = ModelSpec(name_only).canonical_name if name_only else None
    except ValueError:
        return
    body[key], body[prefix + "params"] = name, params
    if canonical is not None:
        body[prefix + "model"] = canonical


def _canonical_games(settings: list[Any]) -> list[str]:
    """Game settings by their canonical keys (`metanim.games.settings.canonical_key`: one
    resolved game, one key), each once, sorted: an episode's seed and id come from its
    setting's key and index, never from the order the settings are listed in."""
    return sorted({canonical_key(str(setting)) for setting in settings})


def uses_prompts(config: Mapping[str, Any], servers: Servers | None = None) -> bool:
    """Whether any side of the run prompts a model (a solver-only run has no prompt)."""
    servers = side_servers(config) if servers is None else servers
    return any(server is not None for server in servers.values())


def run_identity(
    config: Mapping[str, Any],
    prompt_versions: Mapping[str, str] | None = None,
    *,
    servers: Servers | None = None,
    as_spelled: bool = False,
) -> dict[str, Any]:
    """The identifying fields of a run config (a `model_dump(mode="json")` or config.json).

    One run is one identity however it is spelled: a model side enters as its method's
    registry name with every parameter it takes (inline in the spec, given, and its
    declared defaults: `sc`, `sc:n=5` and `self_consistency` with `n=5` are one), its
    model's canonical name (a simulated model's parameters sorted) and its server (its
    replicas sorted: `servers`, from `side_servers` unless the caller has them); a game
    setting enters by its canonical key (`fibonacci` is `fibonacci-20`). A solver side
    (optimal, random, epsilon) drops its unused model, parameters and server; a dataset
    enters by content digest, not by path. `prompt_versions` (the run's prompt
    templates, see `current_prompt_versions`; the report reads them from the log) join
    the identity, so a prompt change starts a new log rather than resuming into an old
    one. `list_moves` enters only when on (prompts that list the legal moves): a run
    without the list keeps the identity it had before the option existed.

    `as_spelled` takes method, parameters, model and games as the config writes them and
    replicas in the order listed: the identity of logs whose file names carry that hash,
    which a run resumes when no log carries its own (`metanim.arena`).
    """
    body = {k: v for k, v in config.items() if k not in NOT_IDENTITY}
    # Prompts that list the legal moves are another run; prompts without the list keep
    # the identity of every run and log written before the option existed.
    if not body.get("list_moves"):
        body.pop("list_moves", None)
    if servers is None:
        servers = side_servers(body, as_listed=as_spelled)
    for method_key, prefix in SIDES:
        if method_key not in body:
            continue
        if servers[method_key] is None:
            for name in ("model", "params", "base_url"):
                body.pop(prefix + name, None)
            if not as_spelled:
                body[method_key] = solver_name(str(body[method_key]))
            continue
        if not as_spelled:
            _canonical_side(body, method_key, prefix)
        if prefix + "model" in body:
            body[prefix + "base_url"] = servers[method_key]
    if "games" in body and not as_spelled:
        body["games"] = _canonical_games(list(body["games"]))
    if "dataset" in body:
        body["dataset"] = [_file_digest(str(p)) for p in body["dataset"]]
    if prompt_versions:
        body["prompt_versions"] = dict(prompt_versions)
    return body


def config_identity(
    config: Mapping[str, Any], servers: Servers | None = None, *, as_spelled: bool = False
) -> dict[str, Any]:
    """The identity of a run about to be run by this code (its current prompt versions);
    `as_spelled` as `run_identity`."""
    servers = side_servers(config, as_listed=as_spelled) if servers is None else servers
    versions = (
        current_prompt_versions(is_disguised(config), bool(config.get("list_moves")))
        if uses_prompts(config, servers)
        else None
    )
    return run_identity(config, versions, servers=servers, as_spelled=as_spelled)


def identity_hash(identity: Mapping[str, Any]) -> str:
    """The 12-hex-digit hash of an identity (the suffix of a run's file names)."""
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:12]


def _spec(method: str, params: Mapping[str, Any] | None) -> str:
    # The parameters a method does not fix or default to: `sc`, not every default of it.
    shown = explicit_params(method, dict(params or {}))
    if not shown:
        return method
    items = ",".join(
        f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in sorted(shown.items())
    )
    return f"{method}[{items}]"


def identity_label(identity: Mapping[str, Any]) -> str:
    """A short human label: method[params] · model, and vs opponent[params] · model."""
    parts = []
    for method_key, prefix in SIDES:
        if method_key not in identity:
            continue
        side = _spec(str(identity[method_key]), identity.get(prefix + "params"))
        model = identity.get(prefix + "model")
        if model:
            side += f" · {model}"
        parts.append(side)
    return " vs ".join(parts) if parts else "?"


def distinguishing_labels(identities: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """A label per identity hash, unique among them.

    Identities whose short labels collide get the fields they differ in appended
    (`seat=second`, `seed=1`, ...), so two rows of a table never read the same.
    """
    base = {h: identity_label(i) for h, i in identities.items()}
    out = {}
    for h, label in base.items():
        twins = [g for g, other in base.items() if other == label]
        if len(twins) == 1:
            out[h] = label
            continue
        keys = sorted({k for g in twins for k in identities[g]})
        differ = [
            k
            for k in keys
            if len({json.dumps(identities[g].get(k), sort_keys=True) for g in twins}) > 1
        ]
        extra = ", ".join(
            f"{k}={json.dumps(identities[h].get(k), sort_keys=True, separators=(',', ':'))}"
            for k in differ
        )
        out[h] = f"{label} ({extra or h})"
    return out


def _prompt_versions(decision: Mapping[str, Any] | None) -> dict[str, str] | None:
    """The prompt versions a decision record kept (None when none was kept)."""
    if decision is None or not decision.get("prompt_version"):
        return None
    return {
        "method": str(decision["prompt_version"]),
        "game": str(decision.get("game_prompt_version", "")),
    }


def log_identity(config: Mapping[str, Any], path: str | Path, kind: str) -> dict[str, Any]:
    """The run identity of a log read back: its config (minus run settings; the dataset
    apart: it is a report's column, not its row) with the prompt versions of its first
    kept decision. A log without its config is known by its method (its first line's)."""
    decision = first_decision(path)
    if not config:
        if kind == "episodes":
            first = next(iter_log(path), None)
            name = first.agent if isinstance(first, EpisodeRecord) else None
        else:
            name = (decision or {}).get("method")
        return {"method": str(name or "?")}
    identity = run_identity(config, _prompt_versions(decision))
    identity.pop("dataset", None)
    return identity
