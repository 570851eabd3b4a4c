"""The resumable run loop behind tournaments and evaluations.

A `Job` says what one run is: its planned items (each with a deterministic id) and the
tally that summarizes their lines, both ready when the job is made; how one item is
played or decided into a log line; and what a line spends. `Run` does the rest, the same for every job: it serves the players (the
simulated server if needed, the server checks, one client pool), skips the ids already
logged with a result, runs the others concurrently under budget caps, appends each line
to the JSONL log the moment it exists, then writes `<log>.summary.json` and
`<log>.report.md` beside the log from the latest line of every planned id.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import signal
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Collection, Coroutine, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from metanim.arena._config import RunConfig
from metanim.arena._forfeits import ForfeitWatch
from metanim.arena._players import CallCarriage, ClientPool, Side, header_line
from metanim.arena._preflight import check_servers
from metanim.llm import CostBudget, InfrastructureError, sim_url_from_env
from metanim.records import (
    AppendLog,
    Record,
    RunLock,
    iter_log,
    iter_records,
    latest,
    render_summary,
    schema_breaks,
    transcript_path,
)
from metanim.util import STOP_SIGNALS, Interrupted, StorageError, fastjson


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
    planned: Sequence[Planned]  # every item of the run, in order
    tally: Tally  # this run's summary, fed each planned id's latest line

    #: Every call's options, as the players were built with them (set by `start`).
    call_options: Any

    def start(self, clients: ClientPool) -> str:
        """Build the players on `clients`; returns the run header (who plays where)."""
        ...

    async def work(self, item: Any) -> Record: ...

    def failed(self, item: Any, reason: str) -> Record: ...

    def spent(self, record: Record) -> tuple[int, int, float]:
        """(calls, tokens, dollars) of one log line."""
        ...

    def decisions(self, record: Record) -> list[Any]:
        """The model decisions one record holds that finished (move or decision records:
        a status and the truncated / unparsable / illegal counters), in order."""
        ...

    def progress(self, counts: Counter[str]) -> str: ...


@dataclass
class RunResult:
    """What a run produced: the log path, the latest record per planned id, and the summary."""

    config: Any
    log_path: Path
    planned: int
    played_now: int
    stopped: str | None
    summary: dict[str, Any] = field(default_factory=dict)
    report: str = ""
    #: Planned items that did not finish, by cause: cause -> (count, first message).
    failures: dict[str, tuple[int, str]] = field(default_factory=dict)
    #: What helps when most decisions gave no answer (the dominant cause and its flag).
    hint: str | None = None
    ids: Collection[str] = ()  # the planned ids
    end: int = 0  # the log's size when the run ended

    @functools.cached_property
    def records(self) -> list[Record]:
        """The latest logged record of each planned id, as the log was when the run ended.

        Read from the log when first used, so a long run's records are not held in memory
        unless asked for (the log's first `end` bytes: a later run may append).
        """
        if self.end and not self.log_path.exists():
            raise FileNotFoundError(
                f"{self.log_path} is gone: a run's records are read from its log when "
                "first used (read them before removing the log)"
            )
        last = latest(iter_log(self.log_path, self.end))
        return [r for r in last.values() if r.id in self.ids]

    @property
    def complete(self) -> bool:
        """Whether every planned item finished and no stop rule fired (exit code 0).

        A stop rule that fires (forfeits, a budget) makes the run incomplete however many
        items were already in flight when it fired: the exit code never depends on timing.
        """
        return not self.failures and self.stopped is None


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
        self.planned = job.planned
        self.ids = {p.id for p in self.planned}
        self.tallied = job.tally
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
        self.refused: InfrastructureError | None = None  # the server refused the key
        self.clients: ClientPool | None = None
        self.write_error: OSError | None = None  # the log could not be written
        self.forfeits = ForfeitWatch(self.config)
        # The first reply of this execution that broke its reply schema is announced
        # once (the report counts them all): a server defect, not the model's.
        self.schema_warned = False
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
                if self.config.max_cost_usd is not None:
                    # A hard cap over everything in flight, from what earlier runs spent.
                    clients.budget = CostBudget(self.config.max_cost_usd, self.spent.cost_usd)
                header = job.start(clients)
                models = dict.fromkeys(m for side in job.sides for m in side.models())
                lines = [header_line(m, clients, job.call_options) for m in models]
                if self.config.max_cost_usd is not None:
                    lines.append(
                        f"cost cap ${self.config.max_cost_usd:g}: a call is sent only if the "
                        "worst case of every call in flight still fits"
                        + (
                            f" (${self.spent.cost_usd:.4f} spent before)"
                            if self.spent.cost_usd
                            else ""
                        )
                    )
                if self.announce is not None:
                    self.announce("\n".join([header, *lines]))
                interrupted = await self._run(todo, clients)
            finally:
                await clients.aclose()
        return self._finish(interrupted)

    async def _run(self, todo: list[Any], clients: ClientPool) -> bool:
        """Work through `todo`; returns whether Ctrl-C or SIGTERM interrupted it."""
        self.clients = clients
        from tqdm.auto import tqdm  # here: only a run draws a bar

        bar = tqdm(
            total=len(self.planned),
            initial=len(self.planned) - len(todo),
            desc=self.config.name,
            unit=self.job.unit.removesuffix("s"),
            disable=not self.config.progress,
        )
        ticker = asyncio.ensure_future(self._tick(bar)) if self.config.progress else None
        began = time.perf_counter()
        try:
            transcripts = transcript_path(self.job.log_path)
            with (
                _cancel_on_stop(self.job.log_path, self.job.unit),
                AppendLog(self.job.log_path, transcripts) as log,
            ):
                queue = iter(todo)
                workers = min(self.config.concurrency, len(todo))
                await _start_staggered(self._worker(queue, log, bar) for _ in range(workers))
        except asyncio.CancelledError:
            # Every line written is on disk: summarize what finished, then say so
            # (`Interrupted`) instead of a traceback.
            return True
        except _Stop:
            return False
        finally:
            if ticker is not None:
                ticker.cancel()
            bar.close()
            self.wall_s = time.perf_counter() - began
        return False

    def _postfix(self) -> str:
        """The bar's text: the job's own counts, then failed call attempts as they happen
        (a hung or refusing server shows here long before an item ends)."""
        text = self.job.progress(self.counts)
        failed = self.clients.failed_attempts() if self.clients is not None else None
        streamed = self.clients.streamed() if self.clients is not None else 0
        if streamed:
            text += f"{', ' if text else ''}{streamed} reply pieces streamed"
        if failed:
            kinds = ", ".join(f"{kind} {n}" for kind, n in failed.most_common())
            text += f"{', ' if text else ''}failed call attempts so far: {kinds}"
        waits = self.clients.waits() if self.clients is not None else []
        if waits:  # a long wait says what it waits for
            text += f"{'; ' if text else ''}{'; '.join(dict.fromkeys(waits))}"
        return text

    async def _tick(self, bar: Any) -> None:
        while True:
            await asyncio.sleep(_TICK_S)
            bar.set_postfix_str(self._postfix())

    def _resume(self) -> list[Any]:
        """Read the log once: charge what it spent, feed finished ids to the summary, and
        return the items left to run."""
        log_path = self.job.log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.with_suffix(".config.json").write_text(
            self.config.model_dump_json(indent=2) + "\n"
        )
        last_line: dict[str, int] = {}
        for number, record in enumerate(iter_log(log_path, decisions=False)):
            self.spent.add(self.job.spent(record))
            self.status[record.id] = record.status
            last_line[record.id] = number
        todo = _left(self.job, self.status)
        todo_ids = {p.id for p in todo}
        if last_line:
            for number, record in enumerate(iter_log(log_path, decisions=False)):
                rid = record.id
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
        if record.status in self.job.finished:
            self.results += 1
        else:
            self.unfinished[record.id] = record

    async def _worker(self, queue: Iterator[Any], log: AppendLog, bar: Any) -> None:
        # Workers share one iterator: items start in plan order, and only the items in
        # flight exist as coroutines (not one per planned item).
        for item in queue:
            # Budget caps are checked before each item starts; items in flight finish (under
            # a cost cap, only as far as their calls' worst cases fit).
            budget = self.clients.budget if self.clients is not None else None
            reason = self.spent.exceeded(self.config)
            if reason is None and budget is not None and budget.exhausted:
                reason = f"cost cap ${self.config.max_cost_usd:g} reached"
            if reason is not None:
                if not self.stopped:
                    self.stopped.append(reason)
                return
            try:
                record = await self.job.work(item)
            except Exception as exc:  # one broken item never aborts the run
                reason = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"
                record = self.job.failed(item, reason)
            # In the summary as soon as the write is handed over: a cancel arriving while
            # it is awaited still finds the line on disk (the log's close waits for its
            # writer) and in the summary.
            write = log.submit(*record.lines())
            self.spent.add(self.job.spent(record))
            self.played += 1
            rid = record.id
            self.pending.pop(rid, None)
            if rid in self.ids:
                self._final(record)
            try:
                await write
            except OSError as exc:  # a full disk, a lost mount: the line is not on disk
                self.write_error = exc
                raise _Stop from None
            kind, message = error_kind(record)
            if record.status == "infrastructure_error" and kind in REFUSALS:
                # A refused key refuses every later call too: nothing more is sent.
                self.refused = InfrastructureError(message, kind=kind)
                self.stopped.append(f"stopped at the first refusal ({kind})")
                raise _Stop
            if rid in self.status:
                self.counts[self.status[rid]] -= 1
            self.status[rid] = record.status
            self.counts[record.status] += 1
            bar.set_postfix_str(self._postfix(), refresh=False)
            bar.update(1)
            decisions = self.job.decisions(record)
            self.decided += len(decisions)
            self._warn_schema(decisions)
            stop = self.forfeits.stop_reason(decisions)
            if stop is not None:
                self.stopped.insert(0, stop)
                raise _Stop

    def _warn_schema(self, decisions: list[Any]) -> None:
        """One line, once per execution, when a server breaks the reply schema it was sent."""
        if self.schema_warned or self.announce is None:
            return
        broken = sum(d.schema_violations for d in decisions)
        if broken:
            self.schema_warned = True
            replies = sum(d.schema_replies for d in decisions)
            self.announce(
                f"warning: {schema_breaks(broken, replies)} of a decision under structured "
                f"output {self.config.structured_output} (a server defect; the replies are "
                "read by the tolerant parser and scored as the model's; the report counts "
                "every one)"
            )

    def _finish(self, interrupted: bool) -> RunResult:
        """Write the summary and report; raise `Interrupted` after a Ctrl-C."""
        job, log_path = self.job, self.job.log_path
        for record in self.pending.values():  # logged failures that were not rerun after all
            self._final(record)
        budget = self.clients.budget if self.clients is not None else None
        if budget is not None and budget.exhausted and self.stopped:
            # The stop line states the final spend, every call in flight settled.
            self.stopped[0] = (
                f"cost cap ${budget.limit_usd:g} reached: ${budget.spent_usd:.4f} spent in all "
                f"({budget.refused})"
            )
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
        if self.clients is not None:
            # How each model's calls went out: the server's profile, cap and its field,
            # temperature, timeout, streaming, and what was adapted after a refusal.
            summary["calls_sent"] = self.clients.report()
        if budget is not None:
            summary["cost_cap"] = {
                "limit_usd": budget.limit_usd,
                "spent_usd": budget.spent_usd,
                "peak_committed_usd": budget.peak_committed_usd,
                "refused": budget.refused,
            }
        summary["config"] = self.config.model_dump(mode="json")
        summary["config_hash"] = job.digest
        summary["log"] = str(log_path)
        report = render_summary(summary)
        if self.write_error is not None:
            # Lines handed to the log may not have reached it: count what is on disk.
            last = latest(iter_log(log_path, decisions=False))
            self.results = sum(
                r.status in job.finished for rid, r in last.items() if rid in self.ids
            )
        saved = f"{self.results} of {len(self.planned)} {job.unit} finished and saved in {log_path}"
        try:
            # Strict JSON: a rate without a denominator is null, never a bare NaN.
            text = json.dumps(fastjson.finite(summary), indent=2, allow_nan=False)
            log_path.with_suffix(".summary.json").write_text(text + "\n")
            log_path.with_suffix(".report.md").write_text(report)
        except OSError as exc:
            self.write_error = self.write_error or exc
        if self.write_error is not None:
            # The log holds whole lines only; the summary is rebuilt from it on resume.
            error = self.write_error
            raise StorageError(
                f"cannot write {error.filename or log_path}: {error.strerror or error}; "
                f"{saved}; make room, then run the same command to resume"
            )
        if self.refused is not None:
            fix = "fix the key" if self.refused.kind in ("auth", "permission") else "fix it"
            raise InfrastructureError(
                f"{self.refused}; the run stopped at the first refusal and sent nothing "
                f"more ({saved}); {fix}, then run the same command to resume",
                kind=self.refused.kind,
            )
        if interrupted:
            raise Interrupted(
                f"{saved} (summary {log_path.with_suffix('.summary.json')}); "
                "run the same command to resume"
            )
        failures = failure_causes(
            list(self.unfinished.values()), len(self.planned), job.finished, reason,
            logged=self.logged,
        )  # fmt: skip
        end = log_path.stat().st_size if log_path.exists() else 0
        return RunResult(
            self.config, log_path, len(self.planned), self.played, reason, summary, report,
            failures, hint, self.ids, end,
        )  # fmt: skip


def _left(job: Job, status: dict[str, str]) -> list[Any]:
    """The planned items a run has left, given each logged id's latest status: those not
    logged, and those that failed when the run reruns failures."""
    rerun = job.config.rerun_failed
    done = {i for i, s in status.items() if s in job.finished or not rerun}
    return [p for p in job.planned if p.id not in done]


@dataclass(frozen=True)
class RunPlan:
    """What a run would do, found without sending or writing anything (`--dry-run`)."""

    unit: str
    planned: int
    left: int  # not yet logged with a result: what the run would run now
    players: list[str]
    log_path: Path
    #: The requests planning sent ("GET <url>"): what each real model's server is, asked
    #: to resolve `--structured-output auto` (the log's name depends on the answer).
    sent: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        unit = self.unit if self.planned != 1 else self.unit.removesuffix("s")
        head = (
            f"dry run: {self.planned} {unit} planned, {self.left} to run now "
            f"({'; '.join(self.players)}); log {self.log_path}; "
        )
        if not self.sent:
            return head + "nothing was sent or written"
        return head + (
            f"nothing was written; sent only {', '.join(self.sent)} (what each server is, "
            "for --structured-output auto; --structured-output or --provider plans "
            "without asking)"
        )


def plan(job: Job) -> RunPlan:
    """The plan of `job`: its items, those its log does not hold yet, its players."""
    status = {r.id: r.status for r in iter_log(job.log_path, decisions=False)}
    players = [side.name for side in job.sides]
    return RunPlan(job.unit, len(job.planned), len(_left(job, status)), players, job.log_path)


#: Seconds between progress refreshes while items run.
_TICK_S = 1.0


class _Stop(Exception):
    """Raised by a worker to stop every other one: a refused key, a log that cannot be
    written, or first decisions that all forfeited (`ForfeitWatch`)."""


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
def _cancel_on_stop(log_path: Path, unit: str) -> Iterator[None]:
    """While items run, Ctrl-C, SIGTERM and SIGHUP (`STOP_SIGNALS`) cancel the run; the log
    (closed after this block) keeps every finished item.

    A second one while the run winds down says what is saved and where; a third stops at
    once (`KeyboardInterrupt`). Main thread only (elsewhere nothing changes); the previous
    handlers come back after. A process that ignores SIGINT (a background job) still does.
    """
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    received = 0

    def stop() -> None:
        nonlocal received
        received += 1
        if received == 1:
            task.cancel()  # type: ignore[union-attr]
        elif received == 2:
            print(
                f"metanim: stopping: every finished {unit.removesuffix('s')} is already saved "
                f"in {log_path}; its summary is being written (again: stop at once; the "
                "same command resumes from the log)",
                file=sys.stderr,
            )
        else:
            raise KeyboardInterrupt

    previous = {}
    wanted = [*STOP_SIGNALS]
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        wanted.append(signal.SIGINT)
    try:
        for signum in wanted:
            previous[signum] = signal.getsignal(signum)
            loop.add_signal_handler(signum, stop)
    except (ValueError, RuntimeError, NotImplementedError, AttributeError):
        pass
    try:
        yield
    finally:
        for signum, handler in previous.items():
            with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):
                loop.remove_signal_handler(signum)
            signal.signal(signum, handler)


def error_kind(record: Record) -> tuple[str, str]:
    """(kind, message) of a log line's error: an infrastructure error's kind (`auth`,
    `connection`, ...), an exception's type, or "unknown"."""
    # "kind: message", "ExceptionType: message", or "agent: ExceptionType: message".
    parts = (record.error or "").strip().split("\n")[0].split(": ")
    while len(parts) > 1 and parts[0] in ("agent", "opponent"):
        parts = parts[1:]
    kind = parts[0] if len(parts) > 1 and " " not in parts[0] else "unknown"
    return kind, ": ".join(parts[1:] if kind != "unknown" else parts)


#: Infrastructure errors that no retry or rerun mends: the first one stops the run (a
#: refused key; a model the server does not serve; a request field it refuses, named with
#: the flag that changes it).
REFUSALS = frozenset({"auth", "permission", "not_found", "unsupported_parameter"})


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
        if r.status in finished:
            continue
        kind, message = error_kind(r)
        cause = f"{r.status} ({kind})"
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
        clients = ClientPool(
            sim_url,
            in_process=in_process,
            max_concurrency=config.call_concurrency,
            timeout_s=config.timeout_s,
            max_retries=config.max_retries,
            cache_path=config.cache,
            items_in_flight=config.concurrency,
            carried=CallCarriage(
                provider=config.provider,
                api=config.api,
                stream=config.stream,
                resend_timeouts=config.resend_timeouts,
            ),
        )
        try:
            check_servers(models, clients)
        except BaseException:
            if clients.cache is not None:
                clients.cache.close()
            raise
        yield clients


@contextlib.contextmanager
def _sim_server(needed: bool, job: Job) -> Iterator[tuple[str | None, bool]]:
    """(the simulated server's URL or None, whether it runs in this process)."""
    if not needed or sim_url_from_env():
        yield sim_url_from_env() if needed else None, False
        return
    session = sum(1 for _ in iter_records(job.log_path)) if Path(job.log_path).exists() else 0
    # When a run is interrupted its clients hang up on requests in flight; aiohttp logs
    # each as "Error handling request". For our own in-process server that is the run
    # stopping, not a fault: those records are dropped.
    server_log = logging.getLogger("aiohttp.server")
    server_log.addFilter(_client_left)
    try:
        from metanim.llm.sim import SimServer  # here: it imports aiohttp's server

        with SimServer(seed=job.config.seed, questions=job.questions, session=session) as server:
            yield server.base_url, True
    finally:
        server_log.removeFilter(_client_left)


def _client_left(record: logging.LogRecord) -> bool:
    exc = record.exc_info[1] if record.exc_info else None
    return not isinstance(exc, ConnectionError | asyncio.CancelledError)
