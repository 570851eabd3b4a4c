"""How runs and the simulated server execute: uvloop's event loop, a tuned collector.

A tournament on a small machine is bound by its own CPU at short latencies
(`docs/benchmarks.md`, client section), and two things cut it without changing what
runs:

- uvloop's loop (libuv, in C) where it is installed: about a sixth less CPU per model
  call than asyncio's. `METANIM_EVENT_LOOP=asyncio` forces asyncio's own loop.
- A lazier cyclic garbage collector while the run lasts (`quiet_gc`): a decision
  allocates hundreds of short-lived dicts and records, so with Python's default
  threshold (700 allocations) the collector ran every few decisions and walked the
  whole young heap each time, 15-20% of the run's CPU. Objects alive before the run
  (modules, tables) are frozen out of its walks; cycles are still collected.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
from collections.abc import Coroutine, Iterator
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


#: Allocations between young-generation collections while a run lasts (Python's: 700).
RUN_GC_THRESHOLD = 20_000


@contextlib.contextmanager
def quiet_gc() -> Iterator[None]:
    """Collect cycles less often while the block runs; the previous settings come back."""
    previous = gc.get_threshold()
    gc.freeze()  # what exists now lives on: later collections skip it
    gc.set_threshold(max(previous[0], RUN_GC_THRESHOLD), *previous[1:])
    try:
        yield
    finally:
        gc.set_threshold(*previous)
        gc.unfreeze()


def run(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)` on `new_event_loop()`, under `quiet_gc` (Ctrl-C cancels it as
    asyncio.run does)."""
    with quiet_gc(), asyncio.Runner(loop_factory=new_event_loop) as runner:
        return runner.run(coro)
