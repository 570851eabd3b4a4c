"""Append-only JSONL result logs that survive a crash at any instant.

Each finished episode (or decision) is one line. Lines are written whole, in order, then
flushed and fsynced before their callers go on, so a line that is in the file is on
disk. A crash can only leave a partial *last* line: readers skip it, and the writer
cuts it off before appending, so the next record never glues onto a fragment.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import re
import threading
import warnings
import weakref
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from metanim.records._episode import DecisionRecord, EpisodeRecord, typed_decision
from metanim.records._transcripts import marked_lines, read_transcripts, unpack
from metanim.records._versions import FORMAT, upgrade
from metanim.util import fastjson

#: A log's kind: "episodes" (a tournament's) or "decisions" (an evaluation's).
LogKind = str
#: A log line read back: an episode (tournament) or a decision (evaluation).
Record = EpisodeRecord | DecisionRecord
RECORD_TYPES: dict[str, type[EpisodeRecord] | type[DecisionRecord]] = {
    "episodes": EpisodeRecord,
    "decisions": DecisionRecord,
}
#: How a line of the current format starts (orjson writes no space): such a line goes
#: straight to pydantic-core's JSON validator; any other line through `upgrade`.
_CURRENT = b'{"format":%d,' % FORMAT


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Every complete JSON line of `path` (none if the file does not exist).

    A final line without its newline is a write cut short by a crash and is ignored;
    a malformed line elsewhere is corruption and raises `ValueError` naming the line.
    """
    return list(iter_records(path))


def iter_records(path: str | Path, end: int | None = None) -> Iterator[dict[str, Any]]:
    """`read_records` one line at a time, so a long log is never in memory at once.

    `end`: read only the lines within the file's first `end` bytes (the log as it was
    when it had that size).
    """
    path = Path(path)
    for number, line in _lines(path, end):
        try:
            # Decoded as UTF-8 here: json.loads of bytes guesses UTF-16 or UTF-32 for a line
            # of NUL bytes (what a crash can leave) and raises a codec error for it.
            yield json.loads(line.decode("utf-8"))
        except json.JSONDecodeError as exc:
            _set_aside(path, number, line, exc.msg)
        except UnicodeDecodeError:
            _set_aside(path, number, line, "not UTF-8 text")


def iter_log(
    path: str | Path,
    end: int | None = None,
    kind: LogKind | None = None,
    *,
    decisions: bool = True,
) -> Iterator[Record]:
    """The records of a run's log, typed (`numbered_log` without the line numbers)."""
    for _, record in numbered_log(path, end, kind=kind, decisions=decisions):
        yield record


def numbered_log(
    path: str | Path,
    end: int | None = None,
    *,
    kind: LogKind | None = None,
    decisions: bool = True,
) -> Iterator[tuple[int, Record]]:
    """The records of a run's log, typed, one at a time (flat memory however long).

    Lines of the current format are validated straight from their JSON text; a line of
    an earlier format goes through `upgrade` first (the one place that knows them). A
    line that is not a record (corrupt JSON, a record missing its fields) is set aside
    as `iter_records` sets aside corrupt JSON. `kind` is the log's kind (default: read
    from its first line); `end` as in `iter_records`. Each record comes with its line
    number (as `log_ids` numbers it). `decisions`: join each record's decision records
    from the transcripts file (typed, `typed_decision`); without, a record has none and
    the transcripts are not read (what the summaries and the report need is in the log).
    """
    path = Path(path)
    kind = kind or log_kind(path)
    if kind is None:
        return
    model = RECORD_TYPES[kind]
    transcripts = _Transcripts(path) if decisions else None
    for number, line in _lines(path, end):
        try:
            if line.startswith(_CURRENT):
                record = model.model_validate_json(line)
            else:
                record = model.model_validate(
                    upgrade(json.loads(line.decode("utf-8")), kind, decisions)
                )
        except json.JSONDecodeError as exc:
            _set_aside(path, number, line, exc.msg)
            continue
        except UnicodeDecodeError:
            _set_aside(path, number, line, "not UTF-8 text")
            continue
        except ValidationError as exc:
            _set_aside(path, number, line, f"not a record: {exc.errors()[0]['msg']}")
            continue
        if transcripts is not None:
            record = transcripts.join(record)
        yield number, record


