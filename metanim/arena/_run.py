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
from collections.abc import Awaitable, Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from metanim.arena._budget import Spent
from metanim.arena._log import AppendLog, RunLock, latest_by_id, read_records
from metanim.arena._players import ClientPool

Record = dict[str, Any]


@dataclass
class RunResult:
    """What a run produced: the log path, the latest record per planned id, and the summary."""

    config: Any
    log_path: Path
    records: list[Record]
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
    postfix: Callable[[dict[str, Record]], str] | None = None,
) -> R:
    """Run every planned item (each has an `id`) not yet logged with a `finished` status.

    `config` is a tournament or evaluation config (name, log_path, concurrency, budget
    caps, rerun_failed, progress). `work(item)` returns the item's log line; `charge`
    adds a line's model usage to the budget. Any exception `work` raises is caught for
    that item alone: `failed(item, reason)` is logged in its place (status `error`), and
    the other items go on. `clients` are closed when the run ends.
    Returns a `result` (a `RunResult` subclass).
    """
    from tqdm.auto import tqdm

    from metanim._edge import Interrupted

    log_path = config.log_path
    interrupted = False
    lock = RunLock(log_path)
    try:
        lock.acquire()  # a second writer of this run is refused before anything is written
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.with_suffix(".config.json").write_text(config.model_dump_json(indent=2) + "\n")
        previous = read_records(log_path)
        spent = Spent()
        for record in previous:
            charge(spent, record)
        latest = latest_by_id(previous)
        done = {i for i, r in latest.items() if r["status"] in finished or not config.rerun_failed}
        todo = [p for p in planned if p.id not in done]
        semaphore = asyncio.Semaphore(config.concurrency)
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
            async with semaphore:
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
                await log.append_async(line)
                charge(spent, line)
                played += 1
                bar.update(1)
                if postfix is not None:
                    latest[line["id"]] = line
                    bar.set_postfix_str(postfix(latest), refresh=False)

        try:
            with AppendLog(log_path) as log, _cancel_on_sigterm():
                await asyncio.gather(*(one(item, log) for item in todo))
        except asyncio.CancelledError:
            # Ctrl-C or SIGTERM (asyncio cancels the run): every line written is on disk;
            # summarize what finished, then say so (`Interrupted`) instead of a traceback.
            interrupted = True
        finally:
            bar.close()
    finally:
        await clients.aclose()
        lock.release()
    ids = {p.id for p in planned}
    records = [r for r in latest_by_id(read_records(log_path)).values() if r["id"] in ids]
    reason = stopped[0] if stopped else ("interrupted" if interrupted else None)
    summary = summarize(records, planned=planned, stopped=reason)
    summary["config"] = config.model_dump(mode="json")
    summary["config_hash"] = config.config_hash()
    summary["log"] = str(log_path)
    report = render_report(summary)
    log_path.with_suffix(".summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    log_path.with_suffix(".report.md").write_text(report)
    if interrupted:
        saved = sum(r["status"] in finished for r in records)
        raise Interrupted(
            f"{saved} of {len(planned)} {_UNIT_WORDS.get(unit, unit)} finished and saved in "
            f"{log_path} (summary {log_path.with_suffix('.summary.json')}); "
            "run the same command to resume"
        )
    failures = failure_causes(records, len(planned), finished, reason)
    return result(
        config, log_path, records, len(planned), played, reason, summary, report, failures
    )


_UNIT_WORDS = {"ep": "episodes", "dec": "decisions"}


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
    records: Sequence[Record], planned: int, finished: Collection[str], stopped: str | None
) -> dict[str, tuple[int, str]]:
    """Planned items that did not finish, by cause: cause -> (count, first message).

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
    missing = planned - len(records)
    if missing > 0:
        out["not run"] = (missing, stopped or "not started")
    return out


def pct(x: float) -> str:
    """A rate as a percentage for reports; an en dash for NaN (no denominator)."""
    return "–" if x != x else f"{100 * x:.1f}%"
