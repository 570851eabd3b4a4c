"""The event loop of runs and of the simulated server (`metanim._aio`)."""

from __future__ import annotations

import asyncio

import pytest

from metanim import _aio


async def _loop_type() -> str:
    return type(asyncio.get_running_loop()).__module__


def test_runs_on_uvloop_where_installed() -> None:
    pytest.importorskip("uvloop")
    assert _aio.run(_loop_type()).startswith("uvloop")


def test_asyncio_loop_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("METANIM_EVENT_LOOP", "asyncio")
    assert _aio.run(_loop_type()).startswith("asyncio")


def test_run_returns_the_result_and_closes_its_loop() -> None:
    loops = []

    async def work() -> int:
        loops.append(asyncio.get_running_loop())
        await asyncio.sleep(0)
        return 7

    assert _aio.run(work()) == 7
    assert loops[0].is_closed()
