"""Decisions per second of every method against the simulated server with a fixed latency.

Each simulated call sleeps `LATENCY` seconds server-side, so a decision cannot finish
faster than (dependent calls) x LATENCY: the critical-path limit. At concurrency 1 the
ceiling is 1 / (depth x LATENCY); at concurrency C it is C times that. The measured rate
shows how close each method's asyncio fan-out comes to it (real HTTP, one client).

    python scripts/bench_methods.py
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import machine, table, write_section

from metanim.agents import build_method, make_client
from metanim.agents.tasks import GameTask
from metanim.games import make_game
from metanim.llm.sim import SimServer

LATENCY = 0.05
MODEL = f"sim-optimal:latency={LATENCY}"
# (spec, calls per decision, dependent calls on the critical path) with optimal agents
# (debates reach consensus at once, the MPD judge breaks after round 1).
METHODS = [
    ("standard", 1, 1),
    ("react", 1, 1),
    ("cot", 1, 1),
    ("sc", 5, 1),
    ("refine", 7, 7),
    ("mad", 2, 1),
    ("anon_mad", 2, 1),
    ("dreamad", 6, 4),
    ("dreamad_minus", 4, 4),
    ("plus_mad", 5, 4),
    ("mpd", 3, 3),
    ("acemad", 30, 6),
    ("cross:models=M|M", 4, 2),
]


async def throughput(
    base_url: str, spec: str, concurrency: int, decisions: int
) -> tuple[float, int]:
    client = make_client(f"{MODEL}@{base_url}", api_key="sim", max_concurrency=1024)
    method = build_method(spec.replace("M", MODEL), MODEL, client_factory=lambda _: client)
    game = make_game("fibonacci-20")
    task = GameTask(game, game.initial_state())
    gate = asyncio.Semaphore(concurrency)
    calls = 0

    async def one(seed: int) -> None:
        nonlocal calls
        async with gate:
            d = await method.decide(task, seed=seed)
            calls += d.n_calls

    await one(-1)  # warm the connection pool
    calls = 0
    start = time.perf_counter()
    await asyncio.gather(*(one(s) for s in range(decisions)))
    elapsed = time.perf_counter() - start
    await client.aclose()
    return decisions / elapsed, calls // decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", help="the methods to time (default: every one)")
    args = parser.parse_args()
    rows = []
    with SimServer() as server:
        for spec, expected_calls, depth in METHODS:
            if args.methods and spec not in args.methods:
                continue
            row = [f"`{spec.split(':')[0]}`", depth]
            for concurrency, decisions in ((1, 6), (32, 96)):
                rate, calls = asyncio.run(throughput(server.base_url, spec, concurrency, decisions))
                assert calls == expected_calls, (spec, calls)
                limit = concurrency / (depth * LATENCY)
                row += [f"{rate:.1f}", f"{limit:.1f}", f"{rate / limit:.0%}"]
            row.append(f"{rate * calls:.0f}")
            row.insert(1, expected_calls)
            rows.append(row)
            print(row, flush=True)
    body = (
        f"Machine: {machine()}.\n\n"
        f"Simulated server on localhost, `{MODEL}` ({LATENCY * 1000:.0f} ms per call, "
        "server-side sleep), Fibonacci Nim from 20 stones, one client over real HTTP. "
        "Limit = concurrency / (dependent calls x latency), the critical-path ceiling; "
        "decisions at concurrency 1: 6, at 32: 96. At concurrency 32 every method tops out "
        "near the same number of calls per second: the ceiling there is the CPU cost per "
        "call of the client and the simulated server (one process, prompt parsing and "
        "solving per request), not the methods' dependency structure.\n\n"
        + table(
            [
                "method",
                "calls/decision",
                "dependent calls",
                "dec/s @1",
                "limit @1",
                "of limit @1",
                "dec/s @32",
                "limit @32",
                "of limit @32",
                "calls/s @32",
            ],
            rows,
        )
    )
    write_section("methods", "## Methods: decisions per second\n\n" + body)


if __name__ == "__main__":
    main()
