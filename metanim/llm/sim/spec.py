"""Simulated model names: `sim-<policy>[:key=value,key=value,...]`.

Examples: `sim-optimal`, `sim-random`, `sim-biased:heuristic=max_take,p=0.8`,
`sim-conform:self=1,peer=2`, `sim-faulty:malformed=0.3,illegal=0.2,http429=0.3`.
Every policy accepts the fault parameters; `sim-faulty` is the optimal policy with
faults. The full grammar is in docs/simulated_server.md.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

POLICIES = ("optimal", "random", "biased", "conform", "faulty")
HEURISTICS = ("max_take", "min_take", "first", "last")

# Parameter -> (type, default). Rates are probabilities per request (HTTP faults) or
# per choice (answer faults); `burst429=k` fails the first k attempts of each distinct
# request body, so retries are exercised deterministically.
_PARAMS: dict[str, tuple[type, Any]] = {
    "heuristic": (str, "max_take"),
    "p": (float, 1.0),
    "otherwise": (str, "optimal"),
    "self": (float, 1.0),
    "peer": (float, 1.0),
    "base": (str, "optimal"),
    "noise": (float, 0.0),
    # How any policy reads a debate: `none` (a fresh draw from its prior every round) or
    # `consensus` (keep an answer a peer shares, else draw from the prior: seed 000 Eq. 1).
    "read": (str, "none"),
    # Prompt sensitivity: with `cue` in its instructions a biased agent plays its heuristic
    # with probability `cue_p` instead of `p`; its self-generated texts carry the cue with
    # probability `insight` (at T = 0.7).
    "cue": (str, ""),
    "cue_p": (float, None),
    # cue_in_prompt=1: the game prompt counts as instructions, so a cue word in it (the
    # game's name: "Fibonacci") cues the agent; its disguised prompt names no game.
    "cue_in_prompt": (int, 0),
    "insight": (float, 0.0),
    # spread=1: a cued agent's reasoning names its cue, and a peer's argument (or an
    # anonymized opinion) that names it cues its reader too (arguments, not votes, persuade).
    "spread": (int, 0),
    # AceMAD reports: confidence on the own answer and how the peers' belief is predicted.
    "conf": (float, 0.8),
    "predict": (str, "debate"),
    "malformed": (float, 0.0),
    "illegal": (float, 0.0),
    "http429": (float, 0.0),
    "http500": (float, 0.0),
    "quota": (float, 0.0),
    "burst429": (int, 0),
    "burst500": (int, 0),
    "latency": (float, 0.0),
}
_RATES = ("p", "noise", "insight", "conf", "malformed", "illegal", "http429", "http500", "quota")


class ModelSpecError(ValueError):
    """A model name that is not a valid simulated-model spec."""


@dataclass(frozen=True)
class SimModelSpec:
    """A parsed simulated model: its policy and parameters (defaults filled in)."""

    name: str
    policy: str
    params: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.params[key]


@functools.lru_cache(maxsize=256)
def parse_model_spec(name: str) -> SimModelSpec:
    """Parse `sim-<policy>[:k=v,...]`; raises `ModelSpecError` naming what is wrong.

    Cached by name (a spec is frozen): the simulator parses the model of every request,
    and a run sends one name over and over.
    """
    if not name.startswith("sim-"):
        raise ModelSpecError(f"model {name!r} is not a simulated model (names start with 'sim-')")
    head, _, tail = name[4:].partition(":")
    policy = head.strip().lower()
    if policy not in POLICIES:
        raise ModelSpecError(f"unknown simulated policy {policy!r}; choose one of {POLICIES}")
    params = {key: default for key, (_, default) in _PARAMS.items()}
    for item in filter(None, (part.strip() for part in tail.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip().lower()
        if not sep or key not in _PARAMS:
            raise ModelSpecError(f"bad parameter {item!r} in {name!r}; known: {sorted(_PARAMS)}")
        kind = _PARAMS[key][0]
        try:
            params[key] = kind(value.strip())
        except ValueError:
            raise ModelSpecError(
                f"parameter {key} must be {kind.__name__}, got {value!r}"
            ) from None
    for key in _RATES:
        if not 0.0 <= params[key] <= 1.0:
            raise ModelSpecError(f"{key} must be a probability in [0, 1], got {params[key]}")
    if params["heuristic"] not in HEURISTICS:
        raise ModelSpecError(
            f"unknown heuristic {params['heuristic']!r}; choose one of {HEURISTICS}"
        )
    choices = {"read": ("none", "consensus"), "predict": ("debate", "self", "crowd")}
    for key, allowed in choices.items():
        if params[key] not in allowed:
            raise ModelSpecError(f"{key} must be one of {allowed}, got {params[key]!r}")
    if params["cue_p"] is not None and not 0.0 <= params["cue_p"] <= 1.0:
        raise ModelSpecError(f"cue_p must be a probability in [0, 1], got {params['cue_p']}")
    if params["cue"] and not re.fullmatch(r"[\w-]+", params["cue"]):
        raise ModelSpecError(f"cue must be one word, got {params['cue']!r}")
    for flag in ("spread", "cue_in_prompt"):
        if params[flag] not in (0, 1):
            raise ModelSpecError(f"{flag} must be 0 or 1, got {params[flag]}")
    if params["conf"] <= 0:
        raise ModelSpecError(f"conf must be in (0, 1], got {params['conf']}")
    for key in ("otherwise", "base"):
        if params[key] not in ("optimal", "random"):
            raise ModelSpecError(f"{key} must be 'optimal' or 'random', got {params[key]!r}")
    if min(params["self"], params["peer"]) < 0 or params["self"] + params["peer"] <= 0:
        raise ModelSpecError("self and peer weights must be non-negative and not both zero")
    if params["latency"] < 0 or params["burst429"] < 0 or params["burst500"] < 0:
        raise ModelSpecError("latency and bursts must be non-negative")
    return SimModelSpec(name=name, policy=policy, params=params)


def canonical_model_name(name: str) -> str:
    """One spelling of a simulated model: its policy, then its parameters sorted by name,
    each value as its kind reads it (`sim-biased:p=0.80,heuristic=min_take` is
    `sim-biased:heuristic=min_take,p=0.8`).

    Raises:
        ModelSpecError: a name the simulator refuses.
    """
    spec = parse_model_spec(name)
    given = {item.partition("=")[0].strip().lower() for item in name.partition(":")[2].split(",")}
    items = ",".join(
        f"{key}={value!r}" if isinstance(value, float) else f"{key}={value}"
        for key, value in sorted(spec.params.items())
        if key in given
    )
    return f"sim-{spec.policy}" + (f":{items}" if items else "")


#: Names listed by `/v1/models` (any valid spec is accepted, listed or not).
LISTED_MODELS = (
    "sim-optimal",
    "sim-random",
    "sim-biased:heuristic=max_take,p=0.8",
    "sim-conform:self=1,peer=2",
    "sim-conform:self=1,peer=3,base=random",
    "sim-biased:heuristic=max_take,p=0.6,read=consensus",
    "sim-faulty:malformed=0.3,illegal=0.2,http429=0.3,http500=0.1,latency=0.05",
)


def check_simulated(name: str) -> None:
    """Refuse, before any call, a `sim-...` name the simulator would refuse: one line
    naming the model and what is wrong (`ModelSpecError`, a `ValueError`)."""
    try:
        parse_model_spec(name)
    except ModelSpecError as exc:
        raise ModelSpecError(f"simulated model {name!r}: {exc}") from None
