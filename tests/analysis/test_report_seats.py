"""The folder report's win rates per seat and by start, against counts made here.

Three runs are written by hand, episode by episode (seat, start outcome, status), so the
seats differ in outcome: one with alternating seats where the first seat mostly loses and
the second always wins (both starts in each seat, and a failed episode), one that played
the second seat only, and one with no P start. The expected numbers are counted from
those lists in plain Python, the interval from Wilson's closed form; the report's rows,
its JSON rows, its Markdown, its terminal table and the page's HTML table must all say
them, and the plot must get each seat's rate.
"""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from metanim.analysis import render_report
from metanim.arena import TournamentConfig
from metanim.records import EpisodeRecord, SideTotals

#: (seat, start outcome, status) of every episode of each run.
RUNS: dict[str, list[tuple[str, str, str]]] = {
    "optimal": [
        ("first", "N", "win"), ("first", "N", "win"), ("first", "N", "loss"),
        ("first", "P", "loss"), ("first", "P", "loss"),
        ("second", "P", "win"), ("second", "P", "win"), ("second", "P", "win"),
        ("second", "N", "win"), ("second", "P", "win"),
        ("second", "P", "infrastructure_error"),
    ],
    "random": [  # the second seat only
        ("second", "P", "win"), ("second", "P", "loss"), ("second", "N", "loss"),
        ("second", "P", "win"),
    ],
    "epsilon:0.5": [  # no P start
        ("first", "N", "win"), ("first", "N", "win"), ("second", "N", "loss"),
        ("second", "N", "loss"), ("second", "N", "win"),
    ],
}  # fmt: skip
SETTING = "nim-31-k3"
Z95 = 1.959963984540054  # the normal quantile of 0.975


def wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson's score interval, from its closed form."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 / (1 + Z95**2 / n) * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def expected(episodes: list[tuple[str, str, str]]) -> dict[str, dict[str, object]]:
    """Per seat ("all" pooled): wins, finished, CI and the cells the tables show."""
    out: dict[str, dict[str, object]] = {}
    for seat in ("all", "first", "second"):
        mine = [e for e in episodes if seat in ("all", e[0])]
        if not mine:
            continue
        done = [e for e in mine if e[2] in ("win", "loss")]
        wins = sum(e[2] == "win" for e in done)
        starts = {s: sum(e[1] == s for e in mine) for s in "NP"}
        by_start = {s: [e[2] == "win" for e in done if e[1] == s] for s in "NP"}
        both = all(by_start.values())
        rates = {s: sum(v) / len(v) if both else math.nan for s, v in by_start.items()}
        low, high = wilson(wins, len(done))
        out[seat] = {
            "wins": wins, "finished": len(done), "failed": len(mine) - len(done),
            "low": low, "high": high, "start_n": starts["N"], "start_p": starts["P"],
            "rate_n": rates["N"], "rate_p": rates["P"],
            "cells": [
                pct(wins / len(done)), f"[{pct(low)}, {pct(high)}]", str(len(done)),
                f"{starts['N']}/{starts['P']}",
                f"{pct(rates['N'])} / {pct(rates['P'])}" if both else "–",
            ],
        }  # fmt: skip
    return out


EXPECTED = {f"react · sim-optimal vs {opp}": expected(eps) for opp, eps in RUNS.items()}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("seats")
    for opponent, episodes in RUNS.items():
        config = TournamentConfig(method="react", model="sim-optimal", opponent=opponent)
        lines = [
            EpisodeRecord(
                id=f"{SETTING}-{i}", seat=seat, status=status, setting=SETTING, index=i,
                seed=100 + i, start_state=[31 - i], agent="react", opponent=opponent,
                game="nim", game_params={"heaps": [31], "max_take": 3}, start_outcome=start,
                end_reason="game_over" if status in ("win", "loss") else "infrastructure_error",
                winner={"win": "agent", "loss": "opponent"}.get(status), plies=3,
                agent_totals=SideTotals(), opponent_totals=SideTotals(),
            ).line()
            for i, (seat, start, status) in enumerate(episodes)
        ]  # fmt: skip
        log = root / f"{opponent.replace(':', '-')}.jsonl"
        log.write_text("".join(json.dumps(line) + "\n" for line in lines))
        log.with_suffix(".config.json").write_text(config.model_dump_json())
    return root


