"""Long runs in flat memory: the summary tallied as lines arrive equals one computed
afterwards, from the whole log, by a plain-Python reference written here."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest

from metanim.arena import TournamentConfig, run_tournament
from metanim.llm.sim import SimServer
from metanim.records import iter_records, read_log, read_records

FAULTY = "sim-faulty:malformed=0.2,http500=0.3"


def _reference(log: Path, planned: int) -> dict:
    """Wins, losses, failures and usage per seat group, from the latest line of each id."""
    latest: dict[str, dict] = {}
    for line in log.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            latest[r["id"]] = r
    groups: dict[str, list[dict]] = {}
    for r in latest.values():
        groups.setdefault(r["seat"], []).append(r)
        groups.setdefault("all", []).append(r)
    out = {}
    for seat, rows in groups.items():
        done = [r for r in rows if r["status"] in ("win", "loss")]
        wins = len([r for r in done if r["status"] == "win"])
        out[seat] = {
            "episodes": len(rows),
            "finished": len(done),
            "wins": wins,
            "losses": len(done) - wins,
            "infrastructure_errors": len(
                [r for r in rows if r["status"] == "infrastructure_error"]
            ),
            "end_reasons": dict(Counter(r["end_reason"] for r in rows)),
            "agent_calls": sum(r["agent_totals"]["calls"] for r in rows),
            "agent_tokens": sum(r["agent_totals"]["prompt_tokens"] for r in rows),
            "agent_decisions": sum(1 for r in rows for m in r["moves"] if m["actor"] == "agent"),
        }
    out["all"]["not_run"] = planned - len(latest)
    return out


def _check(result, planned: int) -> None:
    ref = _reference(result.log_path, planned)
    rows = {g["seat"]: g for g in result.summary["groups"]}
    assert set(rows) == set(ref)
    for seat, want in ref.items():
        got = rows[seat]
        for key in ("episodes", "finished", "wins", "losses", "infrastructure_errors"):
            assert got[key] == want[key], (seat, key)
        assert got["end_reasons"] == want["end_reasons"]
        assert got["agent"]["calls"] == want["agent_calls"]
        assert got["agent"]["prompt_tokens"] == want["agent_tokens"]
        latency = got["agent"]["mean_decision_latency_s"]
        assert (want["agent_decisions"] == 0) == math.isnan(latency)
    assert rows["all"]["not_run"] == ref["all"]["not_run"]
    assert result.summary["episodes_logged"] == planned - ref["all"]["not_run"]


def test_streamed_summary_matches_the_whole_log_after_faults_resume_and_budget(tmp_path):
    with SimServer() as server:
        config = TournamentConfig(
            games=["nim-31-k3"],
            method="react",
            model=FAULTY,
            base_url=server.base_url,
            opponent="random",
            episodes=12,
            seat="alternate",
            max_retries=0,
            concurrency=3,
            # Faults are the point here: the run goes on past early forfeits.
            keep_going=True,
            results_dir=str(tmp_path),
            progress=False,
        )
        first = run_tournament(config)
        assert "records" not in vars(first)  # not read from the log until asked for
        failed = sum(r.status != "win" and r.status != "loss" for r in first.records)
        assert failed > 0  # http500 without retries: some episodes fail
        _check(first, 12)
        # A resume that reruns the failures under a call budget that stops it part way:
        # the failures it did not reach stay the latest records of their ids.
        spent = sum(r.agent_totals.calls for r in read_log(first.log_path))
        budget = config.model_copy(update={"max_calls": spent + 2})
        assert budget.log_path == config.log_path  # a budget is not part of a run's identity
        second = run_tournament(budget)
        assert 0 < second.played_now < failed and second.stopped
        _check(second, 12)
        third = run_tournament(config)
        _check(third, 12)
        assert third.summary["groups"][0]["not_run"] == 0
    # The first result's records are the log as it was when the first run ended.
    assert len(first.records) == 12
    assert sum(r.status not in ("win", "loss") for r in first.records) == failed
    assert len(list(iter_records(first.log_path))) == len(read_records(first.log_path))


def test_progress_postfix_comes_from_status_counts():
    from metanim.arena.tournament import Tournament

    job = Tournament(TournamentConfig(method="optimal", opponent="random", progress=False))
    counts = Counter({"win": 3, "loss": 2, "infrastructure_error": 1})
    assert job.progress(counts) == "win 3/5, failed 1"
    assert job.progress(Counter({"loss": 4})) == "win 0/4"


def test_logged_decisions_round_trip_to_the_decisions_made():
    import asyncio
    import tempfile
    import zlib

    from metanim.agents import Decision
    from metanim.arena import ClientPool, Side, build_player, play_episode
    from metanim.games import make_game
    from metanim.records import AppendLog, read_transcripts, transcript_path
    from metanim.util import fastjson

    tmp = tempfile.mkdtemp()

    game = make_game("nim-31-k3")
    with SimServer() as server:
        pool = ClientPool(server.base_url, max_concurrency=4, timeout_s=10, max_retries=0)
        url = server.base_url
        agent = build_player(Side.parse("react", f"sim-faulty:malformed=0.3@{url}", None, {}), pool)
        opponent = build_player(Side.parse("mad", f"sim-biased:p=0.5@{url}", None, {}), pool)

        async def episodes():
            out = [
                await play_episode(game, agent, opponent, start="initial", seed=s) for s in range(2)
            ]
            await pool.aclose()
            return out

        records = asyncio.run(episodes())
    kept = 0
    for n, record in enumerate(records):
        line, transcript = record.lines()
        line = json.loads(fastjson.dumps_line(line))
        # The log's line is the record less its decisions, which go to the transcripts,
        # named by the CRC-32 of their line.
        expected = record.model_dump(mode="json", exclude={"moves": {"__all__": {"decision"}}})
        assert line == {**expected, "transcript": zlib.crc32(transcript)}
        log = Path(tmp) / f"e{n}.jsonl"
        with AppendLog(log, transcript_path(log)) as out:
            out.append(*record.lines())
        ((rid, logged),) = read_transcripts(log)
        assert rid == record.id
        for move in record.moves:
            made = move.decision
            assert isinstance(made, Decision)
            # The Python move is never written; its JSON form is, and it is the move played.
            assert "move" not in logged[move.ply]
            answer = logged[move.ply]["answer"]
            if move.move is None:
                assert answer is None
            else:
                assert game.move_text(tuple(answer)) == move.move == game.move_text(made.move)
            back = Decision.model_validate(logged[move.ply])
            assert back == made.model_copy(update={"move": None})
            kept += 1
        # Read back, a record is typed through its decisions (the method's `Decision`).
        (again,) = read_log(log)
        assert all(isinstance(m.decision, Decision) for m in again.moves)
        assert again == record.model_copy(
            update={"transcript": zlib.crc32(transcript), "moves": [
                m.model_copy(update={"decision": m.decision.model_copy(update={"move": None})})
                for m in record.moves
            ]}
        )  # fmt: skip
    assert kept >= 4


def test_workers_start_a_few_per_loop_turn_and_stop_together():
    import asyncio

    from metanim.arena._run import _start_staggered

    events: list[tuple[str, int]] = []

    async def worker(i: int, fail: bool = False) -> None:
        events.append(("start", i))
        await asyncio.sleep(0)  # its first model call, say
        events.append(("sent", i))
        if fail:
            raise OSError("disk full")
        await asyncio.sleep(0.05)
        events.append(("done", i))

    asyncio.run(_start_staggered(worker(i) for i in range(64)))
    # The first call goes out before the last worker has even started.
    assert events.index(("sent", 0)) < events.index(("start", 63))
    assert sorted(i for kind, i in events if kind == "done") == list(range(64))

    events.clear()
    with pytest.raises(OSError, match="disk full"):
        asyncio.run(_start_staggered(worker(i, fail=i == 3) for i in range(64)))
    assert not any(kind == "done" for kind, _ in events)  # the others were cancelled

    async def cancelled() -> None:
        run = asyncio.ensure_future(_start_staggered(worker(i) for i in range(64)))
        await asyncio.sleep(0.01)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        assert len(asyncio.all_tasks()) == 1  # only this one: no worker left running

    events.clear()
    asyncio.run(cancelled())
    assert not any(kind == "done" for kind, _ in events)
