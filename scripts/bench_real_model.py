"""A real local model (SmolLM2-135M-Instruct, llama.cpp, 1 thread): validity and speed.

Three parts, one run, one server; writes the `real-model` section of docs/benchmarks.md:

1. `metanim tournament` (the CLI's own entry point) for react, cot and mad against the
   optimal player on Nim (7, k = 3), structured output on: unparsable, illegal and
   truncated replies, forfeits, win rate.
2. `metanim evaluate` on Nim (7, k = 3) critical states, structured output on: accuracy
   with forfeits counted apart.
3. Speed: the same decisions per method with structured output off and on (no re-asks,
   one cap for both): decisions/s, completion tokens per decision, valid replies; the
   ratio on/off is what to read, since the machine's load moves both alike.

Usage:
    python scripts/bench_real_model.py --gguf ~/.cache/metanim/SmolLM2-135M-Instruct.Q4_1.gguf
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

# scripts/ is on sys.path when this file runs, so the shared helpers import directly.
from _bench import machine, write_section

from metanim import cli
from metanim.agents.registry import build_method
from metanim.datasets import build, write_jsonl
from metanim.games import make_game
from metanim.llm import OpenAIChatClient
from metanim.llm._types import CallOptions
from metanim.llm.local import LocalServer

GAME = 'nim:{"heaps":[7],"max_take":3}'
METHODS = {"react": "react", "cot": "cot", "mad": "mad:agents=2,rounds=1"}


def summary_of(results: Path, name: str) -> dict[str, Any]:
    (path,) = results.glob(f"{name}-*.summary.json")
    return json.loads(path.read_text())


def tournaments(url: str, results: Path, episodes: int, chars: int) -> list[str]:
    rows = []
    for label, spec in METHODS.items():
        start = time.perf_counter()
        code = cli.main(
            [
                "tournament", "--name", f"t-{label}", "--game", GAME, "--method", spec,
                "--model", "smollm2", "--base-url", url, "--opponent", "optimal",
                "--episodes", str(episodes), "--structured-output", "json_schema",
                "--reply-max-chars", str(chars), "--results-dir", str(results),
                "--no-progress", "--timeout-s", "300",
            ]
        )  # fmt: skip
        wall = time.perf_counter() - start
        assert code == 0, f"tournament {label} failed"
        (group, *_) = summary_of(results, f"t-{label}")["groups"]
        a = group["agent"]
        tokens = a["prompt_tokens"] + a["completion_tokens"]
        rows.append(
            f"| {label} (`{spec}`) | {group['finished']}/{group['planned']} "
            f"| {100 * group['win_rate']:.0f}% | {a['moves']} | {a['unparsable']} | {a['illegal']} "
            f"| {a['truncated']} | {a['forfeits']} | {group['losses'] - group['losses_by_forfeit']}"
            f"/{group['losses_by_forfeit']} | {a['calls']} | {tokens / max(a['moves'], 1):.0f} "
            f"| {wall:.0f} |"
        )
    return rows


def evaluation(url: str, results: Path, chars: int) -> str:
    # All six critical states of Nim (7, k = 3), the forced move from 1 included.
    records = build("nim", 6, seed=0, params={"heaps": [7], "max_take": 3}, min_legal_moves=1)
    path = write_jsonl(records, results / "nim7.jsonl")
    code = cli.main(
        [
            "evaluate", "--name", "e-react", "--dataset", str(path), "--method", "react",
            "--model", "smollm2", "--base-url", url, "--repeats", "1",
            "--structured-output", "json_schema", "--reply-max-chars", str(chars),
            "--results-dir", str(results), "--no-progress", "--timeout-s", "300",
        ]
    )  # fmt: skip
    assert code == 0, "evaluation failed"
    (g,) = summary_of(results, "e-react")["games"]
    return (
        f"| react | {g['graded']}/{g['planned']} | {100 * g['accuracy_mean']:.0f}% "
        f"| {100 * g['accuracy_answered']:.0f}% | {g['wrong_by_play']} | {g['forfeits']} "
        f"| {g['unparsable']} | {g['illegal']} | {g['truncated']} |"
    )


async def speed(url: str, decisions: int, cap: int, chars: int) -> list[str]:
    game = make_game("nim", heaps=[7], max_take=3)
    states = [(h,) for h in (7, 6, 5, 3, 2, 1)][:decisions]
    client = OpenAIChatClient("smollm2", base_url=url, timeout_s=600, max_concurrency=1)
    rows = []
    for label, spec in METHODS.items():
        measured = {}
        for mode in ("off", "json_schema"):
            method = build_method(
                spec,
                "smollm2",
                client_factory=lambda _: client,
                defaults={
                    "options": CallOptions(max_tokens=cap, structured_output=mode),
                    "max_reasks": 0,
                    "max_chars": chars,
                },
            )
            start = time.perf_counter()
            out = [await method.decide(game, s, seed=i) for i, s in enumerate(states)]
            wall = time.perf_counter() - start
            measured[mode] = (
                len(out) / wall,
                sum(d.usage.completion_tokens for d in out) / len(out),
                sum(d.status == "ok" for d in out),
                sum(d.truncated for d in out),
            )
        (r_off, t_off, ok_off, tr_off), (r_on, t_on, ok_on, tr_on) = (
            measured["off"],
            measured["json_schema"],
        )
        rows.append(
            f"| {label} | {r_off:.3f} | {r_on:.3f} | {r_on / r_off:.1f}x | {t_off:.0f} | {t_on:.0f} "
            f"| {ok_off}/{len(states)} ({tr_off} truncated) | {ok_on}/{len(states)} ({tr_on} truncated) |"
        )
    await client.aclose()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", required=True)
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--reply-max-chars", type=int, default=80)
    parser.add_argument("--speed-decisions", type=int, default=2)
    parser.add_argument("--speed-cap", type=int, default=256)
    parser.add_argument("--results-dir", default=None)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    results = Path(args.results_dir or tempfile.mkdtemp(prefix="bench-real-"))
    with LocalServer(args.gguf, threads=1, slots=1, ctx=4096, alias="smollm2") as server:
        url = server.base_url
        t_rows = tournaments(url, results, args.episodes, args.reply_max_chars)
        e_row = evaluation(url, results, args.reply_max_chars)
        s_rows = asyncio.run(speed(url, args.speed_decisions, args.speed_cap, args.reply_max_chars))
    markdown = "\n".join(
        [
            "## Real local model (`scripts/bench_real_model.py`)\n",
            f"Machine: {machine()}. SmolLM2-135M-Instruct (Q4_1 GGUF), llama.cpp, 1 thread.\n",
            f"Tournaments vs optimal on {GAME}, {args.episodes} episodes, structured output "
            f"json_schema, reasoning <= {args.reply_max_chars} chars, cap 512:\n",
            "| method | finished/planned | win rate | decisions | unparsable | illegal | truncated "
            "| forfeits | losses play/forfeit | calls | tokens/decision | wall s |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
            *t_rows,
            f"\nmetanim evaluate, {GAME} critical states, structured output json_schema:\n",
            "| method | graded/planned | accuracy | accuracy among answered | wrong by play "
            "| forfeits | unparsable | illegal | truncated |",
            "|---|---|---|---|---|---|---|---|---|",
            e_row,
            f"\nSpeed, {args.speed_decisions} decisions per method, no re-asks, cap "
            f"{args.speed_cap} tokens for both modes:\n",
            "| method | decisions/s off | decisions/s on | on/off | completion tokens/decision off "
            "| on | valid off | valid on |",
            "|---|---|---|---|---|---|---|---|",
            *s_rows,
        ]
    )
    print(markdown)
    if not args.no_write:
        write_section("real-model", markdown)


if __name__ == "__main__":
    main()
