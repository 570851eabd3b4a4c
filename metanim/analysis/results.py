"""The logs of one or more results folders, read once for every analysis of them.

`metanim report` and `metanim ratings` read the same thing: every tournament and
evaluation log under the folders (`metanim.records.iter_logs`), grouped by run identity,
the last line of each episode or decision id (a resumed run appends its reruns after the
failed attempts, and a folder copied beside another repeats its ids).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metanim.records import (
    game_key,
    identity_hash,
    iter_logs,
    log_identity,
    read_records,
    run_identity,
)

#: (identity hash, setting) -> episode id -> its latest line.
Episodes = dict[tuple[str, str], dict[Any, dict[str, Any]]]
#: (identity hash, game key, dataset digests) -> decision id -> its latest line.
Decisions = dict[tuple[str, str, str], dict[Any, dict[str, Any]]]


@dataclass
class Results:
    """Every run found under some folders: identities, episodes and decisions."""

    identities: dict[str, dict[str, Any]] = field(default_factory=dict)  # hash -> identity
    episodes: Episodes = field(default_factory=lambda: defaultdict(dict))
    decisions: Decisions = field(default_factory=lambda: defaultdict(dict))


def run_dataset(config: dict[str, Any]) -> list[str]:
    """The dataset(s) of an evaluation config, by content digest (empty for a tournament)."""
    return list(run_identity({"dataset": config.get("dataset") or []})["dataset"])


def read_results(folders: Iterable[str | Path]) -> Results:
    """Read every log under `folders`; `ValueError` names a folder that is not one or
    holds no tournament or evaluation log."""
    out = Results()
    for folder in map(Path, folders):
        if not folder.is_dir():
            raise ValueError(f"no results folder at {folder}")
        logs = list(iter_logs(folder))
        if not logs:
            raise ValueError(
                f"no runs found in {folder}: no tournament or evaluation log (*.jsonl) under it"
            )
        for path, kind, config in logs:
            rows = read_records(path)
            if not rows:
                continue
            identity = log_identity(config, rows, kind)
            h = identity_hash(identity)
            out.identities[h] = identity
            dataset = ",".join(map(str, run_dataset(config)))
            for k, row in enumerate(rows):
                key = row.get("id", f"{path}:{k}")
                if kind == "episodes":
                    setting = str(row.get("setting") or row.get("game") or "?")
                    out.episodes[(h, setting)][key] = row
                else:
                    game = game_key(str(row.get("game", "?")), str(row.get("variant", "")))
                    out.decisions[(h, game, dataset)][key] = row
    return out
