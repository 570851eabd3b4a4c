"""One description per table: each metric declared once, every form rendered from it.

A `Metric` names a quantity once: its key (the JSON and dataframe column; a dot nests it
in the JSON, `agent.calls`), its heading, its unit, how it is computed and, where it has
one, its interval and how that is computed. A `Table` is an ordered list of metrics over
rows (any objects the metrics read); from it come the terminal table (the metrics marked
`terminal`, fitted to `WIDTH` columns), the Markdown table (every column), the JSON rows
(every metric, intervals as `[low, high]`) and the dataframe (the JSON rows flattened),
so a metric added here appears in all of them, and a number reads the same in each.
This module knows no record: the run summaries (`metanim.records._summary`) and the
folder report (`metanim.analysis`) declare their tables with it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

#: The terminal's width the terminal tables fit.
WIDTH = 100
#: Characters that change a Markdown table cell's meaning.
_MD_SPECIAL = "\\|`*_[]<>#"


def md(text: object) -> str:
    """`text` escaped for a Markdown table cell (a `|` in a method spec no longer splits it)."""
    return "".join("\\" + c if c in _MD_SPECIAL else c for c in str(text)).replace("\n", " ")


def missing(x: Any) -> bool:
    """Whether a value has no number (None or NaN): shown as an en dash."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def pct(x: float | None) -> str:
    """A rate as a percentage; an en dash for NaN or None (no denominator)."""
    return "–" if missing(x) else f"{100 * x:.1f}%"  # type: ignore[operator]


def std_text(x: float | None) -> str:
    """A standard deviation of rates, in percentage points; an en dash for NaN or None."""
    return "–" if missing(x) else f"{100 * x:.1f}"  # type: ignore[operator]


def signed(x: float) -> str:
    """A difference of rates in signed percentage points; an en dash for NaN."""
    return "–" if missing(x) else f"{100 * x:+.1f} pp"


def cost_text(cost_usd: float, unpriced_calls: int) -> str:
    """Dollars, or "unknown" where calls of an unpriced model were made (never $0)."""
    if not unpriced_calls:
        return f"{cost_usd:.4f}"
    return "unknown" if cost_usd == 0 else f"{cost_usd:.4f} + unknown"


def cap_text(cap: Any) -> str:
    """The run's completion cap as its report states it."""
    if cap is None:
        return "none (the server's own)"
    if cap == "auto":
        return "auto (per model: the run header and `calls_sent` in the summary say which)"
    return f"{cap} tokens"


def seconds(x: float | None) -> str:
    """Seconds with three decimals; an en dash for NaN or None."""
    return "–" if missing(x) else f"{x:.3f}"


#: How a value of each unit reads in a table cell.
FORMATS: dict[str, Callable[[Any], str]] = {
    "rate": pct,
    "pp": signed,
    "s": seconds,
    "$": lambda x: "–" if missing(x) else f"{x:.4f}",
    "count": lambda x: "–" if missing(x) else str(x),
    "tokens": lambda x: "–" if missing(x) else str(x),
    "p": lambda x: "–" if missing(x) else ("< 0.001" if x < 0.001 else f"{x:.3f}"),
    "text": lambda x: "–" if x is None else str(x),
}


@dataclass(frozen=True)
class Metric:
    """One quantity of a table, declared once.

    `value(row)` is its JSON value (a number, text or None); `interval(row)` its
    interval `(low, high)`, written under `interval_key`; `cell(row)` the table text
    (default: the value in its unit, then the interval). `json=False` for a column that
    only shows metrics declared elsewhere (`losses play/forfeit`), `table=False` for a
    number the JSON keeps and the tables leave to a combined column. `brief(row)` is
    the terminal's cell where the file's is too long for 100 columns, under the heading
    `brief_header` where that cell says more than `header`.
    """

    key: str
    header: str
    unit: str
    how: str
    value: Callable[[Any], Any]
    interval: Callable[[Any], tuple[float, float]] | None = None
    interval_key: str | None = None
    interval_how: str = ""
    cell: Callable[[Any], str] | None = None
    brief: Callable[[Any], str] | None = None  # the terminal's shorter cell, if any
    brief_header: str | None = None  # the terminal's heading of `brief`, if not `header`
    terminal: bool = False
    json: bool = True
    table: bool = True

    def text(self, row: Any) -> str:
        if self.cell is not None:
            return self.cell(row)
        fmt = FORMATS[self.unit]
        out = fmt(self.value(row))
        if self.interval is not None:
            low, high = self.interval(row)
            out += f" [{fmt(low)}, {fmt(high)}]"
        return out


