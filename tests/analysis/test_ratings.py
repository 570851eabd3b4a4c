"""Ratings (`metanim ratings`): recovery of players of known strength, and the rules.

The recovery grid plays every pair of six players of known strength on one-heap NIM
(31 stones, take 1 to 3): the optimal and the random player (the anchors), two
ε-optimal players and two simulated models biased toward taking the most. The expected
ratings come from an independent path: each pairing's exact win probability by a DP
over the heap sizes (winning moves found by brute force from the rules, not the
solver), a Bradley–Terry fit of those probabilities by a plain Newton iteration written
here, then the anchors' linear map.
"""

from __future__ import annotations

import json
import math
import re
import sys
import warnings
from functools import cache
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import binomtest

from metanim.analysis.ratings import rate
from metanim.stats import PRIOR_SIGMA, fit_bradley_terry

HEAP, TAKE = 31, 3
BIASED = "sim-biased:heuristic=max_take,p={p}"
#: (name in the logs, method, model, method params, policy for the DP).
PLAYERS = [
    ("optimal", "optimal", None, {}, ("eps", 0.0)),
    ("random", "random", None, {}, ("eps", 1.0)),
    ("epsilon:0.1", "epsilon:0.1", None, {}, ("eps", 0.1)),
    ("epsilon:0.5", "epsilon:0.5", None, {}, ("eps", 0.5)),
    # At temperature 0.7 (the simulator's reference) a biased model plays its heuristic
    # with probability p exactly, and otherwise the optimal move.
    ("biased p=0.3", "standard", BIASED.format(p=0.3), {"temperature": 0.7}, ("biased", 0.3)),
    ("biased p=0.8", "standard", BIASED.format(p=0.8), {"temperature": 0.7}, ("biased", 0.8)),
]
EPISODES = 120  # per pairing, seats alternating


# --------------------------------------------------------------- exact strengths
@cache
def _to_move_wins(heap: int) -> bool:
    """Brute force from the rules (normal play: no stone left, the player to move lost)."""
    return any(not _to_move_wins(heap - t) for t in range(1, min(TAKE, heap) + 1))


def _policy(kind: str, x: float, heap: int) -> dict[int, float]:
    takes = list(range(1, min(TAKE, heap) + 1))
    winning = [t for t in takes if not _to_move_wins(heap - t)]
    best = winning or takes  # in a P-position every move is as good: uniform
    optimal = {t: (t in best) / len(best) for t in takes}
    if kind == "eps":
        return {t: (1 - x) * optimal[t] + x / len(takes) for t in takes}
    biased = {t: (1 - x) * optimal[t] for t in takes}
    biased[max(takes)] += x  # "max_take": the move that leaves the smallest heap
    return biased


def _first_wins(a: tuple[str, float], b: tuple[str, float]) -> float:
    """P(the first mover wins) from the full heap, player a moving first."""

    @cache
    def wins(heap: int, a_moves: bool) -> float:  # P(the player to move wins)
        if heap == 0:
            return 0.0
        policy = _policy(*(a if a_moves else b), heap)
        return sum(p * (1 - wins(heap - t, not a_moves)) for t, p in policy.items())

    return wins(HEAP, True)


def _newton_map(first, second, wins, games, players: int, sigma: float) -> np.ndarray:
    """The posterior mode by Newton's method on a dense design (one seat advantage)."""
    design = np.zeros((len(first), players + 1))
    for k, (f, s) in enumerate(zip(first, second, strict=True)):
        design[k, f], design[k, s], design[k, players] = 1.0, -1.0, 1.0
    x = np.zeros(players + 1)
    for _ in range(100):
        p = expit(design @ x)
        grad = design.T @ (games * p - wins) + x / sigma**2
        hess = design.T @ (design * (games * p * (1 - p))[:, None]) + np.eye(players + 1) / sigma**2
        step = np.linalg.solve(hess, grad)
        x -= step
        if np.abs(step).max() < 1e-12:
            break
    return x


