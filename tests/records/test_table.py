"""One table description per report: the terminal table fits 100 columns, the Markdown
has every column, and the JSON and the dataframe rows carry every metric with its
interval."""

from __future__ import annotations

import pytest

from metanim.analysis import render_report
from metanim.analysis.tables import ACCURACY_TABLE, WIN_TABLE
from metanim.arena import TournamentConfig, run_tournament
from metanim.records import (
    EVALUATION_TABLE,
    TOURNAMENT_TABLE,
    WIDTH,
    Metric,
    Table,
    summary_terminal,
    text_table,
)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    # A JSON setting makes a long label, the case that wrapped in a terminal.
    return run_tournament(TournamentConfig(
        games=['nim:{"heaps":[7,5,3],"max_take":3}'], method="react", model="sim-optimal",
        opponent="optimal", episodes=4, seat="alternate",
        results_dir=str(tmp_path_factory.mktemp("r")), progress=False,
    ))  # fmt: skip


def test_a_run_table_fits_the_terminal_and_its_file_has_every_column(run) -> None:
    out = summary_terminal(run.summary)
    table = [line for line in out.splitlines() if not line.startswith(("- ", "  "))]
    assert max(len(line) for line in table) <= WIDTH
    # Every row's label is whole (on a line of its own when the rest needs the room).
    assert 'nim:{"heaps":[7,5,3],"max_take":3,"misere":false}' in out
    markdown = run.report
    header = next(line for line in markdown.splitlines() if line.startswith("| setting"))
    assert header.count("|") - 1 == len(TOURNAMENT_TABLE.columns) == 24
    for metric in TOURNAMENT_TABLE.columns:
        assert f"| {metric.header} |" in header or header.startswith(f"| {metric.header} |")


def test_every_json_metric_is_a_field_of_the_json_summary(run) -> None:
    from metanim.records import summarize_evaluation

    (group, *_) = run.summary["groups"]
    for metric in TOURNAMENT_TABLE.metrics:
        if metric.json:
            side, _, name = metric.key.rpartition(".")
            assert name in (group[side] if side else group), metric.key
    (game,) = summarize_evaluation([], planned=[("nim", "normal", 0)])["games"]
    assert {m.key for m in EVALUATION_TABLE.metrics if m.json} <= set(game)


def test_folder_tables_render_every_form_from_one_description(run) -> None:
    report = render_report(run.log_path.parent, write=False)
    terminal = report.terminal().splitlines()
    assert max(len(line) for line in terminal) <= WIDTH
    (row,) = WIN_TABLE.json_rows(report.win_rates)
    (win,) = report.win_rates
    assert row["win_rate"] == win.rate and row["win_ci95"] == [win.low, win.high]
    (flat,) = WIN_TABLE.flat_rows(report.win_rates)
    assert (flat["finished"], flat["failed"]) == (win.finished, win.failed)
    pd = pytest.importorskip("pandas")
    frames = report.frames()
    assert isinstance(frames["win_rates"], pd.DataFrame)
    # The pooled row, then a row per seat (alternating: 2 of 4 episodes each).
    assert frames["win_rates"].seat.tolist() == ["all", "first", "second"]
    assert frames["win_rates"].finished.tolist() == [4, 2, 2]
    assert frames["win_rates"].win_rate.tolist() == [win.rate, *(s.rate for s in win.seats)]
    assert frames["accuracy"].empty  # a tournament has no evaluation
    assert [m.key for m in ACCURACY_TABLE.metrics if m.json][:2] == ["run", "game"]


def test_a_metric_with_an_interval_reads_alike_in_every_form() -> None:
    rows = [{"n": 3, "k": 1, "low": 0.06, "high": 0.79}]
    table = Table(
        "t", "", (
            Metric("label", "label", "text", "a label", lambda r: "a|b", terminal=True),
            Metric("rate", "rate", "rate", "k / n", lambda r: r["k"] / r["n"],
                   interval=lambda r: (r["low"], r["high"]), interval_key="rate_ci95",
                   terminal=True),
        ),
    )  # fmt: skip
    assert table.markdown(rows)[-1] == "| a\\|b | 33.3% [6.0%, 79.0%] |"
    assert table.terminal(rows)[-1] == "a|b    33.3% [6.0%, 79.0%]"
    assert table.json_rows(rows) == [{"label": "a|b", "rate": 1 / 3, "rate_ci95": [0.06, 0.79]}]
    assert table.flat_rows(rows)[0]["rate_low"] == 0.06


def test_a_long_label_takes_its_own_line_and_nothing_is_cut() -> None:
    lines = text_table(["run", "n"], [["x" * 150, 1], ["short", 22]], width=40)
    assert lines[2] == "x" * 150 and lines[3].split() == ["1"]
    assert lines[4].split() == ["short", "22"]
    assert max(len(line) for k, line in enumerate(lines) if k != 2) <= 40
