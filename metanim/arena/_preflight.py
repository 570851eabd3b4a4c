"""Everything checked before the first item, in one place.

A typo'd `sim-...` name or a method parameter of the wrong type is refused when a
`Side` is parsed; here are the rest: a cost cap over an unpriced model, a game too
large for whatever must list its moves, and, once the players' servers are known, a
server that does not answer or a key it refuses. Each is one line: a `ValueError` (the
user's to fix, exit code 2), an `InfrastructureError` of kind `auth` (a refused key,
exit code 2) or `Unreachable` (exit code 3).
"""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from metanim.arena._players import ClientPool, Side
from metanim.games import Game, check_listable
from metanim.llm import (
    PROVIDERS,
    InfrastructureError,
    ModelSpec,
    PriceTable,
    detect_provider,
    structured_output_for,
)
from metanim.util import Unreachable, interruptible

_AGENT = "metanim-preflight"


def refuse_unpriced(
    max_cost_usd: float | None, sides: Iterable[Side], provider: str = "auto"
) -> None:
    """Refuse a cost cap over a model the price table does not know.

    An unpriced model's cost is unknown, so the cap could not bound it. `sim-*` models are
    priced at 0 in the shipped table; a self-hosted server (llama.cpp, vLLM, SGLang,
    Ollama: named by `provider` or detected) bills nothing.
    """
    if max_cost_usd is None:
        return
    table = PriceTable.load()
    for side in sides:
        for model in side.models():
            if table.is_priced(model.name):
                continue
            profile = (
                PROVIDERS[provider]
                if provider != "auto"
                else detect_provider(model.target(None)).provider
            )
            if not profile.self_hosted:
                raise ValueError(
                    f"--max-cost-usd is set but model {model.name!r} has no price, so its "
                    "cost is unknown and the cap could not bound it; add its "
                    "price to a JSON file named by METANIM_PRICES (same shape as "
                    "metanim/llm/prices.json)"
                )


# A run config (`RunConfig`, which imports this module): any pydantic model with the
# `structured_output` field.
C = TypeVar("C", bound=BaseModel)


def resolve_structured_output(config: C, sides: Sequence[Side]) -> tuple[C, str]:
    """`config` with `structured_output` "auto" replaced by the mode its servers take, and
    what the run header says about it.

    The schema is sent where every real model's server says it constrains output
    (`metanim.llm.structured_output_for`: llama.cpp, vLLM, SGLang); one hosted API, unknown
    server or failed probe among them makes it `off` for the run (a run has one mode: the
    header names the server, and `--structured-output json_schema` sends it everywhere).
    Simulated models ignore the schema and solver players make no call: neither decides.
    A run of simulated models alone gets `off`. Any other setting is kept as asked.
    """
    if config.structured_output != "auto":
        return config, f"{config.structured_output} (as asked)"
    real = [m for side in sides for m in side.models() if not m.simulated]
    named = getattr(config, "provider", "auto")
    if not real:
        mode, reason = "off", "simulated models take no schema"
    elif named != "auto":
        mode = PROVIDERS[named].structured_auto
        reason = f"the provider named, {named}, " + (
            "constrains output" if mode != "off" else "is not known to constrain output"
        )
    else:
        choices = [structured_output_for(m.target(None)) for m in real]
        refused = next((c for c in choices if not c.constrains), None)
        if refused is None:
            mode = choices[0].mode
            reason = "; ".join(dict.fromkeys(c.reason for c in choices))
        else:
            mode, reason = "off", refused.reason
            if any(c.constrains for c in choices):
                reason += " (--structured-output json_schema sends the schema to every server)"
    return config.model_copy(update={"structured_output": mode}), f"{mode} (auto: {reason})"