# ------------------------------------------------------------------------ the grid
@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from metanim.arena import TournamentConfig, run_tournament

    root = tmp_path_factory.mktemp("grid")
    for (_, ma, model_a, pa, _), (_, mb, model_b, pb, _) in combinations(PLAYERS, 2):
        sides: dict[str, Any] = {"method": ma, "params": pa, "opponent": mb, "opponent_params": pb}
        sides |= {"model": model_a} if model_a else {}
        sides |= {"opponent_model": model_b} if model_b else {}
        with warnings.catch_warnings():
            # The full heap is an N-position: the second seat starts where it loses
            # against best play, which is the point (the seat is the covariate).
            warnings.filterwarnings("ignore", "the start", UserWarning)
            run_tournament(
                TournamentConfig(
                    name=f"{ma}-{mb}".replace(":", ""), games=["nim-31-k3"], episodes=EPISODES,
                    seat="alternate", start="initial", seed=0, results_dir=str(root),
                    progress=False, record_decisions=False, **sides,
                )
            )  # fmt: skip
    return root


def _logged(grid: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """(agent name, opponent name, line) of every logged episode, read as plain JSON."""
    names = {(m, model or None): name for name, m, model, _, _ in PLAYERS}
    out = []
    for log in grid.glob("*.jsonl"):
        config = json.loads(log.with_suffix(".config.json").read_text())
        agent = names[
            (config["method"], config["model"] if config["method"] == "standard" else None)
        ]
        opponent = names[
            (
                config["opponent"],
                config["opponent_model"] if config["opponent"] == "standard" else None,
            )
        ]
        out += [(agent, opponent, json.loads(line)) for line in log.read_text().splitlines()]
    return out


def _player_rows(ratings: Any) -> dict[str, Any]:
    (table,) = ratings.tables
    by_label = {}
    for row in table.players:
        name = next(
            n for n, m, model, _, _ in PLAYERS if row.player == m or (model and model in row.player)
        )
        by_label[name] = row
    return by_label


@pytest.mark.slow
def test_recovery_of_known_strengths(grid: Path):
    ratings = rate([grid], seed=0)
    rows = _player_rows(ratings)
    # The expected ratings: exact win probabilities × the episodes each seat order played.
    names = [p[0] for p in PLAYERS]
    policy = {p[0]: p[4] for p in PLAYERS}
    played: dict[tuple[str, str], int] = {}
    for agent, opponent, line in _logged(grid):
        assert line["status"] in ("win", "loss") and line["start_state"] == [HEAP]
        order = (agent, opponent) if line["seat"] == "first" else (opponent, agent)
        played[order] = played.get(order, 0) + 1
    first = [names.index(a) for a, _ in played]
    second = [names.index(b) for _, b in played]
    games = np.array(list(played.values()), dtype=float)
    wins = np.array([n * _first_wins(policy[a], policy[b]) for (a, b), n in played.items()])
    theta = _newton_map(first, second, wins, games, len(names), PRIOR_SIGMA)[: len(names)]
    top, bottom = theta[names.index("optimal")], theta[names.index("random")]
    expected = {n: 1000 + 1000 * (theta[k] - bottom) / (top - bottom) for k, n in enumerate(names)}

    # Known strength: fewer random moves, or fewer heuristic ones, is stronger.
    assert expected["epsilon:0.1"] > expected["epsilon:0.5"] > expected["random"]
    assert expected["biased p=0.3"] > expected["biased p=0.8"] > expected["random"]
    assert max(v for n, v in expected.items() if n != "optimal") < expected["optimal"]
    # The order recovered exactly, every expected rating inside its 95% interval.
    assert sorted(names, key=lambda n: -rows[n].rating) == sorted(names, key=lambda n: -expected[n])
    for name in names:
        row = rows[name]
        assert row.low <= expected[name] <= row.high, (name, expected[name], row)
    assert rows["optimal"].rating == 2000 and rows["random"].rating == 1000
    assert {rows[n].kind for n in ("optimal", "random")} == {"anchor"}
    assert {rows[n].kind for n in ("epsilon:0.1", "epsilon:0.5")} == {"calibration"}
    widths = [rows[n].high - rows[n].low for n in names if rows[n].kind != "anchor"]
    assert all(0 < w < 200 for w in widths)  # informative intervals, not the whole scale


@pytest.mark.slow
def test_ratings_predict_epsilon_win_rates(grid: Path):
    """The fitted ratings (and seat advantage) predict ε = 0.5's observed win rates
    against the optimal and the random player within their 95% Wilson intervals."""
    ratings = rate([grid], seed=0)
    rows = _player_rows(ratings)
    (table,) = ratings.tables
    (advantage,) = table.seat_advantage
    assert advantage.start == "N"
    logged = _logged(grid)
    for other in ("optimal", "random"):
        won, predicted = 0, []
        for agent, opponent, line in logged:
            if {agent, opponent} != {"epsilon:0.5", other}:
                continue
            eps_first = (line["seat"] == "first") == (agent == "epsilon:0.5")
            eps_won = (line["status"] == "win") == (agent == "epsilon:0.5")
            won += eps_won
            gap = rows["epsilon:0.5"].logit - rows[other].logit
            predicted.append(expit(gap + advantage.logit if eps_first else gap - advantage.logit))
        assert len(predicted) == EPISODES
        ci = binomtest(won, len(predicted)).proportion_ci(0.95, method="wilson")
        assert ci.low <= float(np.mean(predicted)) <= ci.high, (other, won, np.mean(predicted))


# ---------------------------------------------------------------------- the rules
def _write_run(folder: Path, name: str, config: dict[str, Any], lines: list[dict[str, Any]]):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.config.json").write_text(json.dumps(config))
    (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))


