"""Log lines and request bodies (`metanim.util.fastjson`, orjson) against the standard
library's json, the reference: ints past 64 bits, any unicode, non-finite floats."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metanim.util.fastjson import Ready, dumps, dumps_line, fragment, loads

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=6) | st.integers(-5, 5), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(record=st.dictionaries(st.text(max_size=8), _JSON, max_size=6))
def test_a_log_line_reads_back_as_the_standard_library_writes_it(record) -> None:
    # orjson writes log lines and bodies; the stdlib's json is the reference (ints past
    # 64 bits, int keys, any unicode and control characters included), both ways.
    line = dumps_line(record)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == json.loads(json.dumps(record))
    assert json.loads(dumps(record)) == json.loads(json.dumps(record))
    assert loads(json.dumps(record)) == json.loads(json.dumps(record))


def test_a_log_line_with_an_int_past_64_bits_is_still_written() -> None:
    # Both sides of orjson's int range, and floats as large that must stay floats.
    edges = [2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 2**70, -(2**65), 1e19, -1e19, 2.0**64]
    record = {"state": edges, "seed": 2**64 - 1, "nested": [{"x": 2**64}]}
    assert json.loads(dumps_line(record)) == record
    back = loads(json.dumps(record))
    assert back == record
    assert [type(v) for v in back["state"]] == [type(v) for v in edges]


def test_a_line_with_ready_json_and_an_int_orjson_refuses_falls_back_whole() -> None:
    from metanim.llm._types import Usage

    ready = fragment(Usage(prompt_tokens=3, completion_tokens=4))
    assert isinstance(ready, Ready) and fragment({"a": 1}) == {"a": 1}
    # orjson writes the ready text itself (the stdlib's fallback is never needed for it).
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(json, "dumps", None)
        line = dumps({"decision": ready})
    assert json.loads(line) == {"decision": json.loads(ready.text)}
    record = {"big": 2**70, "decision": ready}
    want = {"big": 2**70, "decision": Usage(prompt_tokens=3, completion_tokens=4).model_dump()}
    assert json.loads(dumps(record)) == want


def test_non_finite_floats_go_to_a_server_as_json_writes_them_and_to_a_log_as_null() -> None:
    body = {"temperature": math.nan, "top_p": [1.0, math.inf, -math.inf]}
    # A request body: the stdlib's NaN and Infinity (the server rejects them), not null.
    assert dumps(body) == json.dumps(body, separators=(",", ":")).encode()
    # A log line is strict JSON, as pydantic-core writes the decisions inside it.
    assert json.loads(dumps_line(body)) == {"temperature": None, "top_p": [1.0, None, None]}


def test_json_that_only_the_standard_library_reads_still_reads() -> None:
    assert loads(b'{"x": NaN}')["x"] != loads(b'{"x": NaN}')["x"]  # NaN
    with pytest.raises(json.JSONDecodeError):
        loads(b'{"x": ')
