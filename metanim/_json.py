"""JSON on the hot paths: orjson, with the standard library's rules where orjson refuses.

A tournament on a small machine is bound by its CPU, and every model call encodes a
request, decodes a response (and the simulator the reverse), and every episode writes a
~25 KB log line. orjson does each in a fifth to a tenth of the stdlib's time. What it
refuses or would read differently (an int past 64 bits, a NaN literal in a body) goes
through `json`, so nothing that parsed or serialised before fails or changes now.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS


def dumps(obj: Any, *, newline: bool = False) -> bytes:
    """Compact UTF-8 JSON, as bytes: the JSON `json.dumps(separators=(",", ":"),
    ensure_ascii=False)` writes (a float may be spelled otherwise: 1e-05 as 0.00001).

    `newline`: with a final newline, for one JSONL line.
    """
    try:
        return orjson.dumps(
            obj, option=_OPTIONS | orjson.OPT_APPEND_NEWLINE if newline else _OPTIONS
        )
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
        return (text + "\n" if newline else text).encode()


def loads(data: bytes | str) -> Any:
    """`json.loads`; raises `json.JSONDecodeError` (a `ValueError`) on malformed JSON."""
    # orjson reads an int past 64 bits as a float: any run of 19 digits goes to json.
    if _LONG_DIGITS.search(data if isinstance(data, bytes) else data.encode()) is None:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # NaN, Infinity: the stdlib reads them; else it raises its own error
    return json.loads(data)


_LONG_DIGITS = re.compile(rb"[0-9]{19}")
