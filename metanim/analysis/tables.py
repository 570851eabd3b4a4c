"""The folder report's tables, each column declared once (`metanim.records.Table`).

`WIN_TABLE` (a row per run and setting over all seats, then a row per seat it played)
and `ACCURACY_TABLE` (a row per run and game) render the report's terminal tables (100
columns), its Markdown, and its dataframes (`Report.frames`); the numbers are the
report's rows (`WinRow`, `AccuracyRow`).
"""

from __future__ import annotations

from typing import Any

from metanim.records import Metric, Table, missing, pct, std_text


def _run_on_game(r: Any) -> str:
    """The terminal's first cell: "run on game" on the row of all seats, empty on the
    seats' rows below it (a long setting would not fit beside the numbers)."""
    return f"{r.method} on {r.game}" if r.seat == "all" else ""


def _by_start(r: Any) -> str:
    """The N and P starts' win rates as "N / P"; an en dash where one of them is absent."""
    return "–" if missing(r.rate_n) else f"{pct(r.rate_n)} / {pct(r.rate_p)}"


WIN_TABLE = Table(
    title="Win rate (episodes, 95% Wilson CI)",
    note="",
    metrics=(
        Metric("run", "run", "text", "the run: method · model vs opponent · model",
               lambda r: r.method, brief=_run_on_game, brief_header="run on game",
               terminal=True),
        Metric("game", "game", "text", "the game setting", lambda r: r.game),
        Metric("seat", "seat", "text", "the agent's seat (first or second mover), or all seats",
               lambda r: r.seat, terminal=True),
        Metric("win_rate", "win rate", "rate", "wins / finished episodes (wins + losses)",
               lambda r: r.rate, cell=lambda r: pct(r.rate), terminal=True),
        Metric("win_ci95", "95% CI", "rate", "Wilson score interval over finished episodes",
               lambda r: [r.low, r.high], cell=lambda r: f"[{pct(r.low)}, {pct(r.high)}]",
               terminal=True),
        Metric("finished", "finished", "count", "wins + losses", lambda r: r.finished,
               terminal=True),
        Metric("wins", "wins", "count", "wins", lambda r: r.wins, table=False),
        Metric("losses play/forfeit", "losses play/forfeit", "text",
               "losses by play / by forfeit (no valid reply after the re-asks)",
               lambda r: f"{r.finished - r.wins - r.forfeit_losses}/{r.forfeit_losses}",
               json=False),
        Metric("forfeit_losses", "losses by forfeit", "count", "losses by forfeit",
               lambda r: r.forfeit_losses, table=False),
        Metric("start N/P", "start N/P", "text",
               "episodes starting at an N- / a P-position (for the first mover)",
               lambda r: f"{r.start_n}/{r.start_p}", json=False, terminal=True),
        Metric("start_n", "start N", "count", "episodes starting at an N-position",
               lambda r: r.start_n, table=False),
        Metric("start_p", "start P", "count", "episodes starting at a P-position",
               lambda r: r.start_p, table=False),
        Metric("win N/P", "win N/P", "text",
               "win rate from N starts / from P starts, where finished episodes start at both",
               lambda r: _by_start(r), json=False, terminal=True),
        Metric("win_rate_n", "win rate N", "rate", "wins / finished episodes starting at N "
               "(where some also start at P)", lambda r: r.rate_n, table=False),
        Metric("win_rate_p", "win rate P", "rate", "wins / finished episodes starting at P "
               "(where some also start at N)", lambda r: r.rate_p, table=False),
        Metric("on_failure", "on_failure", "text", "the run's policy after failed re-asks",
               lambda r: r.on_failure),
        Metric("failed", "failed", "count", "infrastructure errors and errors (never a loss)",
               lambda r: r.failed, terminal=True),
    ),
)  # fmt: skip


def _accuracy_cell(r: Any) -> str:
    return f"{pct(r.mean)} ± {std_text(r.std)}"


ACCURACY_TABLE = Table(
    title="Decision accuracy (mean ± std over R repeats; 95% CI over items)",
    note="",
    metrics=(
        Metric("run", "run", "text", "the run: method · model", lambda r: r.method, terminal=True),
        Metric("game", "game", "text", "the game (or question set; dataset apart)",
               lambda r: r.game, terminal=True),
        Metric("accuracy", "accuracy", "rate",
               "mean over items of each item's share of right repeats; ± the std over repeats",
               lambda r: r.mean, cell=_accuracy_cell, terminal=True),
        Metric("accuracy_std", "std", "rate", "std of the per-repeat accuracies",
               lambda r: r.std, table=False),
        Metric("accuracy_ci95", "95% CI", "rate",
               "Wilson on the effective number of items (an item's repeats kept together)",
               lambda r: [r.low, r.high], cell=lambda r: f"[{pct(r.low)}, {pct(r.high)}]",
               terminal=True),
        Metric("items", "items", "count", "items with a verdict", lambda r: r.items, terminal=True),
        Metric("repeats", "R", "count", "repeats", lambda r: r.repeats, terminal=True),
        Metric("decisions", "decisions", "count", "graded decisions", lambda r: r.decisions,
               terminal=True),
        Metric("forfeits", "forfeits", "count", "format failures (graded wrong)",
               lambda r: r.forfeits),
        Metric("failed", "failed", "count", "decisions without a verdict", lambda r: r.failed),
    ),
)  # fmt: skip
