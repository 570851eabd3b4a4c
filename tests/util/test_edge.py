"""Command-line values at their edges (`metanim.util.edge`)."""

from __future__ import annotations

import json

import pytest


def test_a_range_argument_is_bounded() -> None:
    import argparse

    from metanim.util.edge import int_range

    assert int_range("2-5") == [2, 3, 4, 5]
    for text in ("2-100000", "2-99999999999999999999999"):
        with pytest.raises(argparse.ArgumentTypeError, match="at most 10,000 numbers"):
            int_range(text)


def test_text_that_is_not_utf8_is_named_by_its_byte() -> None:
    import os

    from metanim.util import strict_json

    # The argument as Python receives bytes that are not UTF-8 (surrogateescape).
    typed = os.fsdecode(b"[3,\xff4]")
    with pytest.raises(ValueError) as info:
        strict_json(typed, "state", bare_text=True)
    assert str(info.value) == "state: the text is not valid UTF-8 (byte 0xff at character 4)"
    assert "\\udc" not in repr(str(info.value))


def test_broken_json_says_where_and_what_is_wanted() -> None:
    from metanim.util import strict_json

    text = '{"heaps":[12],"max_take":3'
    with pytest.raises(ValueError) as info:
        strict_json(text, "game setting", forms="an object")
    # Python's own parser says where it breaks (the reference); the message carries it.
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"{exc.msg} at column {exc.colno}"
    assert str(info.value) == f"game setting: {text!r} is not valid JSON ({where}); give an object"
    # A list or object is JSON meant even where bare text is taken.
    with pytest.raises(ValueError, match=r"not valid JSON \(Expecting"):
        strict_json("[3,4", "state", bare_text=True)
    assert strict_json("1101x", "row", bare_text=True) == "1101x"
