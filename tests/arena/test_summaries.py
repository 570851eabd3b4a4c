"""What a run's summary says beside its rates: timing per decision and per call, chance
baselines (a random player's exact accuracy and win probability, from the rules and a
plain recursion, binomial tails summed by hand), identical episodes counted once, one
`forfeit` verdict, and strict JSON."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from functools import cache
from pathlib import Path

import pytest

from metanim.arena import EvaluationConfig, TournamentConfig, run_evaluation, run_tournament
from metanim.datasets import build, write_jsonl
from tests.arena.configs import QUIET
from tests.arena.configs import evaluation as _evaluation
from tests.arena.configs import tournament as _tournament

pytestmark = pytest.mark.usefixtures("fresh_probes")


SAMPLES = Path(__file__).resolve().parents[2] / "metanim" / "samples"


def test_timing_columns_are_run_wall_time_per_decision_and_per_call_waits(tmp_path):
    config = _evaluation(tmp_path, "sim-optimal:latency=0.01", concurrency=4)
    result = run_evaluation(config)
    (row,) = result.summary["games"]
    timing = result.summary["timing"]
    assert timing["decisions"] == row["graded"] == 20
    assert timing["s_per_decision"] == pytest.approx(timing["wall_s"] / 20)
    # Per call, from the calls the decision records hold (not from the counters).
    calls = [c for r in result.records for c in r.decision.calls]
    assert row["latency_per_call_s"] == pytest.approx(sum(c.latency_s for c in calls) / len(calls))
    assert row["queue_per_call_s"] == pytest.approx(sum(c.queue_s for c in calls) / len(calls))
    assert "s/decision" in result.report and "latency s/call" in result.report


def _binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), summed term by term."""
    return sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))


def test_accuracy_chance_rows_on_critical_nim_states(tmp_path):
    heap, k = 15, 3
    records = build("nim", 8, seed=3, params={"heaps": [heap], "max_take": k})
    path = write_jsonl(records, tmp_path / "nim.jsonl")
    result = run_evaluation(
        EvaluationConfig(dataset=[str(path)], method="standard", model="sim-optimal",
                         repeats=1, results_dir=str(tmp_path), **QUIET)
    )  # fmt: skip
    (row,) = result.summary["games"]
    # Nim, one heap h, takes 1..k: min(h, k) legal moves, listed from "take 1"; the one
    # winning move takes h mod (k + 1).
    heaps = [r.state[0] for r in records]
    uniform = sum(Fraction(1, min(h, k)) for h in heaps) / len(heaps)
    first = Fraction(sum(h % (k + 1) == 1 for h in heaps), len(heaps))
    assert row["chance_accuracy"] == pytest.approx(float(uniform), abs=1e-12)
    assert row["first_answer_accuracy"] == pytest.approx(float(first), abs=1e-12)
    assert row["correct"] == len(heaps)  # the optimal model answers every item
    expected = _binomial_tail(len(heaps), len(heaps), float(uniform))
    assert row["chance_p_value"] == pytest.approx(expected, rel=1e-9)
    assert row["above_chance"] is True


def test_multiple_choice_chance_rows_and_a_random_model_flagged(tmp_path):
    rows = [json.loads(line) for line in (SAMPLES / "mc.jsonl").read_text().splitlines()]
    options = [len(r["choices"]) for r in rows]
    first_label = [
        (sorted(r["choices"]) if isinstance(r["choices"], dict) else ["A"])[0] for r in rows
    ]
    result = run_evaluation(_evaluation(tmp_path, "sim-random", repeats=1))
    (row,) = result.summary["games"]
    assert row["chance_accuracy"] == pytest.approx(sum(1 / n for n in options) / len(rows))
    right_first = sum(r["answer"] == f for r, f in zip(rows, first_label, strict=True))
    assert row["first_answer_accuracy"] == pytest.approx(right_first / len(rows))
    expected = _binomial_tail(row["correct"], len(rows), row["chance_accuracy"])
    assert row["chance_p_value"] == pytest.approx(expected, rel=1e-9)
    assert row["above_chance"] is False and "⚠ not above chance" in result.report


