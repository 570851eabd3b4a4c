"""Wall time of a 50-episode tournament at a fixed simulated latency vs its critical path.

Every simulated call sleeps `latency` seconds on the server, so no schedule can finish
faster than the longest episode's chain of dependent calls times the latency (the
critical-path limit). Episodes, and the independent calls inside a decision, run
concurrently; the target is a wall time within 1.25x of that limit. The sequential
time (every episode's chain, one after the other) is shown for scale.

Then the goal at scale: GOAL_EPISODES episodes (default 256) of the same game, react vs
react (one call in flight per episode: every ply is one model call), all episodes and as
many calls in flight, at 0.5 s and 0.2 s. In the same run, and interleaved with it, a bare
POST loop to the same server: one chain per episode of as many dependent POSTs as that
episode's measured chain, all chains at once, on aiohttp and the event loop the arena uses
(`metanim.util.aio`). Ideal = the longest chain x latency for both; targets: the tournament
within 1.25x of ideal at 0.5 s, 1.35x at 0.2 s, and within 1.15x of the bare loop.

    python scripts/bench_tournament.py [--episodes 50] [--latency 0.05]
        [--goal-episodes 256] [--goal-latency 0.5 0.2] [--goal-repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import aiohttp
from _bench import machine, table, write_section

from metanim.arena import TournamentConfig, run_tournament
from metanim.games import make_game
from metanim.util import aio

#: The setting of every row (the goal's match-up: react on both sides).
GOAL_GAME = "fibonacci-20"

#: base URL -> process id of each running `sim_server_process` (for its CPU time).
SERVER_PIDS: dict[str, int] = {}


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def sim_server_process() -> Iterator[str]:
    """`metanim serve-sim` in its own process, as a real server would be: in-process, the
    server's request handling and the client's would share one interpreter lock."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cmd = [sys.executable, "-m", "metanim.cli", "serve-sim", "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        proc.stdout.readline()  # the server prints its URL once it listens
        SERVER_PIDS[f"http://127.0.0.1:{port}/v1"] = proc.pid
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=50)
    parser.add_argument(
        "--latency",
        type=float,
        nargs="*",
        default=[0.05, 0.5],
        help="seconds per call (a row each)",
    )
    parser.add_argument("--goal-episodes", type=int, default=256)
    parser.add_argument("--goal-latency", type=float, nargs="*", default=[0.5, 0.2])
    parser.add_argument("--goal-repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    rows = []
    goal: dict[float, list[dict[str, float]]] = {}
    with sim_server_process() as base_url:
        # Warm-up, discarded: the server's solver tables and the first connections.
        run_one(base_url, "dreamad", "react", 0.01, 4)
        for latency in args.latency:
            for method, opponent in (("dreamad", "react"), ("react", "react")):
                rows.append(run_one(base_url, method, opponent, latency, args.episodes))
                print(rows[-1], flush=True)
        # Repeats interleaved across latencies and between the tournament and its bare
        # loop, so that a change of load on the shared machine hits both alike.
        for _ in range(args.goal_repeats):
            for latency in args.goal_latency:
                goal.setdefault(latency, []).append(
                    goal_pair(base_url, latency, args.goal_episodes)
                )
                print(latency, goal[latency][-1], flush=True)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    markdown = "\n".join(
        [
            "## Tournament throughput (`scripts/bench_tournament.py`)",
            "",
            f"Machine: {machine()}; load average {load} when it ended.",
            "",
            f"{args.episodes} episodes of Fibonacci Nim (20), seats alternating, all episodes at "
            "once, against the simulated server (`metanim serve-sim`, its own process) with every "
            "call sleeping a fixed latency. Critical-path limit = the longest episode's chain of "
            "dependent calls × latency (measured from the call spans: the longest chain of calls "
            "each starting after the previous one ended). Wall time includes the run's set-up and "
            "summary (after a discarded warm-up run). Target: within 1.25× of the limit. "
            "Sequential = every episode's chain, one after another. Client CPU = the tournament "
            "process's CPU time (arena, methods, parser, log, HTTP client): most of a "
            "millisecond per call, so a wave of ~100 concurrent calls costs tens of ms of CPU, "
            "which weighs on a 50 ms latency and fades at realistic latencies. The machine has 2 "
            "cores shared by the server process, the client and other jobs.",
            "",
            table(
                [
                    "latency s",
                    "match-up",
                    "episodes",
                    "calls",
                    "longest chain",
                    "limit s",
                    "wall s",
                    "wall/limit",
                    "client CPU s",
                    "wall/max(limit, CPU)",
                    "sequential s",
                ],
                rows,
            ),
        ]
    )
    if goal:
        markdown += "\n\n" + goal_markdown(goal, args.goal_episodes, args.goal_repeats)
    print(markdown)
    if not args.no_write:
        write_section("tournament", markdown)


def run_one(base_url: str, method: str, opponent: str, latency: float, episodes: int) -> list:
    """One tournament; returns its table row."""
    with tempfile.TemporaryDirectory() as tmp:
        config = bench_config(base_url, method, opponent, latency, episodes, 1024, tmp)
        result, wall, cpu, _ = timed_tournament(config, base_url)
        # Read while the log exists: a run's records come from its log when first used.
        records = result.records
    chains = [r.chain_calls for r in records]
    calls = sum(r.agent_totals.calls + r.opponent_totals.calls for r in records)
    limit = max(chains) * latency
    return [
        latency,
        f"{method} vs {opponent}",
        len(records),
        calls,
        max(chains),
        f"{limit:.2f}",
        f"{wall:.2f}",
        f"{wall / limit:.2f}x",
        f"{cpu:.2f}",
        f"{wall / max(limit, cpu):.2f}x",
        f"{sum(chains) * latency:.1f}",
    ]


def bench_config(
    base_url: str, method: str, opponent: str, latency: float, episodes: int, calls: int, tmp: str
) -> TournamentConfig:
    """Fibonacci Nim (20), `method` vs `opponent` on `sim-biased` models with `latency`,
    seats alternating, every episode in flight, `calls` calls in flight per model."""
    return TournamentConfig(
        name=f"bench-{method}",
        games=[GOAL_GAME],
        method=method,
        model=f"sim-biased:heuristic=max_take,p=0.3,latency={latency}",
        base_url=base_url,
        opponent=opponent,
        opponent_model=f"sim-biased:heuristic=max_take,p=0.6,latency={latency}",
        opponent_base_url=base_url,
        episodes=episodes,
        seat="alternate",
        concurrency=episodes,
        call_concurrency=calls,
        results_dir=tmp,
        progress=False,
    )


def timed_tournament(config: TournamentConfig, base_url: str) -> tuple[Any, float, float, float]:
    """(the result, wall s, this process's CPU s, the server process's CPU s) of one run."""
    server = process_cpu(SERVER_PIDS[base_url])
    start, cpu_start = time.perf_counter(), time.process_time()
    result = run_tournament(config)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    return result, wall, cpu, process_cpu(SERVER_PIDS[base_url]) - server


def goal_pair(base_url: str, latency: float, episodes: int) -> dict[str, float]:
    """One tournament of `episodes` episodes, all in flight, then its bare POST loop."""
    with tempfile.TemporaryDirectory() as tmp:
        config = bench_config(base_url, "react", "react", latency, episodes, episodes, tmp)
        result, wall, cpu, server = timed_tournament(config, base_url)
        records = result.records
    chains = [r.chain_calls for r in records]
    game = make_game(GOAL_GAME)
    body = json.dumps(
        {
            "model": config.model,
            "messages": [{"role": "user", "content": game.prompt(game.initial_state())}],
            "temperature": 0.0,
            "n": 1,
        }
    ).encode()
    bare_server = process_cpu(SERVER_PIDS[base_url])
    start, cpu_start = time.perf_counter(), time.process_time()
    aio.run(bare_chains(f"{base_url}/chat/completions", body, chains))
    bare, bare_cpu = time.perf_counter() - start, time.process_time() - cpu_start
    bare_server = process_cpu(SERVER_PIDS[base_url]) - bare_server
    return {
        "calls": sum(chains),
        "chain": max(chains),
        "ideal": max(chains) * latency,
        "wall": wall,
        "cpu": cpu,
        "bare": bare,
        "bare_cpu": bare_cpu,
        "server": server,
        "bare_server": bare_server,
    }


async def bare_chains(url: str, body: bytes, chains: list[int]) -> None:
    """One chain of dependent POSTs per episode, all chains at once, each reply read and
    parsed: what the arena's calls are on the wire, without the arena."""
    connector = aiohttp.TCPConnector(limit=len(chains), ttl_dns_cache=None)
    headers = {"Content-Type": "application/json", "Authorization": "Bearer sk-bench"}
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

        async def chain(calls: int) -> None:
            for _ in range(calls):
                async with session.post(url, data=body) as response:
                    json.loads(await response.read())

        await asyncio.gather(*(chain(n) for n in chains))


def goal_markdown(goal: dict[float, list[dict[str, float]]], episodes: int, repeats: int) -> str:
    """The goal's table: per latency, the min over repeats of each wall time."""
    rows = []
    for latency, runs in goal.items():
        wall = min(r["wall"] for r in runs)
        bare = min(r["bare"] for r in runs)
        ideal = min(r["ideal"] for r in runs)
        rows.append(
            [
                latency,
                episodes,
                int(runs[0]["calls"]),
                int(ideal / latency),
                f"{ideal:.2f}",
                f"{wall:.2f}",
                f"{wall / ideal:.2f}x",
                f"{bare:.2f}",
                f"{bare / ideal:.2f}x",
                f"{wall / bare:.2f}x",
                f"{min(r['cpu'] for r in runs):.2f}",
                f"{min(r['bare_cpu'] for r in runs):.2f}",
                f"{min(r['server'] for r in runs):.2f}",
                f"{min(r['bare_server'] for r in runs):.2f}",
            ]
        )
    return "\n".join(
        [
            f"At scale: {episodes} episodes of {GOAL_GAME.replace('-', ' (')}), react vs react "
            "(both `sim-biased` with the latency), all episodes and as many model calls in "
            f"flight (`--concurrency {episodes} --call-concurrency {episodes}`), against the "
            "same server process. Bare loop: in the same run, after each tournament, one chain "
            "per episode of as many dependent POSTs as that episode's measured chain, all "
            "chains at once, on aiohttp and the arena's event loop, each reply parsed. "
            "Ideal = the longest chain x latency. Wall times are the min of "
            f"{repeats} interleaved repeats; the tournament's includes its set-up, log writes "
            "and summary. Targets: tournament/ideal <= 1.25 at 0.5 s and <= 1.35 at 0.2 s, "
            f"tournament/bare <= 1.15. Each wave of {episodes} replies costs the tournament's "
            "process "
            "its CPU per call (method, parser, grading, records, log, beside the same HTTP work "
            "as the bare loop's) before the next wave leaves: where that CPU is a large part of "
            "the latency, or other jobs hold the 2 cores, its wall follows its CPU (compare the "
            "CPU columns).",
            "",
            table(
                [
                    "latency s",
                    "episodes",
                    "calls",
                    "longest chain",
                    "ideal s",
                    "tournament s",
                    "tournament/ideal",
                    "bare loop s",
                    "bare/ideal",
                    "tournament/bare",
                    "tournament CPU s",
                    "bare CPU s",
                    "server CPU s",
                    "server CPU s, bare",
                ],
                rows,
            ),
        ]
    )


if __name__ == "__main__":
    main()
