"""Reading and writing dataset files (JSONL, one record a line), atomically."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from metanim.datasets._build import harness_fields
from metanim.datasets._schema import DatasetRecord
from metanim.solver import solver_for


class DatasetError(ValueError):
    """A dataset file or record that does not check out; the message names the line."""


def write_jsonl(records: Iterable[DatasetRecord], path: str | Path) -> Path:
    """Write records to `path` atomically: a temp file in the same folder, then rename,
    so a reader never sees a half-written dataset."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for record in records:
                fh.write(record.to_json_line() + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_dataset(path: str | Path, *, verify: bool = False) -> list[DatasetRecord]:
    """Load and validate a JSONL dataset.

    Every line must parse into a `DatasetRecord` whose `content_hash` matches its
    content. With `verify`, each record is also re-solved (see `verify_record`).
    """
    records = []
    with Path(path).open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                record = DatasetRecord.model_validate_json(line)
            except ValueError as exc:
                raise DatasetError(f"{path}:{lineno}: not a dataset record: {exc}") from exc
            if record.content_hash != record.compute_hash():
                raise DatasetError(f"{path}:{lineno}: content hash mismatch for {record.id}")
            if verify:
                problem = verify_record(record)
                if problem:
                    raise DatasetError(f"{path}:{lineno}: {record.id}: {problem}")
            records.append(record)
    return records


def verify_record(record: DatasetRecord) -> str | None:
    """Re-derive a record from the solver; None if it checks out, else what is wrong."""
    game = record.make_game()
    state = game.validate_state(record.state)
    solver = solver_for(game)
    moves = solver.winning_moves(state)
    if len(moves) != 1:
        return f"expected exactly one winning move, the solver finds {len(moves)}"
    move = moves[0]
    checks: list[tuple[str, Any, Any]] = [
        ("optimal_move", record.optimal_move, game.move_text(move)),
        ("optimal_action", record.optimal_action, game.action_id(move)),
        ("grundy", record.grundy, solver.grundy(state)),
        ("legal_moves", record.legal_moves, [game.move_text(m) for m in game.legal_moves(state)]),
        ("prompt", record.prompt, game.prompt(state)),
        ("variant", record.variant, game.info.variant),
    ]
    if record.input:  # files built before the harness fields existed have none to check
        checks += [(k, getattr(record, k), v) for k, v in harness_fields(game, state, move).items()]
    for name, have, want in checks:
        if have != want:
            return f"{name} is {have!r}, the solver says {want!r}"
    return None


def records_frame(path: str | Path) -> Any:
    """The file as a pandas DataFrame, read exactly as `pd.read_json(lines=True)` reads it."""
    import pandas as pd

    # dtype=False keeps JSON strings (state, game_params) as strings.
    return pd.read_json(path, lines=True, dtype=False)


def state_from_cell(cell: str) -> Any:
    """A `state` or `game_params` cell from pandas/`datasets` back to its JSON value."""
    return json.loads(cell)