def test_rows_per_seat_and_start_equal_a_count_of_the_records(folder: Path) -> None:
    report = render_report(folder, write=False)
    assert {r.method for r in report.win_rates} == set(EXPECTED)
    for pooled in report.win_rates:
        want = EXPECTED[pooled.method]
        # The pooled row stays, then one row per seat the run played (none made up).
        assert [pooled.seat, *(s.seat for s in pooled.seats)] == list(want)
        for row in (pooled, *pooled.seats):
            w = want[row.seat]
            assert (row.wins, row.finished, row.failed) == (w["wins"], w["finished"], w["failed"])
            assert (row.low, row.high) == pytest.approx((w["low"], w["high"]), abs=1e-12)
            assert (row.start_n, row.start_p) == (w["start_n"], w["start_p"])
            for got, exp in ((row.rate_n, w["rate_n"]), (row.rate_p, w["rate_p"])):
                assert got == pytest.approx(exp, nan_ok=True)
    # The gap the pooled rate hides: 2/5 first, 5/5 second, 7/10 pooled.
    seats = {r.seat: r.rate for r in report.win_rows() if r.method.endswith("vs optimal")}
    assert seats == pytest.approx({"all": 0.7, "first": 0.4, "second": 1.0})


def test_json_rows_carry_the_seat_and_the_starts(folder: Path) -> None:
    report = render_report(folder, write=False)
    rows = report.json_rows()["win_rates"]
    assert len(rows) == sum(len(w) for w in EXPECTED.values())
    for row in rows:
        w = EXPECTED[row["run"]][row["seat"]]
        assert (row["wins"], row["finished"]) == (w["wins"], w["finished"])
        assert row["win_ci95"] == pytest.approx([w["low"], w["high"]], abs=1e-12)
        assert (row["start_n"], row["start_p"]) == (w["start_n"], w["start_p"])
        assert row["win_rate_n"] == pytest.approx(w["rate_n"], nan_ok=True)


class _Cells(HTMLParser):
    """The cells of every table row of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _shown(header: list[str], rows: list[list[str]]) -> dict[tuple[str, str], list[str]]:
    """(run, seat) -> the cells of win rate, CI, finished, start N/P, win N/P."""
    at = [header.index(h) for h in ("win rate", "95% CI", "finished", "start N/P", "win N/P")]
    return {(r[0], r[header.index("seat")]): [r[i] for i in at] for r in rows}


def _want() -> dict[tuple[str, str], list[str]]:
    return {(run, seat): w["cells"] for run, seats in EXPECTED.items() for seat, w in seats.items()}


def test_markdown_terminal_and_page_show_the_same_numbers(folder: Path) -> None:
    report = render_report(folder, plots=False)
    # Markdown: the first table under "## Win rates", its run cells unescaped.
    section = report.markdown.split("## Win rates", 1)[1].split("\n\n| ", 1)[1]
    table = ("| " + section).split("\n\n", 1)[0].splitlines()
    split = [[c.strip().replace("\\", "") for c in line.strip("|").split(" | ")] for line in table]
    assert _shown(split[0], split[2:]) == _want()
    # The page: report.md rendered as HTML, the same table.
    page = (folder / "viewer.html").read_text(encoding="utf-8")
    part = page.split("<section id='report'>", 1)[1].split("</table>", 1)[0]
    cells = _Cells()
    cells.feed(part)
    assert _shown(cells.rows[0], cells.rows[1:]) == _want()
    # The terminal: "run on game" on a line of its own, then the seats' rows beneath it.
    lines = report.terminal().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("run on game"))
    header = ["run", *re.split(r"\s{2,}", lines[start])[1:]]
    rows, run = [], ""
    for line in lines[start + 2 :]:
        if not line.strip():
            break
        if not line.startswith(" "):
            run = line.removesuffix(f" on {SETTING}")
            continue
        rows.append([run, *re.split(r"\s{2,}", line.strip())])
    assert _shown(header, rows) == _want()


def test_the_plot_gets_each_seat_beside_the_pooled_bar(folder: Path, monkeypatch) -> None:
    import metanim.analysis.report as report_module

    drawn: dict[str, object] = {}

    def capture(bars, path, **kwargs):
        if Path(path).name == "win_rates.png":
            drawn.update(bars=bars, marks=kwargs.get("marks"))
        return Path(path)

    monkeypatch.setattr(report_module, "grouped_bars", capture)
    render_report(folder)
    for run, seats in EXPECTED.items():
        pooled = seats["all"]
        rate = pooled["wins"] / pooled["finished"]
        assert drawn["bars"][run][SETTING] == pytest.approx((pooled["low"], rate, pooled["high"]))
        marks = drawn["marks"][run][SETTING]
        assert set(marks) == set(seats) - {"all"}
        for seat, (low, est, high) in marks.items():
            w = seats[seat]
            assert (low, est, high) == pytest.approx(
                (w["low"], w["wins"] / w["finished"], w["high"])
            )
