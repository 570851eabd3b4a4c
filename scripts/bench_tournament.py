"""Wall time of a 50-episode tournament at a fixed simulated latency vs its critical path.

Every simulated call sleeps `latency` seconds on the server, so no schedule can finish
faster than the longest episode's chain of dependent calls times the latency (the
critical-path limit). Episodes, and the independent calls inside a decision, run
concurrently; the target is a wall time within 1.25x of that limit. The sequential
time (every episode's chain, one after the other) is shown for scale.

    python scripts/bench_tournament.py [--episodes 50] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import machine, table, write_section

from metanim.arena import TournamentConfig, run_tournament

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
        nargs="+",
        default=[0.05, 0.5],
        help="seconds per call (a row each)",
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    rows = []
    with sim_server_process() as base_url:
        # Warm-up, discarded: the server's solver tables and the first connections.
        run_one(base_url, "dreamad", "react", 0.01, 4)
        for latency in args.latency:
            for method, opponent in (("dreamad", "react"), ("react", "react")):
                rows.append(run_one(base_url, method, opponent, latency, args.episodes))
                print(rows[-1], flush=True)
    markdown = "\n".join(
        [
            "## Tournament throughput (`scripts/bench_tournament.py`)",
            "",
            f"Machine: {machine()}.",
            "",
            f"{args.episodes} episodes of Fibonacci Nim (20), seats alternating, all episodes at "
            "once, against the simulated server (`metanim serve-sim`, its own process) with every "
            "call sleeping a fixed latency. Critical-path limit = the longest episode's chain of "
            "dependent calls × latency (measured from the call spans: the longest chain of calls "
            "each starting after the previous one ended). Wall time includes the run's set-up and "
            "summary (after a discarded warm-up run). Target: within 1.25× of the limit. Sequential = every episode's chain, one "
            "after another. Client CPU = the tournament process's CPU time : the OpenAI SDK and its HTTP pool cost a few ms per call "
            "(see the client section), so a wave of ~100 concurrent calls costs a few hundred ms "
            "of CPU, which dominates a 50 ms latency and fades at realistic latencies. The machine "
            "has 2 cores shared by the server process, the client and other jobs.",
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
    print(markdown)
    if not args.no_write:
        write_section("tournament", markdown)


def run_one(base_url: str, method: str, opponent: str, latency: float, episodes: int) -> list:
    """One tournament; returns its table row."""
    lat = f"latency={latency}"
    with tempfile.TemporaryDirectory() as tmp:
        config = TournamentConfig(
            name=f"bench-{method}",
            games=["fibonacci-20"],
            method=method,
            model=f"sim-biased:heuristic=max_take,p=0.3,{lat}",
            base_url=base_url,
            opponent=opponent,
            opponent_model=f"sim-biased:heuristic=max_take,p=0.6,{lat}",
            opponent_base_url=base_url,
            episodes=episodes,
            seat="alternate",
            concurrency=episodes,
            call_concurrency=1024,
            results_dir=tmp,
            progress=False,
        )
        start, cpu_start = time.perf_counter(), time.process_time()
        result = run_tournament(config)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        # Read while the log exists: a run's records come from its log when first used.
        records = result.records
    chains = [r["chain_calls"] for r in records]
    calls = sum(r["agent_totals"]["calls"] + r["opponent_totals"]["calls"] for r in records)
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


if __name__ == "__main__":
    main()
