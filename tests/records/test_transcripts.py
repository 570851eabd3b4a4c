"""A run's transcripts: each reply stored once, caps that record the cut, and a log that
stays bounded when a server ignores the completion cap (a 10 MB reply)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from metanim.agents import ReAct
from metanim.games import make_game
from metanim.llm import Completion
from metanim.records import (
    MAX_REASONING_CHARS,
    MAX_REPLY_CHARS,
    AppendLog,
    DecisionRecord,
    read_log,
    transcript_path,
)

HUGE = 10_000_000  # characters: a reply from a server that ignores the completion cap
FIB = make_game("fibonacci-20")


class Huge:
    """A chat model whose every reply is 10 MB of text, and so is its reasoning."""

    model = "huge"

    def __init__(self) -> None:
        self.calls = 0

    async def chat(
        self, messages, *, temperature=0.0, n=1, seed=None, sample_index=0, options=None
    ):
        self.calls += 1
        text = f"reply {self.calls} " + "x" * HUGE
        return Completion(
            model="huge", texts=[text], reasoning=["r" * HUGE], finish_reasons=["stop"]
        )


def _logged(tmp_path: Path) -> tuple[Path, DecisionRecord]:
    client = Huge()
    decision = asyncio.run(ReAct(client, max_reasks=2).decide(FIB, FIB.initial_state(), seed=1))
    assert client.calls == 3  # unparsable, re-asked twice: three 10 MB replies
    record = DecisionRecord(
        id="d", record_id="r", game="fibonacci", status=decision.status, correct=False,
        decision=decision,
    )  # fmt: skip
    log = tmp_path / "e.jsonl"
    with AppendLog(log, transcript_path(log)) as out:
        out.append(*record.lines())
    return log, record


def test_a_10mb_reply_leaves_a_bounded_log(tmp_path: Path) -> None:
    log, _ = _logged(tmp_path)
    # Three replies and three reasoning texts of 10 MB each, and the re-asks resend the
    # replies before them: 90 MB through the decision; the run's files stay small.
    written = sum(p.stat().st_size for p in tmp_path.iterdir())
    assert written < 200_000, written
    (back,) = read_log(log)
    calls = back.decision.calls
    for k, call in enumerate(calls):
        (text,) = call.texts
        assert text.startswith(f"reply {k + 1} ")
        dropped = len(f"reply {k + 1} ") + HUGE - MAX_REPLY_CHARS
        assert text.endswith(f"… [{dropped} characters not stored]")
        assert len(call.reasoning[0]) < MAX_REASONING_CHARS + 50
        assert call.reasoning[0].endswith(f"[{HUGE - MAX_REASONING_CHARS} characters not stored]")


def test_each_reply_is_stored_once_and_read_back_in_place(tmp_path: Path) -> None:
    log, record = _logged(tmp_path)
    (back,) = read_log(log)
    calls, samples = back.decision.calls, back.decision.samples
    # Each sample's text is its call's reply; each re-ask resends the reply before it.
    assert [s.text for s in samples] == [c.texts[0] for c in calls]
    assert calls[1].messages[-2] == {"role": "assistant", "content": calls[0].texts[0]}
    assert calls[2].messages[-2]["content"] == calls[1].texts[0]
    # Stored once: the transcript's JSON names each reply's text once (the rest point at it).
    import base64
    import zlib

    line = json.loads(transcript_path(log).read_text())
    stored = zlib.decompress(base64.b64decode(line["z"])).decode()
    for k in range(3):
        assert stored.count(f"reply {k + 1} ") == 1
    # Nothing else changed: the record as made, less the cut texts.
    made = record.decision
    assert back.decision.status == made.status and back.decision.seed == made.seed
    assert [c.messages[0] for c in calls] == [c.messages[0] for c in made.calls]


def test_a_crash_orphan_transcript_is_passed_over(tmp_path: Path) -> None:
    """A transcript written just before a crash (its log line never came) shares its id
    with the rerun's: the log line's mark picks the rerun's transcript."""
    client = Huge()
    first = asyncio.run(ReAct(client, max_reasks=0).decide(FIB, FIB.initial_state(), seed=1))
    again = asyncio.run(ReAct(client, max_reasks=0).decide(FIB, FIB.initial_state(), seed=2))
    log = tmp_path / "e.jsonl"
    orphan = DecisionRecord(
        id="d", record_id="r", game="fibonacci", status="forfeit", correct=False, decision=first
    )
    rerun = orphan.model_copy(update={"decision": again})
    _, orphan_transcript = orphan.lines()
    transcript_path(log).write_bytes(orphan_transcript)  # the crash: no log line
    with AppendLog(log, transcript_path(log)) as out:
        out.append(*rerun.lines())
    (back,) = read_log(log)
    assert back.decision.seed == 2 and back.decision.calls[0].texts[0].startswith("reply 2 ")
