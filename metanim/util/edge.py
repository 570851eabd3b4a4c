"""What every `metanim` command shares at its edge: exit codes, strict value parsing.

Kept below every other package (it imports none of them), so the CLI and every library
layer can use it without importing back up.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import threading
import warnings
from collections.abc import Iterator
from typing import Any

#: Exit codes, the same for every command (the table `EXIT_CODES` says what each means).
EXIT_OK = 0  # every planned episode or decision finished
EXIT_USAGE = 2  # a user mistake: bad flag, value, file, model name or key
EXIT_FAILED = 3  # something ended in an infrastructure error or was not run
EXIT_INTERRUPTED = 130  # Ctrl-C, SIGTERM or SIGHUP

#: The one table of exit codes: `metanim --help`, every command's --help and the table in
#: docs/arena.md ("Exit codes, faults and interrupts") all say exactly this.
EXIT_CODES: tuple[tuple[int, str], ...] = (
    (
        EXIT_OK,
        "every planned episode, decision or record finished (serve-sim and serve-local: "
        "stopped by Ctrl-C, SIGTERM or SIGHUP)",
    ),
    (
        EXIT_USAGE,
        "a user mistake (a bad flag, value, file, model name, method parameter or API "
        "key, a missing optional extra): one line on stderr, nothing run",
    ),
    (
        EXIT_FAILED,
        "something ended in an infrastructure error or was not run (a server that does "
        "not answer, a full disk, a budget or stop rule that fired): a summary of the "
        "causes and the command that reruns them",
    ),
    (
        EXIT_INTERRUPTED,
        "interrupted (Ctrl-C, SIGTERM or SIGHUP): what finished is saved and the same "
        "command resumes",
    ),
)

EXIT_CODES_HELP = "exit codes: " + "; ".join(f"{code} {meaning}" for code, meaning in EXIT_CODES)


#: The signals that stop a command as Ctrl-C does (what finished is saved, exit code 130):
#: SIGTERM (a `kill`, a scheduler) and SIGHUP (a closed terminal, a dropped SSH session).
STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """A blocking call made on a running event loop (a pre-flight GET): Ctrl-C raises
    `KeyboardInterrupt` inside it at once.

    asyncio's own Ctrl-C handler only cancels the main task, which the loop cannot reach
    until the blocking call returns (up to its timeout). Main thread only; a process that
    ignores SIGINT (a background job) keeps ignoring it.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):  # SIG_IGN, SIG_DFL or unknown: left as it is
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class MetaNimError(Exception):
    """Base class of the package's own errors."""


class MissingExtra(MetaNimError, ImportError):
    """An optional extra a feature needs is not installed: the message names it and the
    pip command (an `ImportError` to the library's callers; one line, exit code 2, on the
    command line)."""


class Interrupted(Exception):
    """A run stopped by Ctrl-C or SIGTERM after saving what finished; the message says where."""


class StorageError(Exception):
    """A run's files could not be written (a full disk); what was saved is said (exit 3)."""


class Unreachable(Exception):
    """A server the run needs did not answer before the first episode (exit code 3)."""


def _utf8(text: str, what: str) -> None:
    """Refuse text that holds bytes which are not UTF-8: Python carries each as a lone
    surrogate (U+DC80..U+DCFF, "surrogateescape"), which no message should echo."""
    for at, char in enumerate(text, 1):
        if "\udc80" <= char <= "\udcff":
            raise ValueError(
                f"{what}: the text is not valid UTF-8 (byte 0x{ord(char) - 0xDC00:02x} "
                f"at character {at})"
            )


def _no_float(text: str) -> Any:
    raise ValueError(f"{text} is not a whole number")


#: The JSON values a setting typed on the command line takes, unless a caller says.
JSON_FORMS = "a whole number, a list such as [31,31], true/false or null"


def strict_json(text: str, what: str, *, bare_text: bool = False, forms: str = JSON_FORMS) -> Any:
    """`text` as JSON whose numbers are all integers.

    A number with a fraction or exponent is refused rather than truncated (`[20.9]` is
    not `[20]`). With `bare_text`, text that is not JSON is returned as a string (a
    Kayles row "1101"); otherwise it is refused, with `forms` (the values it may be).
    Text that opens a list or an object is JSON meant, and its error says where it
    breaks. Raises `ValueError` naming `what`.
    """
    _utf8(text, what)
    try:
        return json.loads(text, parse_float=_no_float, parse_constant=_no_float)
    except json.JSONDecodeError as exc:
        meant = text.lstrip().startswith(("[", "{"))
        if bare_text and not meant:
            return text
        why = f"not valid JSON ({exc.msg} at column {exc.colno})" if meant else "not a JSON value"
        raise ValueError(f"{what}: {text!r} is {why}; give {forms}") from None
    except ValueError as exc:
        raise ValueError(f"{what}: {exc} (give integers, e.g. [20, 19])") from None


def game_params(items: list[str], flag: str = "--param") -> dict[str, Any]:
    """`KEY=JSON` game parameters: integers, lists of integers, booleans or null; the
    octal game's `code` as text (`code=0.07`)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{flag} {item!r}: expected KEY=JSON, e.g. {flag} max_take=4")
        if key.strip() == "code":
            # An octal game's code is text ("0.07" read as JSON would be a float).
            out["code"] = value.strip().strip('"')
            continue
        parsed = strict_json(value, f"{flag} {item}")
        if not _whole(parsed):
            raise ValueError(
                f"{flag} {item}: a game parameter is a whole number, a list of them, "
                "true/false or null"
            )
        out[key.strip()] = parsed
    return out


def _whole(value: Any) -> bool:
    if value is None or isinstance(value, bool | int):
        return True
    return isinstance(value, list) and all(
        v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in value
    )


def port(text: str) -> int:
    """An argparse type: a TCP port, 0 (pick a free one) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is outside 0..65535 (0 picks a free port)")
    return value


def int_range(text: str) -> list[int]:
    """An argparse type: `LO-HI` (or one number) as the integers LO..HI, LO <= HI."""
    lo, sep, hi = text.strip().partition("-")
    try:
        low, high = int(lo), int(hi) if sep else int(lo)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not LO-HI with whole numbers, e.g. 2-19"
        ) from None
    if low > high:
        raise argparse.ArgumentTypeError(f"{text!r}: LO must not exceed HI, e.g. 2-19")
    if high - low >= _MAX_RANGE:
        raise argparse.ArgumentTypeError(
            f"{text!r}: a range holds at most {_MAX_RANGE:,} numbers, e.g. 2-19"
        )
    return list(range(low, high + 1))


_MAX_RANGE = 10_000  # more is a typo (2-1000000000), not a request to list them


def deprecated_aliases(module: str, moved: dict[str, tuple[str, Any]]) -> Any:
    """A module `__getattr__` that still serves names moved out of its `__all__`.

    `moved` maps an old name to (its new dotted name, the object); each use warns with a
    `DeprecationWarning` until 0.2.0, when the aliases go.
    """

    def __getattr__(name: str) -> Any:
        if name not in moved:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new, value = moved[name]
        warnings.warn(
            f"{module}.{name} moved to {new}; the old name goes in 0.2.0",
            DeprecationWarning,
            stacklevel=2,
        )
        return value

    return __getattr__
