"""Build methods from spec strings and clients from `model@base_url` strings.

Method spec: `name[:item,item,...]`, an item `key=value` is a parameter, a bare item is the
model. Examples: `react`, `react:gpt-4o`, `dreamad:agents=2,rounds=3`, `acemad:agents=5`,
`mpd:level=1`, `cross:models=gpt-4o|sim-optimal@http://127.0.0.1:8000/v1`. A model whose own name has a
colon takes the whole tail: `react:sim-biased:heuristic=max_take,p=0.8`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

from metanim.agents.acemad import AceMAD
from metanim.agents.base import Method
from metanim.agents.debate import MAD, MPD, AnonymousMAD, CrossModel, DReaMAD
from metanim.agents.single import CoT, ReAct, SelfConsistency, SelfRefine, Standard
from metanim.llm._types import ChatModel

ClientFactory = Callable[[str], ChatModel]

#: Method names (and aliases) to (class, fixed keyword arguments).
METHODS: dict[str, tuple[type[Method], dict[str, Any]]] = {
    "standard": (Standard, {}),
    "react": (ReAct, {}),
    "cot": (CoT, {}),
    "self_consistency": (SelfConsistency, {}),
    "sc": (SelfConsistency, {}),
    "self_refine": (SelfRefine, {}),
    "refine": (SelfRefine, {}),
    "mad": (MAD, {}),
    "anonymous_mad": (AnonymousMAD, {}),
    "anon_mad": (AnonymousMAD, {}),
    "dreamad": (DReaMAD, {}),
    "dreamad_minus": (DReaMAD, {"variant": "minus"}),
    "dreamad-": (DReaMAD, {"variant": "minus"}),
    "plus_mad": (DReaMAD, {"variant": "plus_mad"}),
    "+mad": (DReaMAD, {"variant": "plus_mad"}),
    "mpd": (MPD, {}),
    "acemad": (AceMAD, {}),
    "cross": (CrossModel, {}),
}


def make_client(spec: str, **kwargs: Any) -> ChatModel:
    """An `OpenAIChatClient` from `model` or `model@base_url` (key from OPENAI_API_KEY)."""
    from metanim.llm import OpenAIChatClient

    model, _, base_url = spec.partition("@")
    return OpenAIChatClient(model.strip(), base_url=base_url.strip() or None, **kwargs)


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_spec(spec: str) -> tuple[str, str | None, dict[str, Any]]:
    """`name[:items]` to (name, model or None, parameters)."""
    name, _, tail = spec.strip().partition(":")
    name = name.strip().lower().replace("-", "_") if name.strip() != "dreamad-" else "dreamad-"
    if name not in METHODS:
        raise ValueError(f"unknown method {spec!r}; choose one of {sorted(METHODS)}")
    model, params = None, {}
    if ":" in tail.partition("=")[0]:
        # The whole tail is one model name with its own parameters (sim-biased:p=0.8,...).
        return name, tail.strip(), params
    for item in filter(None, (part.strip() for part in tail.split(","))):
        key, sep, value = item.partition("=")
        if sep:
            params[key.strip()] = _value(value.strip())
        elif model is None:
            model = item
        else:
            raise ValueError(f"two models in {spec!r}")
    return name, model, params


def method_parameters(name: str) -> list[str]:
    """The keyword parameters method `name` (or an alias) accepts, from its class signature."""
    cls, _ = METHODS[name]
    names: list[str] = ["models"] if cls is CrossModel else []
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        more = False
        for param in inspect.signature(vars(klass)["__init__"]).parameters.values():
            if param.kind is param.VAR_KEYWORD:
                more = True
            elif param.kind is param.KEYWORD_ONLY and param.name not in names:
                names.append(param.name)
        if not more or klass is Method:
            break
    return sorted(names)


def check_parameters(name: str, params: dict[str, Any], spec: str | None = None) -> None:
    """Raise a `ValueError` naming any parameter method `name` does not take."""
    valid = method_parameters(name)
    unknown = [key for key in params if key not in valid]
    if not unknown:
        return
    hint = ""
    if any(":" in key for key in unknown):
        hint = (
            "; a model with its own parameters must be the whole tail of the spec "
            "(react:sim-biased:p=0.8): give the model separately (--model) to combine "
            "it with method parameters"
        )
    where = f" in {spec!r}" if spec else ""
    raise ValueError(
        f"unknown parameter{'s' if len(unknown) > 1 else ''} "
        f"{', '.join(map(repr, unknown))} for method {name!r}{where}; "
        f"valid: {', '.join(valid)}{hint}"
    )


def build_method(
    spec: str,
    model: str | None = None,
    *,
    client_factory: ClientFactory = make_client,
    defaults: dict[str, Any] | None = None,
) -> Method:
    """A method from its spec; the model comes from the spec, else `model`.

    `client_factory` turns a `model@base_url` string into a client (tests pass one that
    points at the simulated server). `defaults` are keyword arguments (call options,
    re-asks, failure policy) that the spec's own parameters override.
    """
    name, spec_model, params = parse_spec(spec)
    check_parameters(name, params, spec)
    cls, fixed = METHODS[name]
    params = {**(defaults or {}), **params}
    if cls is CrossModel:
        models = params.pop("models", None)
        names = str(models).split("|") if models else []
        if len(names) < 2:
            raise ValueError("cross-model debate needs models=a|b")
        return CrossModel([client_factory(m) for m in names], **params)
    chosen = spec_model or model
    if chosen is None:
        raise ValueError(f"method {spec!r} needs a model")
    return cls(client_factory(chosen), **{**fixed, **params})  # type: ignore[call-arg]