class _Transcripts:
    """A log's transcripts, read alongside it: each record that kept decisions finds its
    transcript ahead in the file (written just before its line, in the same order), by
    id and mark; lines between (a crash's orphans) are passed over unread."""

    def __init__(self, log: Path) -> None:
        self.lines = marked_lines(log)

    def join(self, record: Record) -> Record:
        if not record.transcript:
            return record
        for rid, mark, line in self.lines:
            if rid == record.id and mark == record.transcript:
                try:
                    return _with(record, unpack(orjson.loads(line)))
                except (orjson.JSONDecodeError, KeyError, ValueError, zlib.error):
                    break
        return record  # the transcript is lost (a damaged file): the record stands alone


def _with(record: Record, decisions: dict[int | None, dict[str, Any]]) -> Record:
    if isinstance(record, DecisionRecord):
        return record.model_copy(update={"decision": typed_decision(decisions.get(None))})
    moves = [
        m.model_copy(update={"decision": typed_decision(decisions.get(m.ply))})
        if m.ply in decisions
        else m
        for m in record.moves
    ]
    return record.model_copy(update={"moves": moves})


def read_log(path: str | Path, end: int | None = None) -> list[Record]:
    """Every record of a run's log (`iter_log`), as a list."""
    return list(iter_log(path, end))


#: A line's id, where the line starts with it (after the format): read without parsing.
_ID = re.compile(rb'^\{(?:"format":\d+,)?"id":"([^"\\]*)"')


def log_ids(path: str | Path) -> Iterator[tuple[int, str]]:
    """(line number, id) of every line of a log, read from each line's first bytes
    where it starts with its id (a whole parse otherwise): a cheap first pass for
    readers that keep only the last record of each id."""
    for number, line in _lines(Path(path), None):
        match = _ID.match(line)
        if match is not None:
            yield number, match.group(1).decode()
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict) and "id" in row:
            yield number, str(row["id"])


def first_decision(path: str | Path, limit: int = 1000) -> dict[str, Any] | None:
    """The first kept decision record of a log (a move's, or a decision line's), as its
    JSON: from its transcripts, else (a log of an earlier format) among its first
    `limit` lines; None if they kept none."""
    for _, decisions in read_transcripts(path):
        for decision in decisions.values():
            return decision
    for k, row in enumerate(iter_records(path)):
        if k >= limit:
            break
        if not isinstance(row, dict):
            continue
        for decision in [row.get("decision"), *(m.get("decision") for m in row.get("moves") or [])]:
            if isinstance(decision, dict):
                return decision
    return None


def latest(records: Iterable[Record]) -> dict[str, Record]:
    """The last record of each id (a rerun of a failed item supersedes the failure)."""
    return {record.id: record for record in records}


