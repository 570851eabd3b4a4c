"""Reading and writing dataset files (JSONL, one record a line), atomically."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from metanim.datasets._schema import DatasetRecord
from metanim.datasets._verify import check_record


class DatasetError(ValueError):
    """A dataset file or record that does not check out; the message names the line."""


def write_jsonl(records: Iterable[DatasetRecord], path: str | Path) -> Path:
    """Write records to `path` atomically: a temp file in the same folder, then rename,
    so a reader never sees a half-written dataset."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        # The temp file's name is this function's own: the folder is what cannot be written.
        raise OSError(exc.errno, exc.strerror, str(path.parent)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for record in records:
                fh.write(record.to_json_line() + "\n")
        # mkstemp makes the file owner-only (0600); a dataset is shared like any file
        # the user writes: 0666 less the umask (usually 0644).
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename == tmp:  # named as the file it makes
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise
    return path


def load_dataset(path: str | Path, *, verify: bool = False) -> list[DatasetRecord]:
    """Load and validate a JSONL dataset.

    Every line must parse into a `DatasetRecord` whose `content_hash` matches its
    content. With `verify`, each record is also checked by an independent oracle
    (see `check_record`); a record that fails raises, one that no oracle covers is
    kept (`check_record` says "unverified" for it).
    """
    records = []
    seen: dict[str, int] = {}  # id -> the line it is on: an id is graded once
    for lineno, line in _lines(path):
        if not line.strip():
            continue
        try:
            record = DatasetRecord.model_validate_json(line)
        except ValidationError as exc:
            raise DatasetError(f"{path}:{lineno}: not a dataset record: {_first(exc)}") from None
        if record.content_hash != record.compute_hash():
            raise DatasetError(f"{path}:{lineno}: content hash mismatch for {record.id}")
        if record.id in seen:
            raise DatasetError(
                f"{path}:{lineno}: id {record.id!r} is already used on line {seen[record.id]}"
            )
        seen[record.id] = lineno
        if verify:
            result = check_record(record)
            if result.status == "failed":
                raise DatasetError(f"{path}:{lineno}: {record.id}: {result.detail}")
        records.append(record)
    return records


#: The longest line a dataset file may hold (characters): far past any record, and a
#: stream with no newline (/dev/zero, a binary dump) is refused at it, not held in memory.
MAX_LINE_CHARS = 16 * 2**20


def _lines(path: str | Path) -> Iterable[tuple[int, str]]:
    """(line number, text) of a UTF-8 text file; a binary file, a folder or a line past
    `MAX_LINE_CHARS` is a `DatasetError`.

    A byte-order mark that an editor or a spreadsheet export puts first is read and
    dropped ("utf-8-sig").
    """
    if Path(path).is_dir():
        files = sorted(p.name for p in Path(path).glob("*.jsonl"))
        which = f"one of its files ({', '.join(files[:5])}{', ...' if len(files) > 5 else ''})"
        raise DatasetError(
            f"{path} is a folder: a dataset is one .jsonl file; give "
            + (which if files else "a .jsonl file (it holds none)")
        )
    with Path(path).open(encoding="utf-8-sig") as fh:
        try:
            lineno = 0
            while line := fh.readline(MAX_LINE_CHARS + 1):
                lineno += 1
                if len(line) > MAX_LINE_CHARS:
                    raise DatasetError(
                        f"{path}:{lineno}: a line longer than {MAX_LINE_CHARS:,} characters: "
                        "a dataset is JSONL, one record a line"
                    )
                yield lineno, line
        except UnicodeDecodeError as exc:
            raise DatasetError(
                f"{path}: not a UTF-8 text file (byte {exc.start} of a block cannot be read); "
                "a dataset is JSONL, one record a line"
            ) from None


def _first(exc: ValidationError) -> str:
    """A validation error in one line: the first problem, and how many there are."""
    errors = exc.errors()
    first = errors[0]
    where = ".".join(str(x) for x in first["loc"]) or "the line"
    more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
    fields = ", ".join(list(DatasetRecord.model_fields)[:6])
    return f"{where}: {first['msg']}{more}; a record has the fields {fields}, ..."


def records_frame(path: str | Path) -> Any:
    """The file as a pandas DataFrame, read exactly as `pd.read_json(lines=True)` reads it."""
    import pandas as pd  # optional: only this function needs it

    # dtype=False keeps JSON strings (state, game_params) as strings.
    return pd.read_json(path, lines=True, dtype=False)


def state_from_cell(cell: str) -> Any:
    """A `state` or `game_params` cell from pandas/`datasets` back to its JSON value."""
    return json.loads(cell)