def _episode(k: int, seat: str, status: str, end: str = "game_over", setting: str = "nim-31-k3"):
    return {
        "id": f"{setting}-{k}", "setting": setting, "index": k, "seed": k, "seat": seat,
        "agent": "a", "opponent": "b", "game": "nim", "game_params": {"heaps": [31], "max_take": 3},
        "start_state": [31], "start_outcome": "N", "status": status, "end_reason": end,
        "plies": 3, "moves": [], "winner": None, "agent_totals": {}, "opponent_totals": {},
    }  # fmt: skip


def test_forfeits_lose_and_failures_are_left_out(tmp_path: Path):
    lines = [
        _episode(0, "first", "win"),
        _episode(1, "second", "loss", "agent_forfeit"),  # a forfeit is a loss
        _episode(2, "first", "win", "opponent_forfeit"),  # and the opponent's a win
        _episode(3, "second", "loss"),
        _episode(4, "first", "infrastructure_error", "infrastructure_error"),
        _episode(5, "first", "error", "error"),
        _episode(6, "second", "loss", "move_cap"),  # capped: no result
    ]
    _write_run(tmp_path, "t", {"method": "epsilon:0.2", "opponent": "random"}, lines)
    (table,) = rate([tmp_path], bootstrap=20).tables
    assert table.episodes == 4
    assert table.excluded == {"failed": 2, "capped": 1}
    row = next(r for r in table.players if r.player == "epsilon:0.2")
    assert (row.episodes, row.wins) == (4, 2)
    assert "optimal" in table.note and math.isnan(row.rating)  # no anchor: no scale