@dataclass(frozen=True)
class Table:
    """A table's metrics, in column order, and what it says under its title."""

    title: str
    note: str
    metrics: tuple[Metric, ...]

    @property
    def columns(self) -> list[Metric]:
        return [m for m in self.metrics if m.table]

    def _values(self, row: Any) -> Iterator[tuple[Metric, Any, tuple[float, float] | None]]:
        """(metric, value, interval or None) of every JSON metric of one row."""
        for m in self.metrics:
            if m.json:
                yield m, m.value(row), m.interval(row) if m.interval is not None else None

    def json_rows(self, rows: Iterable[Any]) -> list[dict[str, Any]]:
        """One dict per row: every JSON metric (dotted keys nest), intervals as [low, high]."""
        out = []
        for row in rows:
            item: dict[str, Any] = {}
            for m, value, interval in self._values(row):
                _put(item, m.key, value)
                if interval is not None and m.interval_key:
                    _put(item, m.interval_key, list(interval))
            out.append(item)
        return out

    def flat_rows(self, rows: Iterable[Any]) -> list[dict[str, Any]]:
        """The JSON rows flattened for a dataframe: nested keys joined by dots, each
        interval as two columns `<key>_low` and `<key>_high`."""
        out = []
        for row in rows:
            item: dict[str, Any] = {}
            for m, value, interval in self._values(row):
                item[m.key] = value
                if interval is not None:
                    item[f"{m.key}_low"], item[f"{m.key}_high"] = interval
            out.append(item)
        return out

    def markdown(self, rows: Sequence[Any]) -> list[str]:
        """The Markdown table: every column; text cells (labels) escaped, numbers as
        they read."""
        cols = self.columns
        lines = [
            "| " + " | ".join(m.header for m in cols) + " |",
            "|" + "---|" * len(cols),
        ]
        lines += [
            "| " + " | ".join(md(m.text(r)) if m.unit == "text" else m.text(r) for m in cols) + " |"
            for r in rows
        ]
        return lines

    def terminal(self, rows: Sequence[Any], width: int = WIDTH) -> list[str]:
        """The plain-text table of the `terminal` metrics, at most `width` characters
        wide (a long label takes a line of its own)."""
        cols = [m for m in self.columns if m.terminal]
        cells = [
            [m.brief_header or m.header for m in cols],
            *[[m.brief(r) if m.brief else m.text(r) for m in cols] for r in rows],
        ]
        return text_table(cells[0], cells[1:], width=width)


def text_table(headers: list[str], rows: list[list[Any]], width: int | None = None) -> list[str]:
    """A plain-text table, columns padded to their widest cell. With `width`, a first
    cell (a label) too long for a line of that width gets a line of its own, and its row
    follows on the next line, so no line is wider and no label is cut."""
    cells = [headers, *[[str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    own_line: set[int] = set()
    if width is not None:
        rest = sum(widths[1:]) + 2 * (len(widths) - 1)
        room = max(len(headers[0]), width - rest, 1)
        if widths[0] > room:
            own_line = {k for k, r in enumerate(cells) if len(r[0]) > room}
            widths[0] = max(len(r[0]) for k, r in enumerate(cells) if k not in own_line)
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*cells[0]), fmt.format(*["-" * w for w in widths])]
    for k, r in enumerate(cells[1:], start=1):
        if k in own_line:
            lines += [r[0], fmt.format("", *r[1:])]
        else:
            lines.append(fmt.format(*r))
    return [line.rstrip() for line in lines]


def _put(item: dict[str, Any], key: str, value: Any) -> None:
    *parents, last = key.split(".")
    for p in parents:
        item = item.setdefault(p, {})
    item[last] = value
