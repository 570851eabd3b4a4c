"""Every method on a real llama.cpp server with streaming on: the run's wall time against
the server's own busy time.

SmolLM2-135M-Instruct (the `METANIM_TEST_GGUF` file, or `--gguf`) on llama.cpp's server
(`metanim serve-local`'s `LocalServer`: 1 thread, 1 slot), one `metanim evaluate` per
method (the CLI's entry point, in-process), with no flag about the server: it is found to
be llama.cpp (structured output auto sends each reply's schema) and calls stream. llama.cpp
reports, per request, how long it was busy (`timings`: prompt evaluation and generation,
the same figures as its own `print_timing` log lines); each call records it
(`CallRecord.server_s`). Per method: the run's wall time (its item loop:
`summary.timing.wall_s`) over the sum of the server's busy time. With one slot and one
decision at a time, the server is the bottleneck: a ratio near 1 means the client adds
little (reading the stream, parsing, records) to what the model itself takes.

    python scripts/bench_streaming_real.py --gguf ~/.cache/metanim/SmolLM2-135M-Instruct.Q4_1.gguf
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from _bench import machine, write_section

from metanim import cli
from metanim.datasets import build, write_jsonl
from metanim.llm.local import GGUF_ENV, LocalServer
from metanim.records import read_log

METHODS = (
    "standard", "react", "cot", "sc", "self_refine", "mad", "mpd", "dreamad",
    "dreamad_minus", "plus_mad", "anonymous_mad", "acemad", "cross",
)  # fmt: skip
MODEL = "smollm2"


def run(url: str, data: Path, results: Path, method: str) -> dict[str, Any]:
    spec = method if method != "cross" else f"cross:models={MODEL}@{url}|{MODEL}@{url}"
    argv = [
        "evaluate", "--name", method, "--dataset", str(data), "--method", spec,
        "--model", MODEL, "--base-url", url, "--repeats", "1", "--concurrency", "1",
        "--keep-going", "--results-dir", str(results), "--no-progress",
    ]  # fmt: skip
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(argv)
    (summary_path,) = results.glob(f"{method}-*.summary.json")
    summary = json.loads(summary_path.read_text())
    log = summary_path.with_suffix("").with_suffix(".jsonl")
    calls = [c for r in read_log(log) if r.decision is not None for c in r.decision.calls]
    busy = sum(c.server_s or 0.0 for c in calls)
    (game,) = summary["games"]
    return {
        "method": method,
        "rc": code,
        "decisions": game["graded"],
        "valid": game["graded"] - game["forfeits"] - game["fallbacks"],
        "calls": len(calls),
        "streamed": sum(bool(c.sent.get("stream")) for c in calls),
        "timed": sum(c.server_s is not None for c in calls),
        "busy_s": busy,
        "wall_s": summary["timing"]["wall_s"],
        "mode": summary["config"]["structured_output"],
        "load": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", default=os.environ.get(GGUF_ENV), help="the GGUF model file")
    parser.add_argument("--items", type=int, default=2, help="critical states per method")
    parser.add_argument(
        "--methods", nargs="+", choices=METHODS, default=list(METHODS), help="default: all"
    )
    parser.add_argument("--write", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument(
        "--rows", help="write the section from the JSON lines a run printed (no new run)"
    )
    args = parser.parse_args()
    if args.rows:
        lines = Path(args.rows).read_text().splitlines()
        rows = [json.loads(x) for x in lines if x.startswith("{")]
    else:
        if not args.gguf:
            raise SystemExit(f"give --gguf or set {GGUF_ENV}")
        rows = []
        with tempfile.TemporaryDirectory() as tmp, LocalServer(args.gguf, alias=MODEL) as server:
            data = write_jsonl(
                build("nim", args.items, seed=0, params={"heaps": [7], "max_take": 3}),
                Path(tmp) / "nim7.jsonl",
            )
            for method in args.methods:
                row = run(server.base_url, data, Path(tmp) / "results", method)
                rows.append(row)
                print(json.dumps(row), flush=True)
    if args.write:
        write_section("real-model-streaming", render(rows, args.items))


def render(rows: list[dict[str, Any]], items: int) -> str:
    """The section: a row per method, then every method together."""
    table = [
        "| method | decisions | valid | calls | streamed | server busy s | wall s | wall / busy | load |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        table.append(
            f"| {r['method']} | {r['decisions']} | {r['valid']} | {r['calls']} "
            f"| {r['streamed']}/{r['calls']} | {r['busy_s']:.1f} | {r['wall_s']:.1f} "
            f"| {r['wall_s'] / r['busy_s']:.3f} | {r['load']:.1f} |"
        )
    busy = sum(r["busy_s"] for r in rows)
    wall = sum(r["wall_s"] for r in rows)
    calls = sum(r["calls"] for r in rows)
    streamed = sum(r["streamed"] for r in rows)
    timed = sum(r["timed"] for r in rows)
    table.append(
        f"| **all** | {sum(r['decisions'] for r in rows)} | {sum(r['valid'] for r in rows)} "
        f"| {calls} | {streamed}/{calls} | {busy:.1f} | {wall:.1f} | **{wall / busy:.3f}** | |"
    )
    worst = max(rows, key=lambda r: r["wall_s"] / r["busy_s"])
    return "\n".join(
        [
            "## Every method on a real llama.cpp server, streamed: wall vs the server's busy "
            "time (`scripts/bench_streaming_real.py`)",
            "",
            f"Machine: {machine()}; shared with other jobs (the 1-minute load average after "
            "each run is in the last column). SmolLM2-135M-Instruct (Q4_1) on llama.cpp "
            "(`LocalServer`, **1 thread, 1 slot**), one `metanim evaluate` per method over "
            f"{items} Nim (7, k = 3) critical states, one decision at a time, with no "
            "flag about the server: it is detected as llama.cpp (structured output "
            f"`{rows[0]['mode']}`) and every call streams. Server busy: the sum of llama.cpp's "
            "own per-request `timings` (prompt evaluation + generation) over every call; wall: "
            "the run's item loop (`summary.json` `timing.wall_s`).",
            "",
            "    python scripts/bench_streaming_real.py --gguf ~/.cache/metanim/SmolLM2-135M-Instruct.Q4_1.gguf",
            "",
            *table,
            "",
            f"{timed} of {calls} calls carried the server's timings and {streamed} of {calls} "
            f"were streamed. Over every method the wall time is {wall / busy:.3f}x the "
            f"server's busy time (the highest, {worst['method']}, "
            f"{worst['wall_s'] / worst['busy_s']:.3f}x): what the client adds per call "
            "(the request, the stream read, parsing, the records and the log line) is small "
            "next to what the model takes on one thread.",
        ]
    )


if __name__ == "__main__":
    main()
