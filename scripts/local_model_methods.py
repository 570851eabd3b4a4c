"""Every method on a real local model, structured output `auto` against `off`.

SmolLM2-135M-Instruct on llama.cpp (`metanim serve-local`'s server, 1 thread, 1 slot)
decides a few Nim (7, k = 3) critical states per method through `metanim evaluate`, once
with no structured-output flag (auto: llama.cpp says it constrains output, so each reply's
schema is sent) and once with `--structured-output off` (the papers' prompts alone, the
default cap). Each run is bounded by `--max-calls` and made with `--keep-going` (an
all-forfeit run is the measurement here). Per run: decisions with a valid answer, forfeits,
the replies cut at the cap / unparsable / illegal, wall time per finished decision, and
latency and queue wait per call. Figures move with the machine's load (printed).

    python scripts/local_model_methods.py --gguf ~/.cache/metanim/SmolLM2-135M-Instruct.Q4_1.gguf
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from _bench import write_section

from metanim import cli
from metanim.datasets import build, write_jsonl
from metanim.llm.local import LocalServer

METHODS = ("standard", "react", "cot", "sc", "mad", "anon_mad", "mpd", "dreamad", "acemad")
MODES = ("auto", "off")


def run(url: str, data: Path, results: Path, method: str, mode: str, max_calls: int) -> dict:
    name = f"{method}-{mode}"
    argv = [
        "evaluate", "--name", name, "--dataset", str(data), "--method", method,
        "--model", "smollm2", "--base-url", url, "--repeats", "1", "--concurrency", "1",
        "--max-calls", str(max_calls), "--keep-going", "--timeout-s", "900",
        "--results-dir", str(results), "--no-progress",
    ]  # fmt: skip
    if mode != "auto":
        argv += ["--structured-output", mode]
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(argv)
    wall = time.perf_counter() - start
    (path,) = results.glob(f"{name}-*.summary.json")
    summary = json.loads(path.read_text())
    (g,) = summary["games"]
    timing = summary["timing"]
    return {
        "method": method,
        "mode": mode,
        "resolved": summary["config"]["structured_output"],
        "rc": code,
        "decisions": g["graded"],
        "valid": g["graded"] - g["forfeits"] - g["fallbacks"],
        "forfeits": g["forfeits"],
        "correct": g["correct"],
        "truncated": g["truncated"],
        "unparsable": g["unparsable"],
        "illegal": g["illegal"],
        "calls": g["calls"],
        "s_per_decision": timing["s_per_decision"],
        "latency_per_call_s": g["latency_per_call_s"],
        "queue_per_call_s": g["queue_per_call_s"],
        "command_wall_s": wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", default=os.environ.get("METANIM_TEST_GGUF"))
    parser.add_argument("--items", type=int, default=3, help="critical states per run")
    parser.add_argument("--max-calls", type=int, default=12, help="each run's call budget")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--out", default="local_model_methods.json", help="the rows, as JSON")
    parser.add_argument("--rows", help="write the section from the rows an earlier run saved")
    args = parser.parse_args()
    if args.rows:
        write_section("local-methods", section(json.loads(Path(args.rows).read_text())))
        return
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, LocalServer(args.gguf, threads=1) as server:
        records = build("nim", args.items, seed=0, params={"heaps": [7], "max_take": 3})
        data = write_jsonl(records, Path(tmp) / "nim7.jsonl")
        for method in args.methods.split(","):
            for mode in MODES:
                row = run(server.base_url, data, Path(tmp), method, mode, args.max_calls)
                row["load"] = os.getloadavg()[0]
                row["items"] = args.items
                rows.append(row)
                print(json.dumps(row), flush=True)
                Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
    markdown = section(rows)
    print(markdown)
    write_section("local-methods", markdown)


def section(rows: list[dict[str, Any]]) -> str:
    """The benchmarks section: how the runs were made, the table, what it shows."""
    lines = [
        "## Every method on a real local model, structured output auto vs off "
        "(`scripts/local_model_methods.py`)",
        "",
        "SmolLM2-135M-Instruct (Q4_1) on llama.cpp (`LocalServer`, **1 thread, 1 slot**, "
        "4096-token context), the shared 2-core machine (the 1-minute load average at the end "
        "of each run is in the last column: other jobs shared the cores). Each row is one "
        f"`metanim evaluate` of {rows[0]['items'] if rows else '?'} Nim (7, k = 3) critical "
        "states, `--concurrency 1 --keep-going` under a call budget, default method "
        "parameters and the default completion cap; `auto` is the run with no "
        "structured-output flag (llama.cpp answers `/props`, so each reply's schema is sent), "
        "`off` the papers' prompts alone. A run stops starting decisions once its budget is "
        "spent, so a method of many calls per decision finishes fewer. Decisions: finished; "
        "valid: with an answer of their own; replies: the cut (at the cap, any phase, free "
        "text included) / unparsable / illegal replies; s/decision: the run's wall time per "
        "finished decision (slot waits included); latency and queue wait per call apart.",
        "",
        "    python scripts/local_model_methods.py --gguf ~/.cache/metanim/SmolLM2-135M-Instruct.Q4_1.gguf",
        "",
        "| method | structured output | decisions | valid | forfeit | truncated/unparsable/"
        "illegal replies | calls | s/decision | latency s/call | queue s/call | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        mode = r["resolved"] if r["mode"] == "off" else f"auto → {r['resolved']}"
        lines.append(
            f"| {r['method']} | {mode} | {r['decisions']} | {r['valid']} | {r['forfeits']} "
            f"| {r['truncated']}/{r['unparsable']}/{r['illegal']} | {r['calls']} "
            f"| {_s(r['s_per_decision'])} | {_s(r['latency_per_call_s'])} "
            f"| {_s(r['queue_per_call_s'])} | {r['load']:.1f} |"
        )
    for mode, name in (("auto", "With the schema (auto)"), ("off", "Without it (off)")):
        runs = [r for r in rows if r["mode"] == mode]
        valid, decided = sum(r["valid"] for r in runs), sum(r["decisions"] for r in runs)
        lines += ["", f"{name}: {valid} of {decided} decisions valid."]
    lines += [
        "",
        "Without the schema most replies of a small model run to the cap, and a decision "
        "takes many times the wall time of the same method under `auto` (the loads differ "
        "from row to row: read the ratios loosely). A debate whose agents all stay invalid in "
        "its first round stops there (MAD, anonymous MAD, MPD, AceMAD, cross-model), so its "
        "forfeit costs one round, not all of them.",
    ]
    return "\n".join(lines)


def _s(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}"


if __name__ == "__main__":
    main()
