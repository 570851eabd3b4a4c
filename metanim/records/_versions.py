"""The log format's version, and the one place that reads lines of earlier versions.

Every line a run writes carries `format` (`FORMAT`), its first field. A line without it
was written before the field existed (format 1: every version of the project up to the
typed decision record); `upgrade` turns such a line into today's shape, so that every
reader reads one record type per log kind and nothing else knows an old format.
What format 1 lines may lack, by when it was added:

- the decision records are inline (a move's `decision`, a decision line's), where
  format 2 keeps them in the log's transcripts file;
- episodes: `truncated`, `call_latency_s` and `queue_s` in the side totals and move
  records (counted 0: no line of that time had them), `chain_calls` (0), `extra` ({});
- decisions: `kind` ("game"), `verdict` (from `correct` and `status`: a forfeit or a
  fallback gave no answer of its own), `extracted`, `round_verdicts`, `legal_answers`
  and `first_is_gold` (None: no chance baseline), `truncated`, `call_latency_s`,
  `queue_s` (0).

A field added to a record with a default needs no entry here: the record's default is
what an older line means. A change of meaning (a renamed field, a default that changes)
raises `FORMAT` and adds one step to `upgrade`.
"""

from __future__ import annotations

from typing import Any

#: The format every line written by this code carries.
FORMAT = 2
#: The log kinds: a tournament's episodes, an evaluation's decisions.
KINDS = ("episodes", "decisions")


class NewerFormatError(ValueError):
    """A log line written by a newer version of the project than this one."""


def upgrade(row: dict[str, Any], kind: str, decisions: bool = True) -> dict[str, Any]:
    """A log line of any format, as a line of `FORMAT` (a new dict; `row` is kept).

    Format 1 kept the decision records inline (format 2 keeps them in the transcripts):
    with `decisions` False they are dropped here, unread.
    """
    version = row.get("format", 1)
    if not isinstance(version, int) or version > FORMAT:
        raise NewerFormatError(
            f"a log line of format {version!r}: written by a newer metanim than this one "
            f"(it reads formats 1 to {FORMAT}); upgrade metanim to read it"
        )
    if version < 2:
        row = _episode_1(row) if kind == "episodes" else _decision_1(row)
        if not decisions:
            row = _without_decisions(row)
    return {**row, "format": FORMAT}


def _without_decisions(row: dict[str, Any]) -> dict[str, Any]:
    """A format 1 line without its inline decision records."""
    if "moves" in row:
        return {**row, "moves": [{**m, "decision": None} for m in row.get("moves") or []]}
    return {**row, "decision": None}


def _episode_1(row: dict[str, Any]) -> dict[str, Any]:
    """Format 1 episodes: the record as it is today, less fields added since."""
    return {**row, "chain_calls": row.get("chain_calls", 0), "extra": row.get("extra") or {}}


def _decision_1(row: dict[str, Any]) -> dict[str, Any]:
    """Format 1 decisions: the verdict follows from `correct` and `status` where a line
    predates it (a forfeit or a fallback is "forfeit", else right or wrong)."""
    out = {**row, "kind": row.get("kind") or "game"}
    if "verdict" not in row and row.get("correct") is not None:
        no_answer = row.get("status") in ("forfeit", "fallback")
        out["verdict"] = "forfeit" if no_answer else ("correct" if row["correct"] else "wrong")
    return out
