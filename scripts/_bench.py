"""Shared helpers of the benchmark scripts: timing, peak memory, machine facts, and
writing one section of docs/benchmarks.md without touching the others."""

from __future__ import annotations

import os
import platform
import re
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Where sections go: docs/benchmarks.md, or the file `METANIM_BENCH_DOC` names (a smoke
#: run of every script in the test suite writes there, never into the docs).
DOC = Path(
    os.environ.get("METANIM_BENCH_DOC")
    or Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
)
HEADER = (
    "# Benchmarks\n\n"
    "Written by the scripts under `scripts/` (`python scripts/bench_*.py`): each section "
    "lies between the comments its script writes, and holds the figures of that script's "
    "last run, measured on the machine it names, in the same run as its reference; tests "
    "never assert wall-clock times.\n"
)


def machine() -> str:
    """One line naming the machine a benchmark ran on."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import numba
    import numpy

    return (
        f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"numpy {numpy.__version__}, numba {numba.__version__}"
    )


def median_time(fn: Callable[[], Any], repeats: int = 5, warmup: int = 1) -> float:
    """Median wall time of `fn()` in seconds, after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_python_memory(fn: Callable[[], Any]) -> int:
    """Peak bytes allocated through Python's allocator (numpy arrays included) by `fn()`."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def markers(script: str, name: str) -> tuple[str, str]:
    """The comments that open and close section `name`, written by `scripts/<script>`.

    docs/benchmarks.md holds figures only between such pairs (tests/test_benchmarks_doc.py
    checks it), so every number in it is rewritten by the script that measures it.
    """
    return f"<!-- written by scripts/{script}: {name} -->", f"<!-- end of {name} -->"


def write_section(name: str, markdown: str, script: str | None = None) -> None:
    """Replace (or append) the section `name` of docs/benchmarks.md.

    `script` is the file name of the writing script (default: the one running).
    """
    DOC.parent.mkdir(parents=True, exist_ok=True)
    text = DOC.read_text() if DOC.exists() else HEADER
    if script is None:
        script = Path(sys.modules["__main__"].__file__ or "unknown").name
    start, end = markers(script, name)
    block = f"{start}\n{markdown.strip()}\n{end}"
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.DOTALL)
    text = (
        pattern.sub(lambda _: block, text)
        if pattern.search(text)
        else text.rstrip() + "\n\n" + block + "\n"
    )
    DOC.write_text(text)


def table(headers: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table."""
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def random_steps(env: Any, info: dict[str, Any], steps: int, picker: Any) -> tuple[float, Any]:
    """`steps` random legal `env.step()` calls from `info` (the last reset's or step's):
    the seconds spent inside `step()` (resets not counted) and the last info."""
    import numpy as np

    inside = 0.0
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        action = int(legal[int(picker.integers(len(legal)))])
        start = time.perf_counter()
        _, _, terminated, _, info = env.step(action)
        inside += time.perf_counter() - start
        if terminated:
            _, info = env.reset()
    return inside, info
