"""Results as dataframes and files: episodes, decisions and calls of one run or a folder.

`episodes_df(path)`, `decisions_df(path)` and `calls_df(path)` read a run's log or every
log under a folder (the last record of each id, as the report reads them) into pandas
DataFrames (`arrow=True`: pyarrow Tables). Every row carries the run identity columns
that keep unlike runs apart: `run` (the identity's hash, as in the log's file name),
`run_label` (the report's row label), `log` (the file), and the identity's method,
model, opponent and opponent model (`run_method`, `run_model`, `run_opponent`,
`run_opponent_model`). The other columns are the records' own fields, taken
from the record types (a field added to a record is a column here without an edit):
nested values (a state, game parameters, messages) are JSON text, a side's totals are
`agent_*` / `opponent_*` columns.

- `episodes_df`: one row per tournament episode (`EpisodeRecord`, less its moves);
- `decisions_df`: one row per decision: an evaluation's decision records, and every
  move of every tournament episode (`episode` names it, `actor` says whose);
- `calls_df`: one row per model call of every kept decision (`CallRecord` fields, the
  messages sent and the replies), with the record and the move it belongs to.

`export(folder, "parquet" | "csv")` writes the three tables as files (streamed in
batches: memory stays flat), the form DuckDB, Spark, Ray Data and Hugging Face datasets
read (docs/analysis.md). pandas and pyarrow are the `data` extra: without them these
raise `ImportError` with the one line that installs them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from metanim.analysis.results import find_logs, latest_records
from metanim.records import (
    DecisionRecord,
    EpisodeRecord,
    SideTotals,
    distinguishing_labels,
    identity_hash,
    log_identity,
)
from metanim.util import MissingExtra

INSTALL = "pip install 'metanim-arena[data]'"
TABLES = ("episodes", "decisions", "calls")
#: Identity fields every row carries beside the hash and the label.
IDENTITY_COLUMNS = ("method", "model", "opponent", "opponent_model")
#: Rows per batch written to a file.
BATCH = 10_000


def _need(module: str) -> Any:
    try:
        return __import__(module)
    except ImportError:
        raise MissingExtra(f"{module} is needed for dataframes and exports: {INSTALL}") from None


def missing_module(fmt: str) -> None:
    """Raise the one-line `ImportError` if what an export in `fmt` needs is missing."""
    _need("pandas")
    if fmt == "parquet":
        _need("pyarrow")


def _logs(path: str | Path) -> list[tuple[Path, str, dict[str, Any]]]:
    path = Path(path)
    if path.is_file():
        from metanim.records import log_kind, run_config

        kind = log_kind(path)
        if kind is None:
            raise ValueError(f"{path} is not a tournament or evaluation log")
        return [(path, kind, run_config(path))]
    return find_logs([path])


def _scalar(value: Any) -> Any:
    """A cell: numbers, text, booleans and None as they are, anything else as JSON text."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    return json.dumps(value, sort_keys=True, default=str)


