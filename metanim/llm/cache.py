"""Opt-in on-disk response cache (SQLite), keyed by server + full request + sample index.

The server is its base URL, or a replicated model's replica URLs sorted and joined by "|"
(replicas serve one model: their order changes no reply).

The sample index is part of the key so that repeated samples of one request (e.g.
self-consistency) are never collapsed into one answer. The API key is never part of
a key or a stored row.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from metanim.llm._types import Usage


def cache_key(base_url: str, request: dict[str, Any], sample_index: int) -> str:
    """sha256 of the server (`base_url`: a URL, or sorted replica URLs joined by "|"), the
    canonical JSON of the request, and the sample index."""
    payload = json.dumps(
        {"base_url": base_url.rstrip("/"), "request": request, "sample_index": sample_index},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode()).hexdigest()


class ResponseCache:
    """A SQLite file of chat responses.

    Args:
        path: the database file (created with its parent folders).
        force: also cache sampled calls (temperature > 0). By default only deterministic
            calls (temperature 0) are cached, since a cached sample is no longer a sample.
    """

    def __init__(self, path: str | os.PathLike[str], *, force: bool = False) -> None:
        self.path = Path(path)
        self.force = force
        self._open()

    def _open(self) -> None:
        if self.path.is_dir():
            raise ValueError(
                f"the response cache {self.path} is a folder: give a file, which is created "
                "(or reused when a run made it)"
            )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One connection shared by the event loop's thread and any worker thread;
        # the lock serializes access, WAL lets several processes share the file.
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses ("
                " key TEXT PRIMARY KEY, base_url TEXT, request TEXT, sample_index INTEGER,"
                " texts TEXT, prompt_tokens INTEGER, completion_tokens INTEGER, created REAL)"
            )
        except sqlite3.DatabaseError as exc:  # another file's bytes, or one it cannot open
            raise ValueError(
                f"the response cache {self.path} cannot be used as one ({exc}): give a new "
                "file name, or a cache a run made"
            ) from None

    def __getstate__(self) -> dict[str, object]:
        # A pickled cache (e.g. inside a client sent to a worker) reopens the same file.
        return {"path": self.path, "force": self.force}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.path, self.force = state["path"], state["force"]  # type: ignore[assignment]
        self._open()

    def applies(self, temperature: float) -> bool:
        """Whether a call at `temperature` is cached."""
        return self.force or temperature == 0

    def get(self, key: str) -> tuple[list[str], Usage] | None:
        """The stored texts and usage for `key`, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT texts, prompt_tokens, completion_tokens FROM responses WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        return json.loads(row[0]), Usage(prompt_tokens=row[1], completion_tokens=row[2])

    def put(
        self,
        key: str,
        *,
        base_url: str,
        request: dict[str, Any],
        sample_index: int,
        texts: list[str],
        usage: Usage,
    ) -> None:
        """Store one response (the request is kept for inspection; it holds no key)."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    base_url,
                    json.dumps(request, ensure_ascii=False, sort_keys=True),
                    sample_index,
                    json.dumps(texts, ensure_ascii=False),
                    usage.prompt_tokens,
                    usage.completion_tokens,
                    time.time(),
                ),
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
