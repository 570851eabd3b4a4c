"""`metanim report RESULTS`, `metanim ratings RESULTS...` and `metanim reproduce ARTIFACT`."""

from __future__ import annotations

import argparse
import webbrowser
from collections import Counter
from pathlib import Path

from metanim.cli._config import add_config_arguments, config_from_args, kind
from metanim.cli._registry import command
from metanim.util import port


def report_arguments(p: argparse.ArgumentParser) -> None:
    from metanim.analysis.viewer import PAGE_RECORDS

    p.add_argument("results", help="a results folder (tournament and evaluation logs)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--no-write", action="store_true", help="print only; write no report.md")
    p.add_argument(
        "--serve",
        action="store_true",
        help="then serve the folder on 127.0.0.1 and open viewer.html (some browsers "
        "restrict pages opened from file://); Ctrl-C stops it",
    )
    p.add_argument("--port", type=port, default=0, help="port of --serve (default: a free one)")
    p.add_argument("--no-browser", action="store_true", help="with --serve: print the URL only")
    p.add_argument(
        "--page-records",
        type=_page_records,
        default=PAGE_RECORDS,
        help=f"records of each run on the page (the first, in log order; default "
        f"{PAGE_RECORDS:,}; 'all' for every one)",
    )
    p.add_argument(
        "--export",
        choices=["parquet", "csv"],
        help="also write the episodes, decisions and calls as files (needs pandas, and "
        "pyarrow for parquet: the `data` extra)",
    )
    p.add_argument(
        "--export-dir", type=Path, help="where --export writes (default: RESULTS/export)"
    )
    _dry_run_flag(p)


def _page_records(text: str) -> int | None:
    from metanim.util import PositiveInt

    if text.strip().lower() == "all":
        return None
    return kind(PositiveInt)(text)


def _dry_run_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dry-run", action="store_true", help="find the runs and stop: nothing is written"
    )


def _runs_found(folders: list[str]) -> str:
    """What a report or ratings of `folders` would read (a folder with no run is refused)."""
    from metanim.analysis.results import check_results_folder
    from metanim.records import iter_logs

    counts = []
    for folder in folders:
        check_results_folder(folder)
        kinds = Counter(kind for _, kind, _ in iter_logs(folder))
        if not kinds:
            raise ValueError(f"no runs found in {folder}: no tournament or evaluation log under it")
        counts.append(
            f"{folder}: " + ", ".join(f"{n} log{'s' * (n != 1)} of {k}" for k, n in kinds.items())
        )
    return "; ".join(counts)


