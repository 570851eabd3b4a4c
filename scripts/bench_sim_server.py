"""Server CPU per chat request of `metanim serve-sim`, against a reference checkout.

Each server runs in its own process (`metanim serve-sim`, as a tournament's would); a
plain aiohttp client sends `--calls` requests with a Nim 31 react prompt (sampled at
T = 0.7 with a seed per call, as a tournament's agents call), `--concurrency` in flight,
and the server's CPU seconds (user + system, /proc) over those calls are divided by
their number. One row per model and latency: `sim-optimal` has one possible answer
there, `sim-biased:heuristic=min_take,p=0.6` draws between two. With `--ref PATH` a
second server runs from another checkout (e.g. `git worktree add /tmp/srvref <commit>`),
and the two are measured in turns, so the ratio is same-run; medians over `--rounds`.

    PYTHONPATH=$PWD python scripts/bench_sim_server.py --ref /tmp/srvref
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import socket
import statistics
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine, table, write_section
from bench_client import MESSAGES  # a Nim 31 react prompt
from bench_tournament import process_cpu


@contextlib.contextmanager
def server(pythonpath: str) -> Iterator[tuple[str, int]]:
    """`metanim serve-sim` from the checkout at `pythonpath`: (base URL, pid)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": pythonpath}
    cmd = [sys.executable, "-m", "metanim.cli", "serve-sim", "--port", str(port)]
    # cwd too: `python -m` puts the working directory first on the path.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env, cwd=pythonpath)
    try:
        assert proc.stdout is not None
        proc.stdout.readline()  # printed once it listens
        yield f"http://127.0.0.1:{port}/v1", proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def _send(url: str, calls: int, concurrency: int, latency: float, model: str) -> None:
    model = f"{model}{',' if ':' in model else ':'}latency={latency}" if latency else model
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        gate = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            # Sampled with a per-call seed, as a tournament's agents call.
            body = {"model": model, "messages": MESSAGES, "temperature": 0.7, "seed": i, "n": 1}
            async with gate, session.post(f"{url}/chat/completions", json=body) as r:
                assert r.status == 200, await r.text()
                await r.read()

        await asyncio.gather(*(one(i) for i in range(calls)))


def cpu_per_call(
    url: str, pid: int, calls: int, concurrency: int, latency: float, model: str
) -> float:
    """Server CPU µs per request over `calls` requests."""
    before = process_cpu(pid)
    asyncio.run(_send(url, calls, concurrency, latency, model))
    return (process_cpu(pid) - before) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--latency", type=float, nargs="+", default=[0.0, 0.2])
    parser.add_argument(
        "--model",
        nargs="+",
        # One answer possible (Nim 31: take 3), and a draw between two.
        default=["sim-optimal", "sim-biased:heuristic=min_take,p=0.6"],
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ref", default=None, help="checkout of the reference code")
    parser.add_argument(
        "--ref-name", default=None, help="what the reference is, for docs (e.g. a commit)"
    )
    parser.add_argument(
        "--write", action="store_true", help="write the docs/benchmarks.md section (needs --ref)"
    )
    args = parser.parse_args()
    rows: list[list[object]] = []
    here = str(Path(__file__).resolve().parent.parent)
    paths = {"new": here} | ({"ref": args.ref} if args.ref else {})
    with contextlib.ExitStack() as stack:
        servers = {name: stack.enter_context(server(path)) for name, path in paths.items()}
        for url, pid in servers.values():  # warm up: imports, caches, first connections
            cpu_per_call(url, pid, 300, args.concurrency, 0.0, args.model[0])
        for model, latency in itertools.product(args.model, args.latency):
            times: dict[str, list[float]] = {name: [] for name in servers}
            for r in range(args.rounds):
                order = list(servers) if r % 2 == 0 else list(servers)[::-1]
                for name in order:
                    url, pid = servers[name]
                    times[name].append(
                        cpu_per_call(url, pid, args.calls, args.concurrency, latency, model)
                    )
            med = {name: statistics.median(t) for name, t in times.items()}
            line = f"{model}, latency {latency:g} s: " + ", ".join(
                f"{name} {med[name]:.0f} µs/request (runs {', '.join(f'{t:.0f}' for t in ts)})"
                for name, ts in times.items()
            )
            if "ref" in med:
                line += f"; new/ref {med['new'] / med['ref']:.2f}"
                rows.append(
                    [
                        f"`{model}`",
                        f"{latency:g}",
                        f"{med['ref']:.0f}",
                        f"{med['new']:.0f}",
                        f"{med['new'] / med['ref']:.2f}x",
                    ]
                )
            print(line, flush=True)
    if args.write and rows:
        write_section(
            "sim-server",
            "## Simulated server CPU per request (`scripts/bench_sim_server.py`)\n\n"
            f"Machine: {machine()}.\n\n"
            "`metanim serve-sim` in its own process, this checkout against the reference "
            f"checkout ({args.ref_name or args.ref}), each sent {args.calls} chat requests "
            f"(a Nim 31 react prompt, T = 0.7, a seed per call) with {args.concurrency} in "
            "flight by a plain aiohttp client; server CPU (user + system) per request, "
            f"median of {args.rounds} rounds taken in turns. `sim-optimal` has one possible "
            "answer to this prompt, the biased model draws between two. The server's CPU "
            "sits on a tournament's critical path: requests come in bursts as wide as the "
            "calls in flight, and each waits for the ones ahead of it.\n\n"
            + table(["model", "latency s", "reference µs", "this µs", "ratio"], rows),
        )


if __name__ == "__main__":
    main()
