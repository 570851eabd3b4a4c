"""Shared fixtures. `sim_server`: the simulated OpenAI-compatible server on loopback."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from typing import Any

import pytest

from metanim.llm.sim import SimServer


@pytest.fixture(scope="session")
def sim_server() -> Iterator[SimServer]:
    """A running simulated server (accepts any key); call `reset_log()` before reading `log`."""
    with SimServer(seed=0) as server:
        yield server


def need(module: str) -> Any:
    """Import an optional test dependency, or skip the test (or, at module level, the
    module) without it.

    `.ci/run` sets `METANIM_REQUIRE` to the modules CI installs (comma-separated): a
    test that needs one of them then fails instead of skipping when it does not
    import, so those tests can never pass in CI by being skipped.
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        required = {m.strip() for m in os.environ.get("METANIM_REQUIRE", "").split(",")}
        if module in required or module.split(".")[0] in required:
            pytest.fail(f"{module} is required here (METANIM_REQUIRE) but does not import: {err}")
        pytest.skip(f"{module} is not installed: {err}", allow_module_level=True)
