"""The resumable run loop behind tournaments and evaluations.

A `Job` says what one run is: its planned items (each with a deterministic id), how one
item is played or decided into a log line, what a line spends, and how lines are
summarized. `Run` does the rest, the same for every job: it serves the players (the
simulated server if needed, the server checks, one client pool), skips the ids already
logged with a result, runs the others concurrently under budget caps, appends each line
to the JSONL log the moment it exists, then writes `<log>.summary.json` and
`<log>.report.md` beside the log from the latest line of every planned id.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import time
import traceback
from collections import Counter
from collections.abc import Callable, Collection, Coroutine, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, overload

from tqdm.auto import tqdm

from metanim.arena._config import RunConfig
from metanim.arena._forfeits import ForfeitWatch
from metanim.arena._players import ClientPool, Side
from metanim.arena._preflight import check_servers
from metanim.llm import sim_url_from_env
from metanim.llm.sim import SimServer
from metanim.records import (
    AppendLog,
    RunLock,
    iter_records,
    latest_by_id,
    read_records,
    render_summary,
)
from metanim.util import Interrupted, fastjson

Record = dict[str, Any]


class Planned(Protocol):
    """A planned item: anything with a deterministic `id`."""

    @property
    def id(self) -> str: ...


class Tally(Protocol):
    """A summary built as lines stream in (`add`), finished once at the end."""

    def add(self, record: Record) -> None: ...

    def finish(self, *, stopped: str | None) -> dict[str, Any]: ...


class Job(Protocol):
    """What one run plays or decides; `Run` executes any job the same way."""

    config: RunConfig
    digest: str  # the run identity's hash, computed once
    log_path: Path
    unit: str  # "episodes" or "decisions"
    finished: Collection[str]  # the statuses that are results
    sides: list[Side]  # the players, for the server checks and the header
    questions: list[str]  # question files the in-process simulator answers

    def plan(self) -> Sequence[Planned]: ...

    def start(self, clients: ClientPool) -> str:
        """Build the players on `clients`; returns the run header (who plays where)."""
        ...

    async def work(self, item: Any) -> Record: ...

    def failed(self, item: Any, reason: str) -> Record: ...

    def spent(self, record: Record) -> tuple[int, int, float]:
        """(calls, tokens, dollars) of one log line."""
        ...

    def decisions(self, record: Record) -> list[Record]:
        """The model decisions one log line holds that finished (with a status and the
        truncated / unparsable / illegal counters), in the order they were made."""
        ...

    def tally(self, planned: Sequence[Any]) -> Tally: ...

    def progress(self, counts: Counter[str]) -> str: ...


@dataclass
class RunResult:
    """What a run produced: the log path, the latest record per planned id, and the summary."""

    config: Any
    log_path: Path
    #: A `LoggedRecords` view: read from the log when first used, so a long run's
    #: records are not held in memory unless asked for.
    records: Sequence[Record]
    planned: int
    played_now: int
    stopped: str | None
    summary: dict[str, Any] = field(default_factory=dict)
    report: str = ""
    #: Planned items that did not finish, by cause: cause -> (count, first message).
    failures: dict[str, tuple[int, str]] = field(default_factory=dict)
    #: What helps when most decisions gave no answer (the dominant cause and its flag).
    hint: str | None = None

    @property
    def complete(self) -> bool:
        """Whether every planned item finished (exit code 0)."""
        return not self.failures


class LoggedRecords(Sequence[Record]):
    """The latest logged record of each planned id, read from the log on first use.

    Only the log's first `end` bytes are read: the records as they were when the run
    ended, whatever a later run appends.
    """

    def __init__(self, log_path: Path, ids: Collection[str], end: int | None = None) -> None:
        self._path, self._ids, self._end = log_path, ids, end
        self._records: list[Record] | None = None

    def _load(self) -> list[Record]:
        if self._records is None:
            if self._end and not self._path.exists():
                raise FileNotFoundError(
                    f"{self._path} is gone: a run's records are read from its log when "
                    "first used (read them before removing the log)"
                )
            latest = latest_by_id(iter_records(self._path, self._end))
            self._records = [r for r in latest.values() if r["id"] in self._ids]
        return self._records

    @overload
    def __getitem__(self, index: int) -> Record: ...
    @overload
    def __getitem__(self, index: slice) -> list[Record]: ...
    def __getitem__(self, index: int | slice) -> Record | list[Record]:
        return self._load()[index]

    def __len__(self) -> int:
        return len(self._load())

    def __iter__(self) -> Iterator[Record]:
        return iter(self._load())

    def __eq__(self, other: object) -> bool:
        return list(self) == (list(other) if isinstance(other, Sequence) else other)

    def __repr__(self) -> str:
        return f"LoggedRecords({str(self._path)!r})"


@dataclass
class Spent:
    """Model usage so far, previous runs of the same log included."""

    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0

    def add(self, usage: tuple[int, int, float]) -> None:
        self.calls += usage[0]
        self.tokens += usage[1]
        self.cost_usd += usage[2]

    def exceeded(self, config: RunConfig) -> str | None:
        """Why no new work may start, or None while every cap holds."""
        if config.max_calls is not None and self.calls >= config.max_calls:
            return f"call budget {config.max_calls} reached ({self.calls} calls)"
        if config.budget_tokens is not None and self.tokens >= config.budget_tokens:
            return f"token budget {config.budget_tokens} reached ({self.tokens} tokens)"
        if config.max_cost_usd is not None and self.cost_usd >= config.max_cost_usd:
            return f"cost budget ${config.max_cost_usd} reached (${self.cost_usd:.4f})"
        return None


class Run:
    """One execution of a job: resume from its log, run what is left, summarize.

    Memory stays flat however long the run: the log is read line by line, the summary
    is built as lines stream in, and `concurrency` workers take the items in turn.
    """

    def __init__(self, job: Job, announce: Callable[[str], None] | None = None) -> None:
        self.job = job
        self.config = job.config
        self.announce = announce
        self.planned = job.plan()
        self.ids = {p.id for p in self.planned}
        self.tallied = job.tally(self.planned)
        self.spent = Spent()
        self.status: dict[str, str] = {}  # id -> its latest logged status
        self.counts: Counter[str] = Counter()
        self.stopped: list[str] = []
        self.played = 0
        self.logged = 0  # planned ids with a final record in the summary
        self.results = 0  # ... of which finished
        self.unfinished: dict[str, Record] = {}
        # A logged failure that is rerun now is superseded by its new line; if the run
        # stops before reaching it, it stays the id's latest record (fed at the end).
        self.pending: dict[str, Record] = {}
        self.forfeits = ForfeitWatch(self.config)
        # This execution's wall time and the model decisions it finished (s/decision).
        self.wall_s = 0.0
        self.decided = 0

    async def execute(self) -> RunResult:
        """Run every planned item not yet logged with a result, then summarize the log."""
        job = self.job
        interrupted = False
        # Served first: a dead server or a refused key stops the run before anything is
        # written; then a second writer of this run is refused before it writes.
        with serve(job) as clients, RunLock(job.log_path):
            try:
                todo = self._resume()
                header = job.start(clients)
                if self.announce is not None:
                    self.announce(header)
                interrupted = await self._run(todo)
            finally:
                await clients.aclose()
        return self._finish(interrupted)

    async def _run(self, todo: list[Any]) -> bool:
        """Work through `todo`; returns whether Ctrl-C or SIGTERM interrupted it."""
        bar = tqdm(
            total=len(self.planned),
            initial=len(self.planned) - len(todo),
            desc=self.config.name,
            unit=self.job.unit.removesuffix("s"),
            disable=not self.config.progress,
        )
        began = time.perf_counter()
        try:
            with AppendLog(self.job.log_path) as log, _cancel_on_sigterm():
                queue = iter(todo)
                workers = min(self.config.concurrency, len(todo))
                await _start_staggered(self._worker(queue, log, bar) for _ in range(workers))
        except _FailFast:
            # The decisions in flight are dropped (not run), so the same command resumes.
            return False
        except asyncio.CancelledError:
            # Every line written is on disk: summarize what finished, then say so
            # (`Interrupted`) instead of a traceback.
            return True
        finally:
            bar.close()
            self.wall_s = time.perf_counter() - began
        return False

    def _resume(self) -> list[Any]:
        """Read the log once: charge what it spent, feed finished ids to the summary, and
        return the items left to run."""
        log_path = self.job.log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.with_suffix(".config.json").write_text(
            self.config.model_dump_json(indent=2) + "\n"
        )
        last_line: dict[str, int] = {}
        for number, record in enumerate(iter_records(log_path)):
            self.spent.add(self.job.spent(record))
            self.status[record["id"]] = record["status"]
            last_line[record["id"]] = number
        done = {
            i
            for i, s in self.status.items()
            if s in self.job.finished or not self.config.rerun_failed
        }
        todo = [p for p in self.planned if p.id not in done]
        todo_ids = {p.id for p in todo}
        if last_line:
            for number, record in enumerate(iter_records(log_path)):
                rid = record["id"]
                if last_line[rid] != number or rid not in self.ids:
                    continue
                if rid in todo_ids:
                    self.pending[rid] = record
                else:
                    self._final(record)
        self.counts.update(self.status.values())
        return todo

    def _final(self, record: Record) -> None:
        """One planned id's latest record, seen once: into the summary."""
        self.tallied.add(record)
        self.forfeits.count(self.job.decisions(record))
        self.logged += 1
        if record["status"] in self.job.finished:
            self.results += 1
        else:
            self.unfinished[record["id"]] = record

    async def _worker(self, queue: Iterator[Any], log: AppendLog, bar: Any) -> None:
        # Workers share one iterator: items start in plan order, and only the items in
        # flight exist as coroutines (not one per planned item).
        for item in queue:
            # Budget caps are checked before each item starts; items in flight finish.
            reason = self.spent.exceeded(self.config)
            if reason is not None:
                if not self.stopped:
                    self.stopped.append(reason)
                return
            try:
                line = await self.job.work(item)
            except Exception as exc:  # one broken item never aborts the run
                reason = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"
                line = self.job.failed(item, reason)
            # In the summary as soon as the write is handed over: a cancel arriving while
            # it is awaited still finds the line on disk (the log's close waits for its
            # writer) and in the summary.
            write = log.submit(line)
            self.spent.add(self.job.spent(line))
            self.played += 1
            rid = line["id"]
            self.pending.pop(rid, None)
            if rid in self.ids:
                self._final(line)
            await write
            if rid in self.status:
                self.counts[self.status[rid]] -= 1
            self.status[rid] = line["status"]
            self.counts[line["status"]] += 1
            bar.set_postfix_str(self.job.progress(self.counts), refresh=False)
            bar.update(1)
            decisions = self.job.decisions(line)
            self.decided += len(decisions)
            stop = self.forfeits.stop_reason(decisions)
            if stop is not None:
                self.stopped.insert(0, stop)
                raise _FailFast(stop)

    def _finish(self, interrupted: bool) -> RunResult:
        """Write the summary and report; raise `Interrupted` after a Ctrl-C."""
        job, log_path = self.job, self.job.log_path
        for record in self.pending.values():  # logged failures that were not rerun after all
            self._final(record)
        reason = self.stopped[0] if self.stopped else ("interrupted" if interrupted else None)
        summary = self.tallied.finish(stopped=reason)
        hint = summary["hint"] = (
            reason if reason and reason.startswith("stopped after") else self.forfeits.hint()
        )
        summary["timing"] = {
            "wall_s": self.wall_s,
            "decisions": self.decided,
            "s_per_decision": self.wall_s / self.decided if self.decided else None,
        }
        summary["config"] = self.config.model_dump(mode="json")
        summary["config_hash"] = job.digest
        summary["log"] = str(log_path)
        report = render_summary(summary)
        # Strict JSON: a rate without a denominator is null, never a bare NaN.
        text = json.dumps(fastjson.finite(summary), indent=2, allow_nan=False)
        log_path.with_suffix(".summary.json").write_text(text + "\n")
        log_path.with_suffix(".report.md").write_text(report)
        if interrupted:
            raise Interrupted(
                f"{self.results} of {len(self.planned)} {job.unit} finished and saved in "
                f"{log_path} (summary {log_path.with_suffix('.summary.json')}); "
                "run the same command to resume"
            )
        failures = failure_causes(
            list(self.unfinished.values()), len(self.planned), job.finished, reason,
            logged=self.logged,
        )  # fmt: skip
        end = log_path.stat().st_size if log_path.exists() else 0
        return RunResult(
            self.config, log_path, LoggedRecords(log_path, self.ids, end), len(self.planned),
            self.played, reason, summary, report, failures, hint,
        )  # fmt: skip


