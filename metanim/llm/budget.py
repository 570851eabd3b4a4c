"""A hard cost cap: a call is sent only if the worst case of everything in flight fits.

The worst case of a call is its prompt's tokens at the input price plus its completion
cap (times `n`) at the output price. The prompt's tokens are bounded by its UTF-8 bytes
(a byte-level BPE token covers at least one byte) plus a few per message for the chat
format, so the bound holds whatever the tokenizer. Before a call is sent its worst case
is reserved; when it returns, the reservation is replaced by what it cost. A call whose
worst case does not fit waits while others are in flight (their real cost is usually far
below their worst case), and is refused once nothing in flight could make room: then
the spend can never pass the cap, however many calls run at once. A call that may have
been billed without an answer (it timed out after it was sent) keeps its worst case.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from metanim.llm._types import InfrastructureError, Message

#: Tokens a chat format adds per message (role and separators) and per request, at most.
_PER_MESSAGE = 8
_PER_REQUEST = 16


def prompt_token_bound(messages: Iterable[Message]) -> int:
    """An upper bound on a request's prompt tokens (see the module)."""
    total = _PER_REQUEST
    for message in messages:
        total += _PER_MESSAGE + len(str(message.get("content") or "").encode())
    return total


class BudgetExhausted(InfrastructureError):
    """No room left under the cost cap for the next call (kind "budget"): the work that
    needed it is not run, never counted as a move or a forfeit."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="budget")


class CostBudget:
    """The cost cap of a run, shared by every client of it (see the module).

    Args:
        limit_usd: the cap.
        spent_usd: what earlier runs of the same log spent already.
    """

    def __init__(self, limit_usd: float, spent_usd: float = 0.0) -> None:
        if limit_usd <= 0:
            raise ValueError("the cost cap must be positive")
        self.limit_usd = limit_usd
        self.spent_usd = spent_usd
        self.reserved_usd = 0.0
        self.in_flight = 0
        #: Why the cap stopped a call (None while every call fitted).
        self.refused: str | None = None
        self.peak_committed_usd = spent_usd  # the most ever spent or reserved at once
        self._changed: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def reserve(self, worst_usd: float) -> float:
        """Hold `worst_usd` for a call about to be sent; wait while calls in flight may
        make room; raise `BudgetExhausted` when none can. Returns the amount held."""
        changed = self._condition()
        async with changed:
            while self.spent_usd + self.reserved_usd + worst_usd > self.limit_usd:
                if self.in_flight == 0 or self.spent_usd + worst_usd > self.limit_usd:
                    self.refused = (
                        f"the next call's worst case (${worst_usd:.4f}) does not fit under "
                        f"--max-cost-usd {self.limit_usd:g} (spent ${self.spent_usd:.4f})"
                    )
                    raise BudgetExhausted(f"cost cap reached: {self.refused}")
                await changed.wait()
            self.reserved_usd += worst_usd
            self.in_flight += 1
            committed = self.spent_usd + self.reserved_usd
            self.peak_committed_usd = max(self.peak_committed_usd, committed)
        return worst_usd

    async def settle(self, held_usd: float, cost_usd: float) -> None:
        """Replace a reservation by what the call cost (its worst case if unknown)."""
        changed = self._condition()
        async with changed:
            self.reserved_usd = max(0.0, self.reserved_usd - held_usd)
            self.in_flight -= 1
            self.spent_usd += cost_usd
            changed.notify_all()

    @property
    def exhausted(self) -> bool:
        """Whether a call was refused for want of room (no new work should start)."""
        return self.refused is not None
