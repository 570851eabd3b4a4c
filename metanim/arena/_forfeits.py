"""Fail fast with a remedy: a run whose decisions give no answer says why, and what helps.

A decision that never gave an answer of its own (a forfeit, or the random fallback) is
almost always a format failure: replies cut at the completion cap, replies that name no
answer, or answers that are not allowed. When the first `FAIL_FAST` decisions of a run
to finish are all such, the run stops (exit code 3) with one line naming the dominant
cause and the flag that helps; the items it did not start are "not run" and the same
command resumes them (`--keep-going` runs on regardless: an all-forfeit run can be a
measurement). A run that ends with more than half of its decisions forfeited gets the
same line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: The decisions a run looks at before it stops for forfeits.
FAIL_FAST = 5
#: Statuses of a decision that gave no answer of its own.
NO_ANSWER = ("forfeit", "fallback")
#: The reply failures a decision counts, in the order a tie between them is named.
CAUSES = ("truncated", "unparsable", "illegal")


def gave_no_answer(decision: Any) -> bool:
    """Whether a decision (a decision or a move record) gave no answer of its own."""
    return decision.status in NO_ANSWER


class ForfeitWatch:
    """Counts a run's decisions as they finish; says when to stop and what to suggest.

    `config` is the run's config (its structured-output mode, completion cap and
    `keep_going`).
    """

    def __init__(self, config: Any) -> None:
        self.config = config
        self.first: list[Any] = []  # this execution's first decisions
        self.decisions = 0  # every decision in the summary (earlier runs' included)
        self.forfeits = 0
        self.causes = dict.fromkeys(CAUSES, 0)
        self.caps: set[int] = set()  # the caps the forfeited decisions' calls were sent
        self.digit: str | None = None  # a digit of another script the replies wrote

    def _note_caps(self, decision: Any) -> None:
        self.caps.update(caps_sent(decision))

    def count(self, decisions: Iterable[Any]) -> None:
        """Decisions of a record in the summary (towards the end-of-run hint)."""
        for d in decisions:
            self.decisions += 1
            if gave_no_answer(d):
                self.forfeits += 1
                self._note_caps(d)
                self.digit = self.digit or foreign_digit([d])
                for cause in CAUSES:
                    self.causes[cause] += getattr(d, cause)

    def stop_reason(self, decisions: Iterable[Any]) -> str | None:
        """Decisions that just finished in this execution: the reason to stop, when the
        first `FAIL_FAST` are all forfeits (never with `keep_going`)."""
        if self.config.keep_going or len(self.first) >= FAIL_FAST:
            return None
        self.first.extend(decisions)
        window = self.first[:FAIL_FAST]
        if len(window) < FAIL_FAST or not all(gave_no_answer(d) for d in window):
            return None
        causes = {c: sum(getattr(d, c) for d in window) for c in CAUSES}
        caps = {cap for d in window for cap in caps_sent(d)}
        digit = foreign_digit(window)
        return f"stopped after {FAIL_FAST} forfeits: " + remedy(
            causes, self.config, caps, digit=digit
        )

    def hint(self) -> str | None:
        """The remedy, when more than half of the run's decisions gave no answer."""
        if self.decisions == 0 or 2 * self.forfeits <= self.decisions:
            return None
        return f"{self.forfeits} of {self.decisions} decisions gave no answer: " + remedy(
            self.causes, self.config, self.caps, digit=self.digit
        )


def caps_sent(decision: Any) -> set[int]:
    """The completion caps a decision's calls were sent with (from its kept record: a
    method's `Decision`, or the JSON form of another method's record)."""
    record = getattr(decision, "decision", None)
    if hasattr(record, "calls"):
        sent = [getattr(c, "sent", None) or {} for c in record.calls]  # type: ignore[union-attr]
    elif isinstance(record, Mapping):
        sent = [c.get("sent") or {} for c in record.get("calls") or []]
    else:
        return set()
    return {s["cap"] for s in sent if isinstance(s.get("cap"), int)}


def foreign_digit(decisions: Iterable[Any]) -> str | None:
    """A decimal digit of another script (Arabic-Indic "١", full-width "１") that most
    replies of the decisions wrote, or None: a move number is written in ASCII digits,
    so such a reply names no answer, and the hint says which digits it wrote."""
    texts = []
    for d in decisions:
        record = getattr(d, "decision", None)
        for call in getattr(record, "calls", None) or []:
            texts.extend(call.texts)
    found = [next((ch for ch in t if ch.isdecimal() and not ch.isascii()), None) for t in texts]
    named = [ch for ch in found if ch is not None]
    return named[0] if named and 2 * len(named) >= len(texts) else None


#: Request fields a cap may be sent in through --extra-body.
_CAP_KEYS = ("max_completion_tokens", "max_tokens", "max_output_tokens", "n_predict")


def remedy(
    causes: Mapping[str, int],
    config: Any,
    caps: set[int] | None = None,
    *,
    digit: str | None = None,
) -> str:
    """One line: the dominant reply failure of forfeited decisions and the flag that helps.

    `digit`: a digit of another script most replies wrote (`foreign_digit`), named when
    most replies named no answer.

    The cap named is the one in force: an --extra-body cap field overrides the run's
    cap; else the caps the calls were sent with (`caps`, "auto" resolved per model);
    else the config's.
    """
    mode = getattr(config, "structured_output", "off")
    cap: Any = getattr(config, "max_completion_tokens", None)
    flag = "--max-completion-tokens"
    extra = getattr(config, "extra_body", None) or {}
    in_body = next((k for k in _CAP_KEYS if k in extra), None)
    if in_body is not None:
        cap, flag = extra[in_body], f"--extra-body {in_body}=N"
    elif caps:
        cap = max(caps) if len(caps) == 1 else "/".join(str(c) for c in sorted(caps))
    total = sum(causes.values())
    if not total:
        return "the method gave no answer, with no invalid reply counted; --keep-going runs on"
    cause = max(CAUSES, key=lambda c: causes.get(c, 0))
    share = f"{causes[cause]} of {total} invalid replies"
    if cause == "truncated":
        limit = f"the {cap}-token completion cap" if cap else "the server's completion cap"
        what = f"most replies were cut at {limit} ({share})"
        if mode == "off":
            fix = (
                f"raise {flag} (now {cap}), or use --structured-output "
                "json_schema if the server constrains output (short replies)"
            )
        else:
            fix = f"raise {flag} (now {cap}) or lower --reply-max-chars"
    else:
        what = (
            f"most replies named no answer ({share})"
            if cause == "unparsable"
            else f"most replies named an answer that is not allowed ({share})"
        )
        if cause == "unparsable" and digit is not None:
            what += (
                f": they write numbers in digits of another script (such as {digit!r}), "
                "and a move number is written in ASCII digits 0-9"
            )
        if mode == "off":
            fix = (
                "use --structured-output json_schema if the server constrains output "
                "(llama.cpp, vLLM, SGLang: each reply's schema holds the legal answers)"
            )
        else:
            fix = (
                f"the server did not keep to the schema sent as {mode}: try "
                "--structured-output llama_json_schema or guided_json"
            )
    return f"{what}; {fix}; --keep-going runs on regardless"