class _FailFast(Exception):
    """The first decisions of a run all forfeited: stop the workers (`ForfeitWatch`)."""


#: Workers started per event-loop turn (see `_start_staggered`).
_START_BATCH = 8


async def _start_staggered(workers: Iterable[Coroutine[Any, Any, None]]) -> None:
    """Run `workers` to the end, starting them a few per event-loop turn.

    Started all at once, every worker would run its first item up to its first model
    call before the loop sends any request: with hundreds in flight, the first call
    would leave only after all of their set-up. A few per turn, the first calls go out
    while the rest are still starting. If this task is cancelled or a worker fails, the
    workers started are cancelled and awaited.
    """
    tasks: list[asyncio.Future[None]] = []
    try:
        for number, worker in enumerate(workers, start=1):
            tasks.append(asyncio.ensure_future(worker))
            if number % _START_BATCH == 0:
                await asyncio.sleep(0)
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


@contextlib.contextmanager
def _cancel_on_sigterm() -> Iterator[None]:
    """While items run, SIGTERM cancels the run as Ctrl-C does (asyncio's own handling).

    Main thread only (elsewhere nothing changes); the previous handler comes back after.
    """
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    try:
        previous = signal.getsignal(signal.SIGTERM)
        loop.add_signal_handler(signal.SIGTERM, task.cancel)  # type: ignore[union-attr]
    except (ValueError, RuntimeError, NotImplementedError, AttributeError):
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        signal.signal(signal.SIGTERM, previous)


