"""JSON on the hot paths: orjson, with the standard library's rules where orjson refuses.

A tournament on a small machine is bound by its CPU, and every model call encodes a
request, decodes a response (and the simulator the reverse), and every episode writes a
~25 KB log line. orjson does each in a fifth to a tenth of the stdlib's time. What it
refuses or would treat otherwise (an int past 64 bits, NaN or Infinity in a body) goes
through `json`, so no body parses or serialises differently; log lines are strict JSON
(NaN and Infinity as null, as pydantic-core writes them).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson
from pydantic import BaseModel

_OPTIONS = orjson.OPT_NON_STR_KEYS


def dumps(obj: Any) -> bytes:
    """Compact UTF-8 JSON, as bytes: what `json.dumps(separators=(",", ":"),
    ensure_ascii=False)` writes (a float may be spelled otherwise: 1e-05 as 0.00001).

    NaN and ±Infinity are written as json writes them (orjson would write null: a NaN
    temperature must reach the server as the error it is, not as "the default").
    """
    if not _any_float(obj, _not_finite):
        try:
            return orjson.dumps(obj, default=_orjson_default, option=_OPTIONS)
        except TypeError:  # orjson.JSONEncodeError is a TypeError
            pass
    return _stdlib_dumps(obj).encode()


def dumps_line(record: dict[str, Any]) -> bytes:
    """One JSONL line (newline included) of strict JSON: `dumps`, except that NaN and
    ±Infinity are written as null, as pydantic-core writes them in the decisions (a
    recorded episode's line holds ~500 values: no walk looks for them)."""
    try:
        return orjson.dumps(
            record, default=_orjson_default, option=_OPTIONS | orjson.OPT_APPEND_NEWLINE
        )
    except TypeError:
        return (_stdlib_dumps(record) + "\n").encode()


def finite(obj: Any) -> Any:
    """`obj` with every NaN and ±Infinity replaced by None, for strict JSON (`allow_nan=False`):
    a rate with no denominator is written `null`, which every JSON parser reads."""
    if isinstance(obj, float):
        return None if _not_finite(obj) else obj
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [finite(v) for v in obj]
    return obj


def _stdlib_dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, default=_json_default)


def _not_finite(x: float) -> bool:
    return x - x != 0  # inf - inf and nan - nan are nan


class Ready:
    """JSON text made in advance (a pydantic model's own dump), written as it is.

    Not a dataclass: orjson would write a dataclass's fields instead of asking `default`.
    """

    __slots__ = ("text",)

    def __init__(self, text: bytes) -> None:
        self.text = text


def fragment(value: Any) -> Any:
    """`value` for a line `dumps` writes: a pydantic model as its JSON text, made now in
    one pydantic-core call (`Ready`); anything else as it is."""
    if isinstance(value, BaseModel):
        return Ready(value.__pydantic_serializer__.to_json(value))  # model_dump_json, as bytes
    return value


def _orjson_default(value: Any) -> Any:
    if isinstance(value, Ready):
        return orjson.Fragment(value.text)
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def _json_default(value: Any) -> Any:
    if isinstance(value, Ready):
        return json.loads(value.text)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def loads(data: bytes | str) -> Any:
    """`json.loads`; raises `json.JSONDecodeError` (a `ValueError`) on malformed JSON."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)  # NaN, Infinity: the stdlib reads them; else its own error
    # orjson reads an int past 64 bits as a float: where a float that large is found
    # (a cheap walk of the parsed body), json reads the whole text again.
    return json.loads(data) if _any_float(value, _huge) else value


def _huge(x: float) -> bool:
    return not -(2.0**63) < x < 2.0**64


def _any_float(value: Any, test: Callable[[float], bool]) -> bool:
    """Whether a float inside `value` (dicts, lists, tuples, walked) passes `test`."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
        elif kind is float and test(item):
            return True
    return False
