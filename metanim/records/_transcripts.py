"""A run's transcripts: every kept decision record, compact, in a file beside the log.

The log holds what every reader needs (outcomes, moves, counters); the methods' decision
records (every call's messages and replies, every sampled answer, debate rounds) go to
`<log>.transcripts` (JSON lines), one line per log record that kept any, written just before
its log line (so a transcript is on disk before the line that names it; a crash between
the two leaves an orphan transcript, which readers pass over). A line is
`{"id": <record id>, "z": <base64 of zlib of the JSON list [[ply, decision], ...]>}`,
named by the log line's `transcript` mark (its CRC-32):

- each reply is stored once: a sampled answer's text, and a re-ask's copy of the
  previous reply in its messages, point at the call's reply (`{"reply": [call, k]}`)
  instead of repeating it; the prompts an episode resends (the rules, the system prompt)
  are left to the compression, which stores a repeat as a reference to its first copy;
- a reply longer than `MAX_REPLY_CHARS`, or a reasoning text longer than
  `MAX_REASONING_CHARS`, is cut there, and the cut says so in the text
  ("… [N characters not stored]") and in the decision's `stored_cuts` (where, how many
  characters), so a server that ignores the completion cap cannot fill the disk;
- zlib (the standard library) shrinks a NIM ReAct episode's decisions about tenfold.

Why a compressed line: the transcript is what a reader opens one record at a time (the
page, `calls_df`, an export), never what the report scans, so it need not be greppable
JSON; the log it leaves behind is small enough that the report reads a run at about the
speed of parsing it (docs/benchmarks.md, "Reading results"). `read_transcripts` reads
it back, whole: every call with its messages and replies.
"""

from __future__ import annotations

import base64
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

#: The most characters of one reply (a call's text, a message, a sample) a log stores.
MAX_REPLY_CHARS = 32_000
#: The most characters of one reasoning text (a reasoning model's thinking) it stores.
MAX_REASONING_CHARS = 16_000
SUFFIX = ".transcripts"
#: A transcripts line starts with its record's id (orjson writes no space).
_ID = re.compile(rb'^\{"id":"([^"\\\\]*)"')


def transcript_path(log: str | Path) -> Path:
    """The transcripts file of a run's log (`run.jsonl` -> `run.transcripts`: JSON lines,
    named apart so that `*.jsonl` still finds the logs alone)."""
    return Path(log).with_suffix(SUFFIX)


def _cut(text: str, limit: int, where: str, cuts: list[dict[str, Any]]) -> str:
    if len(text) <= limit:
        return text
    dropped = len(text) - limit
    cuts.append({"at": where, "chars": dropped})
    return f"{text[:limit]}… [{dropped} characters not stored]"


def compact(decision: dict[str, Any]) -> dict[str, Any]:
    """A decision's JSON as stored: caps applied, each reply once (see the module).

    A message or sample that neither repeats a reply nor needs a cut is kept as it is,
    not copied (the result is serialised at once, never changed).
    """
    cuts: list[dict[str, Any]] = []
    replies: dict[str, list[int]] = {}
    calls = []
    for i, call in enumerate(decision.get("calls") or []):
        call = dict(call)
        messages = []
        for m, message in enumerate(call.get("messages") or []):
            messages.append(_stored(message, "content", replies, f"calls.{i}.messages.{m}", cuts))
        call["messages"] = messages
        texts = []
        for k, text in enumerate(call.get("texts") or []):
            if isinstance(text, str):
                replies.setdefault(text, [i, k])
                text = _cut(text, MAX_REPLY_CHARS, f"calls.{i}.texts.{k}", cuts)
            texts.append(text)
        call["texts"] = texts
        for key in [key for key in call if key.startswith("reasoning")]:
            call[key] = _cap_reasoning(call[key], f"calls.{i}.{key}", cuts)
        calls.append(call)
    samples = []
    for j, sample in enumerate(decision.get("samples") or []):
        samples.append(_stored(sample, "text", replies, f"samples.{j}.text", cuts))
    out = {**decision, "calls": calls, "samples": samples}
    if cuts:
        out["stored_cuts"] = cuts
    return out


