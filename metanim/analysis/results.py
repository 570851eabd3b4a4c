"""The logs of one or more results folders, read once, in flat memory, for every analysis.

`metanim report` and `metanim ratings` read the same thing: every tournament and
evaluation log under the folders (`metanim.records.iter_logs`), grouped by run identity,
the last record of each episode or decision id (a resumed run appends its reruns after
the failed attempts, and a folder copied beside another repeats its ids). Records are
read typed and streamed: what is kept is per-group sums and, per record, only the small
key a paired comparison, the ratings or an interval over items needs (an episode's
pairing key and result, a decision's item verdict), so memory stays flat in the number of
episodes. A first pass over each log reads only its ids (the text before the first
field that is not the id), so that the second reads each id's last record alone.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metanim.records import (
    DecisionRecord,
    EpisodeRecord,
    Record,
    first_decision,
    game_key,
    identity_hash,
    iter_logs,
    log_identity,
    log_ids,
    numbered_log,
    run_identity,
)

FINISHED = ("win", "loss")
#: The pairing key of an episode: two runs' episodes with the same index, seed, seat
#: and start are a pair. Kept as the hash of those four (this process's own `hash`:
#: keys are compared within one reading only), an int where a tuple of four would
#: hold a string, so a folder of 100,000 episodes keeps a few MB of keys.
EpisodeKey = int
#: What the ratings need of one episode: (agent, opponent, seat, start outcome, status,
#: end reason); the agent and opponent named by the line (for a log without its config).
Rated = tuple[str, str, str, str, str, str]


@dataclass
class Verdicts:
    """Per item: its verdicts and the repeat of each (the item is the unit)."""

    verdicts: dict[str, list[bool]] = field(default_factory=dict)
    repeats: dict[str, list[int]] = field(default_factory=dict)
    failed: int = 0  # decisions without a verdict (infrastructure errors, errors)
    forfeits: int = 0  # format failures: graded wrong, counted apart

    def add(self, r: DecisionRecord) -> None:
        if r.correct is None:
            self.failed += 1
            return
        self.verdicts.setdefault(r.record_id, []).append(r.correct)
        self.repeats.setdefault(r.record_id, []).append(r.repeat)
        self.forfeits += r.status == "forfeit"

    @property
    def graded(self) -> int:
        return sum(len(v) for v in self.verdicts.values())


@dataclass
class WinCounts:
    """Win counts of some episodes: finished, won, failed, and by start (the N/P outcome
    of the start position for its first mover; "?" where no start was drawn)."""

    wins: int = 0
    finished: int = 0
    failed: int = 0  # infrastructure errors and errors: never a loss
    forfeit_losses: int = 0
    starts: Counter[str] = field(default_factory=Counter)  # every episode, by start
    start_finished: Counter[str] = field(default_factory=Counter)
    start_wins: Counter[str] = field(default_factory=Counter)

    def add(self, r: EpisodeRecord) -> None:
        start = r.start_outcome or "?"
        self.starts[start] += 1
        if r.status not in FINISHED:
            self.failed += 1
            return
        won = r.status == "win"
        self.finished += 1
        self.wins += won
        self.forfeit_losses += not won and r.end_reason == "agent_forfeit"
        self.start_finished[start] += 1
        self.start_wins[start] += won


@dataclass
class EpisodeGroup(WinCounts):
    """One run identity's episodes of one setting: sums (pooled and per seat) and one
    small key per episode."""

    game: str = ""  # the game key (variant included), for the ratings' accuracy column
    seats: dict[str, WinCounts] = field(default_factory=dict)  # "first" / "second"
    pairs: dict[EpisodeKey, bool] = field(default_factory=dict)  # finished: key -> won
    rated: Counter[Rated] = field(default_factory=Counter)

    def add(self, r: EpisodeRecord) -> None:
        if not self.game:
            self.game = game_key(r.game, "misere" if r.game_params.get("misere") else "")
        self.rated[
            (r.agent, r.opponent, r.seat, r.start_outcome or "?", r.status, r.end_reason)
        ] += 1
        super().add(r)
        self.seats.setdefault(r.seat, WinCounts()).add(r)
        if r.status in FINISHED:
            key = hash((r.index, r.seed, r.seat, json.dumps(r.start_state)))
            self.pairs[key] = r.status == "win"


@dataclass
class DecisionGroup:
    """One run identity's decisions on one game and dataset: verdicts per item, and per
    difficulty tier."""

    all: Verdicts = field(default_factory=Verdicts)
    tiers: dict[str, Verdicts] = field(default_factory=dict)

    def add(self, r: DecisionRecord) -> None:
        self.all.add(r)
        if r.difficulty:
            self.tiers.setdefault(r.difficulty, Verdicts()).add(r)


@dataclass
class Results:
    """Every run found under some folders: identities, episode and decision groups."""

    identities: dict[str, dict[str, Any]] = field(default_factory=dict)  # hash -> identity
    #: (identity hash, setting) -> its episodes.
    episodes: dict[tuple[str, str], EpisodeGroup] = field(
        default_factory=lambda: defaultdict(EpisodeGroup)
    )
    #: (identity hash, game key, dataset digests) -> its decisions.
    decisions: dict[tuple[str, str, str], DecisionGroup] = field(
        default_factory=lambda: defaultdict(DecisionGroup)
    )
    #: Logs read: (path, kind, config, identity hash), in the order read.
    logs: list[tuple[Path, str, dict[str, Any], str]] = field(default_factory=list)
    #: (identity hash, side: "agent", "opponent", or "" for an evaluation) -> [replies
    #: that broke their reply schema, replies sent one] (`Counts.schema_violations`).
    schema: dict[tuple[str, str], list[int]] = field(default_factory=dict)

    def add_schema(self, h: str, record: Record) -> None:
        """Count a record's replies under structured output, per side."""
        if isinstance(record, EpisodeRecord):
            sides = [("agent", record.agent_totals), ("opponent", record.opponent_totals)]
        else:
            sides = [("", record)]
        for side, counts in sides:
            if counts.schema_replies:
                sums = self.schema.setdefault((h, side), [0, 0])
                sums[0] += counts.schema_violations
                sums[1] += counts.schema_replies