def check_call_settings(config: Any, sides: Sequence[Side]) -> None:
    """Refuse, before the first call, a call setting a model's server is documented to
    refuse or ignore (one line naming the setting, the server and the fix): a cap field it
    does not read, a structured-output mode it refuses, chat completions for a model
    served only by the Responses API."""
    field = getattr(config, "cap_field", "auto")
    mode = getattr(config, "structured_output", "off")
    api = getattr(config, "api", "auto")
    if field == "auto" and mode in ("off", "tools") and api != "chat":
        return  # nothing any profile refuses: no server is asked
    for side in sides:
        for model in side.models():
            if model.simulated:
                continue
            named = getattr(config, "provider", "auto")
            profile = (
                PROVIDERS[named]
                if named != "auto"
                else detect_provider(model.target(None)).provider
            )
            if field != "auto" and field not in profile.takes_caps:
                raise ValueError(
                    f"--cap-field {field}: {profile.kind} reads the completion cap only as "
                    f"{' or '.join(profile.takes_caps)} ({profile.source}); drop --cap-field"
                )
            if mode in profile.refuses_modes:
                raise ValueError(
                    f"--structured-output {mode}: {profile.kind} refuses it ({profile.source}); "
                    "use --structured-output off or tools"
                )
            if api == "chat" and (profile.defaults(model.name).api == "responses"):
                raise ValueError(
                    f"--api chat: {model.name} is served only by the Responses API; drop "
                    "--api (auto picks it) or give --api responses"
                )


def prepare_run(config: C, sides: Sequence[Side]) -> tuple[C, str]:
    """Everything checked of a run's config before anything is planned: structured output
    resolved (`resolve_structured_output`: the config returned holds the mode, and what
    the header says of it), a cost cap over an unpriced model refused
    (`refuse_unpriced`), and call settings a server refuses refused
    (`check_call_settings`)."""
    resolved, note = resolve_structured_output(config, sides)
    refuse_unpriced(
        getattr(resolved, "max_cost_usd", None), sides, getattr(resolved, "provider", "auto")
    )
    check_call_settings(resolved, sides)
    return resolved, note


def check_listing(
    game: Game[Any, Any], *, simulated: bool, solver: bool, fallback: str, listed: bool = False
) -> None:
    """Refuse a game too large for what lists its moves (`SizeLimitError`): the
    simulated model, a solver player, the random fallback, a prompt that lists the legal
    moves (`listed`, `--list-moves`). Two real models may play a game of any number of
    actions: they name their moves in text."""
    if listed:
        check_listable(game, "--list-moves (a prompt that lists the legal moves)")
    if simulated:
        check_listable(game, "the simulated model")
    if solver:
        check_listable(game, "a solver player (optimal, random, epsilon)")
    if fallback == "random":
        check_listable(game, "on_failure='random' (its fallback move)")


def check_servers(models: Iterable[ModelSpec], clients: ClientPool) -> None:
    """Ask each server (`GET /models`) once, so a dead server or a refused key stops the run.

    Each model's server is the one `clients` resolved for it; the in-process simulated
    server is ours and is up, so it is not asked. A server that answers anything but
    401/403 passes: many OpenAI-compatible servers do not list models. A key no header
    can carry is a `ValueError`, before anything is sent.
    """
    seen: set[str] = set()
    skip = clients.sim_url if clients.in_process else None
    for model in models:
        target = clients.target(model)
        for url in target.base_urls:
            if url not in seen and url != skip:
                seen.add(url)
                _check_server(model, target.models_url(url), url, target.headers, clients.timeout_s)


def _check_server(
    model: ModelSpec, listing: str, url: str, headers: dict[str, str], timeout_s: float
) -> None:
    # One plain GET from the standard library: no client or SDK to set up for it.
    # urllib's own User-Agent is refused by some web firewalls (a 403 that would read as
    # a refused key).
    request = urllib.request.Request(listing, headers={**headers, "User-Agent": _AGENT})
    try:
        with interruptible(), urllib.request.urlopen(request, timeout=timeout_s):
            pass
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code in (401, 403):
            raise InfrastructureError(
                f"the server {url} refused the API key (HTTP {exc.code}); "
                f"check {model.key_env}; nothing was run",
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
                f"the server {url} (model {model.name!r}) did not answer within "
                f"{timeout_s:g} s (--timeout-s); nothing was run"
            ) from None
        cause = type(reason).__name__ if isinstance(reason, BaseException) else str(reason)
        raise Unreachable(
            f"cannot connect to the server {url} (model {model.name!r}): {cause}; "
            "is it running? nothing was run"
        ) from None
