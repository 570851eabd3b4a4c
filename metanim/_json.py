"""JSON on the hot paths: orjson, with the standard library's rules where orjson refuses.

A tournament on a small machine is bound by its CPU, and every model call encodes a
request, decodes a response (and the simulator the reverse), and every episode writes a
~25 KB log line. orjson does each in a fifth to a tenth of the stdlib's time. What it
refuses or would read differently (an int past 64 bits, a NaN literal in a body) goes
through `json`, so nothing that parsed or serialised before fails or changes now.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from pydantic import BaseModel

_OPTIONS = orjson.OPT_NON_STR_KEYS


def dumps(obj: Any, *, newline: bool = False) -> bytes:
    """Compact UTF-8 JSON, as bytes: the JSON `json.dumps(separators=(",", ":"),
    ensure_ascii=False)` writes (a float may be spelled otherwise: 1e-05 as 0.00001).

    `newline`: with a final newline, for one JSONL line.
    """
    try:
        return orjson.dumps(
            obj,
            default=_orjson_default,
            option=_OPTIONS | orjson.OPT_APPEND_NEWLINE if newline else _OPTIONS,
        )
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, default=_json_default)
        return (text + "\n" if newline else text).encode()


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
    # (a walk of a small body, ~1 µs), json reads the whole text again.
    return json.loads(data) if _has_huge_float(value) else value


def _has_huge_float(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind is float and not -(2.0**63) < item < 2.0**64:
            return True
    return False
