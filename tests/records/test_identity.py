"""Run identity: the report groups by it (never pools two runs, names opponent and model,
escapes Markdown, pairs win rates of runs played on the same episodes), and another
server is another log, while the in-process simulator's port is not part of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metanim.analysis import render_report
from metanim.analysis.tables import WIN_TABLE
from metanim.arena import TournamentConfig
from metanim.arena.evaluate import EvaluationConfig
from metanim.arena.tournament import run_tournament
from metanim.datasets import build, write_jsonl
from metanim.llm.sim import SimServer
from metanim.records import (
    DecisionRecord,
    EpisodeRecord,
    SideTotals,
    distinguishing_labels,
    identity_hash,
    run_identity,
)


def _write(root: Path, name: str, config: dict, rows: list[dict]) -> None:
    log = root / f"{name}.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    log.with_suffix(".config.json").write_text(json.dumps(config))


def _episodes(wins: list[bool], setting: str = "nim-31-k3") -> list[dict]:
    return [
        EpisodeRecord(
            id=f"{setting}-{i}", seat="first", status="win" if w else "loss", setting=setting,
            index=i, seed=100 + i, start_state=[31], agent="react", opponent="optimal",
            game="nim", game_params={}, start_outcome="N", end_reason="game_over",
            winner="agent" if w else "opponent", plies=1, agent_totals=SideTotals(),
            opponent_totals=SideTotals(),
        ).line()
        for i, w in enumerate(wins)
    ]  # fmt: skip


def _decisions(verdicts: dict[str, list[bool]]) -> list[dict]:
    return [
        DecisionRecord(
            id=f"{rid}-{rep}", record_id=rid, game="nim", repeat=rep, correct=v, status="ok"
        ).line()
        for rid, vs in verdicts.items() for rep, v in enumerate(vs)
    ]  # fmt: skip


def test_runs_against_different_opponents_are_never_pooled(tmp_path: Path):
    # The reproducer: 5/10 against the optimal opponent and 10/10 against random.
    base = {"method": "react", "model": "sim-optimal", "opponent_model": "sim-optimal"}
    vs_opt = TournamentConfig(**base, opponent="optimal").model_dump(mode="json")
    vs_rnd = TournamentConfig(**base, opponent="random").model_dump(mode="json")
    _write(tmp_path, "a", vs_opt, _episodes([True] * 5 + [False] * 5))
    _write(tmp_path, "b", vs_rnd, _episodes([True] * 10))
    report = render_report(tmp_path, write=False)
    rows = {r.method: (r.wins, r.finished) for r in report.win_rates}
    assert rows == {
        "react · sim-optimal vs optimal": (5, 10),
        "react · sim-optimal vs random": (10, 10),
    }
    # Same seeds, seats and starts: the difference is paired over the 10 episodes.
    (diff,) = report.win_diffs
    assert diff.paired and diff.n == 10 and diff.diff == pytest.approx(-0.5)
    assert "vs optimal" in report.markdown and "vs random" in report.markdown


def test_params_and_seats_make_distinct_labelled_rows(tmp_path: Path):
    ds = tmp_path / "nim.jsonl"
    ds.write_text("{}\n")
    for name, params in (("n1", {"n": 1}), ("n3", {"n": 3})):
        cfg = EvaluationConfig(dataset=[str(ds)], method="sc", model="sim-random", params=params)
        _write(
            tmp_path, name, cfg.model_dump(mode="json"), _decisions({"r1": [True], "r2": [False]})
        )
    report = render_report(tmp_path, write=False)
    assert sorted(a.method for a in report.accuracy) == [
        "self_consistency[n=1] · sim-random",
        "self_consistency[n=3] · sim-random",
    ]
    ids = {
        h: run_identity(TournamentConfig(seat=seat).model_dump(mode="json"))
        for h, seat in (("a", "first"), ("b", "second"))
    }
    labels = distinguishing_labels(ids)
    assert labels["a"] != labels["b"] and 'seat="first"' in labels["a"]


def test_markdown_special_characters_are_escaped(tmp_path: Path):
    cfg = TournamentConfig(method="cross:models=sim-optimal|sim-random", opponent="random")
    _write(tmp_path, "x", cfg.model_dump(mode="json"), _episodes([True, False]))
    md = render_report(tmp_path, write=False).markdown
    line = next(line for line in md.splitlines() if line.startswith("| cross"))
    assert "sim-optimal\\|sim-random" in line
    # The escaped pipe does not split the row: a bar before each column and one after.
    assert line.replace("\\|", "").count("|") == len(WIN_TABLE.columns) + 1
    runs = [line for line in md.splitlines() if line.startswith("| cross") and "`" in line]
    assert runs and all(line.replace("\\|", "").count("|") == 3 for line in runs)


def test_every_non_run_field_joins_the_identity():
    cfg = TournamentConfig().model_dump(mode="json")
    more = {**cfg, "max_completion_tokens": 256}  # a field a later version adds
    assert identity_hash(run_identity(more)) != identity_hash(run_identity(cfg))
    # ...while run-only settings and amounts never do (a rerun resumes the same log).
    same = {**cfg, "concurrency": 99, "episodes": 7, "progress": False}
    assert identity_hash(run_identity(same)) == identity_hash(run_identity(cfg))
    assert TournamentConfig(concurrency=3).config_hash() == TournamentConfig().config_hash()


def test_repeats_are_not_items_in_the_report(tmp_path: Path):
    ds = tmp_path / "nim.jsonl"
    ds.write_text("{}\n")
    verdicts_a = {f"r{i}": [i < 3] * 5 for i in range(4)}  # 3 of 4 items right, R = 5
    verdicts_b = {f"r{i}": [False] * 5 for i in range(4)}
    for name, v in (("a", verdicts_a), ("b", verdicts_b)):
        cfg = EvaluationConfig(dataset=[str(ds)], method="react", model=f"sim-{name}")
        _write(tmp_path, name, cfg.model_dump(mode="json"), _decisions(v))
    report = render_report(tmp_path, write=False)
    (p,) = report.paired
    assert (p.pairs, p.only_a, p.only_b) == (4, 3, 0) and p.p_value == pytest.approx(0.25)
    a = next(r for r in report.accuracy if "sim-a" in r.method)
    assert a.items == 4 and a.high - a.low > 0.3


def test_prompt_versions_join_the_identity(monkeypatch):
    import metanim.agents.prompts as prompts

    llm, solver = TournamentConfig(), TournamentConfig(method="optimal", opponent="random")
    before = (llm.config_hash(), solver.config_hash())
    monkeypatch.setattr(prompts, "METHOD_PROMPT_VERSION", "metanim-methods/999")
    assert llm.config_hash() != before[0]  # a prompt change starts a new log
    assert solver.config_hash() == before[1]  # a solver-only run has no prompt


def test_unpaired_runs_get_newcombe(tmp_path: Path):
    a = TournamentConfig(method="react", opponent="random", seed=0).model_dump(mode="json")
    b = TournamentConfig(method="react", opponent="random", seed=1).model_dump(mode="json")
    _write(tmp_path, "a", a, _episodes([True] * 8 + [False] * 2))
    other = _episodes([True] * 5 + [False] * 5)
    for r in other:
        r["seed"] += 1000  # another base seed: other starts, nothing to pair
    _write(tmp_path, "b", b, other)
    report = render_report(tmp_path, write=False)
    assert {r.method for r in report.win_rates} == {
        "react · sim-biased:heuristic=max_take,p=0.3 vs random (seed=0)",
        "react · sim-biased:heuristic=max_take,p=0.3 vs random (seed=1)",
    }
    (diff,) = report.win_diffs
    assert not diff.paired and diff.n == 20
    # Newcombe (1998) method 10 for 8/10 vs 5/10, from the two Wilson intervals.
    from metanim.stats import newcombe_difference

    nc = newcombe_difference(8, 10, 5, 10)
    assert (diff.diff, diff.low, diff.high) == pytest.approx((0.3, nc.low, nc.high))


def test_another_server_is_another_log_and_the_in_process_sim_resumes(
    tmp_path: Path, sim_server: SimServer
) -> None:
    config = TournamentConfig(
        method="react",
        model="sim-optimal",
        opponent="random",
        episodes=1,
        results_dir=str(tmp_path),
        progress=False,
    )
    remote = run_tournament(config.model_copy(update={"base_url": sim_server.base_url + "/"}))
    local = run_tournament(config)  # the simulated server, started in-process
    assert remote.played_now == local.played_now == 1
    assert remote.log_path != local.log_path
    # A trailing slash is the same server; the in-process server's port is not identity.
    again = run_tournament(config.model_copy(update={"base_url": sim_server.base_url}))
    assert again.log_path == remote.log_path and again.played_now == 0
    assert run_tournament(config).played_now == 0
    ds = tmp_path / "ds.jsonl"
    write_jsonl(build("fibonacci", 1, seed=0, params={"n": 20}), ds)
    evaluation = EvaluationConfig(dataset=[str(ds)], model="sim-optimal")
    moved = evaluation.model_copy(update={"base_url": sim_server.base_url})
    assert evaluation.config_hash() != moved.config_hash()


def test_one_run_spelled_two_ways_is_one_row(tmp_path: Path):
    """Logs whose configs spell one run differently (an alias and a default written out,
    replicas in another order) are one identity: the report shows one row."""
    ds = tmp_path / "nim.jsonl"
    ds.write_text("{}\n")
    urls = ["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"]
    for name, method, model in (
        ("a", "sc", f"m@{urls[0]}|{urls[1]}"),
        ("b", "self_consistency:n=5", f"m@{urls[1]}|{urls[0]}"),
    ):
        cfg = EvaluationConfig(dataset=[str(ds)], method=method, model=model)
        _write(tmp_path, name, cfg.model_dump(mode="json"), _decisions({name: [True]}))
    report = render_report(tmp_path, write=False)
    assert [a.method for a in report.accuracy] == ["self_consistency · m"]
