"""`metanim report RESULTS` and `metanim reproduce ARTIFACT`: flags and handlers."""

from __future__ import annotations

import argparse
from pathlib import Path

from metanim.analysis import render_report
from metanim.analysis.reproduce import ARTIFACTS, ReproduceOptions, identity_bias
from metanim.cli._config import add_config_arguments, config_from_args


def report_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", help="a results folder (tournament and evaluation logs)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--no-write", action="store_true", help="print only; write no report.md")


def report(args: argparse.Namespace) -> int:
    result = render_report(args.results, write=not args.no_write, plots=not args.no_plots)
    print(result.terminal())
    if not args.no_write:
        print(f"report: {Path(args.results) / 'report.md'}")
        if result.pages:
            print(f"viewer: {result.pages[0]} (open it in a browser; it needs no network)")
    return 0


def reproduce_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "artifact",
        choices=[*ARTIFACTS, "all"],
        help="; ".join(f"{a.name}: {a.paper}, {a.what}" for a in ARTIFACTS.values()),
    )
    add_config_arguments(p, ReproduceOptions)
    p.add_argument(
        "--peers",
        type=int,
        default=None,
        help="identity-bias: each agent sees k peers (default 1, seed 003 Table 1)",
    )


def reproduce(args: argparse.Namespace) -> int:
    opts = config_from_args(ReproduceOptions, args)
    if args.artifact == "identity-bias" and args.peers is not None:
        paths = identity_bias(opts, peers=args.peers)
    elif args.artifact == "all":
        paths = [p for a in ARTIFACTS.values() for p in a.run(opts)]
    else:
        paths = ARTIFACTS[args.artifact].run(opts)
    for path in paths:
        print(f"wrote {path}")
    return 0
