"""`metanim report` over real arena result files (simulated models, no network)."""

from __future__ import annotations

from pathlib import Path

import pytest

from metanim.analysis import render_report, trace_from_decision
from metanim.cli import main
from metanim.datasets import build, write_jsonl
from metanim.records import read_log


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from metanim.arena import TournamentConfig, run_tournament
    from metanim.arena.evaluate import EvaluationConfig, run_evaluation

    root = tmp_path_factory.mktemp("results")
    dataset = write_jsonl(
        build("nim", 8, seed=1, params={"heaps": [31], "max_take": 3}), root / "data" / "nim.jsonl"
    )
    for method in ("optimal", "random"):
        run_tournament(
            TournamentConfig(
                name=f"t-{method}", games=["nim-31-k3", "fibonacci-20"], method=method,
                opponent="random", episodes=6, results_dir=str(root), progress=False,
            )
        )  # fmt: skip
    for method, model in (("react", "sim-optimal"), ("mad:agents=2,rounds=2", "sim-random")):
        run_evaluation(
            EvaluationConfig(
                name=f"e-{method.split(':')[0]}", dataset=[str(dataset)], method=method,
                model=model, repeats=2, results_dir=str(root), progress=False,
            )
        )  # fmt: skip
    return root


def test_report_tables_and_files(results: Path):
    report = render_report(results)
    wins = {(r.method, r.game): r for r in report.win_rates}
    best = wins[("optimal vs random", "nim-31-k3")]
    assert best.wins == best.finished == 6
    assert wins[("random vs random", "fibonacci-20")].rate < 1.0
    acc = {(a.method, a.game): a for a in report.accuracy}
    react = acc[("react · sim-optimal", "nim")]
    assert react.mean == 1.0 and react.repeats == 2 and react.items == 8
    assert react.decisions == 16 and react.low < 1.0  # 8 items, not 16 decisions, never [1, 1]
    # A perfect method against a random one on the same items: McNemar sees only-A items.
    (paired,) = report.paired
    # A label names the parameters a method does not default to (agents=2 is MAD's).
    assert (paired.a, paired.b) == ("mad[rounds=2] · sim-random", "react · sim-optimal")
    assert paired.pairs == 8 and paired.only_a == 0 and paired.only_b > 0
    assert paired.p_value == pytest.approx(min(1.0, 2 / 2**paired.only_b))
    assert paired.diff < 0 and paired.diff_low <= paired.diff <= paired.diff_high
    md = (results / "report.md").read_text()
    assert "Win rates" in md and "Decision accuracy" in md and "McNemar" in md
    for png in ("win_rates.png", "accuracy.png"):
        assert (results / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "optimal vs random" in report.terminal()
    assert "majority of its repeats" in md  # the McNemar rule is printed under the table


def test_debate_rounds_become_traces(results: Path):
    log = next(results.glob("e-mad-*.jsonl"))
    traces = [t for t in (trace_from_decision(r) for r in read_log(log)) if t is not None]
    assert traces and all(len(t.agents) == 2 for t in traces)
    report = render_report(results, write=False)
    assert report.debate and report.debate[0].debates == len(traces)


def test_report_cli_and_empty_folder(results: Path, tmp_path: Path, capsys):
    assert main(["report", str(results), "--no-plots"]) == 0
    assert "Win rate" in capsys.readouterr().out
    with pytest.raises(ValueError, match="no runs found in"):
        render_report(tmp_path)
    assert main(["report", str(tmp_path)]) == 2
    assert main(["report", str(tmp_path / "missing")]) == 2


def test_accuracy_by_difficulty_tier(results: Path):
    """Every decision lands in its record's difficulty tier; NIM-31 k=3 (at most three
    legal moves) is all "easy", and the optimal reader is right on every one."""
    report = render_report(results, write=False)
    # Rows are run-identity labels: "react · <model>", "mad[rounds=2] · <model>".
    rows = {(a.method.split(" ·")[0], a.game): a for a in report.by_difficulty}
    assert rows[("react", "nim · easy")].mean == 1.0
    for method in ("react", "mad[rounds=2]"):
        tiers = [a for (m, _), a in rows.items() if m == method]
        assert sum(a.decisions for a in tiers) == 16
    assert "Decision accuracy by difficulty" in report.markdown
