"""The simulated server's memory over many calls (docs/benchmarks.md, section "sim-memory").

Each measurement runs in a fresh subprocess that sends distinct requests (a new seed and
position each time, the worst case for the attempt counts) and samples RSS (VmRSS) every
`--every` calls. By default the requests go in-process to `SimApp.complete`, the whole
request path of the HTTP handler after the socket (body parsing, attempt counting,
faults, answering, the log), which keeps a 100,000-call run short on a shared machine;
`--http` sends them over loopback HTTP with aiohttp (16 in flight) instead. The bounded server (the default `log_limit`) is compared with a reference in the
same run: the same server told to keep every record in memory (`log_limit` = the number of
calls), which is how the server behaved before its log was bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine, table, write_section


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def child(calls: int, every: int, log_limit: int | None, http: bool) -> None:
    """Run `calls` requests and print one JSON line of RSS samples."""
    import aiohttp

    from metanim.games import make_game
    from metanim.llm.sim import SimApp, SimServer

    game = make_game("nim-31-k3")
    fmt = '\n#Output Format: ```json\n{"reasoning": "...", "action": <integer>}\n```'
    prompts = [game.prompt((n,)) + fmt for n in range(1, 32)]
    kwargs = {} if log_limit is None else {"log_limit": log_limit}
    samples: list[tuple[int, float]] = [(0, rss_mb())]

    async def run(url: str) -> None:
        done = 0
        queue: asyncio.Queue[int] = asyncio.Queue()
        for i in range(calls):
            queue.put_nowait(i)
        async with aiohttp.ClientSession() as session:

            async def worker() -> None:
                nonlocal done
                while not queue.empty():
                    i = queue.get_nowait()
                    body = {
                        "model": "sim-biased:p=0.7",
                        "messages": [{"role": "user", "content": prompts[i % len(prompts)]}],
                        "temperature": 0.7,
                        "seed": i,
                    }
                    async with session.post(f"{url}/chat/completions", json=body) as response:
                        await response.read()
                        assert response.status == 200
                    done += 1
                    if done % every == 0:
                        samples.append((done, rss_mb()))

            await asyncio.gather(*(worker() for _ in range(16)))

    def body(i: int) -> bytes:
        return json.dumps(
            {
                "model": "sim-biased:p=0.7",
                "messages": [{"role": "user", "content": prompts[i % len(prompts)]}],
                "temperature": 0.7,
                "seed": i,
            }
        ).encode()

    async def direct(app: SimApp) -> None:
        for i in range(calls):
            status, _, _ = await app.complete(body(i))
            assert status == 200
            if (i + 1) % every == 0:
                samples.append((i + 1, rss_mb()))

    start = time.perf_counter()
    if http:
        with SimServer(**kwargs) as server:
            asyncio.run(run(server.base_url))
            kept = len(server.log)
    else:
        app = SimApp(**kwargs)
        asyncio.run(direct(app))
        kept = len(app.log)
    print(json.dumps({"samples": samples, "kept": kept, "seconds": time.perf_counter() - start}))


def measure(calls: int, every: int, log_limit: int | None, http: bool) -> dict:
    args = [sys.executable, __file__, "--child", "--calls", str(calls), "--every", str(every)]
    if http:
        args.append("--http")
    if log_limit is not None:
        args += ["--log-limit", str(log_limit)]
    out = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--reference-calls", type=int, default=30_000)
    parser.add_argument("--every", type=int, default=10_000)
    parser.add_argument("--log-limit", type=int, default=None)
    parser.add_argument("--http", action="store_true", help="over loopback HTTP")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    if args.child:
        child(args.calls, args.every, args.log_limit, args.http)
        return
    bounded = measure(args.calls, args.every, None, args.http)
    reference = measure(args.reference_calls, args.every, args.reference_calls, args.http)
    b = dict(bounded["samples"])
    r = dict(reference["samples"])
    first = args.every
    rows = []
    for n in sorted(set(b) | set(r)):
        rows.append(
            [
                f"{n:,}",
                f"{b[n]:.0f}" if n in b else "-",
                f"{r[n]:.0f}" if n in r else "-",
            ]
        )
    growth_b = (b[max(b)] - b[first]) / ((max(b) - first) / 10_000)
    growth_r = (r[max(r)] - r[first]) / ((max(r) - first) / 10_000)
    text = "\n".join(
        [
            "## Simulated server memory (`scripts/bench_sim_memory.py`)",
            "",
            f"Machine: {machine()}.",
            "",
            f"{args.calls:,} chat calls "
            + (
                "over loopback HTTP (16 in flight"
                if args.http
                else "to `SimApp.complete` in-process (the HTTP handler's whole path after "
                "the socket"
            )
            + ", every request distinct), RSS of the server's process sampled every "
            f"{args.every:,} calls. Bounded: the default request log "
            f"(`log_limit` = {bounded['kept']:,} records in memory, attempt counts and task "
            "cache bounded too). Reference, same run: the same server keeping every record "
            f"(`log_limit` = calls), {args.reference_calls:,} calls.",
            "",
            table(["calls", "RSS bounded (MB)", "RSS keep-all reference (MB)"], rows),
            "",
            f"Growth after the first {first:,} calls: bounded {growth_b:+.1f} MB per 10,000 "
            f"calls over {max(b):,} calls (RSS at {max(b):,} / at {first:,}: "
            f"{b[max(b)] / b[first]:.2f}); keep-all reference {growth_r:+.1f} MB per 10,000 "
            f"calls. Wall time of the bounded run: {bounded['seconds']:.0f} s.",
        ]
    )
    print(text)
    if not args.no_write:
        write_section("sim-memory", text)


if __name__ == "__main__":
    main()
