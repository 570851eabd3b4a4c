"""The event loop of runs and of the simulated server (`metanim.util.aio`)."""

from __future__ import annotations

import asyncio

import pytest

from metanim.util import aio


async def _loop_type() -> str:
    return type(asyncio.get_running_loop()).__module__


def test_runs_on_uvloop_where_installed() -> None:
    pytest.importorskip("uvloop")
    assert aio.run(_loop_type()).startswith("uvloop")


def test_asyncio_loop_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("METANIM_EVENT_LOOP", "asyncio")
    assert aio.run(_loop_type()).startswith("asyncio")


def test_run_returns_the_result_and_closes_its_loop() -> None:
    loops = []

    async def work() -> int:
        loops.append(asyncio.get_running_loop())
        await asyncio.sleep(0)
        return 7

    assert aio.run(work()) == 7
    assert loops[0].is_closed()


def test_quiet_gc_raises_the_threshold_and_restores_it() -> None:
    import gc

    before = gc.get_threshold()
    seen = []

    async def work() -> None:
        seen.append(gc.get_threshold())

    aio.run(work())
    assert seen[0][0] == max(before[0], aio.RUN_GC_THRESHOLD)
    assert seen[0][1:] == before[1:]
    frozen = gc.get_freeze_count()
    aio.run(work())
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == frozen  # what the block froze was handed back


def test_cycles_are_still_collected_under_quiet_gc() -> None:
    import weakref

    class Node:
        pass

    with aio.quiet_gc():
        a, b = Node(), Node()
        a.other, b.other = b, a  # a reference cycle
        ref = weakref.ref(a)
        del a, b
        # Live tracked objects past the threshold start a collection by themselves.
        keep = [[] for _ in range(2 * aio.RUN_GC_THRESHOLD)]
        collected_without_asking = ref() is None
    assert len(keep) == 2 * aio.RUN_GC_THRESHOLD
    assert collected_without_asking


_NESTED_GC = """
import gc
from metanim.util import aio

before = gc.get_threshold()
gc.freeze()  # as a pre-fork server would
frozen = gc.get_freeze_count()
with aio.quiet_gc():
    with aio.quiet_gc():
        pass
    # The inner block's end must not restore the settings under the outer one.
    assert gc.get_threshold()[0] == max(before[0], aio.RUN_GC_THRESHOLD), gc.get_threshold()
assert gc.get_threshold() == before, (gc.get_threshold(), before)
assert gc.get_freeze_count() == frozen  # the process's own freeze stands
print("ok")
"""


def test_quiet_gc_nests_and_keeps_a_freeze_made_before_it() -> None:
    # A process of its own: the collector's settings are process-wide, and a server
    # thread left by another test inside its own quiet_gc block would move them mid-test.
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _NESTED_GC], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
