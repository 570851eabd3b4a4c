"""Results as dataframes and files: the numbers in them equal the report's.

Two tournaments and two evaluations on simulated models; the dataframes are reduced
with pandas alone (wins over finished episodes; accuracy as the mean over items of each
item's share of right repeats) and compared with the report's rows, which come from the
streamed reader and `metanim.stats`. The Parquet and CSV exports read back equal the
dataframes, and a DuckDB query over the Parquet folder (docs/analysis.md) gives the
same win rates.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from metanim.analysis import calls_df, decisions_df, episodes_df, export, render_report
from metanim.arena import EvaluationConfig, TournamentConfig, run_evaluation, run_tournament
from metanim.cli import main
from metanim.datasets import build, write_jsonl

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("results")
    for model in ("sim-biased:heuristic=max_take,p=0.3", "sim-optimal"):
        run_tournament(TournamentConfig(
            games=["nim"], method="react", model=model, opponent="optimal", episodes=6,
            seat="alternate", results_dir=str(out), progress=False,
        ))  # fmt: skip
    data = write_jsonl(
        build("nim", 4, seed=0, params={"heaps": [31], "max_take": 3}), out.parent / "nim.jsonl"
    )
    for model in ("sim-biased:heuristic=max_take,p=0.5", "sim-optimal"):
        run_evaluation(EvaluationConfig(
            dataset=[str(data)], method="react", model=model, repeats=3, results_dir=str(out),
            progress=False,
        ))  # fmt: skip
    return out


def test_dataframe_totals_equal_the_report(results: Path) -> None:
    report = render_report(results, write=False)
    episodes = episodes_df(results)
    finished = episodes[episodes.status.isin(["win", "loss"])]
    by_run = finished.groupby(["run_label", "setting"]).status.agg(
        wins=lambda s: int((s == "win").sum()), finished="size"
    )
    assert len(report.win_rates) == len(by_run) == 2
    for row in report.win_rates:
        wins, n = by_run.loc[(row.method, row.game)]
        assert (row.wins, row.finished) == (wins, n)
        assert row.rate == pytest.approx(wins / n)
    decisions = decisions_df(results)
    graded = decisions[(decisions.record == "decision") & decisions.correct.notna()]
    per_item = graded.groupby(["run_label", "game", "record_id"]).correct.mean()
    accuracy = per_item.groupby(["run_label", "game"]).mean()
    assert len(report.accuracy) == len(accuracy) == 2
    for row in report.accuracy:
        assert row.mean == pytest.approx(accuracy.loc[(row.method, row.game)])
        assert row.decisions == len(graded[graded.run_label == row.method])
    # A tournament's moves are decisions too, one row each, naming their episode.
    moves = decisions[decisions.record == "move"]
    assert len(moves) == sum(episodes.agent_moves + episodes.opponent_moves)
    # Every call of every kept decision, with its tokens: the records' totals.
    calls = calls_df(results)
    evaluated = decisions[decisions.record == "decision"]
    assert len(calls) == episodes.agent_calls.sum() + evaluated.calls.sum()
    assert calls.prompt_tokens.sum() == (
        episodes.agent_prompt_tokens.sum() + evaluated.prompt_tokens.sum()
    )
    # Alternating seats: a row per seat under each pooled row, counted apart.
    by_seat = finished.groupby(["run_label", "setting", "seat"]).status.agg(
        wins=lambda s: int((s == "win").sum()), finished="size"
    )
    for row in report.win_rates:
        assert [s.seat for s in row.seats] == ["first", "second"]
        for seat in row.seats:
            assert (seat.wins, seat.finished) == tuple(
                by_seat.loc[(row.method, row.game, seat.seat)]
            )
    # The report's own tables as dataframes: the same rows, each run's seats after it.
    frames = report.frames()
    table = report.win_rows()
    assert frames["win_rates"].finished.tolist() == [r.finished for r in table]
    assert frames["win_rates"].seat.tolist() == ["all", "first", "second"] * 2


def test_export_parquet_and_csv_read_back(results: Path, tmp_path: Path, capsys) -> None:
    assert main(["report", str(results), "--no-plots", "--export", "parquet",
                 "--export-dir", str(tmp_path / "pq")]) == 0  # fmt: skip
    assert "export: " in capsys.readouterr().out
    episodes = episodes_df(results)
    back = pd.read_parquet(tmp_path / "pq" / "episodes.parquet")
    assert back.shape == episodes.shape
    assert back.status.tolist() == episodes.status.tolist()
    written = export(results, "csv", tmp_path / "csv")
    assert [p.name for p in written] == ["episodes.csv", "decisions.csv", "calls.csv"]
    assert len(pd.read_csv(tmp_path / "csv" / "decisions.csv")) == len(decisions_df(results))


def test_duckdb_reads_the_export(results: Path, tmp_path: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    export(results, "parquet", tmp_path)
    # The query of docs/analysis.md.
    rows = duckdb.sql(
        f"""
        SELECT run_label, setting,
               count(*) FILTER (WHERE status = 'win') AS wins,
               count(*) FILTER (WHERE status IN ('win', 'loss')) AS finished
        FROM '{tmp_path}/episodes.parquet'
        GROUP BY run_label, setting ORDER BY run_label
        """
    ).fetchall()
    report = render_report(results, write=False)
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == sorted(
        (w.method, w.game, w.wins, w.finished) for w in report.win_rates
    )


def test_a_missing_pandas_is_one_line(monkeypatch, results: Path) -> None:
    import builtins

    real = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("no pandas")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match=r"pip install 'metanim-arena\[data\]'"):
        episodes_df(results)
