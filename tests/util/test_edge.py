"""Command-line values at their edges (`metanim.util.edge`)."""

from __future__ import annotations

import pytest


def test_a_range_argument_is_bounded() -> None:
    import argparse

    from metanim.util.edge import int_range

    assert int_range("2-5") == [2, 3, 4, 5]
    for text in ("2-100000", "2-99999999999999999999999"):
        with pytest.raises(argparse.ArgumentTypeError, match="at most 10,000 numbers"):
            int_range(text)