def test_fit_is_the_posterior_mode():
    """At the fit, the gradient of the log posterior (written here per episode, by
    finite differences) vanishes, and no nearby point is better."""
    rng = np.random.default_rng(3)
    first = np.array([0, 1, 2, 0, 2, 1, 3, 3])
    second = np.array([1, 0, 0, 2, 1, 2, 0, 1])
    setting = np.array([0, 0, 0, 1, 1, 1, 0, 1])
    games = rng.integers(5, 30, len(first)).astype(float)
    wins = np.minimum(games, rng.integers(0, 30, len(first))).astype(float)
    wins[0] = games[0]  # player 0 never loses as first mover against player 1
    x = fit_bradley_terry(
        first, second, setting, wins, games, players=4, settings=2, prior_sigma=2.0
    )

    def log_posterior(v: np.ndarray) -> float:
        total = 0.0
        for f, s, a, w, n in zip(first, second, setting, wins, games, strict=True):
            p = 1 / (1 + math.exp(-(v[f] - v[s] + v[4 + a])))
            total += w * math.log(p) + (n - w) * math.log(1 - p)
        return total - sum(t * t for t in v) / (2 * 2.0**2)

    step = 1e-6
    grad = [
        (log_posterior(x + step * e) - log_posterior(x - step * e)) / (2 * step)
        for e in np.eye(len(x))
    ]
    assert np.abs(grad).max() < 1e-4
    best = log_posterior(x)
    assert all(log_posterior(x + rng.normal(0, 0.05, len(x))) < best for _ in range(20))
    # A batch (the bootstrap's replicates) gives each data set its own mode.
    other = np.minimum(games, wins + 2)
    batch = fit_bradley_terry(
        first, second, setting, np.stack([wins, other]), np.stack([games, games]),
        players=4, settings=2, prior_sigma=2.0,
    )  # fmt: skip
    alone = fit_bradley_terry(
        first, second, setting, other, games, players=4, settings=2, prior_sigma=2.0
    )
    assert np.allclose(batch, [x, alone], atol=1e-6)


def test_pooled_table_holds_the_players_of_every_setting(tmp_path: Path):
    def run(name: str, method: str, opponent: str, setting: str, results: list[str]):
        lines = [
            _episode(k, ("first", "second")[k % 2], r, setting=setting) | {"id": f"{name}-{k}"}
            for k, r in enumerate(results)
        ]
        _write_run(tmp_path, name, {"method": method, "opponent": opponent}, lines)

    mix = ["win", "loss", "win", "win", "loss", "win"]
    run("a", "optimal", "random", "nim-31-k3", ["win"] * 6)
    run("b", "optimal", "random", "fibonacci-20", ["win"] * 6)
    run("c", "epsilon:0.3", "random", "nim-31-k3", mix)
    run("d", "epsilon:0.3", "optimal", "fibonacci-20", ["loss"] * 5 + ["win"])
    run("e", "epsilon:0.7", "random", "nim-31-k3", mix[::-1])  # one setting only
    ratings = rate([tmp_path], bootstrap=50)
    scopes = [t.scope for t in ratings.tables]
    assert scopes == ["pooled", "fibonacci-20", "nim-31-k3"]
    pooled, fib, nim = ratings.tables
    assert {r.player for r in fib.players} == {"optimal", "random", "epsilon:0.3"}
    assert pooled.settings == ["fibonacci-20", "nim-31-k3"]
    assert {r.player for r in pooled.players} == {"optimal", "random", "epsilon:0.3"}
    assert pooled.episodes == 6 + 6 + 6 + 6  # the ε = 0.7 games are not pooled
    assert {r.player for r in nim.players} == {"optimal", "random", "epsilon:0.3", "epsilon:0.7"}
    assert [s.setting for s in pooled.seat_advantage] == ["fibonacci-20", "nim-31-k3"]
    for t in ratings.tables:
        assert [r.rating for r in t.players] == sorted((r.rating for r in t.players), reverse=True)


def test_accuracy_column_comes_from_the_players_evaluations(tmp_path: Path):
    from metanim.arena import TournamentConfig, run_tournament
    from metanim.arena.evaluate import EvaluationConfig, run_evaluation
    from metanim.datasets import build, write_jsonl

    model, params = BIASED.format(p=0.5), {"temperature": 0.7}
    for opponent in ("optimal", "random"):
        run_tournament(
            TournamentConfig(
                name=f"vs-{opponent}", games=["nim-31-k3"], method="standard", model=model,
                params=params, opponent=opponent, episodes=6, seat="alternate", seed=0,
                results_dir=str(tmp_path), progress=False, record_decisions=False,
            )
        )  # fmt: skip
    run_tournament(
        TournamentConfig(
            name="anchors", games=["nim-31-k3"], method="optimal", opponent="random", episodes=4,
            seat="alternate", seed=0, results_dir=str(tmp_path), progress=False,
        )
    )  # fmt: skip
    data = write_jsonl(
        build("nim", 12, seed=1, params={"heaps": [31], "max_take": 3}), tmp_path / "d.jsonl"
    )
    run_evaluation(
        EvaluationConfig(
            name="eval", dataset=[str(data)], method="standard", model=model, params=params,
            repeats=2, seed=0, results_dir=str(tmp_path), progress=False,
        )
    )  # fmt: skip
    (log,) = tmp_path.glob("eval-*.jsonl")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    per_item: dict[str, list[bool]] = {}
    for line in lines:
        per_item.setdefault(line["record_id"], []).append(bool(line["correct"]))
    expected = np.mean([np.mean(v) for v in per_item.values()])

    (table,) = rate([tmp_path], bootstrap=50).tables
    row = next(r for r in table.players if model in r.player)
    assert row.accuracy_items == len(per_item) == 12
    assert row.accuracy == pytest.approx(expected)
    assert row.accuracy_low <= row.accuracy <= row.accuracy_high
    assert all(r.accuracy_items == 0 for r in table.players if r is not row)


@pytest.mark.slow
def test_cli_ratings(grid: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    from metanim.cli import main

    args = ["--bootstrap", "100", "--json", str(tmp_path / "r.json"), "--plot", str(tmp_path / "r.png")]  # fmt: skip
    assert main(["ratings", str(grid), *args]) == 0
    out = capsys.readouterr().out
    assert "optimal" in out and "2000" in out and "epsilon:0.5" in out and "95% CI" in out
    (table,) = json.loads((tmp_path / "r.json").read_text())["tables"]
    assert {p["player"]: p["rating"] for p in table["players"]}["random"] == 1000
    assert (tmp_path / "r.png").stat().st_size > 1000
    assert main(["ratings", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no results folder" in err[0]


def test_pairings_seen_from_one_side_only_are_named(tmp_path: Path):
    """With the winning start always on one player's side, the seat and the players are
    confounded within the pairing: the table says so."""
    one_sided = [_episode(k, "first", ("win", "loss")[k % 3 == 0]) for k in range(9)]
    _write_run(tmp_path / "a", "t", {"method": "epsilon:0.5", "opponent": "random"}, one_sided)
    (table,) = rate([tmp_path / "a"], bootstrap=20).tables
    assert "in 1 of 1 pairings the same player always had the winning start" in table.note
    both = [_episode(k, ("first", "second")[k % 2], "win") for k in range(9)]
    _write_run(tmp_path / "b", "t", {"method": "epsilon:0.5", "opponent": "random"}, both)
    (table,) = rate([tmp_path / "b"], bootstrap=20).tables
    assert "winning start" not in table.note


@pytest.mark.slow
def test_cli_ratings_refuses_what_it_cannot_rate_before_fitting(
    grid: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    """A folder of evaluations only has nothing to rate (exit 2, not an empty success), and an
    output path under a file is refused before the fit, not after it."""
    from importlib.resources import files

    from metanim.cli import main

    mc = str(files("metanim") / "samples" / "mc.jsonl")
    folder = str(tmp_path / "evals")
    run = ["evaluate", "--dataset", mc, "--model", "sim-optimal", "--method", "standard"]
    assert main([*run, "--repeats", "1", "--results-dir", folder, "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["ratings", folder]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no finished tournament episodes to rate" in err[0], err
    assert "1 log of decisions" in err[0]
    (tmp_path / "afile").write_text("")
    assert main(["ratings", str(grid), "--json", str(tmp_path / "afile" / "r.json")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before any table was fitted or printed
    assert captured.err.strip().endswith("afile is a file, not a folder")


def test_cli_ratings_refuses_a_plot_it_cannot_draw_before_writing(tmp_path: Path, run_metanim):
    """A --plot that cannot be drawn (no anchored table; matplotlib missing) is refused
    with one line, exit 2, before the --json file or anything else is written."""
    both = [_episode(k, ("first", "second")[k % 2], ("win", "loss")[k % 3 == 0]) for k in range(9)]
    _write_run(tmp_path / "a", "t", {"method": "epsilon:0.5", "opponent": "random"}, both)
    out = tmp_path / "out"
    args = ["ratings", str(tmp_path / "a"), "--bootstrap", "20", "--json", str(out / "r.json"),
            "--plot", str(out / "r.png")]  # fmt: skip
    result = run_metanim(*args)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "no table has both anchors" in result.stderr and "nothing was written" in result.stderr
    assert not out.exists()
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "matplotlib", None)  # the `plots` extra not installed
        result = run_metanim(*args)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().endswith(
        "plots need matplotlib: pip install 'metanim-arena[plots]'"
    )
    assert result.stdout == "" and not out.exists()


# ------------------------------------------------ what cannot be rated is said so
def _play(root: Path, name: str, a: str, b: str, episodes: int, seat: str = "alternate") -> None:
    from metanim.arena import TournamentConfig, run_tournament

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "the start", UserWarning)
        run_tournament(TournamentConfig(
            name=name, games=["nim-31-k3"], method=a, opponent=b, episodes=episodes,
            seat=seat, start="initial", seed=0, results_dir=str(root), progress=False,
            record_decisions=False,
        ))  # fmt: skip


_ZERO_WIDTH = re.compile(r"\[\s*([+-]?[\d.]+)\s*,\s*([+-]?[\d.]+)\s*\]")


def _no_zero_width(text: str) -> None:
    for low, high in _ZERO_WIDTH.findall(text):
        assert float(low) < float(high), text


def test_groups_that_never_met_are_rated_apart(tmp_path: Path):
    from metanim.analysis.ratings import ratings_markdown

    _play(tmp_path, "anchors", "optimal", "random", 10)
    _play(tmp_path, "others", "epsilon:0.2", "epsilon:0.3", 10)
    ratings = rate([tmp_path], bootstrap=50)
    # Plain-Python graph check: who met whom, from the logs.
    met = {("optimal", "random"), ("epsilon:0.2", "epsilon:0.3")}
    tables = ratings.tables
    assert len(tables) == 2 == len(met)
    first, second = tables
    assert first.scope.endswith("group 1 of 2") and second.scope.endswith("group 2 of 2")
    assert {r.player.split(" ")[0] for r in first.players} == {"optimal", "random"}
    assert {r.player.split(" ")[0] for r in second.players} == {"epsilon:0.2", "epsilon:0.3"}
    assert "never met" in second.note and "never on one scale" in second.note
    # The second group has no anchors: no rating, and its log-odds are relative to its own
    # mean (they sum to zero within the group), never read against the other group.
    assert all(r.rating != r.rating for r in second.players)
    assert sum(r.logit for r in second.players) == pytest.approx(0.0, abs=1e-9)
    md = "\n".join(ratings_markdown(ratings))
    assert md.count("never met") == 2
    _no_zero_width(md)


def test_perfect_separation_is_named_with_the_ratings_under_other_priors(tmp_path: Path):
    from metanim.analysis.ratings import SENSITIVITY_SIGMAS, ratings_markdown
    from metanim.records import read_log

    # The optimal player always moves first from the N-position start: it cannot lose.
    _play(tmp_path, "opt-rand", "optimal", "random", 10, seat="first")
    _play(tmp_path, "eps-rand", "epsilon:0.1", "random", 10)
    _play(tmp_path, "opt-eps", "optimal", "epsilon:0.1", 10, seat="first")
    # Recount from the logs: the optimal player lost no game.
    losses = 0
    for log in tmp_path.glob("*.jsonl"):
        if ".transcripts" in log.name:
            continue
        for r in read_log(log):
            sides = {"agent": r.status == "win", "opponent": r.status == "loss"}
            players = {"agent": log.name.split("-")[0], "opponent": log.name.split("-")[1]}
            losses += sum(players[s] == "opt" and not won for s, won in sides.items())
    assert losses == 0
    (table,) = rate([tmp_path], bootstrap=50).tables
    assert "perfect separation" in table.note and "optimal" in table.note.split("perfect")[1]
    (eps,) = [r for r in table.players if r.player.startswith("epsilon")]
    assert set(eps.by_sigma) == {f"{s:g}" for s in SENSITIVITY_SIGMAS}
    values = list(eps.by_sigma.values())
    assert max(values) - min(values) > 20  # the prior moves it
    assert eps.by_sigma["4"] == pytest.approx(eps.rating)  # the default prior's fit
    assert eps.low <= min(values) and max(values) <= eps.high  # the interval holds them
    md = "\n".join(ratings_markdown(rate([tmp_path], bootstrap=50)))
    assert "rating at σ = 1 / 4 / 16" in md
    _no_zero_width(md)


def test_one_episode_prints_no_zero_width_interval(tmp_path: Path):
    from metanim.analysis.ratings import ratings_markdown, ratings_terminal

    _play(tmp_path, "one", "optimal", "random", 1, seat="first")
    ratings = rate([tmp_path], bootstrap=50)
    md, terminal = "\n".join(ratings_markdown(ratings)), ratings_terminal(ratings)
    for text in (md, terminal):
        _no_zero_width(text)
    assert "fixed (anchor)" in md and "too little data for an interval" in md


def _agent_moves(folder: Path, opponent: str, seed: int) -> dict[tuple, str]:
    from metanim.arena import TournamentConfig, run_tournament
    from metanim.records import read_log

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "the start", UserWarning)
        result = run_tournament(TournamentConfig(
            name=f"vs-{opponent.replace(':', '')}-{seed}", games=["nim-31-k3"],
            method="standard", model=BIASED.format(p=0.5), params={"temperature": 0.7},
            opponent=opponent, episodes=40, seat="first", start="initial", seed=seed,
            results_dir=str(folder), progress=False, record_decisions=False,
        ))  # fmt: skip
    return {
        (r.index, m.ply, json.dumps(m.state)): m.move
        for r in read_log(result.log_path)
        for m in r.moves
        if m.actor == "agent" and json.loads(json.dumps(m.state))[0] % 4 in (1, 2)
    }  # heaps where the greedy take of 3 is not the winning move: a real coin flip


def test_runs_of_one_seed_replay_the_same_draws_and_the_ratings_say_so(tmp_path: Path):
    """Issue 38 item 4: the extra spread of a simulated player's rating between grids
    came from its pairings sharing one seed: a decision's random numbers come from the
    run's seed, the episode and the ply, so the player's coin flips repeat across its
    runs wherever it reaches the same position. At p = 0.5 two independent runs agree on
    about half of those flips; runs of one seed on all of them."""
    same_a = _agent_moves(tmp_path / "same", "random", 0)
    same_b = _agent_moves(tmp_path / "same", "epsilon:0.5", 0)
    shared = [k for k in same_a if k in same_b]
    assert len(shared) >= 20
    assert all(same_a[k] == same_b[k] for k in shared)  # common random numbers
    own_b = _agent_moves(tmp_path / "own", "epsilon:0.5", 1)
    _agent_moves(tmp_path / "own", "random", 0)
    own = [k for k in same_a if k in own_b]
    agree = sum(same_a[k] == own_b[k] for k in own)
    assert binomtest(agree, len(own), 0.5).pvalue > 0.001  # independent coin flips
    (table,) = rate([tmp_path / "same"], bootstrap=20).tables
    assert "runs share a seed: 2 runs of seed 0" in table.note
    assert "give each run its own --seed" in table.note
    (table,) = rate([tmp_path / "own"], bootstrap=20).tables
    assert "runs share a seed" not in table.note
