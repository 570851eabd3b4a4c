"""Stable derived seeds, one rule for the whole package.

A decision's call seeds (agents), an episode's start, ply and seat seeds, and the
seeds of planned episodes and decisions (arena) all come from here, so the same base
seed and identity give the same number everywhere and in every process (`hash` is
salted per process; CRC-32 of the `repr` is not).
"""

from __future__ import annotations

import zlib
from typing import Any


def derive_seed(seed: int, *parts: Any) -> int:
    """A stable 31-bit seed from a base seed and any identifying parts."""
    return zlib.crc32(repr((seed, *parts)).encode()) & 0x7FFFFFFF
