"""The records a run writes: one per move, a player's totals, one per episode, and one
per evaluated decision.

A move record carries the decision's counters (`Counts`, defined once in the agents
layer); a side's totals add them up. An episode record is one line of a tournament log,
a decision record one line of an evaluation log; each line starts with the log format's
version (`format`), and reading a line back gives the same record (`metanim.records.
read_log`). A field added to a record is one edit here: the writer, every reader, the
dataframes and the exports take it from the record.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from metanim.agents import Counts, Decision
from metanim.records._transcripts import pack, transcript_mark
from metanim.records._versions import FORMAT
from metanim.util import fastjson

Seat = Literal["first", "second"]
Actor = Literal["agent", "opponent"]
#: win/loss are results; infrastructure_error (the model could not be reached) and
#: error (a bug in a policy) are never a result: the episode is marked and rerun.
EpisodeStatus = Literal["win", "loss", "infrastructure_error", "error"]
EndReason = Literal[
    "game_over", "agent_forfeit", "opponent_forfeit", "infrastructure_error", "error"
]


class MoveRecord(Counts):
    """One decision in an episode: the position, the answer and its solver grade."""

    ply: int
    actor: Actor
    state: Any  # JSON form of the position the mover faced
    position: Literal["N", "P"]  # solver outcome for the mover
    status: str  # ok, fallback, forfeit, infrastructure_error
    move: str | None = None  # canonical move text
    optimal: bool | None = None  # None when no move was played
    seed: int = 0
    error: str | None = None
    # The method's full record, when kept: its `Decision`, in a live episode and read back
    # from the log's transcripts alike; a method's own record model (or a record whose
    # fields do not read as a `Decision`) as its JSON form.
    decision: Decision | dict[str, Any] | None = Field(None, union_mode="left_to_right")


class SideTotals(Counts):
    """Per-player totals of one episode."""

    moves: int = 0
    optimal_moves: int = 0
    forfeits: int = 0
    fallbacks: int = 0

    @classmethod
    def of(cls, moves: Iterable[MoveRecord]) -> SideTotals:
        """The totals of one side's move records."""
        moves = list(moves)
        return cls.total(
            moves,
            moves=sum(m.move is not None for m in moves),
            optimal_moves=sum(bool(m.optimal) for m in moves),
            forfeits=sum(m.status == "forfeit" for m in moves),
            fallbacks=sum(m.status == "fallback" for m in moves),
        )


class EpisodeRecord(BaseModel):
    """A finished (or failed) episode: one line of a tournament log."""

    model_config = ConfigDict(frozen=True)

    format: int = FORMAT  # the log format's version (metanim.records._versions)
    id: str
    setting: str
    index: int
    seed: int
    seat: Seat
    agent: str
    opponent: str
    game: str
    game_params: dict[str, Any]
    start_state: Any  # None when the episode failed before its start was drawn
    start_outcome: Literal["N", "P"] | None  # for the first mover
    status: EpisodeStatus
    # A later version's end (a move cap) reads as its name: no result, never a failure.
    end_reason: EndReason | str
    winner: Actor | None
    plies: int
    agent_totals: SideTotals
    opponent_totals: SideTotals
    chain_calls: int = 0  # critical path: longest chain of dependent model calls
    wall_s: float = 0.0
    error: str | None = None
    moves: list[MoveRecord] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)
    # The moves' decision records are in the log's transcripts file (the line itself
    # holds none: metanim.records._transcripts): the CRC-32 of their transcript line,
    # which names it among reruns of the same id; 0 for none.
    transcript: int = 0

    @property
    def finished(self) -> bool:
        return self.status in ("win", "loss")

    def lines(self) -> tuple[dict[str, Any], bytes | None]:
        """The log line (the JSON form without the decision records) and the transcripts
        line of the kept decision records (None if none was kept)."""
        kept = [(m.ply, _json(m.decision)) for m in self.moves if m.decision is not None]
        transcript = pack(self.id, kept) if kept else None
        line = self.model_dump(mode="json", exclude={"moves": {"__all__": {"decision"}}})
        line["transcript"] = transcript_mark(transcript)
        return line, transcript

    def line(self) -> dict[str, Any]:
        """The log line alone (`lines`)."""
        return self.lines()[0]


#: A decision's statuses: a graded result (ok, fallback, forfeit) or a failure.
DecisionStatus = Literal["ok", "fallback", "forfeit", "infrastructure_error", "error"]
Verdict = Literal["correct", "wrong", "forfeit"]


class DecisionRecord(Counts):
    """One evaluated item's decision: one line of an evaluation log.

    The item (a dataset record or a question), the repeat and seed, the verdict of the
    final answer, the decision's counters and, when kept, the method's full record.
    """

    model_config = ConfigDict(frozen=True)

    format: int = FORMAT
    id: str
    record_id: str
    kind: Literal["game", "question"] = "game"
    game: str  # the game, or the question set's name
    variant: str = "normal"
    stratum: str | None = None
    difficulty: str | None = None  # a dataset record's tier (easy, medium, hard)
    question_type: str | None = None
    # For the chance baselines: how many legal answers the item has (None: open), and
    # whether the first of them is the gold one.
    legal_answers: int | None = None
    first_is_gold: bool | None = None
    repeat: int = 0
    seed: int = 0
    optimal_move: str | None = None  # the gold answer's text
    status: DecisionStatus
    answer: str | None = None  # the answer played (a fallback's random move included)
    correct: bool | None  # None when not graded (an infrastructure error, an error)
    extracted: str | None = None
    verdict: Verdict | None = None
    # Each debate agent's verdict per round: {agent: True/False, None for no answer}.
    round_verdicts: list[dict[str, bool | None]] | None = None
    samples: int = 0
    error: str | None = None
    decision: Decision | dict[str, Any] | None = Field(None, union_mode="left_to_right")

    transcript: int = 0  # the CRC-32 of its transcripts line, 0 for none (as episodes)

    @property
    def graded(self) -> bool:
        return self.correct is not None

    def lines(self) -> tuple[dict[str, Any], bytes | None]:
        """The log line (the JSON form without the decision record) and the transcripts
        line of the kept decision record (None if none was kept)."""
        transcript = None
        if self.decision is not None:
            transcript = pack(self.id, [(None, _json(self.decision))])
        line = self.model_dump(mode="json", exclude={"decision"})
        line["transcript"] = transcript_mark(transcript)
        return line, transcript

    def line(self) -> dict[str, Any]:
        """The log line alone (`lines`)."""
        return self.lines()[0]


def _json(decision: Decision | dict[str, Any]) -> dict[str, Any]:
    """A decision record's JSON form (one pydantic-core call for a `Decision`)."""
    if isinstance(decision, dict):
        return decision
    return orjson.loads(fastjson.fragment(decision).text)


def decision_of(decision: Decision | dict[str, Any] | None) -> Decision | None:
    """A kept decision as the method's `Decision`; None for none, or for a record of an
    earlier version that does not read as one."""
    typed = typed_decision(decision)
    return typed if isinstance(typed, Decision) else None


def typed_decision(decision: Decision | dict[str, Any] | None) -> Decision | dict[str, Any] | None:
    """A decision record read back: the method's `Decision` where it validates as one
    (a record of an earlier version may not: it stays its JSON)."""
    if decision is None or isinstance(decision, Decision):
        return decision
    try:
        return Decision.model_validate(decision)
    except ValueError:
        return decision
