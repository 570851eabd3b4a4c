"""Memory of a long tournament: RSS at 1,000 episodes against RSS at 20,000, one run.

A tournament of `--episodes` episodes (react on `sim-optimal` against the optimal
opponent, decisions recorded, `metanim serve-sim` in its own process so that only the
tournament's memory is measured) runs while a thread samples this process's resident
set size and the number of lines in the log. The goal (docs/benchmarks.md, section
"long-run"): the RSS at the end, and its peak, within 1.2x of the RSS when the first
`--early` episodes were logged.

    python scripts/bench_long_run.py [--episodes 20000] [--early 1000] [--no-write]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine, table, write_section
from bench_tournament import sim_server_process

from metanim.arena import TournamentConfig, run_tournament

GAME = 'nim:{"heaps":[9],"max_take":3}'


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


class Sampler(threading.Thread):
    """Every `period` s: (seconds, lines in the log, RSS MiB)."""

    def __init__(self, log: Path, period: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.log, self.period = log, period
        self.samples: list[tuple[float, int, float]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        start, offset, lines = time.perf_counter(), 0, 0
        while not self.stop.wait(self.period):
            if self.log.exists():
                with self.log.open("rb") as f:
                    f.seek(offset)
                    chunk = f.read()
                offset += len(chunk)
                lines += chunk.count(b"\n")
            self.samples.append((time.perf_counter() - start, lines, rss_mib()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20_000)
    parser.add_argument("--early", type=int, default=1_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    with sim_server_process() as url, tempfile.TemporaryDirectory() as tmp:
        config = TournamentConfig(
            name="long-run",
            games=[GAME],
            method="react",
            model="sim-optimal",
            base_url=url,
            opponent="optimal",
            episodes=args.episodes,
            seat="alternate",
            concurrency=args.concurrency,
            call_concurrency=args.concurrency,
            record_decisions=True,
            results_dir=tmp,
            progress=True,  # the bar (and its postfix) is part of what is measured
        )
        sampler = Sampler(config.log_path)
        before = rss_mib()
        sampler.start()
        start, cpu = time.perf_counter(), time.process_time()
        result = run_tournament(config)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        sampler.stop.set()
        sampler.join()
        after = rss_mib()
        log_mib = config.log_path.stat().st_size / 2**20
    samples = sampler.samples
    early = next(rss for _, lines, rss in samples if lines >= args.early)
    peak = max(max(rss for *_, rss in samples), after)
    group = result.summary["groups"][0]
    rows = [
        [f"RSS when {args.early:,} episodes were logged", f"{early:.0f}", "1.00x"],
        [f"RSS after the run ({args.episodes:,} episodes, summary written)", f"{after:.0f}",
         f"{after / early:.2f}x"],
        ["peak RSS sampled during the run", f"{peak:.0f}", f"{peak / early:.2f}x"],
    ]  # fmt: skip
    markdown = "\n".join(
        [
            "## Long runs in flat memory (`scripts/bench_long_run.py`)",
            "",
            f"Machine: {machine()}.",
            "",
            f"One tournament of {args.episodes:,} episodes: react on `sim-optimal` against the "
            f"optimal opponent on `{GAME}` (short episodes keep the run to minutes on a shared "
            f"machine), decisions recorded, progress bar on, {args.concurrency} episodes at once, "
            "`metanim serve-sim` in its own process. A thread samples the process's RSS every "
            f"0.2 s beside the count of logged lines. RSS before the run: {before:.0f} MiB; log "
            f"{log_mib:.0f} MiB; {group['agent']['calls']:,} model calls; wall {wall:.0f} s, "
            f"CPU {cpu:.0f} s. Goal: within 1.2x of the RSS at {args.early:,} episodes.",
            "",
            table(["when", "RSS MiB", "vs early"], rows),
        ]
    )
    print(markdown)
    if not args.no_write:
        write_section("long-run", markdown)


if __name__ == "__main__":
    main()
