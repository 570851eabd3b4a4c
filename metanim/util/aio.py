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
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new uvloop loop, or asyncio's when uvloop is missing or not wanted."""
    if os.environ.get("METANIM_EVENT_LOOP", "").strip().lower() != "asyncio":
        try:
            import uvloop  # optional: a faster loop where installed
        except ImportError:
            pass
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()


#: Allocations between young-generation collections while a run lasts (Python's: 700).
#: A young collection walks every object still alive since the last one, so long runs
#: pause less with fewer of them (docs/benchmarks.md); runs make no cyclic garbage to
#: speak of, so collecting later costs no memory.
RUN_GC_THRESHOLD = 200_000

# The collector's settings are the process's: the outermost of nested or overlapping
# blocks (threads running runs side by side) changes them, and restores them last.
_lock = threading.Lock()
_depth = 0
_saved: tuple[tuple[int, ...], bool] | None = None


@contextlib.contextmanager
def quiet_gc() -> Iterator[None]:
    """Collect cycles less often while the block runs; the previous settings come back.

    Objects that exist at the start are frozen out of later collections, unless the
    process froze some itself (a pre-fork server's): then its freeze is left as it is.
    """
    global _depth, _saved
    with _lock:
        if _depth == 0:
            threshold = gc.get_threshold()
            froze = gc.get_freeze_count() == 0
            if froze:
                gc.freeze()  # what exists now lives on: later collections skip it
            gc.set_threshold(max(threshold[0], RUN_GC_THRESHOLD), *threshold[1:])
            _saved = (threshold, froze)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                threshold, froze = _saved
                gc.set_threshold(*threshold)
                if froze:
                    gc.unfreeze()
                _saved = None


def run(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)` on `new_event_loop()`, under `quiet_gc` (Ctrl-C cancels it as
    asyncio.run does)."""
    with quiet_gc(), asyncio.Runner(loop_factory=new_event_loop) as runner:
        return runner.run(coro)
