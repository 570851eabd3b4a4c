"""Build methods from spec strings and clients from `model@base_url` strings.

Method spec: `name[:item,item,...]`, an item `key=value` is a parameter, a bare item is the
model. Examples: `react`, `react:gpt-4o`, `dreamad:agents=2,rounds=3`, `acemad:agents=5`,
`mpd:level=1`, `cross:models=gpt-4o|sim-optimal@http://127.0.0.1:8000/v1`. A model whose own name has a
colon takes the whole tail: `react:sim-biased:heuristic=max_take,p=0.8`.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from metanim.agents.acemad import AceMAD
from metanim.agents.base import Method
from metanim.agents.debate import MAD, MPD, AnonymousMAD, CrossModel, DReaMAD
from metanim.agents.single import CoT, ReAct, SelfConsistency, SelfRefine, Standard
from metanim.llm import ChatModel, ModelSpec

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
    """An `OpenAIChatClient` from `model` or `model@base_url` (its key from the model's key
    variable, `metanim.llm.key_env`: `METANIM_SIM_API_KEY` for a simulated model)."""
    from metanim.llm import OpenAIChatClient  # here: aiohttp loads when a client is made

    model = ModelSpec.parse(spec)
    return OpenAIChatClient(model.name, base_url=list(model.urls) or None, **kwargs)


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


class UnknownMethodError(ValueError):
    """A method name the registry does not hold (callers may offer other kinds of player)."""


def parse_spec(spec: str) -> tuple[str, str | None, dict[str, Any]]:
    """`name[:items]` to (name, model or None, parameters)."""
    name, _, tail = spec.strip().partition(":")
    name = name.strip().lower().replace("-", "_") if name.strip() != "dreamad-" else "dreamad-"
    if name not in METHODS:
        raise UnknownMethodError(f"unknown method {spec!r}; choose one of {sorted(METHODS)}")
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


#: Methods whose agents may each call their own model (`models=a|b|...`, one per agent,
#: cycled when shorter): a cross-model debate needs them; MAD-family debates and AceMAD
#: take them (seed 004's crowd and truth-holder roles on different models).
PER_AGENT_MODELS = (CrossModel, MAD, AceMAD, MPD)


def _keyword_params(cls: type[Method]) -> list[tuple[type, inspect.Parameter]]:
    """The keyword-only parameters of `cls` and of the bases it forwards `**kwargs` to
    (down to `Method`), each with the class that declares it, the most derived first."""
    out = []
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        more = False
        for param in inspect.signature(vars(klass)["__init__"]).parameters.values():
            if param.kind is param.VAR_KEYWORD:
                more = True
            elif param.kind is param.KEYWORD_ONLY:
                out.append((klass, param))
        if not more or klass is Method:
            break
    return out


def method_parameters(name: str) -> list[str]:
    """The keyword parameters method `name` (or an alias) accepts, from its class signature."""
    cls, _ = METHODS[name]
    names: list[str] = ["models"] if issubclass(cls, PER_AGENT_MODELS) else []
    for _, param in _keyword_params(cls):
        if param.name not in names:
            names.append(param.name)
    return sorted(names)


@functools.cache
def declared_defaults(name: str) -> dict[str, Any]:
    """The declared defaults of method `name`'s own parameters (its class and the bases it
    forwards `**kwargs` to), with the fixed ones of its registry entry on top.

    `Method`'s own parameters (call options, re-asks, failure policy, reply length) are
    left out: every run passes them from its settings, which a run identity holds apart.
    A default that is not a JSON value (an object) is left out too.
    """
    cls, fixed = METHODS[name]
    out: dict[str, Any] = {}
    for klass, param in _keyword_params(cls):
        if klass is Method or param.default is param.empty or param.name in out:
            continue
        try:
            json.dumps(param.default)
        except (TypeError, ValueError):
            continue
        out[param.name] = param.default
    return {**out, **fixed}


def canonical_method(name: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """One spelling of a method and its parameters: (registry name, every parameter).

    The parameters are the declared defaults (`declared_defaults`) with `params` on top,
    sorted; the name is the registry's most specific name of that class whose fixed
    parameters they match, the first listed among equals (the long name before its alias:
    `sc` and `self_consistency:n=5` are both `self_consistency` with n=5, `dreamad-` and
    `dreamad:variant=minus` both `dreamad_minus`).
    """
    cls, _ = METHODS[name]
    full = {**declared_defaults(name), **params}
    named = [
        each
        for each, (klass, fixed) in METHODS.items()
        if klass is cls and all(full.get(k) == v for k, v in fixed.items())
    ]
    best = max(named, key=lambda each: len(METHODS[each][1]), default=name)
    return best, dict(sorted(full.items()))


def explicit_params(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """The parameters of `params` that method `name` does not fix or default to (what a
    label shows); all of them for a name the registry does not hold."""
    if name not in METHODS:
        return dict(params)
    defaults = declared_defaults(name)
    return {k: v for k, v in params.items() if k not in defaults or defaults[k] != v}


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


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """Parameter annotations of a method class and the bases it forwards `**kwargs` to."""
    out: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        init = vars(klass).get("__init__")
        if init is None:
            continue
        try:
            # Value kinds (`Temperature`, `PositiveInt`, ...) keep their rules.
            hints = typing.get_type_hints(init, include_extras=True)
        except Exception:  # an annotation that cannot be resolved: not checked
            continue
        for param in inspect.signature(init).parameters.values():
            if param.name in hints and param.kind is param.KEYWORD_ONLY:
                out[param.name] = hints[param.name]
    return out


def _check_type(cls: type, key: str, value: Any, spec: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        # Floats are finite everywhere (metanim.util.values): `1e400` reads as inf.
        raise ValueError(f"method parameter {key}={value!r} of {spec!r}: give a finite number")
    hint = _hints(cls).get(key)
    if hint is None:
        return
    try:
        TypeAdapter(hint).validate_python(value, strict=isinstance(value, str))
    except ValidationError as exc:
        msg = exc.errors()[0]["msg"]
        raise ValueError(
            f"method parameter {key}={value!r} of {spec!r}: {msg} (expected {_type_name(hint)})"
        ) from None
    except Exception:  # a type pydantic cannot check (a protocol): not checked
        return


def _type_name(hint: Any) -> str:
    if typing.get_origin(hint) is typing.Annotated:  # a value kind: its base type
        hint = typing.get_args(hint)[0]
    return getattr(hint, "__name__", str(hint))


@dataclass(frozen=True)
class MethodSpec:
    """A method spec read once: its registry name, the model it names, its parameters.

    `params` are the spec's own parameters with the given ones on top; names and types
    are checked when the spec is parsed. A cross-model debate names its models in
    `models=a|b`; `models()` splits them, here only.
    """

    text: str
    name: str
    model: str | None
    params: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, spec: str, params: dict[str, Any] | None = None) -> MethodSpec:
        """Parse and check `spec` (`name[:items]`) with `params` on top of its own."""
        name, model, own = parse_spec(spec)
        merged = {**own, **(params or {})}
        check_parameters(name, merged, spec)
        method_cls = METHODS[name][0]
        for key, value in merged.items():
            _check_type(method_cls, key, value, spec)
        made = cls(spec, name, model, merged)
        if made.cross and len(made.models(None)) < 2:
            raise ValueError(f"cross-model debate {spec!r} needs models=a|b")
        return made

    @property
    def cross(self) -> bool:
        """Whether this is a cross-model debate (its models come from `models=`)."""
        return METHODS[self.name][0] is CrossModel

    @property
    def per_agent(self) -> bool:
        """Whether its agents' models come from `models=` (a cross debate always does)."""
        return self.cross or "models" in self.params

    def models(self, default: str | None) -> list[str]:
        """The models this method calls: `models=` (per agent), else its own model or
        `default`."""
        if self.per_agent:
            return [m.strip() for m in str(self.params.get("models") or "").split("|") if m.strip()]
        chosen = self.model or default
        return [chosen] if chosen else []


def build_method(
    spec: str | MethodSpec,
    model: str | None = None,
    *,
    client_factory: ClientFactory = make_client,
    defaults: dict[str, Any] | None = None,
) -> Method:
    """A method from its spec; the model comes from the spec, else `model`.

    `client_factory` turns a model text (`model` or `model@base_url`) into a client.
    `defaults` are keyword arguments (call options, re-asks, failure policy) that the
    spec's own parameters override.
    """
    spec = spec if isinstance(spec, MethodSpec) else MethodSpec.parse(spec)
    cls, fixed = METHODS[spec.name]
    params = {**fixed, **(defaults or {}), **spec.params}
    models = spec.models(model)
    if not models:
        raise ValueError(f"method {spec.text!r} needs a model")
    if spec.per_agent:
        params.pop("models", None)
        return cls([client_factory(m) for m in models], **params)  # type: ignore[call-arg]
    return cls(client_factory(models[0]), **params)  # type: ignore[call-arg]
