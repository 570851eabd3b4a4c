"""Follow one tournament's config through the package, file by file.

Traces (`sys.setprofile`) a one-episode simulated tournament from `arun_tournament` to
its first move and lists every call, from one metanim file into another, that receives
the tournament's config or one of its values as an argument (or an object holding the
config as its `config`: the job, the run): the path of one run's settings through the
layers, up to where they are parsed into typed values. It prints each file with the number
of times the walk entered it, and the walk itself in order.

    python scripts/trace_run.py            # the walk and the per-file counts
    python scripts/trace_run.py --json     # the same as one JSON object

The walk enters each file at most twice (docs/architecture.md, "The flow of one run").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import metanim
from metanim.arena import TournamentConfig, arun_tournament

PACKAGE = Path(metanim.__file__).resolve().parent


def _package_file(frame: FrameType | None) -> str | None:
    if frame is None:
        return None
    path = Path(frame.f_code.co_filename).resolve()
    return str(path.relative_to(PACKAGE.parent)) if path.is_relative_to(PACKAGE) else None


def _parts(config: Any) -> set[int]:
    """The identities of the config and of its field values (each element of a list).

    Numbers, booleans and None are left out: they are shared objects, not the config's.
    """
    parts = {id(config)}
    for value in vars(config).values():
        for each in value if isinstance(value, list) else [value]:
            if each is not None and not isinstance(each, bool | int | float):
                parts.add(id(each))
    return parts


def _holds(frame: FrameType, config: Any, parts: set[int]) -> bool:
    """Whether a call's arguments are the config (or its resolved copy) or one of its
    values, or carry the config as their `config` (the job, the run)."""
    code = frame.f_code
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    for name in names:
        value = frame.f_locals.get(name)
        try:  # the instance's own attributes only: no __getattr__ of a half-made object
            attributes = object.__getattribute__(value, "__dict__")
        except AttributeError:
            attributes = {}
        # The run's config, or its copy with "auto" resolved (the only configs of the trace).
        if id(value) in parts or isinstance(value, type(config)):
            return True
        if isinstance(attributes.get("config"), type(config)):
            return True
    return False


def trace(config: TournamentConfig) -> list[tuple[str, str, str]]:
    """(caller file, callee file, function) of each cross-file call the config takes."""
    walk: list[tuple[str, str, str]] = []
    parts = _parts(config)
    done = False
    # A coroutine reports a "call" each time it resumes: only its first one is an entry.
    started: set[FrameType] = set()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal done
        if done or event != "call" or frame in started:
            return
        started.add(frame)
        callee = _package_file(frame)
        if callee is None:
            return
        if callee.startswith("metanim/games/") and frame.f_code.co_name == "apply":
            done = True  # the first move is being made
            return
        caller = _package_file(frame.f_back)
        if caller is not None and caller != callee and _holds(frame, config, parts):
            walk.append((caller, callee, frame.f_code.co_qualname))

    sys.setprofile(profile)
    try:
        asyncio.run(arun_tournament(config))
    finally:
        sys.setprofile(None)
    return walk


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as results:
        config = TournamentConfig(
            name="trace", games=["nim-31-k3"], method="react", model="sim-optimal",
            opponent="optimal", episodes=1, results_dir=results, progress=False,
        )  # fmt: skip
        walk = trace(config)
    entries = Counter(callee for _, callee, _ in walk)
    if args.json:
        print(json.dumps({"walk": walk, "entries": dict(entries)}, indent=2))
        return 0
    print(f"{len(walk)} cross-file calls carry the config; {len(entries)} files entered")
    for caller, callee, function in walk:
        print(f"  {caller} -> {callee}  {function}")
    print("entries per file:")
    for path, count in entries.most_common():
        print(f"  {count}  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
