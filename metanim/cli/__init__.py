"""The `metanim` command: a thin layer over the library.

Each subcommand only parses arguments, calls one library function and prints. Each
registers itself with `@command(...)` (`metanim.cli._registry`) in its own module:
`_solve`, `_arena` (play, evaluate, challenging, tournament, demo), `_dataset`,
`_analysis` (report, ratings, reproduce) and `_serve` (serve-sim, serve-local), imported
below in the order `metanim --help` lists them. A command's flags are added when that
command is parsed, and its module imports the library where it uses it: `metanim --help`,
`--version` and `metanim solve --help` import no numba, scipy, pandas or aiohttp.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import typing
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from metanim import __version__
from metanim.cli._registry import COMMANDS, command
from metanim.util import (
    EXIT_CODES_HELP,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    STOP_SIGNALS,
    Interrupted,
    MetaNimError,
    StorageError,
    Unreachable,
)

# The command modules, imported for their `@command` registrations in the order
# `metanim --help` lists them.
# isort: off
from metanim.cli import _solve, _arena, _dataset, _analysis, _serve  # noqa: F401
# isort: on

__all__ = ["COMMANDS", "build_parser", "command", "main"]


class _Parser(argparse.ArgumentParser):
    """argparse with a mistake said in one line (exit code 2), as every other mistake is;
    a command's flags are added the first time its parser is used (`pending`)."""

    #: the command parsers by name, so a mistake names the command's own --help.
    commands: dict[str, argparse.ArgumentParser]
    #: adds this command's flags; run before its parser first parses or prints.
    pending: Callable[[argparse.ArgumentParser], None] | None = None

    def complete(self) -> None:
        """Add this parser's flags (a no-op once they are)."""
        pending, self.pending = self.pending, None
        if pending is not None:
            pending(self)
            _exit_codes_below(self)

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        self.complete()
        return super().parse_known_args(*args, **kwargs)

    def format_usage(self) -> str:
        self.complete()
        return super().format_usage()

    def format_help(self) -> str:
        self.complete()
        return super().format_help()

    def error(self, message: str) -> typing.NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(*, lazy: bool = False) -> _Parser:
    """The `metanim` parser; with `lazy`, each command's flags are added only when that
    command is parsed (what `main` does: `metanim --help` builds no command's flags)."""
    parser = _Parser(prog="metanim", description=__doc__.splitlines()[0], epilog=EXIT_CODES_HELP)
    parser.add_argument("--version", action="version", version=f"metanim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    parser.commands = {}
    for cmd in COMMANDS:
        # argparse %-formats a subcommand's help (the list), never its description.
        listed = cmd.help.replace("%", "%%")
        p = sub.add_parser(cmd.name, help=listed, description=cmd.help, epilog=EXIT_CODES_HELP)
        p.pending = cmd.arguments
        if not lazy:
            p.complete()
        p.set_defaults(handler=cmd.handler)
        parser.commands[cmd.name] = p
    return parser


def _exit_codes_below(parser: argparse.ArgumentParser) -> None:
    """Every subcommand's own --help (`dataset build --help`) ends with the exit codes too."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                child.epilog = child.epilog or EXIT_CODES_HELP
                _exit_codes_below(child)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns its exit code (see `metanim --help`)."""
    try:
        parser = build_parser(lazy=True)
    except KeyboardInterrupt:
        print("metanim: interrupted before anything was started", file=sys.stderr)
        return EXIT_INTERRUPTED
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        parser.commands[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    # The command line as typed, so that a failed run can print the command that reruns it.
    args.argv = list(sys.argv[1:] if argv is None else argv)
    # Here, not at the top: the LLM layer loads only for a command that runs.
    from metanim.llm import InfrastructureError

    previous = _stop_signals_as_interrupt()
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
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _warning_line(name: str) -> Callable[..., None]:
    """A warning as one line naming the command (no source path or code line)."""

    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        print(f"metanim {name}: warning: {message}", file=sys.stderr)

    return show


def _is_usage(exc: BaseException) -> bool:
    """A refused key or an unknown model is the user's to fix (2); the rest is the server's (3)."""
    return getattr(exc, "kind", None) in ("auth", "permission", "not_found", "bad_request")


def _stop_signals_as_interrupt() -> dict[int, Any]:
    """Treat SIGTERM and SIGHUP (`STOP_SIGNALS`) like Ctrl-C: the run saves what finished
    and says so (main thread only); returns the previous handlers."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def on_term(signum: int, frame: Any) -> None:
        # Outside a run's loop (a run cancels itself on them: `arena._run._cancel_on_stop`).
        raise KeyboardInterrupt

    return {signum: signal.signal(signum, on_term) for signum in STOP_SIGNALS}


def _flag(loc: tuple[Any, ...]) -> str:
    if not loc:
        return "config"
    head = f"--{str(loc[0]).replace('_', '-')}"
    return ".".join([head, *(str(x) for x in loc[1:])])


def _one_line(exc: BaseException) -> str:
    """An error as one line: pydantic's per-field errors joined, a file error with its path."""
    from pydantic import ValidationError

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
