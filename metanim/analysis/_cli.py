"""`metanim report RESULTS`: flags and handler, kept out of cli.py."""

from __future__ import annotations

import argparse


def report_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", help="a results folder (tournament and evaluation logs)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--no-write", action="store_true", help="print only; write no report.md")


def report(args: argparse.Namespace) -> int:
    from metanim.analysis.report import render_report

    result = render_report(args.results, write=not args.no_write, plots=not args.no_plots)
    print(result.terminal())
    if not args.no_write:
        from pathlib import Path

        print(f"report: {Path(args.results) / 'report.md'}")
    return 0
