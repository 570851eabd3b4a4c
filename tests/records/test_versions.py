"""Every reader reads every record version the project has written.

`tests/records/data/<date>-<commit>/` holds real logs written by earlier versions of the
project (`scripts/old_logs.py` ran each commit's own code: a 2-episode tournament and a
2-item, 2-repeat evaluation, decisions recorded); the current format is written here by
today's code. Each is read by the typed reader, the run summaries, the folder report,
the ratings, the page and the dataframes, and checked against the raw JSON lines read
with the standard library (an independent path).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from metanim.analysis import rate, render_report
from metanim.analysis.viewer import collect_runs
from metanim.arena import EvaluationConfig, TournamentConfig, run_evaluation, run_tournament
from metanim.datasets import build, write_jsonl
from metanim.records import (
    FORMAT,
    DecisionRecord,
    EpisodeRecord,
    NewerFormatError,
    iter_logs,
    read_log,
    summarize_evaluation,
    summarize_tournament,
    upgrade,
)

DATA = Path(__file__).parent / "data"
OLD = sorted(p for p in DATA.iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def current(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("current")
    run_tournament(TournamentConfig(
        games=["nim"], method="react", opponent="optimal", episodes=2, results_dir=str(out),
        progress=False,
    ))  # fmt: skip
    data = write_jsonl(
        build("nim", 2, seed=0, params={"heaps": [31], "max_take": 3}), out / "d.jsonl"
    )
    run_evaluation(EvaluationConfig(
        dataset=[str(data)], method="react", repeats=2, results_dir=str(out), progress=False,
    ))  # fmt: skip
    (out / "d.jsonl").unlink()
    return out


def _raw(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_the_fixtures_span_the_formats() -> None:
    assert len(OLD) >= 3
    for folder in OLD:
        for log in folder.glob("*.jsonl"):
            assert all("format" not in row for row in _raw(log))  # format 1: no field


@pytest.mark.parametrize("folder", [*OLD, "current"], ids=[p.name for p in OLD] + ["current"])
def test_every_reader_reads_the_version(folder: Path | str, current: Path, tmp_path: Path) -> None:
    source = current if folder == "current" else folder
    results = tmp_path / "results"
    shutil.copytree(source, results)
    logs = list(iter_logs(results))
    assert {kind for _, kind, _ in logs} == {"episodes", "decisions"}
    for path, kind, _ in logs:
        raw = _raw(path)
        records = read_log(path)
        assert len(records) == len(raw) > 0
        assert all(r.format == FORMAT for r in records)
        assert [r.id for r in records] == [row["id"] for row in raw]
        assert [r.status for r in records] == [row["status"] for row in raw]
        if kind == "episodes":
            assert all(isinstance(r, EpisodeRecord) for r in records)
            summary = summarize_tournament(records)
            (group,) = [g for g in summary["groups"] if g["seat"] == "all"]
            assert group["wins"] == sum(row["status"] == "win" for row in raw)
            plies = [len(row["moves"]) for row in raw]
            assert [len(r.moves) for r in records] == plies
            # The decisions the version kept read back typed, each with its calls.
            kept = [m.decision for r in records for m in r.moves if m.decision is not None]
            assert kept and all(d.calls for d in kept)
        else:
            assert all(isinstance(r, DecisionRecord) for r in records)
            summary = summarize_evaluation(records)
            (game,) = summary["games"]
            assert game["correct"] == sum(bool(row["correct"]) for row in raw)
            assert all(r.verdict in ("correct", "wrong", "forfeit") for r in records)
    report = render_report(results, plots=False)
    (win,) = report.win_rates
    episodes = _raw(next(p for p, k, _ in logs if k == "episodes"))
    assert win.finished == sum(row["status"] in ("win", "loss") for row in episodes)
    (acc,) = report.accuracy
    assert acc.decisions == sum(
        row["correct"] is not None for p, k, _ in logs if k == "decisions" for row in _raw(p)
    )
    assert rate([results], bootstrap=10).tables
    assert (results / "viewer.html").is_file()
    runs = collect_runs(results)
    assert sum(len(r["items"]) for r in runs) == sum(len(_raw(p)) for p, _, _ in logs)
    pytest.importorskip("pandas")
    from metanim.analysis import decisions_df, episodes_df

    assert len(episodes_df(results)) == len(episodes)
    assert len(decisions_df(results)) > len(episodes)


def test_a_newer_format_is_refused_in_one_line() -> None:
    with pytest.raises(NewerFormatError, match="newer metanim"):
        upgrade({"format": FORMAT + 1, "id": "x"}, "episodes")
