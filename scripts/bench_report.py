"""What reading a results folder costs: `metanim report` against a bare JSON parse.

Each folder is one run of N NIM episodes (ReAct on the default simulated model against
the optimal player, every decision recorded) made by `scripts/gen_results.py`: the first
1,000 episodes played through the real run loop, the rest replayed from them under the
ids the same run would give (see that script). In fresh processes, one after another:

- *report*: `metanim report DIR --no-plots` (the tables, report.md, the ratings with
  their bootstrap, and the paged viewer; the plots are left out: matplotlib's fixed
  cost says nothing about the folder);
- *bare parse*: the reference, `json.loads` of every line of every log file in the
  folder (`*.jsonl`, and the transcripts beside them), in a loop that keeps nothing.

CPU is user + system seconds of each process (`os.wait4`), the interpreter's start and
imports included; *work* is the report's CPU less that of a process that only imports
what it imports (measured beside it), so that the ratio compares reading with reading.
Peak RSS is the process's high-water mark. The page holds each run's first 2,000
records (`--page-records`; every record is in the tables, the log and the exports).
Goal: the report's CPU within 3x the bare parse, and its peak RSS at most 300 MiB at
100,000 episodes.

    python scripts/bench_report.py                         # 1k, 10k, 100k; writes docs
    python scripts/bench_report.py --sizes 1000,10000 --code /tmp/main --no-write
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine, table, write_section
from gen_results import generate, launcher

BARE_PARSE = (
    "import json, sys, pathlib\n"
    "folder = pathlib.Path(sys.argv[1])\n"
    "for path in sorted([*folder.rglob('*.jsonl'), *folder.rglob('*.transcripts')]):\n"
    "    with path.open('rb') as f:\n"
    "        for line in f:\n"
    "            json.loads(line)\n"
)


def measure(command: list[str]) -> tuple[float, float]:
    """(CPU seconds, peak RSS MiB) of `command` run to its end in a fresh process."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{command} failed with {os.waitstatus_to_exitcode(status)}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def folder_bytes(folder: Path) -> int:
    """Bytes of the run's own files (what the run wrote, not what the report adds)."""
    return sum(p.stat().st_size for p in folder.glob("tournament-*") if p.is_file())


def bench(size: int, folder: Path, code: str | None) -> list[str]:
    if not folder.exists():
        generate(folder, size, code=code)
    written = folder_bytes(folder)
    for extra in ("report.md", "viewer.html", "viewer"):  # a fresh report every time
        target = folder / extra
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink(missing_ok=True)
    parse_cpu, parse_rss = measure([sys.executable, "-c", BARE_PARSE, str(folder)])
    start_cpu, _ = measure([*launcher(code), "report", "--help"])
    report_cpu, report_rss = measure([*launcher(code), "report", str(folder), "--no-plots"])
    work = report_cpu - start_cpu
    return [
        f"{size:,}",
        f"{written / size:,.0f}",
        f"{parse_cpu:.1f}",
        f"{report_cpu:.1f}",
        f"{report_cpu / parse_cpu:.1f}x",
        f"{work:.1f}",
        f"{work / parse_cpu:.1f}x",
        f"{parse_rss:.0f}",
        f"{report_rss:.0f}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--code", help="measure another checkout of the project")
    parser.add_argument("--keep", type=Path, help="keep (and reuse) the folders here")
    parser.add_argument("--no-write", action="store_true", help="print; leave docs alone")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-report-"))
    headers = [
        "episodes", "bytes/episode", "bare parse CPU s", "report CPU s",
        "report / parse", "report work s", "work / parse", "parse peak RSS MiB",
        "report peak RSS MiB",
    ]  # fmt: skip
    rows = []
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            rows.append(bench(size, root / f"n{size}", args.code))
            print(" | ".join(rows[-1]), flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    load = Path("/proc/loadavg").read_text().split()[:3]
    text = (
        "## Reading results (`scripts/bench_report.py`)\n\n"
        f"Machine: {machine()}; load average {', '.join(load)} when it ended.\n\n"
        + (__doc__ or "").split("\n\n", 1)[1].rsplit("\n\n", 1)[0]
        + "\n\n"
        + table(headers, rows)
    )
    print(text)
    if not args.no_write:
        write_section("report", text)


if __name__ == "__main__":
    main()
