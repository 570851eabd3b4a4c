"""The resumable run loop shared by tournaments and evaluations.

Both plan a list of items with deterministic ids, skip the ids already logged with a
result, run the rest concurrently under budget caps, append each result to the JSONL
log the moment it exists, then summarize the latest record of every planned id and
write `<log>.summary.json` and `<log>.report.md` next to the log. Only what one item
is (an episode, a decision), how its usage is charged and how the log is summarized
differ; they come in as functions.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import signal
import traceback
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Coroutine, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar, overload

from metanim.arena._budget import Spent
from metanim.arena._log import AppendLog, RunLock, iter_records, latest_by_id
from metanim.arena._players import ClientPool

Record = dict[str, Any]


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

    @property
    def complete(self) -> bool:
        """Whether every planned item finished (exit code 0)."""
        return not self.failures


R = TypeVar("R", bound=RunResult)


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


class Tally(Protocol):
    """A summary built as records stream in (`add`), finished once at the end."""

    def add(self, record: Record) -> None: ...

    def finish(self, *, planned: Sequence[Any], stopped: str | None) -> dict[str, Any]: ...


class ListTally:
    """A `Tally` that keeps the records and hands them to a `summarize(records, ...)`."""

    def __init__(self, summarize: Callable[..., dict[str, Any]]) -> None:
        self.summarize = summarize
        self.records: list[Record] = []

    def add(self, record: Record) -> None:
        self.records.append(record)

    def finish(self, *, planned: Sequence[Any], stopped: str | None) -> dict[str, Any]:
        return self.summarize(self.records, planned=planned, stopped=stopped)


def qualified_model(model: str, base_url: str | None) -> str:
    """`model@base_url`, the spec a `ClientPool` resolves, or `model` alone."""
    return f"{model}@{base_url}" if base_url else model


#: The server identity of a `sim-*` model with no URL: the in-process simulated server,
#: whose port changes on every run, so its URL must not enter a config hash.
SIM_IN_PROCESS = "sim:in-process"


def server_identity(model: str, base_url: str | None) -> str:
    """The server a model is called on, as it enters a config hash.

    A given URL (without a trailing slash); for a `sim-*` model with none, the fixed
    token `sim:in-process` (its server is started in-process on a random port);
    otherwise where the client goes: `OPENAI_BASE_URL` or the OpenAI API.
    """
    import os

    from metanim.llm.client import DEFAULT_BASE_URL

    if base_url:
        return base_url.strip().rstrip("/")
    if model.strip().startswith("sim-"):
        return SIM_IN_PROCESS
    return (os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def refuse_unpriced(max_cost_usd: float | None, models: list[str]) -> None:
    """Refuse a cost cap over a model the price table does not know.

    An unpriced model's calls cost $0 in the accounts, so the cap would never stop the
    run. `sim-*` models are priced at 0 in the shipped table.
    """
    if max_cost_usd is None:
        return
    from metanim.llm.prices import PRICES_ENV, PriceTable

    table = PriceTable.load()
    for model in models:
        if not table.is_priced(model):
            raise ValueError(
                f"--max-cost-usd is set but model {model!r} has no price, so its calls would "
                f"count as $0 and the cap could not stop the run; add its price to a JSON file "
                f"named by {PRICES_ENV} (same shape as metanim/llm/prices.json)"
            )


def config_digest(body: dict[str, Any]) -> str:
    """The 12-hex-digit hash of a config's identifying fields."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12]


def client_pool(config: Any, sim_url: str | None) -> ClientPool:
    """The run's shared clients, limited by the config's call settings."""
    return ClientPool(
        sim_url,
        max_concurrency=config.call_concurrency,
        timeout_s=config.timeout_s,
        max_retries=config.max_retries,
        cache_path=config.cache,
    )


