"""Client CPU per call against the simulated server (docs/benchmarks.md, section "client").

Three ways to make the same chat call to the same server, `metanim serve-sim` in its own
process (so the figures are the client's alone): a plain aiohttp POST (the floor: one
session, the JSON body, the JSON answer), the bare openai SDK (no retries), and
`OpenAIChatClient.chat` (retries, timeouts, semaphores, records, usage, cost). Each is
timed in CPU seconds of this process (`time.process_time`), sequentially and with
`--concurrency` calls in flight, in rounds that interleave the three so that a load
change on the shared machine hits them alike; the median round is reported.

Then the tournament goals: react (`sim-optimal` with a fixed latency) against the optimal
opponent on nim-31-k3, 256 calls and 512 episodes in flight, against the same server
process. Ideal wall = calls x latency / calls in flight; the client's CPU per decision is
shown beside the plain aiohttp floor at the same latency and concurrency (measured in
the same run).

    python scripts/bench_client.py [--calls 300] [--episodes 512] [--no-write]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import openai

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine, table, write_section
from bench_tournament import sim_server_process, timed_tournament

from metanim.arena import TournamentConfig
from metanim.games import make_game
from metanim.llm import OpenAIChatClient, ResponseCache
from metanim.util import aio

GAME = make_game("nim-31-k3")
MESSAGES = [
    {
        "role": "user",
        "content": GAME.prompt((31,))
        + '\n#Output Format: ```json\n{"reasoning": "...", "action": <integer>}\n```',
    }
]
MODEL = "sim-optimal"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per timing")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--episodes", type=int, default=512, help="tournament episodes")
    parser.add_argument(
        "--latency", type=float, nargs="+", default=[0.5, 0.2], help="tournament latencies"
    )
    parser.add_argument(
        "--tournament-concurrency", type=int, default=256, help="model calls in flight"
    )
    parser.add_argument(
        "--episodes-at-once",
        type=int,
        default=None,
        help="episodes in flight (default: twice the calls in flight)",
    )
    parser.add_argument(
        "--tournament-repeats", type=int, default=2, help="tournaments per latency (rows)"
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    loop = aio.new_event_loop()  # the loop runs use (uvloop where installed)
    calls, conc = args.calls, args.concurrency

    with sim_server_process() as url, tempfile.TemporaryDirectory() as tmp:
        body = {"model": MODEL, "messages": MESSAGES, "temperature": 0.0, "n": 1}
        session = loop.run_until_complete(_session(conc))
        sdk = openai.AsyncOpenAI(
            base_url=url,
            api_key="sk-bench",
            max_retries=0,
            http_client=openai.DefaultAsyncHttpxClient(),
        )
        client = OpenAIChatClient(MODEL, base_url=url, api_key="sk-bench", max_concurrency=conc)
        cache = ResponseCache(Path(tmp) / "cache.sqlite")
        cached = OpenAIChatClient(MODEL, base_url=url, api_key="sk-bench", cache=cache)
        loop.run_until_complete(cached.chat(MESSAGES))

        async def raw_one() -> None:
            async with session.post(f"{url}/chat/completions", json=body) as r:
                await r.json()

        async def sdk_one() -> None:
            await sdk.chat.completions.create(**body)

        async def ours_one() -> None:
            await client.chat(MESSAGES)

        async def hit_one() -> None:
            await cached.chat(MESSAGES)

        async def sequential(one) -> None:
            for _ in range(calls):
                await one()

        async def concurrent(one) -> None:
            sem = asyncio.Semaphore(conc)

            async def limited() -> None:
                async with sem:
                    await one()

            await asyncio.gather(*(limited() for _ in range(calls)))

        kinds = {"raw": raw_one, "sdk": sdk_one, "ours": ours_one}
        cpu: dict[tuple[str, str], list[float]] = {}
        for mode, runner in (("seq", sequential), ("conc", concurrent)):
            for one in kinds.values():  # warm-up: connections, the server's tables
                loop.run_until_complete(runner(one))
            for _ in range(args.rounds):
                for name, one in kinds.items():
                    start = time.process_time()
                    loop.run_until_complete(runner(one))
                    cpu.setdefault((name, mode), []).append((time.process_time() - start) / calls)
        start = time.process_time()
        loop.run_until_complete(sequential(hit_one))
        hit = (time.process_time() - start) / calls
        at_once = args.episodes_at_once or 2 * args.tournament_concurrency
        # A small run first: the server's and the arena's caches, as in any long session.
        tournament_goal(url, loop, args.latency[-1], 64, 64, 64)
        tournament_rows = [
            tournament_goal(url, loop, lat, args.tournament_concurrency, at_once, args.episodes)
            for lat in args.latency
            for _ in range(args.tournament_repeats)
        ]
        loop.run_until_complete(session.close())
        loop.run_until_complete(sdk.close())
        loop.run_until_complete(client.aclose())
        loop.run_until_complete(cached.aclose())
        cache.close()

    med = {k: statistics.median(v) for k, v in cpu.items()}
    us = lambda s: f"{s * 1e6:.0f}"  # noqa: E731
    rows = []
    for name, label in (
        ("raw", "plain aiohttp POST (floor)"),
        ("sdk", "openai SDK, no retries"),
        ("ours", "OpenAIChatClient.chat"),
    ):
        rows.append(
            [
                label,
                us(med[(name, "seq")]),
                f"{med[(name, 'seq')] / med[('raw', 'seq')]:.2f}x",
                us(med[(name, "conc")]),
                f"{med[(name, 'conc')] / med[('raw', 'conc')]:.2f}x",
            ]
        )
    rows.append(["OpenAIChatClient.chat, cache hit", us(hit), "-", "-", "-"])
    markdown = (
        "## LLM client CPU per call (`scripts/bench_client.py`)\n\n"
        f"Machine: {machine()}.\n\n"
        f"The same chat call (n = 1, temperature 0, `{MODEL}`, the Nim 31 prompt) to "
        "`metanim serve-sim` in its own process on loopback; CPU time of the calling process "
        f"per call, median of {args.rounds} interleaved rounds of {calls} calls, one call at a "
        f"time and {conc} in flight. Goal: `OpenAIChatClient.chat` within 1.5x of the plain "
        "aiohttp POST. The machine (2 cores) is shared with other jobs: a busy neighbour "
        "inflates every row of a round alike, so the ratios hold better than the absolute "
        "figures.\n\n"
        + table(
            [
                "call",
                "CPU µs/call, sequential",
                "vs floor",
                f"CPU µs/call, {conc} in flight",
                "vs floor",
            ],
            rows,
        )
    )
    markdown += (
        "\n\nTournament goals: react (`sim-optimal:latency=L`) against the optimal opponent on "
        f"nim-31-k3, {args.episodes} episodes, {args.tournament_concurrency} model calls in "
        f"flight (`--call-concurrency`) and {at_once} episodes in flight (`--concurrency`), "
        "the simulated server in its own process; each latency run "
        f"{args.tournament_repeats} times, after a small warm-up run. Ideal = calls x latency "
        "/ calls in flight (every slot busy all the time); wall time includes the run's "
        "set-up, the log writes and the summary. Goals: wall/ideal <= 1.25 at 0.5 s, <= 1.5 "
        "at 0.2 s. Client CPU = the tournament process's CPU time (arena, method, parser, "
        "log, client); server CPU = the simulated server's. When either exceeds the ideal, the "
        "run is bound by CPU, not latency (the two share the machine's 2 cores). The client's "
        "CPU per decision is shown beside the plain aiohttp POST's CPU per call at the same "
        "latency and concurrency, and the floor's own wall time over the same ideal (as many "
        "plain POSTs, independent of each other: no episodes, no arena, as many in flight, to "
        "the same server; the best this machine, server and transport allow). Why more "
        "episodes than call slots: an episode holds no slot "
        "between its calls (the opponent's move, parsing, logging), and a run of as many "
        "episodes as slots cannot keep them busy: its wall is bounded below by the longest "
        "run of episodes one slot plays in sequence (two 8-call episodes = 16 latencies "
        "against an ideal of 12.2).\n\n"
        + table(
            [
                "latency s",
                "episodes",
                "calls",
                "ideal s",
                "wall s",
                "wall/ideal",
                "client CPU s",
                "server CPU s",
                "CPU µs/decision",
                "aiohttp floor µs/call",
                "CPU/floor",
                "floor wall/ideal",
            ],
            tournament_rows,
        )
    )
    print(markdown)
    if not args.no_write:
        write_section("client", markdown)


def tournament_goal(
    url: str,
    loop: asyncio.AbstractEventLoop,
    latency: float,
    concurrency: int,
    at_once: int,
    episodes: int,
) -> list:
    """One tournament at `latency` and its aiohttp floor; returns its table row."""
    model = f"sim-optimal:latency={latency}"
    with tempfile.TemporaryDirectory() as tmp:
        config = TournamentConfig(
            name="bench-client",
            games=["nim-31-k3"],
            method="react",
            model=model,
            base_url=url,
            opponent="optimal",
            episodes=episodes,
            seat="alternate",
            concurrency=at_once,
            call_concurrency=concurrency,
            results_dir=tmp,
            progress=False,
        )
        result, wall, cpu, server_cpu = timed_tournament(config, url)
    calls = result.summary["groups"][0]["agent"]["calls"]
    decisions = result.summary["groups"][0]["agent"]["moves"]
    ideal = calls * latency / concurrency
    # The floor: as many plain POSTs, as many in flight, to the same model and latency.
    body = {"model": model, "messages": MESSAGES, "temperature": 0.0, "n": 1}
    sem = asyncio.Semaphore(concurrency)
    # A pool as large as the calls in flight (the shared session's is the client rows').
    session = loop.run_until_complete(_session(concurrency))

    async def post() -> None:
        async with sem, session.post(f"{url}/chat/completions", json=body) as r:
            await r.json()

    async def floor() -> None:
        await asyncio.gather(*(post() for _ in range(calls)))

    cpu_start = time.process_time()
    floor_start = time.perf_counter()
    loop.run_until_complete(floor())
    floor_wall = time.perf_counter() - floor_start
    floor_cpu = (time.process_time() - cpu_start) / calls
    loop.run_until_complete(session.close())
    row = [
        latency,
        result.summary["groups"][0]["episodes"],
        calls,
        f"{ideal:.2f}",
        f"{wall:.2f}",
        f"{wall / ideal:.2f}x",
        f"{cpu:.2f}",
        f"{server_cpu:.2f}",
        f"{cpu / decisions * 1e6:.0f}",
        f"{floor_cpu * 1e6:.0f}",
        f"{cpu / decisions / floor_cpu:.2f}x",
        f"{floor_wall / ideal:.2f}x",
    ]
    print(row, flush=True)
    return row


async def _session(limit: int) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(
        headers={"Authorization": "Bearer sk-bench"},
        connector=aiohttp.TCPConnector(limit=limit),
    )


if __name__ == "__main__":
    main()
