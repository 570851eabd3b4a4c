"""Append-only JSONL result logs that survive a crash at any instant.

Each finished episode (or decision) is one line, written with a single `write`, then
flushed and fsynced before the caller goes on, so a line that is in the file is on
disk. A crash can only leave a partial *last* line: readers skip it, and the writer
cuts it off before appending, so the next record never glues onto a fragment.
"""

from __future__ import annotations

import asyncio
import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Every complete JSON line of `path` (none if the file does not exist).

    A final line without its newline is a write cut short by a crash and is ignored;
    a malformed line elsewhere is corruption and raises `ValueError` naming the line.
    """
    path = Path(path)
    if not path.exists():
        return []
    data = path.read_bytes()
    lines = data.split(b"\n")
    # After the last b"\n" comes either b"" (a clean file) or a fragment of a cut write.
    complete = lines[:-1]
    out = []
    for number, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: corrupt result line ({exc.msg})") from None
    return out


def latest_by_id(records: list[dict[str, Any]], key: str = "id") -> dict[str, dict[str, Any]]:
    """The last record of each id (a rerun of a failed item supersedes the failure)."""
    out: dict[str, dict[str, Any]] = {}
    for record in records:
        out[record[key]] = record
    return out


class AppendLog:
    """A JSONL file opened for appending one durable record at a time."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._drop_partial_tail()
        self._file = self.path.open("ab")
        # One writer thread: appends stay whole and in order, and an fsync (milliseconds)
        # never stalls the event loop that drives the other episodes.
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="metanim-log")

    def _drop_partial_tail(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            with self.path.open("r+b") as f:
                f.truncate(data.rfind(b"\n") + 1)

    def append(self, record: dict[str, Any]) -> None:
        """Write one record as one line and make it durable before returning."""
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n"
        self._file.write(line.encode())
        self._file.flush()
        os.fsync(self._file.fileno())

    async def append_async(self, record: dict[str, Any]) -> None:
        """`append` on the writer thread; returns once the record is on disk."""
        await asyncio.get_running_loop().run_in_executor(self._writer, self.append, record)

    def close(self) -> None:
        self._writer.shutdown(wait=True)
        self._file.close()

    def __enter__(self) -> AppendLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