def failure_causes(
    records: Sequence[Record],
    planned: int,
    finished: Collection[str],
    stopped: str | None,
    *,
    logged: int | None = None,
) -> dict[str, tuple[int, str]]:
    """Planned items that did not finish, by cause: cause -> (count, first message).

    `logged` is how many planned items have a record, when `records` holds only the
    unfinished ones (default: `len(records)`).

    The cause of an infrastructure error is its kind (`connection`, `auth`, ...), of an
    error the exception's type, and items never run share one cause (the budget stop).
    """
    out: dict[str, tuple[int, str]] = {}
    for r in records:
        if r["status"] in finished:
            continue
        # "kind: message", "ExceptionType: message", or "agent: ExceptionType: message".
        parts = (r.get("error") or "").strip().split("\n")[0].split(": ")
        while len(parts) > 1 and parts[0] in ("agent", "opponent"):
            parts = parts[1:]
        kind = parts[0] if len(parts) > 1 and " " not in parts[0] else "unknown"
        message = ": ".join(parts[1:] if kind != "unknown" else parts)
        cause = f"{r['status']} ({kind})"
        count, first = out.get(cause, (0, message))
        out[cause] = (count + 1, first)
    missing = planned - (len(records) if logged is None else logged)
    if missing > 0:
        out["not run"] = (missing, stopped or "not started")
    return out