@command(
    "report",
    "Render a results folder as tables, report.md and PNG plots",
    report_arguments,
)
def report(args: argparse.Namespace) -> int:
    from metanim.analysis import render_report
    from metanim.analysis.frames import export, missing_module
    from metanim.analysis.viewer import VIEWER_FILE, serve_viewer

    if args.serve and args.no_write:
        raise ValueError("--serve shows the page the report writes: drop --no-write")
    if args.dry_run:
        print(f"dry run: {_runs_found([args.results])}; nothing was written")
        return 0
    if args.export:  # refused before the report, not after it
        try:
            missing_module(args.export)
        except ImportError as exc:
            raise ValueError(str(exc)) from None
    try:
        result = render_report(
            args.results,
            write=not args.no_write,
            plots=not args.no_plots,
            page_records=args.page_records,
        )
    except OSError as exc:
        if exc.filename is None or (args.no_write and args.no_plots):
            raise
        # A folder the report cannot write into (read-only, full) can still be read.
        raise ValueError(
            f"cannot write {exc.filename}: {exc.strerror or exc}; --no-write --no-plots "
            "prints the report and writes nothing"
        ) from None
    print(result.terminal())
    if args.export:
        for path in export(args.results, args.export, args.export_dir):
            print(f"export: {path}")
    if args.no_write:
        return 0
    print(f"report: {Path(args.results) / 'report.md'}")
    if result.pages:
        print(f"viewer: {result.pages[0]} (open it in a browser; it needs no network)")
    if not args.serve:
        return 0
    server = serve_viewer(args.results, port=args.port)
    url = f"http://127.0.0.1:{server.server_address[1]}/{VIEWER_FILE}"
    print(f"serving {args.results} at {url} (Ctrl-C stops it)", flush=True)
    if not args.no_browser:
        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def ratings_arguments(p: argparse.ArgumentParser) -> None:
    from metanim.analysis.ratings import BOOTSTRAP, PRIOR_SIGMA
    from metanim.util import PositiveFloat, PositiveInt

    p.add_argument("results", nargs="+", help="results folders (their tournament logs)")
    p.add_argument(
        "--prior-sigma",
        type=kind(PositiveFloat),
        default=PRIOR_SIGMA,
        help=f"σ of the Gaussian prior on the log-odds (default {PRIOR_SIGMA:g})",
    )
    p.add_argument(
        "--bootstrap",
        type=kind(PositiveInt),
        default=BOOTSTRAP,
        help=f"bootstrap replicates per interval (default {BOOTSTRAP})",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    p.add_argument("--json", type=Path, help="also write the tables as JSON to this file")
    p.add_argument("--plot", type=Path, help="also plot the first anchored table to this PNG")
    _dry_run_flag(p)


@command(
    "ratings",
    "Bradley-Terry ratings of every player in results folders (optimal 2000, random 1000)",
    ratings_arguments,
)
def ratings(args: argparse.Namespace) -> int:
    from metanim.analysis.plots import need_pyplot
    from metanim.analysis.ratings import rate, ratings_plot, ratings_terminal
    from metanim.util import check_folder

    for flag, path in (("--json", args.json), ("--plot", args.plot)):
        if path is not None:  # refused before the fit, not after it
            if path.is_dir():
                raise ValueError(f"{flag} {path} is a folder: give a file name")
            try:
                check_folder(str(path.parent))
            except ValueError as exc:
                raise ValueError(f"{flag} {path}: {exc}") from None
    if args.plot is not None:
        need_pyplot()  # the plot's extra, refused before the fit, not after it
    if args.dry_run:
        print(f"dry run: {_runs_found(args.results)}; nothing was written")
        return 0
    result = rate(
        args.results, prior_sigma=args.prior_sigma, bootstrap=args.bootstrap, seed=args.seed
    )
    if not result.tables:
        raise ValueError(
            f"no finished tournament episodes to rate in {', '.join(map(str, args.results))} "
            f"({_runs_found(args.results)}): ratings come from tournaments, where each "
            "episode has a winner"
        )
    # A plot that cannot be drawn is refused before anything is written.
    table = next((t for t in result.tables if t.anchored), None)
    if args.plot and table is None:
        raise ValueError(
            "--plot: no table has both anchors (optimal and random) to plot; nothing was "
            "written (rate a folder whose tournaments include both, or drop --plot)"
        )
    print(ratings_terminal(result))
    for path in (args.json, args.plot):
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
    if args.json:
        args.json.write_text(result.model_dump_json(indent=1), encoding="utf-8")
        print(f"json: {args.json}")
    if args.plot and table is not None:
        print(f"plot: {ratings_plot(table, args.plot)}")
    return 0


def reproduce_arguments(p: argparse.ArgumentParser) -> None:
    from metanim.analysis.reproduce import ARTIFACTS, ReproduceOptions

    p.add_argument(
        "artifact",
        choices=[*ARTIFACTS, "all"],
        help="; ".join(f"{a.name}: {a.paper}, {a.what}" for a in ARTIFACTS.values()),
    )
    add_config_arguments(p, ReproduceOptions)
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="check the options and list the artifacts, then stop: nothing is run or written",
    )


@command(
    "reproduce",
    "Regenerate a seed paper's table or figure (table1, figure3, ...); simulated by default",
    reproduce_arguments,
)
def reproduce(args: argparse.Namespace) -> int:
    from metanim.analysis.reproduce import ReproduceOptions
    from metanim.analysis.reproduce import plan as plan_reproduce
    from metanim.analysis.reproduce import reproduce as reproduce_artifact

    opts = config_from_args(ReproduceOptions, args)
    if args.dry_run:
        for line in plan_reproduce(args.artifact, opts):
            print(f"dry run: {line}")
        print("nothing was run or written")
        return 0
    reproduce_artifact(args.artifact, opts, announce=lambda line: print(line, flush=True))
    return 0
