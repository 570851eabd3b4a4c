"""Client overhead per call against the simulated server (docs/benchmarks.md, section "client").

Four ways to make the same sequential chat call to the same local server:
plain aiohttp (the floor: HTTP plus the simulator's own work), the bare openai SDK,
`OpenAIChatClient` (SDK + retry loop, semaphore, records, cost), and a cache hit.
The client's overhead is its per-call time minus plain aiohttp's.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

import aiohttp
import openai

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine, median_time, table, write_section

from metanim.games import make_game
from metanim.llm import OpenAIChatClient, ResponseCache
from metanim.llm.sim import SimServer

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
    parser.add_argument("--calls", type=int, default=200, help="sequential calls per timing")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    loop = asyncio.new_event_loop()
    calls = args.calls

    with SimServer() as server, tempfile.TemporaryDirectory() as tmp:
        url = server.base_url
        body = {"model": MODEL, "messages": MESSAGES, "temperature": 0.0, "n": 1}
        session = loop.run_until_complete(_session())
        sdk = openai.AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=0)
        client = OpenAIChatClient(MODEL, base_url=url, api_key="sk-bench")
        cache = ResponseCache(Path(tmp) / "cache.sqlite")
        cached = OpenAIChatClient(MODEL, base_url=url, api_key="sk-bench", cache=cache)
        loop.run_until_complete(cached.chat(MESSAGES))

        async def raw() -> None:
            for _ in range(calls):
                async with session.post(f"{url}/chat/completions", json=body) as r:
                    await r.json()

        async def bare_sdk() -> None:
            for _ in range(calls):
                await sdk.chat.completions.create(**body)

        async def ours() -> None:
            for _ in range(calls):
                await client.chat(MESSAGES)

        async def hits() -> None:
            for _ in range(calls):
                await cached.chat(MESSAGES)

        async def concurrent() -> None:
            await asyncio.gather(*(client.chat(MESSAGES) for _ in range(calls)))

        def timed(fn) -> float:
            return median_time(lambda: loop.run_until_complete(fn()), repeats=args.repeats) / calls

        t_raw, t_sdk, t_ours, t_hit = timed(raw), timed(bare_sdk), timed(ours), timed(hits)
        t_conc = timed(concurrent)
        loop.run_until_complete(session.close())

    ms = lambda s: f"{s * 1e3:.3f}"  # noqa: E731
    rows = [
        ["plain aiohttp POST (floor)", ms(t_raw), "-"],
        ["openai SDK, no retries", ms(t_sdk), ms(t_sdk - t_raw)],
        ["OpenAIChatClient.chat", ms(t_ours), ms(t_ours - t_raw)],
        ["OpenAIChatClient.chat, cache hit", ms(t_hit), "-"],
        ["OpenAIChatClient.chat, 8 in flight (per call)", ms(t_conc), "-"],
    ]
    markdown = (
        "## LLM client overhead (`scripts/bench_client.py`)\n\n"
        f"Machine: {machine()}.\n\n"
        f"Sequential chat calls (n = 1, temperature 0) to the simulated server on loopback "
        f"(`{MODEL}`, the Nim 31 prompt), median of {args.repeats} runs of {calls} calls. "
        "Overhead = per-call time minus the plain aiohttp floor, which already includes the "
        "server's own work (parsing the prompt, solving, writing the answer). The server runs "
        "in a thread of the same process, so client and server share one GIL: the figures "
        "are an upper bound on the client's cost, and negligible beside a real model's "
        "latency (hundreds of ms).\n\n"
        + table(["call", "ms per call", "overhead vs floor (ms)"], rows)
        + f"\n\nOur layer over the bare SDK: {ms(t_ours - t_sdk)} ms per call."
    )
    print(markdown)
    if not args.no_write:
        write_section("client", markdown)


async def _session() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(headers={"Authorization": "Bearer sk-bench"})


if __name__ == "__main__":
    main()
