"""Config models as command-line flags: one flag per field, values layered.

Every field of a pydantic config is one flag (`--field-name`, help from the field's
description, its default in the help). Values are layered: defaults < `--config FILE` <
profiles < the flags given.
"""

from __future__ import annotations

import argparse
import json
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel


def _key_value(text: str, *, bare_text: bool) -> tuple[str, Any]:
    """`KEY=JSON`; with `bare_text` a value that is not JSON is taken as a string."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key.strip(), json.loads(value)
    except json.JSONDecodeError:
        if bare_text:
            return key.strip(), value
        raise argparse.ArgumentTypeError(
            f"{text!r}: the value is not JSON (a string is quoted: {key.strip()}='\"text\"')"
        ) from None


def _method_param(text: str) -> tuple[str, Any]:
    # Method parameters may be bare words (heuristic=max_take, models=a|b).
    return _key_value(text, bare_text=True)


def _json_param(text: str) -> tuple[str, Any]:
    return _key_value(text, bare_text=False)


def kind(annotation: Any) -> Callable[[str], Any]:
    """An argparse type from a value kind (`metanim.util.values`): the flag's text is
    checked by the same rule as the config field of that kind."""
    from pydantic import TypeAdapter, ValidationError  # here: only a command's flags need it

    adapter = TypeAdapter(annotation)

    def parse(text: str) -> Any:
        try:
            return adapter.validate_strings(text)
        except ValidationError as exc:
            message = exc.errors()[0]["msg"].removeprefix("Value error, ")
            raise argparse.ArgumentTypeError(f"{text!r}: {message}") from None

    return parse


def _base_type(annotation: Any) -> Any:
    """The type a flag's text is read as: the non-None member of an Optional, the type
    under a value kind (`Annotated`; the config checks the kind's rule)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _base_type(args[0]) if len(args) == 1 else str
    if typing.get_origin(annotation) is typing.Annotated:
        return _base_type(typing.get_args(annotation)[0])
    return annotation


def add_config_arguments(
    parser: argparse.ArgumentParser, model: type[BaseModel], *, skip: tuple[str, ...] = ()
) -> None:
    """Add one flag per field of `model`; unset flags stay None so defaults live in the model."""
    from pydantic_core import PydanticUndefined

    parser.add_argument("--config", help="a TOML or JSON file of these settings (flags override)")
    for name, field in model.model_fields.items():
        if name in skip:
            continue
        flag = "--" + name.replace("_", "-")
        help_text = field.description or ""
        # Every default in --help (the timeout a call gets, the model a side plays on).
        if field.default not in (None, PydanticUndefined) and not isinstance(field.default, bool):
            help_text += " (default: {})".format(str(field.default).replace("%", "%%"))
        base = _base_type(field.annotation)
        origin = typing.get_origin(base)
        # Repeatable flags read better singular (--game a --game b, --param k=v).
        flags = [flag, flag[:-1]] if origin in (list, dict) and flag.endswith("s") else [flag]
        if origin is typing.Literal:
            parser.add_argument(flag, choices=typing.get_args(base), default=None, help=help_text)
        elif base is bool:
            parser.add_argument(
                flag, action=argparse.BooleanOptionalAction, default=None, help=help_text
            )
        elif origin is dict:
            parser.add_argument(
                *flags,
                dest=name,
                action="append",
                type=_method_param if name.endswith("params") else _json_param,
                default=None,
                metavar="KEY=JSON",
                help=help_text,
            )
        elif origin is list:
            parser.add_argument(
                *flags, dest=name, action="append", default=None, help=help_text + " (repeatable)"
            )
        elif base in (int, float):
            parser.add_argument(flag, type=base, default=None, help=help_text)
        else:
            parser.add_argument(flag, default=None, help=help_text)


def config_from_args(
    model: type[BaseModel], args: argparse.Namespace, base: dict[str, Any] | None = None
) -> Any:
    """Build `model` from defaults < `--config` < `base` (profiles) < the flags given."""
    values: dict[str, Any] = {}
    if getattr(args, "config", None):
        from metanim.arena import load_config_file

        values.update(load_config_file(args.config, model))
    values.update(base or {})
    for name, field in model.model_fields.items():
        given = getattr(args, name, None)
        if given is None:
            continue
        if typing.get_origin(_base_type(field.annotation)) is dict:
            # KEY=JSON flags add to (and override keys of) the profile's parameters.
            given = {**values.get(name, {}), **dict(given)}
        values[name] = given
    return model.model_validate(values)
