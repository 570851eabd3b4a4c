"""The event loop runs and servers use: uvloop's where it is installed, else asyncio's.

A tournament spends most of its own CPU in the event loop and the HTTP transport
(`docs/benchmarks.md`, client section); uvloop's loop (libuv, in C) cuts that CPU per
model call by about a sixth, and a run on a 2-core machine is bound by that CPU at
short latencies. `METANIM_EVENT_LOOP=asyncio` forces asyncio's own loop.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new uvloop loop, or asyncio's when uvloop is missing or not wanted."""
    if os.environ.get("METANIM_EVENT_LOOP", "").strip().lower() != "asyncio":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def run(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)` on `new_event_loop()` (Ctrl-C cancels it as asyncio.run does)."""
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        return runner.run(coro)