@contextlib.contextmanager
def serve(job: Job) -> Iterator[ClientPool]:
    """The run's clients, its servers checked, the simulated server started if needed.

    A `sim-*` model that names no server goes to `METANIM_SIM_URL` (a running
    `metanim serve-sim`) or to a simulated server started in-process for the duration.
    A resumed run continues where its log stopped: the in-process server's session is
    the number of lines the log already holds, so its simulated faults are fresh draws
    (reproducible from the log) rather than the failures of the first run again.
    """
    models = [m for side in job.sides for m in side.models()]
    config = job.config
    with _sim_server(any(m.needs_sim_server for m in models), job) as (sim_url, in_process):
        check_servers(models, sim_url=sim_url, skip=sim_url if in_process else None)
        yield ClientPool(
            sim_url,
            in_process=in_process,
            max_concurrency=config.call_concurrency,
            timeout_s=config.timeout_s,
            max_retries=config.max_retries,
            cache_path=config.cache,
        )


@contextlib.contextmanager
def _sim_server(needed: bool, job: Job) -> Iterator[tuple[str | None, bool]]:
    """(the simulated server's URL or None, whether it runs in this process)."""
    if not needed or sim_url_from_env():
        yield sim_url_from_env() if needed else None, False
        return
    session = len(read_records(job.log_path)) if Path(job.log_path).exists() else 0
    # When a run is interrupted its clients hang up on requests in flight; aiohttp logs
    # each as "Error handling request". For our own in-process server that is the run
    # stopping, not a fault: those records are dropped.
    server_log = logging.getLogger("aiohttp.server")
    server_log.addFilter(_client_left)
    try:
        with SimServer(seed=job.config.seed, questions=job.questions, session=session) as server:
            yield server.base_url, True
    finally:
        server_log.removeFilter(_client_left)


def _client_left(record: logging.LogRecord) -> bool:
    exc = record.exc_info[1] if record.exc_info else None
    return not isinstance(exc, ConnectionError | asyncio.CancelledError)