def _stored(
    item: dict[str, Any], key: str, replies: dict[str, list[int]], where: str, cuts: list[Any]
) -> dict[str, Any]:
    """`item` (a message, a sample) with its text at `key` as stored: a pointer to the
    reply it repeats, or cut at the cap; `item` itself where neither applies."""
    text = item.get(key)
    if not isinstance(text, str):
        return item
    if text in replies:
        return {**item, key: {"reply": replies[text]}}
    if len(text) > MAX_REPLY_CHARS:
        return {**item, key: _cut(text, MAX_REPLY_CHARS, where, cuts)}
    return item


def _cap_reasoning(value: Any, where: str, cuts: list[dict[str, Any]]) -> Any:
    if isinstance(value, str):
        return _cut(value, MAX_REASONING_CHARS, where, cuts)
    if isinstance(value, list):
        return [_cap_reasoning(v, f"{where}.{k}", cuts) for k, v in enumerate(value)]
    return value


def restore(decision: dict[str, Any]) -> dict[str, Any]:
    """A stored decision's JSON with every reply in place again (`compact` undone, the
    cut texts as stored)."""
    calls = decision.get("calls") or []

    def reply(value: Any) -> Any:
        if isinstance(value, dict) and "reply" in value:
            i, k = value["reply"]
            return calls[i]["texts"][k]
        return value

    for call in calls:
        call["messages"] = [{**m, "content": reply(m.get("content"))} for m in call["messages"]]
    decision["samples"] = [
        {**s, "text": reply(s.get("text"))} for s in decision.get("samples") or []
    ]
    return decision


def transcript_mark(line: bytes | None) -> int:
    """What a log line says of its transcript: the CRC-32 of the transcript's line (never
    0), or 0 for none. A rerun of an id writes a new transcript; a crash between the
    two writes leaves one whose log line never came; the mark finds the right one."""
    return 0 if line is None else zlib.crc32(line) or 1


def pack(record_id: str, decisions: list[tuple[int | None, dict[str, Any]]]) -> bytes:
    """One transcripts line (with its newline) of a record's kept decisions."""
    blob = orjson.dumps([[ply, compact(d)] for ply, d in decisions])
    z = base64.b64encode(zlib.compress(blob, 6)).decode("ascii")
    return orjson.dumps({"id": record_id, "z": z}) + b"\n"


def unpack(line: dict[str, Any]) -> dict[int | None, dict[str, Any]]:
    """A transcripts line's decisions by ply (None for an evaluation's one decision)."""
    blob = zlib.decompress(base64.b64decode(line["z"]))
    return {ply: restore(d) for ply, d in orjson.loads(blob)}


def read_transcripts(log: str | Path) -> Iterator[tuple[str, dict[int | None, dict[str, Any]]]]:
    """(record id, its decisions by ply) of every line of a log's transcripts file, in
    order (an id that was rerun appears again, later)."""
    for rid, _, line in marked_lines(log):
        try:
            yield rid, unpack(orjson.loads(line))
        except (orjson.JSONDecodeError, KeyError, ValueError, zlib.error):
            continue  # a damaged transcript: its record reads without its decisions


def marked_lines(log: str | Path) -> Iterator[tuple[str, int, bytes]]:
    """(record id, mark, line) of every whole line of a log's transcripts file, the id
    read from the line's first bytes (nothing unpacked)."""
    path = transcript_path(log)
    if not path.exists():
        return
    with path.open("rb") as f:
        for line in f:
            if not line.endswith(b"\n"):
                return  # a cut last write
            match = _ID.match(line)
            if match is not None:
                yield match.group(1).decode(), transcript_mark(line), line