async def run_logged(
    config: Any,
    planned: Sequence[Any],
    clients: ClientPool,
    work: Callable[[Any], Awaitable[Record]],
    *,
    finished: Collection[str],
    charge: Callable[[Spent, Record], None],
    summarize: Callable[..., dict[str, Any]],
    render_report: Callable[[dict[str, Any]], str],
    unit: str,
    result: type[R],
    failed: Callable[[Any, str], Record],
    postfix: Callable[[Counter[str]], str] | None = None,
    tally: Callable[[], Tally] | None = None,
) -> R:
    """Run every planned item (each has an `id`) not yet logged with a `finished` status.

    `config` is a tournament or evaluation config (name, log_path, concurrency, budget
    caps, rerun_failed, progress). `work(item)` returns the item's log line; `charge`
    adds a line's model usage to the budget. Any exception `work` raises is caught for
    that item alone: `failed(item, reason)` is logged in its place (status `error`), and
    the other items go on. `clients` are closed when the run ends.

    Memory stays flat however long the run: the log is read line by line, the summary
    is built as lines stream in (`tally()`, else a `ListTally` over `summarize`), the
    progress bar's `postfix` gets a count of statuses, and `concurrency` workers take the
    items in turn. Returns a `result` (a `RunResult` subclass).
    """
    from tqdm.auto import tqdm

    from metanim.util.edge import Interrupted

    log_path = config.log_path
    interrupted = False
    lock = RunLock(log_path)
    ids = {p.id for p in planned}
    summary_tally: Tally = tally() if tally is not None else ListTally(summarize)
    # What the end needs besides the tally: the count of final records, the finished
    # ones, and the unfinished ones themselves (failures: few, they name their causes).
    logged = [0, 0]
    unfinished: dict[str, Record] = {}

    def final(record: Record) -> None:
        """One planned id's latest record, seen once: into the summary."""
        summary_tally.add(record)
        logged[0] += 1
        if record["status"] in finished:
            logged[1] += 1
        else:
            unfinished[record["id"]] = record

    try:
        lock.acquire()  # a second writer of this run is refused before anything is written
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.with_suffix(".config.json").write_text(config.model_dump_json(indent=2) + "\n")
        spent = Spent()
        status: dict[str, str] = {}  # id -> its latest logged status
        last_line: dict[str, int] = {}
        for number, record in enumerate(iter_records(log_path)):
            charge(spent, record)
            status[record["id"]] = record["status"]
            last_line[record["id"]] = number
        done = {i for i, s in status.items() if s in finished or not config.rerun_failed}
        todo = [p for p in planned if p.id not in done]
        todo_ids = {p.id for p in todo}
        # A logged failure that is rerun now is superseded by its new line; if the run
        # stops before reaching it, it stays the id's latest record (fed at the end).
        pending: dict[str, Record] = {}
        if last_line:
            for number, record in enumerate(iter_records(log_path)):
                rid = record["id"]
                if last_line[rid] != number or rid not in ids:
                    continue
                if rid in todo_ids:
                    pending[rid] = record
                else:
                    final(record)
        del last_line
        counts = Counter(status.values())
        stopped: list[str] = []
        played = 0
        bar = tqdm(
            total=len(planned),
            initial=len(planned) - len(todo),
            desc=config.name,
            unit=unit,
            disable=not config.progress,
        )

        async def one(item: Any, log: AppendLog) -> None:
            nonlocal played
            # Budget caps are checked before each item starts; items in flight finish.
            reason = spent.exceeded(config.max_calls, config.budget_tokens, config.max_cost_usd)
            if reason is not None:
                if not stopped:
                    stopped.append(reason)
                return
            try:
                line = await work(item)
            except Exception as exc:  # one broken item never aborts the run
                reason = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"
                line = failed(item, reason)
            # In the summary as soon as the write is handed over: a cancel arriving while
            # it is awaited still finds the line on disk (the log's close waits for its
            # writer) and in the summary.
            write = log.submit(line)
            charge(spent, line)
            played += 1
            rid = line["id"]
            pending.pop(rid, None)
            if rid in ids:
                final(line)
            await write
            if rid in status:
                counts[status[rid]] -= 1
            status[rid] = line["status"]
            counts[line["status"]] += 1
            if postfix is not None:
                bar.set_postfix_str(postfix(counts), refresh=False)
            bar.update(1)

        queue = iter(todo)

        async def worker(log: AppendLog) -> None:
            # `concurrency` workers share one iterator: items start in plan order, and
            # only the items in flight exist as coroutines (not one per planned item).
            for item in queue:
                await one(item, log)

        try:
            with AppendLog(log_path) as log, _cancel_on_sigterm():
                await _start_staggered(
                    worker(log) for _ in range(min(config.concurrency, len(todo)))
                )
        except asyncio.CancelledError:
            # Ctrl-C or SIGTERM (asyncio cancels the run): every line written is on disk;
            # summarize what finished, then say so (`Interrupted`) instead of a traceback.
            interrupted = True
        finally:
            bar.close()
    finally:
        await clients.aclose()
        lock.release()
    for record in pending.values():  # logged failures that were not rerun after all
        final(record)
    reason = stopped[0] if stopped else ("interrupted" if interrupted else None)
    summary = summary_tally.finish(planned=planned, stopped=reason)
    summary["config"] = config.model_dump(mode="json")
    summary["config_hash"] = config.config_hash()
    summary["log"] = str(log_path)
    report = render_report(summary)
    log_path.with_suffix(".summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    log_path.with_suffix(".report.md").write_text(report)
    if interrupted:
        saved = logged[1]
        raise Interrupted(
            f"{saved} of {len(planned)} {_UNIT_WORDS.get(unit, unit)} finished and saved in "
            f"{log_path} (summary {log_path.with_suffix('.summary.json')}); "
            "run the same command to resume"
        )
    failures = failure_causes(
        list(unfinished.values()), len(planned), finished, reason, logged=logged[0]
    )
    records = LoggedRecords(log_path, ids, log_path.stat().st_size if log_path.exists() else 0)
    return result(
        config, log_path, records, len(planned), played, reason, summary, report, failures
    )


_UNIT_WORDS = {"ep": "episodes", "dec": "decisions"}

#: Workers started per event-loop turn (see `_start_staggered`).
_START_BATCH = 8


async def _start_staggered(workers: Iterable[Coroutine[Any, Any, None]]) -> None:
    """Run `workers` to the end, starting them a few per event-loop turn.

    Started all at once, every worker would run its first item up to its first model
    call before the loop sends any request: with hundreds in flight, the first call
    would leave only after all of their set-up (0.1-0.2 s on a small machine). A few per
    turn, the first calls go out while the rest are still starting. If this task is
    cancelled or a worker fails, the workers started are cancelled and awaited.
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


def pct(x: float) -> str:
    """A rate as a percentage for reports; an en dash for NaN (no denominator)."""
    return "–" if x != x else f"{100 * x:.1f}%"
