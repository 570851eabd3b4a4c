"""Budget caps shared by tournaments and evaluations (calls, tokens, dollars)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Spent:
    """Model usage so far, previous runs of the same log included."""

    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0

    def add(self, calls: int, tokens: int, cost_usd: float) -> None:
        self.calls += calls
        self.tokens += tokens
        self.cost_usd += cost_usd

    def exceeded(
        self, max_calls: int | None, budget_tokens: int | None, max_cost_usd: float | None
    ) -> str | None:
        """Why no new work may start, or None while every cap holds."""
        if max_calls is not None and self.calls >= max_calls:
            return f"call budget {max_calls} reached ({self.calls} calls)"
        if budget_tokens is not None and self.tokens >= budget_tokens:
            return f"token budget {budget_tokens} reached ({self.tokens} tokens)"
        if max_cost_usd is not None and self.cost_usd >= max_cost_usd:
            return f"cost budget ${max_cost_usd} reached (${self.cost_usd:.4f})"
        return None