def run_dataset(config: dict[str, Any]) -> list[str]:
    """The dataset(s) of an evaluation config, by content digest (empty for a tournament)."""
    return list(run_identity({"dataset": config.get("dataset") or []})["dataset"])


def find_logs(folders: Iterable[str | Path]) -> list[tuple[Path, str, dict[str, Any]]]:
    """Every run's log under `folders`; `ValueError` names a folder that is not one or
    holds no tournament or evaluation log."""
    out = []
    for folder in map(Path, folders):
        check_results_folder(folder)
        logs = list(iter_logs(folder))
        if not logs:
            raise ValueError(
                f"no runs found in {folder}: no tournament or evaluation log (*.jsonl) under it"
            )
        out += logs
    return out


def latest_records(
    logs: list[tuple[Path, str, dict[str, Any]]],
    *,
    decisions: bool | Callable[[Path], bool] = False,
) -> Iterator[tuple[int, str, Record]]:
    """(log number, identity hash, record) of the last record of every id, per identity,
    over `logs` in order: a later log's record of an id supersedes an earlier one's.
    `decisions`: read the methods' decision records with them (else none), for every
    log or for those a function of the log's path picks."""
    hashes = [identity_hash(log_identity(config, path, kind)) for path, kind, config in logs]
    # Per identity: id -> where its last record is, as one int (log number << 32 | line).
    last: dict[str, dict[str, int]] = {h: {} for h in hashes}
    for n, (path, _, _) in enumerate(logs):
        ids = last[hashes[n]]
        for number, rid in log_ids(path):
            ids[rid] = n << 32 | number
    for n, (path, kind, _) in enumerate(logs):
        wanted = decisions(path) if callable(decisions) else decisions
        ids = last[hashes[n]]
        for number, record in numbered_log(path, kind=kind, decisions=wanted):
            if ids.get(record.id) == n << 32 | number:
                yield n, hashes[n], record


def debates(path: Path) -> bool:
    """Whether a log's decisions are debates (two agents or more answer in rounds): the
    report's debate metrics read their records; other logs are read without them."""
    decision = first_decision(path)
    rounds = (decision or {}).get("rounds") or []
    return any(isinstance(r, dict) and len(r) > 1 for r in rounds)


def read_results(
    folders: Iterable[str | Path],
    *,
    on_record: Callable[[int, str, Record], None] | None = None,
) -> Results:
    """Read every log under `folders` into per-group sums and keys (see above).

    `on_record(log number, identity hash, record)` sees every record kept; the records
    of debating logs (`debates`) come with their decision records.
    """
    out = Results()
    logs = find_logs(folders)
    for path, kind, config in logs:
        identity = log_identity(config, path, kind)
        h = identity_hash(identity)
        out.identities[h] = identity
        out.logs.append((path, kind, config, h))
    datasets = [",".join(map(str, run_dataset(config))) for _, _, config in logs]
    for n, h, record in latest_records(logs, decisions=debates if on_record else False):
        out.add_schema(h, record)
        if isinstance(record, EpisodeRecord):
            out.episodes[(h, record.setting)].add(record)
        else:
            game = game_key(record.game, record.variant)
            out.decisions[(h, game, datasets[n])].add(record)
        if on_record is not None:
            on_record(n, h, record)
    return out


def check_results_folder(folder: str | Path) -> None:
    """Refuse what is no results folder, naming what it is instead."""
    folder = Path(folder)
    if folder.is_file():
        what = "a run's log" if folder.suffix == ".jsonl" else "a file"
        raise ValueError(f"{folder} is {what}: give the folder that holds it ({folder.parent})")
    if not folder.is_dir():
        raise ValueError(f"no results folder at {folder}")