def _fields(record: Any, skip: Iterable[str] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in type(record).model_fields:
        if name in skip:
            continue
        value = getattr(record, name)
        if isinstance(value, SideTotals):
            for total in SideTotals.model_fields:
                out[f"{name.removesuffix('_totals')}_{total}"] = getattr(value, total)
        else:
            out[name] = _scalar(value)
    return out


def iter_rows(path: str | Path, table: str) -> Iterator[dict[str, Any]]:
    """The rows of one table (`episodes`, `decisions` or `calls`) of a run or folder."""
    if table not in TABLES:
        raise ValueError(f"no table {table!r}: one of {', '.join(TABLES)}")
    logs = _logs(path)
    identities = [log_identity(config, p, kind) for p, kind, config in logs]
    hashes = [identity_hash(i) for i in identities]
    labels = distinguishing_labels(dict(zip(hashes, identities, strict=True)))
    heads = [
        {
            "run": h, "run_label": labels[h], "log": str(p),
            **{f"run_{k}": _scalar(identity.get(k)) for k in IDENTITY_COLUMNS},
        }
        for (p, _, _), h, identity in zip(logs, hashes, identities, strict=True)
    ]  # fmt: skip
    wanted = {"episodes": ("episodes",), "decisions": ("episodes", "decisions")}.get(
        table, ("episodes", "decisions")
    )
    chosen = [log for log in logs if log[1] in wanted]
    index = {id(log): n for n, log in enumerate(logs)}
    for n, _, record in latest_records(chosen, decisions=table == "calls"):
        head = heads[index[id(chosen[n])]]
        if table == "episodes":
            yield {**head, **_fields(record, skip=("moves",))}
        elif table == "decisions":
            yield from _decision_rows(head, record)
        else:
            yield from _call_rows(head, record)


def _decision_rows(head: dict[str, Any], record: Any) -> Iterator[dict[str, Any]]:
    if isinstance(record, DecisionRecord):
        yield {**head, "record": "decision", **_fields(record, skip=("decision",))}
        return
    for move in record.moves:
        yield {
            **head, "record": "move", "episode": record.id, "setting": record.setting,
            "seat": record.seat, **_fields(move, skip=("decision",)),
        }  # fmt: skip


def _call_rows(head: dict[str, Any], record: Any) -> Iterator[dict[str, Any]]:
    if isinstance(record, EpisodeRecord):
        decisions = [(m.ply, m.decision) for m in record.moves]
    else:
        decisions = [(None, record.decision)]
    for ply, decision in decisions:
        if decision is None or isinstance(decision, dict):
            continue
        for call in decision.calls:
            row = {**head, "id": record.id, "ply": ply, "method": decision.method}
            for name in type(call).model_fields:
                value = getattr(call, name)
                if name == "usage":
                    row["prompt_tokens"] = value.prompt_tokens
                    row["completion_tokens"] = value.completion_tokens
                else:
                    row[name] = _scalar(value)
            yield row


def _frame(path: str | Path, table: str, arrow: bool) -> Any:
    pd = _need("pandas")
    frame = pd.DataFrame.from_records(list(iter_rows(path, table)))
    if arrow:
        pa = _need("pyarrow")
        return pa.Table.from_pandas(frame, preserve_index=False)
    return frame


def episodes_df(path: str | Path, *, arrow: bool = False) -> Any:
    """One row per tournament episode of a run's log or a folder's (see the module)."""
    return _frame(path, "episodes", arrow)


def decisions_df(path: str | Path, *, arrow: bool = False) -> Any:
    """One row per decision: evaluation decisions and tournament moves (see the module)."""
    return _frame(path, "decisions", arrow)


def calls_df(path: str | Path, *, arrow: bool = False) -> Any:
    """One row per model call of every kept decision (see the module)."""
    return _frame(path, "calls", arrow)


def export(
    path: str | Path, fmt: Literal["parquet", "csv"], out: str | Path | None = None
) -> list[Path]:
    """Write `episodes`, `decisions` and `calls` of a run or folder as Parquet or CSV files
    in `out` (default: `<folder>/export`), `BATCH` rows at a time; returns the files."""
    if fmt not in ("parquet", "csv"):
        raise ValueError(f"export format {fmt!r}: parquet or csv")
    _need("pandas")
    if fmt == "parquet":
        _need("pyarrow")
    folder = Path(path) if Path(path).is_dir() else Path(path).parent
    out = Path(out) if out is not None else folder / "export"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for table in TABLES:
        target = out / f"{table}.{fmt}"
        _write(iter_rows(path, table), target, fmt)
        written.append(target)
    return written


def _write(rows: Iterable[dict[str, Any]], target: Path, fmt: str) -> None:
    """`rows` into one file, `BATCH` at a time (a file with no row has no column)."""
    import pandas as pd

    target.unlink(missing_ok=True)
    writer = None
    first = True
    batches = _batches(rows)
    for batch in batches:
        frame = pd.DataFrame.from_records(batch)
        if fmt == "csv":
            frame.to_csv(target, mode="w" if first else "a", header=first, index=False)
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.Table.from_pandas(frame, preserve_index=False)
            if writer is None:
                # A column empty in the first batch (no error yet) is text.
                schema = pa.schema(
                    f.with_type(pa.string()) if pa.types.is_null(f.type) else f
                    for f in table.schema
                )
                writer = pq.ParquetWriter(target, schema)
            writer.write_table(table.cast(writer.schema))
        first = False
    if writer is not None:
        writer.close()
    if first:  # no row at all: an empty file says so
        target.write_text("")


def _batches(rows: Iterable[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch
