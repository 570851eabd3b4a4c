"""Arena: episodes, tournaments and evaluations against the real simulated server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from metanim.arena import (
    ClientPool,
    EvaluationConfig,
    Side,
    SolverPolicy,
    TournamentConfig,
    build_player,
    load_profile,
    play_episode,
    run_evaluation,
    run_tournament,
)
from metanim.arena._config import PROFILE_DIR
from metanim.arena._players import CallTimes
from metanim.cli import main
from metanim.games import make_game
from metanim.llm.sim import SimServer
from metanim.records import (
    AppendLog,
    read_log,
    read_records,
    read_transcripts,
    transcript_path,
)
from metanim.solver import outcome, winning_moves

FAULTY = "sim-faulty:malformed=0.3,illegal=0.3,http500=0.15"


#: The wall-clock counters of a move and a side's totals.
_CLOCKS = ("latency_s", "call_latency_s", "queue_s")


def _strip_timing(record: dict) -> dict:
    """A record without wall-clock fields (the rest must be reproducible from the seed)."""
    out = {k: v for k, v in record.items() if k not in ("wall_s", "chain_calls")}
    for side in ("agent_totals", "opponent_totals"):
        out[side] = {k: v for k, v in record[side].items() if k not in _CLOCKS}
    out["moves"] = [
        {k: v for k, v in m.items() if k not in (*_CLOCKS, "decision")} for m in record["moves"]
    ]
    return out


# ------------------------------------------------------------------ episodes
@pytest.mark.parametrize("game_name", ["fibonacci-20", "nim-31-k3", "kayles-20", "chomp-2x8"])
@pytest.mark.parametrize("seat", ["first", "second"])
def test_optimal_agent_always_wins_from_n_positions(game_name: str, seat: str) -> None:
    game = make_game(game_name)
    for seed in range(5):
        rec = asyncio.run(
            play_episode(
                game, SolverPolicy("optimal"), SolverPolicy("random"), seat=seat, seed=seed
            )
        )
        assert rec.status == "win" and rec.winner == "agent" and rec.end_reason == "game_over"
        assert rec.start_outcome == ("N" if seat == "first" else "P")
        agent_moves = [m for m in rec.moves if m.actor == "agent"]
        assert agent_moves[0].position == "N"  # the agent's first decision is at an N-position
        assert all(m.optimal for m in agent_moves)
        assert rec.agent_totals.optimal_moves == rec.agent_totals.moves == len(agent_moves)
        # The solver grade is recomputed independently here from the logged states.
        for m in rec.moves:
            state = game.validate_state(m.state)
            assert m.position == outcome(game, state)
            best = {game.move_text(w) for w in winning_moves(game, state)}
            assert m.optimal == (m.position == "P" or m.move in best)
        # Moves alternate and replay legally from the start state to a terminal state.
        state = game.validate_state(rec.start_state)
        for m in rec.moves:
            state = game.apply(state, game.parse_move(m.move, state))
        assert game.is_terminal(state)


def test_random_agent_loses_sometimes_and_episodes_are_seeded() -> None:
    game = make_game("nim-31-k3")
    play = lambda seed: asyncio.run(  # noqa: E731
        play_episode(game, SolverPolicy("random"), SolverPolicy("optimal"), seed=seed)
    )
    records = [play(s) for s in range(12)]
    assert {r.status for r in records} == {"win", "loss"} or all(
        r.status == "loss" for r in records
    )
    assert any(not m.optimal for r in records for m in r.moves if m.actor == "agent")
    again = play(3).model_dump(mode="json")
    assert _strip_timing(again) == _strip_timing(records[3].model_dump(mode="json"))


def test_llm_episode_is_reproducible_and_counts_calls(sim_server: SimServer) -> None:
    game = make_game("fibonacci-20")
    pool = ClientPool(sim_server.base_url, max_concurrency=8, timeout_s=10, max_retries=2)
    agent = build_player(
        Side.parse("mad", "sim-biased:heuristic=max_take,p=0.5", None, {"agents": 2}), pool
    )
    opponent = build_player(Side.parse("react", "sim-random", None, {}), pool)

    async def both() -> list:
        first = await play_episode(game, agent, opponent, seed=11)
        second = await play_episode(game, agent, opponent, seed=11)
        await pool.aclose()
        return [first, second]

    first, second = asyncio.run(both())
    a, b = (r.model_dump(mode="json") for r in (first, second))
    assert _strip_timing(a) == _strip_timing(b)
    assert a["status"] in ("win", "loss")
    calls = sum(m["calls"] for m in a["moves"])
    assert calls == a["agent_totals"]["calls"] + a["opponent_totals"]["calls"] > 0
    # Every decision keeps its calls and tokens; the chain is at most the number of calls.
    for m in a["moves"]:
        assert len(m["decision"]["calls"]) == m["calls"]
    assert 0 < a["chain_calls"] <= calls


def test_call_chain_counts_sequential_calls_only() -> None:
    times = CallTimes([(0.0, 1.0), (0.0, 1.0), (1.0, 2.0), (1.5, 2.5), (2.5, 3.0)])
    assert times.chain() == 3  # (0,1) -> (1,2) or (1.5,2.5) -> (2.5,3)


# -------------------------------------------------------------- tournaments
def _check_accounting(result: Any) -> None:
    """Every planned episode is either finished, failed or not run — exactly once."""
    records = result.records
    for g in result.summary["groups"]:
        group = [r for r in records if r.setting == g["setting"] and g["seat"] in ("all", r.seat)]
        assert g["episodes"] == len(group)
        assert (
            g["finished"] + g["infrastructure_errors"] + g["errors"] + g["not_run"] == g["planned"]
        )
        assert g["wins"] == sum(r.status == "win" for r in group)
        assert g["losses"] == sum(r.status == "loss" for r in group)
        assert g["agent"]["illegal"] == sum(r.agent_totals.illegal for r in group)
    for r in records:
        if r.status == "infrastructure_error":
            assert r.winner is None and r.end_reason == "infrastructure_error"
            assert r.moves[-1].status == "infrastructure_error"
            assert r.moves[-1].move is None


def test_tournament_with_faults_resumes_failed_episodes(tmp_path: Path) -> None:
    with SimServer(seed=0) as server:
        config = TournamentConfig(
            games=["fibonacci-20", 'nim:{"heaps":[12],"max_take":3}'],
            method="react",
            model=FAULTY,
            base_url=server.base_url,
            params={"max_reasks": 1},
            opponent="react",
            opponent_model="sim-biased:heuristic=max_take,p=0.5",
            opponent_base_url=server.base_url,
            episodes=8,
            # Faults are the point here: the run goes on past early forfeits.
            keep_going=True,
            seat="alternate",
            max_retries=0,
            results_dir=str(tmp_path),
            progress=False,
        )
        first = run_tournament(config)
        ok_statuses = [
            r["status"] for r in server.log if r.get("model") == FAULTY and r.get("status") == 200
        ]
        _check_accounting(first)
        agent = [g for g in first.summary["groups"] if g["seat"] == "all"]
        assert sum(g["infrastructure_errors"] for g in agent) > 0  # http500 with no retries
        assert sum(g["agent"]["unparsable"] for g in agent) > 0
        assert sum(g["agent"]["illegal"] for g in agent) > 0
        assert {g["seat"] for g in first.summary["groups"]} == {"all", "first", "second"}
        # Calls recorded by the decisions = answers the server gave the agent's model.
        logged_calls = sum(r["agent_totals"]["calls"] for r in read_records(first.log_path))
        assert logged_calls == len(ok_statuses)

        failed = {r.id for r in first.records if r.status == "infrastructure_error"}
        second = run_tournament(config)
    assert second.played_now == len(failed)  # only the failed episodes are replayed
    _check_accounting(second)
    lines = read_records(second.log_path)
    finished_first = [r.id for r in first.records if r.status in ("win", "loss")]
    for episode_id in finished_first:
        assert sum(line["id"] == episode_id for line in lines) == 1
    assert len({line["id"] for line in lines}) == 16
    assert len(second.records) == 16


def test_budget_cap_stops_starting_episodes_and_resume_finishes(tmp_path: Path) -> None:
    config = TournamentConfig(
        method="react",
        model="sim-optimal",
        opponent="random",
        episodes=6,
        concurrency=1,
        max_calls=3,
        results_dir=str(tmp_path),
        progress=False,
    )
    capped = run_tournament(config)
    assert capped.stopped is not None and "call budget" in capped.stopped
    assert 1 <= capped.played_now < 6
    group = capped.summary["groups"][0]
    assert group["not_run"] == 6 - capped.played_now and group["planned"] == 6
    assert "stopped early" in capped.report
    # The budget is not part of the episodes' identity: lifting it resumes the same log.
    done = run_tournament(config.model_copy(update={"max_calls": None}))
    assert done.log_path == capped.log_path
    assert done.played_now == 6 - capped.played_now
    assert len(read_records(done.log_path)) == 6 and done.summary["groups"][0]["finished"] == 6


# ------------------------------------------------------------- evaluations
def _dataset(path: Path) -> Path:
    from metanim.datasets import build, write_jsonl

    records = build("fibonacci", 4, seed=0, params={"n": 20}) + build(
        "nim", 4, seed=0, params={"heaps": [31], "max_take": 3}
    )
    write_jsonl(records, path)
    return path


def test_evaluation_with_faults(tmp_path: Path) -> None:
    dataset = _dataset(tmp_path / "ds.jsonl")
    with SimServer(seed=1) as server:
        config = EvaluationConfig(
            dataset=[str(dataset)],
            method="react",
            model=FAULTY,
            base_url=server.base_url,
            params={"max_reasks": 1},
            repeats=3,
            max_retries=0,
            # Faults are the point here: the run goes on past early forfeits.
            keep_going=True,
            results_dir=str(tmp_path / "out"),
            progress=False,
        )
        first = run_evaluation(config)
        second = run_evaluation(config)
    rows = {g["game"]: g for g in first.summary["games"]}
    assert set(rows) == {"fibonacci", "nim"}
    for g in rows.values():
        assert g["planned"] == 12
        assert g["graded"] + g["infrastructure_errors"] + g["errors"] + g["not_run"] == 12
        assert len(g["accuracy_per_repeat"]) == 3
        assert 0.0 <= g["accuracy_ci95"][0] <= g["accuracy_mean"] <= g["accuracy_ci95"][1] <= 1.0
    assert sum(g["infrastructure_errors"] for g in rows.values()) > 0
    assert sum(g["unparsable"] + g["illegal"] for g in rows.values()) > 0
    # Graded correctness is the dataset's unique optimal move, never a repaired answer.
    for r in first.records:
        if r.status == "ok":
            assert r.correct == (r.answer == r.optimal_move)
        elif r.status == "infrastructure_error":
            assert r.correct is None
    failed = sum(r.status == "infrastructure_error" for r in first.records)
    assert second.played_now == failed
    assert len({line["id"] for line in read_records(second.log_path)}) == 24


# --------------------------------------------------------------- CLI, profiles
def test_every_profile_loads_and_builds() -> None:
    pool = ClientPool(None, max_concurrency=1, timeout_s=1, max_retries=0)
    names = {p.stem for p in PROFILE_DIR.glob("*.toml")}
    assert "gpt-4o-react-opponent" in names
    for method in ("standard", "react", "cot", "self-consistency", "self-refine", "mad", "mpd",
                   "dreamad", "anonymous-mad", "acemad", "cross"):  # fmt: skip
        assert f"gpt-4o-mini-{method}" in names
    for name in sorted(names):
        profile = load_profile(name)
        assert profile.name == name
        policy = build_player(
            Side.parse(profile.method, profile.model, profile.base_url, profile.params), pool
        )
        assert profile.model in policy.method.models


def test_cli_tournament_with_profiles_and_overrides(tmp_path: Path, sim_server: SimServer) -> None:
    code = main(
        [
            "tournament",
            "--profile", "gpt-4o-mini-dreamad",
            "--model", "sim-optimal",
            "--base-url", sim_server.base_url,
            "--param", "rounds=1",
            "--opponent-profile", "gpt-4o-react-opponent",
            "--opponent-model", "sim-random",
            "--opponent-base-url", sim_server.base_url,
            "--game", "fibonacci-20",
            "--episodes", "2",
            "--results-dir", str(tmp_path),
            "--no-progress",
        ]
    )  # fmt: skip
    assert code == 0
    (config_file,) = tmp_path.glob("*.config.json")
    config = json.loads(config_file.read_text())
    assert config["method"] == "dreamad" and config["model"] == "sim-optimal"
    assert config["params"]["rounds"] == 1 and config["params"]["agents"] == 2  # profile + flag
    assert config["opponent"] == "react" and config["opponent_model"] == "sim-random"
    (log,) = tmp_path.glob("*.jsonl")
    records = read_records(log)
    assert len(records) == 2
    assert all(r["agent"] == "dreamad@sim-optimal@" + sim_server.base_url for r in records)


def test_demo_runs_offline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--episodes", "2", "--results-dir", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "fibonacci-20" in out and "win rate" in out
    (summary,) = tmp_path.glob("*.summary.json")
    groups = json.loads(summary.read_text())["groups"]
    assert groups[0]["planned"] == 2 and groups[0]["finished"] == 2
    # ... and then the folder report: Markdown and the win-rate plot.
    assert "fibonacci-20" in (tmp_path / "report.md").read_text()
    assert (tmp_path / "win_rates.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_against_a_given_server(tmp_path: Path, sim_server: SimServer) -> None:
    args = ["demo", "--base-url", sim_server.base_url, "--model", "sim-optimal", "--episodes", "1"]
    assert main([*args, "--results-dir", str(tmp_path), "--no-progress"]) == 0
    (log,) = tmp_path.glob("*.jsonl")
    (record,) = read_records(log)
    assert record["status"] == "win"  # the optimal model never loses from an N-position


def test_solver_players_carry_no_model_in_label_or_hash(tmp_path: Path) -> None:
    config = TournamentConfig(
        method="random", opponent="optimal", episodes=1, results_dir=str(tmp_path), progress=False
    )
    other_models = config.model_copy(
        update={"model": "gpt-4o", "opponent_model": "sim-optimal", "opponent_base_url": "http://x"}
    )
    assert config.config_hash() == other_models.config_hash()
    llm = config.model_copy(update={"opponent": "react"})
    assert (
        llm.config_hash() != llm.model_copy(update={"opponent_model": "sim-random"}).config_hash()
    )
    result = run_tournament(config)
    assert "agent: `random`; opponent: `optimal`\n" in result.report
    assert "sim-biased" not in result.report


def test_one_start_rule_for_presets_json_settings_and_the_env(tmp_path: Path) -> None:
    """Start "auto": the initial state when it is an N-position for the agent's first
    decision, else a random one; a preset and the same game as JSON are one setting."""
    import gymnasium as gym

    config = TournamentConfig(
        games=["fibonacci-20", 'fibonacci:{"n":20}'],
        method="optimal",
        opponent="random",
        episodes=4,
        seat="alternate",
        results_dir=str(tmp_path),
        progress=False,
    )
    records = run_tournament(config).records
    env = gym.make("MetaNIM/Fibonacci-v0", preset="fibonacci-20")
    _, info = env.reset(seed=0)
    assert info["state"] == [20, 19]  # the env's preset default ...
    # One game spelled two ways is one setting, played once, by the preset's name.
    assert {r.setting for r in records} == {"fibonacci-20"} and len(records) == 4
    first = [r for r in records if r.seat == "first"]
    assert all(r.start_state == [20, 19] for r in first)  # ... is the tournament's
    # The agent always meets an N-position: with the opponent first, a random P one.
    assert all(r.start_outcome == ("N" if r.seat == "first" else "P") for r in records)


@pytest.mark.parametrize(
    ("preset", "initial"),
    [
        ("nim-31-k3-misere", True),  # the paper's misère settings start at the start
        ("fibonacci-20-misere", True),
        ("kayles-20-misere", False),  # a P-position start: a random N-position instead
        ("nim-31-k4-misere", False),
        ("nim-31-k5-misere", False),
    ],
)
def test_misere_presets_start_where_the_agent_can_win(tmp_path: Path, preset, initial) -> None:
    import gymnasium as gym

    from metanim.envs.registration import ENV_GAMES, env_id
    from metanim.games import PRESETS, make_game

    config = TournamentConfig(
        games=[preset], method="optimal", opponent="random", episodes=2,
        results_dir=str(tmp_path), progress=False,
    )  # fmt: skip
    records = run_tournament(config).records
    game = make_game(preset)
    assert game.misere
    start = game.to_json(game.initial_state())
    assert all(r.start_outcome == "N" for r in records)
    assert all((r.start_state == start) == initial for r in records)
    name = next(n for n, g in ENV_GAMES.items() if g == PRESETS[preset][0])
    _, info = gym.make(env_id(name), preset=preset).reset(seed=1)
    assert (info["state"] == start) == initial
    assert info["start_outcome"] == "N"


def test_a_p_position_start_warns(tmp_path: Path) -> None:
    config = TournamentConfig(
        games=["kayles-20-misere"], method="optimal", opponent="random", episodes=1,
        start="initial", results_dir=str(tmp_path), progress=False,
    )  # fmt: skip
    with pytest.warns(UserWarning, match="P-position"):
        records = run_tournament(config).records
    assert records[0].start_outcome == "P"


def test_an_episode_that_raises_is_logged_as_an_error_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    # One heap of 1 has no P-position to hand the opponent: every episode with the
    # agent second fails to draw its start (a ValueError outside the move loop).
    config = TournamentConfig(
        games=['nim:{"heaps":[1],"max_take":1}', "fibonacci-20"],
        method="optimal",
        opponent="random",
        episodes=4,
        seat="alternate",
        concurrency=4,
        results_dir=str(tmp_path),
        progress=False,
    )
    result = run_tournament(config)
    lines = read_records(result.log_path)
    assert result.played_now == len(lines) == 8
    broken = [r for r in lines if r["status"] == "error"]
    assert {(r["setting"], r["seat"]) for r in broken} == {
        ('nim:{"heaps":[1],"max_take":1,"misere":false}', "second")
    }
    assert len(broken) == 2 and all(
        "cannot start this seat: no reachable state is a P-position" in r["error"] for r in broken
    )
    assert sum(r["status"] == "win" for r in lines) == 6
    (nim_all,) = [
        g for g in result.summary["groups"] if g["seat"] == "all" and "nim" in g["setting"]
    ]
    assert nim_all["errors"] == 2 and nim_all["finished"] == 2


def test_an_oversized_setting_fails_before_any_episode(tmp_path: Path) -> None:
    from metanim.games import SizeLimitError

    config = TournamentConfig(
        games=["fibonacci-20", 'chomp:{"rows":40,"cols":40}'],
        method="optimal",
        opponent="random",
        episodes=1,
        results_dir=str(tmp_path),
        progress=False,
    )
    with pytest.raises(SizeLimitError, match="MAX_TABLE_STATES"):
        run_tournament(config)
    assert not list(tmp_path.glob("*.jsonl"))


def test_a_cost_cap_refuses_an_unpriced_model(tmp_path: Path) -> None:
    config = TournamentConfig(
        method="react",
        model="my-local-llama",
        opponent="random",
        opponent_model="also-unpriced",  # a solver opponent calls no model
        max_cost_usd=1.0,
        episodes=1,
        results_dir=str(tmp_path),
        progress=False,
    )
    with pytest.raises(ValueError, match=r"'my-local-llama' has no price.*METANIM_PRICES"):
        run_tournament(config)
    assert not list(tmp_path.iterdir())
    # A sim-* model is priced at 0: the cap applies and the run starts.
    assert run_tournament(config.model_copy(update={"model": "sim-optimal"})).played_now == 1


def test_cli_cache_answers_a_rerun_and_stays_out_of_the_hash(
    tmp_path: Path, sim_server: SimServer
) -> None:
    dataset = _dataset(tmp_path / "ds.jsonl")
    cache = tmp_path / "cache.sqlite"
    args = [
        "evaluate", "--dataset", str(dataset), "--method", "react", "--model", "sim-optimal",
        "--base-url", sim_server.base_url, "--repeats", "1", "--limit", "2", "--no-progress",
        "--cache", str(cache),
    ]  # fmt: skip
    sim_server.reset_log()
    assert main([*args, "--results-dir", str(tmp_path / "a")]) == 0
    asked = len(sim_server.log)
    assert asked > 0 and cache.exists()
    assert main([*args, "--results-dir", str(tmp_path / "b")]) == 0
    assert len(sim_server.log) == asked  # every call of the rerun came from the cache
    (log_a,) = (tmp_path / "a").glob("*.jsonl")
    (log_b,) = (tmp_path / "b").glob("*.jsonl")
    assert log_a.name == log_b.name  # the cache is not part of the run's identity
    assert json.loads(log_a.with_suffix(".config.json").read_text())["cache"] == str(cache)
    a, b = read_records(log_a), read_records(log_b)
    assert [r["answer"] for r in a] == [r["answer"] for r in b] and len(a) == 2


def test_evaluation_shows_how_many_repeats_entered_the_mean(tmp_path: Path) -> None:
    from metanim.arena.evaluate import Evaluation
    from metanim.records import render_summary, summarize_evaluation

    config = EvaluationConfig(
        dataset=[str(_dataset(tmp_path / "ds.jsonl"))],
        method="react",
        model="sim-optimal",
        repeats=3,
        results_dir=str(tmp_path),
        progress=False,
    )
    result = run_evaluation(config)
    (row,) = [g for g in result.summary["games"] if g["game"] == "fibonacci"]
    assert (row["repeats_in_mean"], row["repeats"]) == (3, 3)
    # The same log with every decision of repeat 1 lost to the server: that repeat has no
    # accuracy, so the mean is over 2 repeats, and the table says so.
    lines = [
        r.model_copy(update={"status": "infrastructure_error", "correct": None})
        if r.repeat == 1
        else r
        for r in read_log(result.log_path)
    ]
    planned = [(*p.record.group, p.repeat) for p in Evaluation(config).planned]
    summary = summarize_evaluation(lines, planned=planned)
    summary["config"] = config.model_dump(mode="json")
    (row,) = [g for g in summary["games"] if g["game"] == "fibonacci"]
    assert (row["repeats_in_mean"], row["repeats"]) == (2, 3)
    assert len(row["accuracy_per_repeat"]) == 2
    assert "| fibonacci | 8/12 | 2/3 |" in render_summary(summary)


def test_preflight_names_a_port_that_does_not_speak_http() -> None:
    """Something else on the port (here an SSH-like banner) is 'cannot connect', exit 3."""
    import socket
    import threading

    from metanim.arena import ClientPool
    from metanim.arena._preflight import check_servers
    from metanim.llm import ModelSpec
    from metanim.util import Unreachable

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]

    def banner() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(b"SSH-2.0-OpenSSH_9.0\r\n")

    thread = threading.Thread(target=banner, daemon=True)
    thread.start()
    try:
        with pytest.raises(Unreachable, match="cannot connect to the server"):
            url = f"http://127.0.0.1:{port}/v1"
            model = ModelSpec.parse("gpt-4o", url)
            pool = ClientPool(None, max_concurrency=1, timeout_s=5, max_retries=0)
            check_servers([model], pool)
    finally:
        thread.join(timeout=5)
        listener.close()


def test_a_method_with_its_own_record_model_is_still_recorded(tmp_path: Path) -> None:
    # Only a metanim `Decision` is kept as the model; another method's pydantic record
    # is kept as its JSON form, as before.
    from pydantic import BaseModel

    from metanim.arena import MethodPolicy
    from metanim.games import make_game

    class Tokens(BaseModel):
        prompt_tokens: int = 3
        completion_tokens: int = 4

    class MyRecord(BaseModel):
        status: str = "ok"
        move: Any = None
        illegal: int = 0
        unparsable: int = 0
        calls: list = []
        usage: Tokens = Tokens()
        cost_usd: float = 0.0
        latency_s: float = 0.0
        error: str | None = None
        note: str = "mine"

    class Mine:
        async def decide(self, game, state, *, seed):
            return MyRecord(move=game.legal_moves(state)[0])

    game = make_game("nim-31-k3")
    record = asyncio.run(
        play_episode(game, MethodPolicy("mine", Mine()), SolverPolicy("optimal"), seed=1)
    )
    kept = [m.decision for m in record.moves if m.actor == "agent"]
    assert kept and all(d["note"] == "mine" and "move" not in d for d in kept)
    log = tmp_path / "e.jsonl"
    with AppendLog(log, transcript_path(log)) as out:
        out.append(*record.lines())
    ((_, logged),) = read_transcripts(log)
    assert logged[0]["usage"] == {"prompt_tokens": 3, "completion_tokens": 4}
    assert logged[0]["note"] == "mine"


def test_a_second_ctrl_c_while_a_run_winds_down_says_what_is_saved(tmp_path, capsys):
    """The first Ctrl-C cancels the run; a second while it winds down names the log that
    holds every finished item; a third stops at once. (Real signals to this process.)"""
    import asyncio
    import os
    import signal

    from metanim.arena._run import _cancel_on_stop

    log = tmp_path / "t.jsonl"
    seen = []

    async def run() -> None:
        with _cancel_on_stop(log, "episodes"):
            try:
                os.kill(os.getpid(), signal.SIGINT)
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                seen.append("cancelled")
            os.kill(os.getpid(), signal.SIGINT)  # while winding down
            await asyncio.sleep(0.2)
            seen.append(capsys.readouterr().err)
            os.kill(os.getpid(), signal.SIGINT)  # a third: out of the loop at once
            await asyncio.sleep(10)

    # Python's own Ctrl-C handler, whatever this process inherited: a test run started
    # in the background (`cmd &`) inherits SIGINT ignored, which the run keeps, as asked.
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            asyncio.run(run())
    finally:
        signal.signal(signal.SIGINT, inherited)
    cancelled, said = seen
    assert cancelled == "cancelled"
    assert f"every finished episode is already saved in {log}" in said
    assert "the same command resumes" in said


def test_a_cross_debate_with_no_model_given_is_named_by_its_own_models(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from metanim.arena._players import parse_sides

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    method = "cross:models=gpt-4o|gpt-4o-mini"
    (side,) = parse_sides(EvaluationConfig(dataset=["samples/math.jsonl"], method=method))
    assert [m.name for m in side.models()] == ["gpt-4o", "gpt-4o-mini"]
    assert side.name == f"{method}@gpt-4o"
    # The route its models take (OpenAI's, no URL given), not the default model's simulator.
    assert side.server_identity == "https://api.openai.com/v1"
    # A simulated model named on purpose reads as "offline": refused, naming the mismatch.
    with pytest.raises(ValueError, match="not the model 'sim-optimal'"):
        parse_sides(
            EvaluationConfig(dataset=["samples/math.jsonl"], method=method, model="sim-optimal")
        )
