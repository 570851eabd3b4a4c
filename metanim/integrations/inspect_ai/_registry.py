"""The `inspect_ai` entry point: importing this module registers the tasks, solvers and scorers."""

from __future__ import annotations

from metanim.integrations.inspect_ai import _games, _tasks  # noqa: F401  (registration on import)