def _random_vs_solver(heap: int, k: int, misere: bool, epsilon: float) -> Fraction:
    """The uniform-random player's chance to win Nim (one heap, takes 1..k) moving first
    against a player that takes a winning move (uniform among them; any move when none
    wins) and plays uniformly at random with probability `epsilon`. Exact, from the rules."""
    eps = Fraction(epsilon).limit_denominator(1000)

    def moves(h):
        return range(1, min(h, k) + 1)

    @cache
    def mover_wins(h):  # the solver's own table: does the player to move win?
        if h == 0:
            return misere  # at the end, the player to move wins only in misère play
        return any(not mover_wins(h - t) for t in moves(h))

    @cache
    def value(h, random_to_move):
        if h == 0:
            return Fraction(int(random_to_move == misere))
        if random_to_move:
            return sum(value(h - t, False) for t in moves(h)) / len(moves(h))
        uniform = sum(value(h - t, True) for t in moves(h)) / len(moves(h))
        best = [t for t in moves(h) if not mover_wins(h - t)] or list(moves(h))
        optimal = sum(value(h - t, True) for t in best) / len(best)
        return eps * uniform + (1 - eps) * optimal

    return value(heap, True)


@pytest.mark.parametrize(
    ("misere", "opponent", "epsilon"),
    [(False, "optimal", 0.0), (True, "optimal", 0.0), (False, "epsilon:0.5", 0.5),
     (False, "random", 1.0)],
)  # fmt: skip
def test_win_rate_chance_is_the_random_players_exact_win_probability(
    tmp_path, misere, opponent, epsilon
):
    heap, k = 10, 3
    config = TournamentConfig(
        games=[f'nim:{{"heaps":[{heap}],"max_take":{k},"misere":{json.dumps(misere)}}}'],
        method="random", opponent=opponent, episodes=30, start=f"[{heap}]",
        results_dir=str(tmp_path), **QUIET,
    )  # fmt: skip
    result = run_tournament(config)
    group = next(g for g in result.summary["groups"] if g["seat"] == "all")
    exact = _random_vs_solver(heap, k, misere, epsilon)
    assert group["chance_win_rate"] == pytest.approx(float(exact), abs=1e-12)
    # The random agent is chance itself: its distinct games' wins tested against it.
    assert group["distinct_episodes"] <= group["finished"]


def test_no_chance_row_against_a_model_opponent(tmp_path):
    result = run_tournament(
        _tournament(model="sim-optimal", opponent="react", opponent_model="sim-random",
                    episodes=2, results_dir=str(tmp_path))
    )  # fmt: skip
    for group in result.summary["groups"]:
        assert group["chance_win_rate"] is None and group["chance_p_value"] is None


def test_identical_episodes_are_said_and_counted_once(tmp_path):
    # Both sides always take the most they may: every episode from [9] is one game.
    config = _tournament(
        games=['nim:{"heaps":[9],"max_take":3}'], model="sim-biased:heuristic=max_take,p=1",
        opponent="react", opponent_model="sim-biased:heuristic=max_take,p=1",
        episodes=4, start="[9]", results_dir=str(tmp_path),
    )  # fmt: skip
    result = run_tournament(config)
    group = next(g for g in result.summary["groups"] if g["seat"] == "all")
    assert group["finished"] == 4 and group["distinct_episodes"] == 1
    assert "the 4 finished episodes are 1 distinct game" in result.report


def test_a_decision_without_an_answer_has_the_verdict_forfeit(tmp_path):
    for fault in ("malformed", "illegal"):
        result = run_evaluation(_evaluation(tmp_path / fault, f"sim-faulty:{fault}=1",
                                            repeats=1, keep_going=True))  # fmt: skip
        assert {r.verdict for r in result.records} == {"forfeit"}
        (row,) = result.summary["games"]
        assert row["verdict_forfeit"] == row["graded"] == 10


def _strict(text: str):
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_summaries_are_strict_json(tmp_path):
    # Every decision an infrastructure error: no rate has a denominator.
    config = _evaluation(tmp_path, "sim-faulty:http500=1", repeats=1, max_retries=0)
    result = run_evaluation(config)
    (row,) = result.summary["games"]
    assert math.isnan(row["accuracy_mean"])  # in memory, NaN
    written = _strict(result.log_path.with_suffix(".summary.json").read_text())
    assert written["games"][0]["accuracy_mean"] is None
    tournament = run_tournament(
        _tournament(model="sim-faulty:http500=1", max_retries=0, results_dir=str(tmp_path))
    )
    _strict(tournament.log_path.with_suffix(".summary.json").read_text())