def _lines(path: Path, end: int | None) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of every complete, non-blank line of `path` within its first
    `end` bytes; nothing if the file does not exist."""
    if not path.exists():
        return
    with path.open("rb") as f:
        position = 0
        for number, line in enumerate(f, start=1):
            position += len(line)
            if end is not None and position > end:
                return
            # Only the last line can lack its newline: a fragment of a cut write.
            if not line.endswith(b"\n") or not line.strip():
                continue
            yield number, line


# Corrupt lines already reported in this process: a log is read several times per run.
_SET_ASIDE: set[tuple[str, int]] = set()


def _set_aside(path: Path, number: int, line: bytes, reason: str) -> None:
    """Skip a corrupt line (a cut write, a disk fault): copy it to `<log>.corrupt` once and
    warn once. Its item has no record, so it counts as not run and a resume reruns it."""
    key = (str(path.resolve()), number)
    if key in _SET_ASIDE:
        return
    _SET_ASIDE.add(key)
    aside = path.with_name(path.name + ".corrupt")
    if not aside.exists() or line not in aside.read_bytes().splitlines(keepends=True):
        with aside.open("ab") as out:
            out.write(line)
    warnings.warn(
        f"{path}:{number}: a corrupt line ({reason}) is skipped and copied to {aside}; "
        "its episode or decision counts as not run, and the same command reruns it",
        UserWarning,
        stacklevel=2,
    )


def iter_logs(results_dir: str | Path) -> Iterator[tuple[Path, LogKind, dict[str, Any]]]:
    """(log path, kind, run config) of every tournament or evaluation log under a folder.

    A log is a `*.jsonl` file whose first line is an episode (`seat` and `status`) or a
    decision (`record_id` and `correct`); other files (datasets, question files) are
    passed over. The config is `<log>.config.json`, else `run.json` beside it, else {}.
    """
    for path in sorted(Path(results_dir).rglob("*.jsonl")):
        kind = log_kind(path)
        if kind is not None:
            yield path, kind, run_config(path)


def log_kind(path: Path) -> LogKind | None:
    """ "episodes", "decisions", or None when the file is not a run's log."""
    try:
        with path.open(encoding="utf-8") as fh:
            first = next((line for line in fh if line.strip()), "")
        row = json.loads(first) if first else {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(row, dict):
        return None
    if "seat" in row and "status" in row:
        return "episodes"
    if "record_id" in row and "correct" in row:
        return "decisions"
    return None


def run_config(path: Path) -> dict[str, Any]:
    """The run config written beside a log (`<log>.config.json` or `run.json`), or {}."""
    for candidate in (path.with_suffix(".config.json"), path.parent / "run.json"):
        if candidate.exists():
            try:
                data = json.loads(candidate.read_text())
            except json.JSONDecodeError:
                continue
            if isinstance(data, dict):
                return data
    return {}


def latest_by_id(records: Iterable[dict[str, Any]], key: str = "id") -> dict[str, dict[str, Any]]:
    """The last record of each id (a rerun of a failed item supersedes the failure)."""
    out: dict[str, dict[str, Any]] = {}
    for record in records:
        out[record[key]] = record
    return out


class AppendLog:
    """A JSONL file opened for appending durable records.

    `append` writes one record and fsyncs it. `submit` hands a record to one writer
    thread and returns a future, done once the record is on disk: the thread takes every
    line waiting, writes them in order with one `write` and makes them durable with one
    fsync (a group commit), so lines that finish together share the disk's cost, and
    the event loop driving the other episodes never waits on it.
    """

    def __init__(self, path: str | Path, transcripts: str | Path | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._drop_partial_tail(self.path)
        # Unbuffered: after a failed write no buffered remainder can reach the file later.
        self._file = self.path.open("ab", buffering=0)
        # The transcripts file beside the log: a line's transcript is written (and
        # fsynced) before the line, in the same batch.
        self._transcripts = None
        if transcripts is not None:
            self._drop_partial_tail(Path(transcripts))
            self._transcripts = Path(transcripts).open("ab", buffering=0)  # noqa: SIM115 - closed in close()
        self._broken: BaseException | None = None  # the write error that stopped this log
        self._waiting: list[tuple[bytes, bytes | None, asyncio.Future[None]]] = []
        self._closing = False
        self._ready = threading.Condition()  # guards `_waiting` and `_closing`
        self._io = threading.Lock()  # one write-and-fsync at a time
        # A daemon thread never keeps a process alive; a log left open still writes what
        # is waiting when the interpreter exits (the finalizer runs `close` then).
        self._writer = threading.Thread(target=self._write_waiting, name="metanim-log", daemon=True)
        self._writer.start()
        self._at_exit = weakref.finalize(self, self.close)

    @staticmethod
    def _drop_partial_tail(path: Path) -> None:
        if not path.exists():
            return
        with path.open("r+b") as f:
            size = f.seek(0, os.SEEK_END)
            if not size:
                return
            f.seek(size - 1)
            if f.read(1) == b"\n":
                return
            data = path.read_bytes()
            f.truncate(data.rfind(b"\n") + 1)

    def append(self, record: dict[str, Any], transcript: bytes | None = None) -> None:
        """Write one record as one line (its transcript first) and make it durable
        before returning."""
        line = fastjson.dumps_line(record)
        with self._io:  # never between the writer thread's write and its fsync
            if transcript is not None:
                self._write_transcripts(transcript)
            self._write(line)

    def _write_transcripts(self, data: bytes) -> None:
        if self._transcripts is None:
            raise RuntimeError(f"the log {self.path} was opened without a transcripts file")
        view = memoryview(data)
        while view:
            view = view[self._transcripts.write(view) :]
        os.fsync(self._transcripts.fileno())

    def _write(self, data: bytes) -> None:
        """Append `data` and fsync it; on an error (a full disk), cut the file back to
        its last whole line and refuse every later write with the same error, so a
        partial line never ends up in the middle of the log."""
        if self._broken is not None:
            raise self._broken
        end = self._file.tell()
        try:
            view = memoryview(data)
            while view:
                view = view[self._file.write(view) :]
            os.fsync(self._file.fileno())
        except BaseException as exc:
            self._broken = exc
            with contextlib.suppress(OSError):
                os.ftruncate(self._file.fileno(), end)
            raise

    def submit(
        self, record: dict[str, Any], transcript: bytes | None = None
    ) -> asyncio.Future[None]:
        """Hand `record` (and its transcript line) to the writer thread now; the future
        is done once both are on disk.

        The record is serialised here (later changes to it are not written); the write
        goes ahead even if the awaiting task is cancelled (`close` waits for it).
        """
        # orjson (`fastjson`): this runs per line.
        line = fastjson.dumps_line(record)
        done = asyncio.get_running_loop().create_future()
        with self._ready:
            if self._closing:
                raise RuntimeError(f"the log {self.path} is closed")
            self._waiting.append((line, transcript, done))
            self._ready.notify()
        return done

    def _write_waiting(self) -> None:
        while True:
            with self._ready:
                while not self._waiting and not self._closing:
                    self._ready.wait()
                batch, self._waiting = self._waiting, []
            if not batch:  # closing, and nothing left
                return
            error: BaseException | None = None
            try:
                with self._io:
                    transcripts = b"".join(t for _, t, _ in batch if t is not None)
                    if transcripts:
                        self._write_transcripts(transcripts)
                    self._write(b"".join(line for line, _, _ in batch))
            except BaseException as exc:  # a full disk: every caller in the batch sees it
                error = exc
            for _, _, done in batch:
                # A closed loop has nobody waiting any more.
                with contextlib.suppress(RuntimeError):
                    done.get_loop().call_soon_threadsafe(_settle, done, error)

    def close(self) -> None:
        """Write what is waiting, then close the file (again: nothing)."""
        self._at_exit.detach()
        with self._ready:
            self._closing = True
            self._ready.notify()
        self._writer.join()
        self._file.close()
        if self._transcripts is not None:
            self._transcripts.close()

    def __enter__(self) -> AppendLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _settle(done: asyncio.Future[None], error: BaseException | None) -> None:
    if done.done():  # the awaiting task was cancelled; the line is written all the same
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)


class LogLockedError(ValueError):
    """Another live process is writing the same run's log."""


#: Where the Windows lock sits: a byte past the PID, so that the PID stays readable
#: (a Windows lock on a byte also stops others reading it).
_LOCKED_BYTE = 1 << 20


#: The errors of a lock another process holds (POSIX flock; Windows msvcrt.locking).
_HELD = {errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES, errno.EDEADLK}


def _lock(fd: int) -> None:
    """Lock `fd` for this process without waiting; OSError when another holds it."""
    if os.name == "nt":  # pragma: no cover - exercised on Windows only
        import msvcrt

        os.lseek(fd, _LOCKED_BYTE, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        os.lseek(fd, 0, os.SEEK_SET)
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


class RunLock:
    """An exclusive lock on one run's log, held by the process writing it.

    Two processes running the same run (same config hash, same folder) would both play
    every episode and log each twice; the second is refused, naming the holder's PID.
    Different runs lock different files, so they may share a folder. The lock is held
    on `<log>.lock` by the operating system (`flock` on POSIX, `msvcrt.locking` of one
    byte past the PID on Windows), so the kernel releases it if the holder dies and a
    killed run never leaves a stale lock. Why not `filelock`: its POSIX lock leaves the
    file behind and does not say who holds it, which this lock's message names.
    """

    def __init__(self, log_path: str | Path) -> None:
        self.path = Path(log_path).with_suffix(".lock")
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                _lock(fd)
            except OSError as exc:
                if exc.errno not in _HELD:  # not another holder: a filesystem's own fault
                    os.close(fd)
                    raise
                holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
                os.close(fd)
                raise LogLockedError(
                    f"{self.path.with_suffix('.jsonl')} is being written by process {holder} "
                    "(the same run started twice); wait for it or stop it, then rerun to resume"
                ) from None
            # The holder before us may have removed the file after we opened it: then we
            # hold a lock on a name nobody sees, and must lock the new file instead.
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        if os.name == "nt":  # Windows removes no file that is open: close it first
            os.close(self._fd)
            self.path.unlink(missing_ok=True)
        else:  # POSIX: unlinked while locked, so a waiting process never locks a nameless file
            self.path.unlink(missing_ok=True)
            os.close(self._fd)
        self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
