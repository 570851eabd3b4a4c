"""Checks made before the first episode: is every player something the run can use?

A typo'd `sim-...` name, a method parameter of the wrong type (`temperature=hot`), a
server that does not answer and a key the server refuses would otherwise turn every
episode into an infrastructure error, one retry loop at a time. Each is refused here
with one line: a `ValueError` (the user's to fix, exit code 2), an `InfrastructureError`
of kind `auth` (a refused key, exit code 2) or `Unreachable` (exit code 3).
"""

from __future__ import annotations

import functools
import http.client
import inspect
import os
import typing
import urllib.error
import urllib.request
from collections.abc import Iterable
from typing import Any

from metanim.arena._policies import is_solver_spec

#: How long a server gets to answer `GET /models` before the run is refused.
PREFLIGHT_TIMEOUT_S = 10.0
_AGENT = "metanim-preflight"


def player_models(method: str, model: str, params: dict[str, Any]) -> list[str]:
    """Every `model[@url]` a player calls, after checking its method's parameters.

    Raises `ValueError` for an unknown method, an unknown parameter, a parameter value of
    the wrong type, or a `sim-...` model the simulator would reject.
    """
    from metanim.agents.debate import CrossModel
    from metanim.agents.registry import METHODS, check_parameters, parse_spec

    if is_solver_spec(method):
        from metanim.envs.opponents import make_opponent

        make_opponent(method.strip().lower())  # a bad epsilon:<p> fails here
        return []
    name, spec_model, spec_params = parse_spec(method)
    merged = {**spec_params, **params}
    check_parameters(name, merged, method)
    cls, _ = METHODS[name]
    if cls is CrossModel:
        models = str(merged.pop("models", "") or "").split("|")
        models = [m.strip() for m in models if m.strip()]
        if len(models) < 2:
            raise ValueError(f"cross-model debate {method!r} needs models=a|b")
        online = [m for m in models if not m.startswith("sim-")]
        if model.startswith("sim-") and model not in models and online:
            # `--model sim-...` reads as "offline", but this debate calls its own models.
            raise ValueError(
                f"cross-model debate calls the models in models= ({'|'.join(models)}), not "
                f"the model {model!r}; to run it on simulated models give "
                f"--param 'models={model}|sim-random' (any two sim-... models)"
            )
    else:
        models = [spec_model or model]
    for key, value in merged.items():
        _check_type(cls, key, value, method)
    for spec in models:
        _check_sim_name(spec.partition("@")[0].strip())
    return models


def _check_sim_name(model: str) -> None:
    if not model.startswith("sim-"):
        return
    from metanim.llm.sim import ModelSpecError, parse_model_spec

    try:
        parse_model_spec(model)
    except ModelSpecError as exc:
        raise ValueError(f"simulated model {model!r}: {exc}") from None


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """Parameter annotations of a method class and the bases it forwards `**kwargs` to."""
    out: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        init = vars(klass).get("__init__")
        if init is None:
            continue
        try:
            hints = typing.get_type_hints(init)
        except Exception:  # an annotation that cannot be resolved: not checked
            continue
        for param in inspect.signature(init).parameters.values():
            if param.name in hints and param.kind is param.KEYWORD_ONLY:
                out[param.name] = hints[param.name]
    return out


def _check_type(cls: type, key: str, value: Any, spec: str) -> None:
    from pydantic import TypeAdapter, ValidationError

    hint = _hints(cls).get(key)
    if hint is None:
        return
    try:
        TypeAdapter(hint).validate_python(value, strict=isinstance(value, str))
    except ValidationError as exc:
        msg = exc.errors()[0]["msg"]
        raise ValueError(
            f"method parameter {key}={value!r} of {spec!r}: {msg} "
            f"(expected {getattr(hint, '__name__', hint)})"
        ) from None
    except Exception:  # a type pydantic cannot check (a protocol): not checked
        return


