"""Shared fixtures. `sim_server`: the simulated OpenAI-compatible server on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from metanim.llm.sim import SimServer


@pytest.fixture(scope="session")
def sim_server() -> Iterator[SimServer]:
    """A running simulated server (accepts any key); call `reset_log()` before reading `log`."""
    with SimServer(seed=0) as server:
        yield server
