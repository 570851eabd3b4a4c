"""The `metanim` command: a thin layer over the library.

Each subcommand only parses arguments, calls one library function and prints.
Subcommands are added with `@command(...)`; see `main`.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import typing
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from metanim import __version__
from metanim.cli import _analysis, _arena, _dataset
from metanim.datasets.questions import resolve_path
from metanim.llm import InfrastructureError
from metanim.llm.local import serve_local, serve_local_arguments
from metanim.llm.sim import serve
from metanim.solver import solve_state
from metanim.util import (
    EXIT_CODES_HELP,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    Interrupted,
    MetaNimError,
    StorageError,
    Unreachable,
    game_params,
    port,
    strict_json,
)

Handler = Callable[[argparse.Namespace], int | None]
_COMMANDS: list[tuple[str, str, Callable[[argparse.ArgumentParser], None], Handler]] = []


def command(name: str, help: str, arguments: Callable[[argparse.ArgumentParser], None]):
    """Register a subcommand: `arguments` adds its flags, the decorated function runs it."""

    def register(handler: Handler) -> Handler:
        _COMMANDS.append((name, help, arguments, handler))
        return handler

    return register


def _state_arg(text: str) -> Any:
    # A state's numbers are whole: "[20.9]" is refused, never truncated to [20].
    try:
        return strict_json(text, "state", bare_text=True)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("state: ")) from None


# ---------------------------------------------------------------------------- solve
def _solve_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", help="nim, fibonacci, kayles, chomp, corner_queen, or a preset name")
    p.add_argument(
        "state", type=_state_arg, help='the state as JSON, e.g. "[31]", "[20, 19]", \'["1111"]\''
    )
    p.add_argument(
        "--misere",
        action="store_true",
        default=None,
        help="misère play (the last mover loses); a preset keeps its own play rule "
        "(nim-31-k3 is normal, nim-31-k3-misere misère) and refuses a flag that contradicts it",
    )
    p.add_argument(
        "--param",
        "-p",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="a game parameter, e.g. -p max_take=4 (sizes not given are read from the state; "
        "see docs/solver.md)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (schema metanim-solve/1) instead of text",
    )


@command("solve", "Grundy value, outcome and winning moves of a state", _solve_args)
def _solve(args: argparse.Namespace) -> int:
    params = game_params(args.param)
    if args.misere is not None:  # only a flag the user gave joins the parameters
        if params.get("misere", True) is not True:
            raise ValueError("--misere contradicts -p misere=false")
        params["misere"] = True
    solution = solve_state(args.game, args.state, **params)
    print(json.dumps(solution.to_json()) if args.json else solution.text())
    return 0


# ------------------------------------------------------------------------ serve-sim
def _serve_sim_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback)")
    p.add_argument("--port", type=port, default=8000, help="port, 0..65535 (0 picks a free one)")
    p.add_argument("--seed", type=int, default=0, help="seed of fault draws and unseeded samples")
    p.add_argument(
        "--log", default=None, metavar="FILE", help="append the request log to this JSONL file"
    )
    p.add_argument(
        "--api-key-env",
        default=None,
        metavar="VAR",
        help="require the key held in this environment variable (default: accept any key)",
    )
    p.add_argument(
        "--questions",
        action="append",
        default=[],
        metavar="FILE",
        help="a question file the models answer (repeatable; looked up by question text)",
    )
    p.add_argument(
        "--session",
        type=int,
        default=0,
        help="which run of a resumed job this serves (faults are drawn afresh per session)",
    )


@command(
    "serve-sim", "Run the simulated OpenAI-compatible server (models are policies)", _serve_sim_args
)
def _serve_sim(args: argparse.Namespace) -> int:
    api_key = os.environ.get(args.api_key_env) if args.api_key_env else None
    if args.api_key_env and not api_key:
        raise ValueError(f"environment variable {args.api_key_env} is not set")
    serve(
        args.host,
        args.port,
        api_key=api_key,
        seed=args.seed,
        log_path=args.log,
        questions=[str(resolve_path(p)) for p in args.questions],
        session=args.session,
    )
    return 0


# ------------------------------------------------------------------ serve-local
command(
    "serve-local",
    "Serve a GGUF model with llama.cpp on 127.0.0.1 (needs the [local] extra; 1 thread)",
    serve_local_arguments,
)(serve_local)


# The commands whose flags and handlers live in the package's other modules, in the
# order `metanim --help` lists them (after solve and serve-sim, before serve-local).
_COMMANDS[2:2] = [
    ("play", "Play one game between two methods; each move graded by the solver",
     _arena.play_arguments, _arena.play),
    ("evaluate", "Decision accuracy of a method on critical-state datasets or question "
     "files, R repeats", _arena.evaluate_arguments, _arena.evaluate),
    ("challenging", "Seed 004's challenging subset: items a baseline answers right in < 40%% "
     "of 5 runs at T=0.7", _arena.challenging_arguments, _arena.challenging),
    ("tournament", "Method vs opponent over E episodes per game setting (resumable)",
     _arena.tournament_arguments, _arena.tournament),
    ("demo", "A short DReaMAD-vs-ReAct tournament on Fibonacci; offline by default",
     _arena.demo_arguments, _arena.demo),
    ("dataset", "Build or inspect critical-state datasets (build, show)",
     _dataset.dataset_arguments, _dataset.dataset),
    ("report", "Render a results folder as tables, report.md and PNG plots",
     _analysis.report_arguments, _analysis.report),
    ("ratings", "Bradley-Terry ratings of every player in results folders (optimal 2000, "
     "random 1000)", _analysis.ratings_arguments, _analysis.ratings),
    ("reproduce", "Regenerate a seed paper's table or figure (table1, figure3, ...); "
     "simulated by default", _analysis.reproduce_arguments, _analysis.reproduce),
]  # fmt: skip


class _Parser(argparse.ArgumentParser):
    """argparse with a mistake said in one line (exit code 2), as every other mistake is."""

    #: the command parsers by name, so a mistake names the command's own --help.
    commands: dict[str, argparse.ArgumentParser]

    def error(self, message: str) -> typing.NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> _Parser:
    parser = _Parser(prog="metanim", description=__doc__.splitlines()[0], epilog=EXIT_CODES_HELP)
    parser.add_argument("--version", action="version", version=f"metanim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    parser.commands = {}
    for name, help_text, arguments, handler in _COMMANDS:
        p = sub.add_parser(name, help=help_text, description=help_text, epilog=EXIT_CODES_HELP)
        arguments(p)
        p.set_defaults(handler=handler)
        parser.commands[name] = p
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns its exit code (see `metanim --help`)."""
    try:
        parser = build_parser()
    except KeyboardInterrupt:
        print("metanim: interrupted before anything was started", file=sys.stderr)
        return EXIT_INTERRUPTED
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        parser.commands[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    # The command line as typed, so that a failed run can print the command that reruns it.
    args.argv = list(sys.argv[1:] if argv is None else argv)
    previous = _sigterm_as_interrupt()
    shown = warnings.showwarning
    warnings.showwarning = _warning_line(args.command)
    try:
        return int(args.handler(args) or 0)
    except Interrupted as exc:
        print(f"metanim {args.command}: interrupted: {exc}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        # Commands without a log (solve, play, report) have nothing to save or resume.
        print(f"metanim {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except StorageError as exc:
        print(f"metanim {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except (Unreachable, InfrastructureError) as exc:
        # Checked before the first episode: a server that does not answer, nothing run.
        print(f"metanim {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_FAILED if not _is_usage(exc) else EXIT_USAGE
    except (MetaNimError, ValueError, OSError) as exc:
        # A user's mistake (bad value, bad state, missing file): one line, exit code 2.
        # Anything else is a bug and keeps its traceback.
        print(f"metanim {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        warnings.showwarning = shown
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _warning_line(command: str) -> Callable[..., None]:
    """A warning as one line naming the command (no source path or code line)."""

    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        print(f"metanim {command}: warning: {message}", file=sys.stderr)

    return show


def _is_usage(exc: BaseException) -> bool:
    """A refused key or an unknown model is the user's to fix (2); the rest is the server's (3)."""
    return getattr(exc, "kind", None) in ("auth", "permission", "not_found", "bad_request")


def _sigterm_as_interrupt() -> Any:
    """Treat SIGTERM like Ctrl-C: the run saves what finished and says so (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def on_term(signum: int, frame: Any) -> None:
        # Outside a run's loop (a run cancels itself on SIGTERM, see `run_logged`).
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, on_term)


def _flag(loc: tuple[Any, ...]) -> str:
    if not loc:
        return "config"
    head = f"--{str(loc[0]).replace('_', '-')}"
    return ".".join([head, *(str(x) for x in loc[1:])])


def _one_line(exc: BaseException) -> str:
    """An error as one line: pydantic's per-field errors joined, a file error with its path."""
    if isinstance(exc, ValidationError):
        # Each field as its flag (a config file's key is the flag's name too).
        return "; ".join(
            f"{_flag(e['loc'])}: {e['msg'].removeprefix('Value error, ')}" for e in exc.errors()
        )
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.strerror or type(exc).__name__}: {exc.filename}"
    return " ".join(str(exc).split()) or type(exc).__name__


if __name__ == "__main__":
    sys.exit(main())