def check_servers(
    endpoints: Iterable[tuple[str, str | None]], *, skip: str | None, api_key: str | None = None
) -> None:
    """Ask each server (`GET /models`) once, so a dead server or a refused key stops the run.

    `endpoints` are (model, base_url) pairs; `skip` is the in-process simulated server
    (it is ours and is up). A server that answers anything but 401/403 passes: many
    OpenAI-compatible servers do not list models.
    """
    from metanim.llm._types import InfrastructureError
    from metanim.llm.client import DEFAULT_BASE_URL
    from metanim.util.edge import Unreachable

    key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
    seen: set[str] = set()
    for model, base_url in endpoints:
        url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        if url in seen or url == (skip or "").rstrip("/"):
            continue
        seen.add(url)
        # One plain GET from the standard library: the openai SDK did the same check in
        # ~0.8 s of import and client set-up, a third of a short run's wall time.
        request = urllib.request.Request(
            f"{url}/models",
            # urllib's own User-Agent is refused by some web firewalls (a 403 that would
            # read as a refused key).
            headers={"Authorization": f"Bearer {key or 'no-key-set'}", "User-Agent": _AGENT},
        )
        try:
            with urllib.request.urlopen(request, timeout=PREFLIGHT_TIMEOUT_S):
                pass
        except urllib.error.HTTPError as exc:
            exc.close()
            if exc.code in (401, 403):
                raise InfrastructureError(
                    f"the server {url} refused the API key (HTTP {exc.code}); "
                    "check OPENAI_API_KEY; nothing was run",
                    kind="auth",
                    status=exc.code,
                ) from None
            # Any other status: it answered (many OpenAI-compatible servers list no models).
        # OSError covers refused and reset connections (URLError is one); HTTPException a
        # reply that is not HTTP (some other service on the port); ValueError a URL
        # urllib cannot use.
        except (OSError, http.client.HTTPException, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                raise Unreachable(
                    f"the server {url} (model {model!r}) did not answer within "
                    f"{PREFLIGHT_TIMEOUT_S:.0f} s; nothing was run"
                ) from None
            cause = type(reason).__name__ if isinstance(reason, BaseException) else str(reason)
            raise Unreachable(
                f"cannot connect to the server {url} (model {model!r}): {cause}; "
                "is it running? nothing was run"
            ) from None


Player = tuple[str, str, str | None, dict[str, Any]]  # method, model, base_url, params


def preflight_players(players: Iterable[Player]) -> bool:
    """Check every player's method, parameters and `sim-*` names (no network).

    Returns whether any player calls a `sim-*` model with no server URL (it then needs
    the simulated server), counting every model a player calls (both of a cross debate).
    """
    needed = False
    for method, model, base_url, params in players:
        for spec in player_models(method, model, params):
            name, _, url = spec.partition("@")
            needed |= name.strip().startswith("sim-") and not (url.strip() or base_url)
    return needed


def preflight_servers(players: Iterable[Player], sim_url: str | None) -> None:
    """Check every server the players call answers and takes the key (see `check_servers`).

    `sim-*` models without a URL go to `sim_url`; the in-process server is skipped.
    """
    from metanim.arena._players import sim_url_from_env

    endpoints = []
    for method, model, base_url, params in players:
        for spec in player_models(method, model, params):
            name, _, url = spec.partition("@")
            name, url = name.strip(), url.strip() or base_url
            if url is None and name.startswith("sim-"):
                url = sim_url
            endpoints.append((name, url))
    in_process = None if sim_url_from_env() else sim_url
    check_servers(endpoints, skip=in_process)


def check_listing(game: Any, *, simulated: bool, solver: bool, fallback: str) -> None:
    """Refuse a game too large for a player that lists its moves (`SizeLimitError`):
    the simulated model, a solver player, the random fallback. Two real models may play
    a game of any number of actions: they name their moves in text."""
    from metanim.games import check_listable

    if simulated:
        check_listable(game, "the simulated model")
    if solver:
        check_listable(game, "a solver player (optimal, random, epsilon)")
    if fallback == "random":
        check_listable(game, "on_failure='random' (its fallback move)")
