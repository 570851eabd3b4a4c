"""`metanim dataset build|show`: flags and handlers, kept out of cli.py."""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

_BAR_FROM = 2_000  # builds at least this big show a progress bar


def dataset_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="dataset_command", required=True)
    b = sub.add_parser(
        "build",
        help="write critical-state JSONL datasets",
        description="Without --game: the default build (seed paper Table 5 sizes plus Corner "
        "Queen, normal and misère), one file per game and variant. With --game: one file.",
    )
    b.add_argument("--out", default="datasets", help="output folder (default: datasets)")
    b.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    b.add_argument("--game", help="game or preset name; omit for the default build")
    b.add_argument("-n", "--n", type=int, default=100, help="records (with --game; default 100)")
    b.add_argument("--variant", choices=["normal", "misere"], default="normal")
    b.add_argument(
        "--param",
        "-p",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="a game parameter, e.g. -p heaps=[31,31,31] -p max_take=null",
    )
    b.add_argument(
        "--square-boards",
        metavar="LO-HI",
        help="Chomp: spread records over square boards LO..HI, e.g. 2-19",
    )
    b.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    h = sub.add_parser(
        "push",
        help="upload a build folder to the Hugging Face Hub as a dataset repo",
        description="Uploads the JSONL files and README.md (the dataset card) of a build "
        "folder. Needs huggingface_hub (the `hf` extra) and a token (huggingface-cli login).",
    )
    h.add_argument("folder", help="a build folder holding README.md and JSONL files")
    h.add_argument("repo_id", help="the dataset repo, e.g. your-name/metanim-critical-states")
    h.add_argument("--private", action="store_true", help="create the repo as private")
    s = sub.add_parser("show", help="summarize a dataset file and print records")
    s.add_argument("path", help="a dataset JSONL file")
    s.add_argument("--head", type=int, default=1, help="records to print in full (default 1)")
    s.add_argument("--verify", action="store_true", help="re-solve every record")


def dataset(args: argparse.Namespace) -> int:
    if args.dataset_command == "build":
        return _build(args)
    if args.dataset_command == "push":
        from metanim.datasets import push_to_hub

        print(push_to_hub(args.folder, args.repo_id, private=args.private))
        return 0
    return _show(args)


def _build(args: argparse.Namespace) -> int:
    from metanim.datasets import DEFAULT_SPECS, DatasetSpec, build, write_card, write_jsonl

    if args.game:
        params = {}
        for item in args.param:
            key, _, value = item.partition("=")
            params[key] = _json(value)
        boards = None
        if args.square_boards:
            lo, _, hi = args.square_boards.partition("-")
            boards = list(range(int(lo), int(hi or lo) + 1))
        specs = [
            DatasetSpec(
                game=args.game, params=params, n=args.n, variant=args.variant, square_boards=boards
            )
        ]
    else:
        specs = list(DEFAULT_SPECS)
    total = sum(s.n for s in specs)
    bar = None
    if total >= _BAR_FROM and not args.no_progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, unit="rec", desc="critical states")
    start = time.perf_counter()
    out = Path(args.out)
    files = {}
    try:
        for spec in specs:
            records = build(spec, seed=args.seed, progress=bar.update if bar else None)
            path = write_jsonl(records, out / f"{spec.name}.jsonl")
            files[spec.name] = records
            if bar is None:
                print(f"{path}: {len(records)} records")
    finally:
        if bar is not None:
            bar.close()
    # The Hugging Face dataset card of what this build wrote (see `metanim dataset push`).
    print(f"{write_card(out, files, seed=args.seed)}: dataset card")
    elapsed = time.perf_counter() - start
    print(f"{total} records in {elapsed:.1f} s ({total / elapsed:,.0f} records/s) under {out}")
    return 0


def _show(args: argparse.Namespace) -> int:
    from metanim.datasets import load_dataset

    records = load_dataset(args.path, verify=args.verify)
    games = Counter(f"{r.game}-{r.variant}" for r in records)
    strata = Counter(r.features.stratum for r in records)
    print(f"{args.path}: {len(records)} records" + (" (all verified)" if args.verify else ""))
    print("games: " + ", ".join(f"{k} {v}" for k, v in sorted(games.items())))
    print("strata: " + ", ".join(f"{k} {strata.get(k, 0)}" for k in ("easy", "medium", "hard")))
    for record in records[: args.head]:
        print(json.dumps(record.model_dump(mode="json"), indent=2, ensure_ascii=False))
    return 0


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
