"""Ratings of a grid of simulated players of known strength: the docs example and a
coverage study.

Every pair of six players plays 120 episodes of one-heap NIM (31 stones, take 1 to 3,
the full heap for the first mover, seats alternating): the optimal and the uniformly
random player (the anchors), ε-optimal players at ε = 0.1 and 0.5, and simulated models
biased toward taking the most at p = 0.3 and 0.8 (`standard` at temperature 0.7, where
the simulator's p holds exactly). The expected ratings come from the exact win
probability of each pairing (a DP over heap sizes through the `Game` interface and the
solver) fitted as if observed without noise.

    python scripts/ratings_grid.py                       # docs/ratings.md's table and plot
    python scripts/ratings_grid.py --coverage 20         # 20 seeds: order and coverage
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
import warnings
from functools import cache
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from metanim.analysis.ratings import rate, ratings_plot
from metanim.arena import TournamentConfig, run_tournament
from metanim.games import PRESETS, make_game
from metanim.solver import winning_moves
from metanim.stats import PRIOR_SIGMA, fit_bradley_terry
from metanim.util import derive_seed

SETTING = "nim-31-k3"
EPISODES = 120
BIASED = "sim-biased:heuristic=max_take,p={p}"
#: (name, method, model or None, method params, (kind, strength) for the exact DP).
PLAYERS = [
    ("optimal", "optimal", None, {}, ("epsilon", 0.0)),
    ("random", "random", None, {}, ("epsilon", 1.0)),
    ("epsilon:0.1", "epsilon:0.1", None, {}, ("epsilon", 0.1)),
    ("epsilon:0.5", "epsilon:0.5", None, {}, ("epsilon", 0.5)),
    ("biased p=0.3", "standard", BIASED.format(p=0.3), {"temperature": 0.7}, ("biased", 0.3)),
    ("biased p=0.8", "standard", BIASED.format(p=0.8), {"temperature": 0.7}, ("biased", 0.8)),
]


def play_grid(folder: Path, seed: int) -> None:
    """Every pair of `PLAYERS` plays `EPISODES` episodes into `folder`, each pairing with
    its own seed (derived from the grid's): runs of one seed replay the same draws
    wherever a player reaches the same position, which correlates a player's results
    across its pairings and makes the intervals too narrow (docs/ratings.md)."""
    for number, ((_, ma, xa, pa, _), (_, mb, xb, pb, _)) in enumerate(combinations(PLAYERS, 2)):
        sides: dict[str, Any] = {"method": ma, "params": pa, "opponent": mb, "opponent_params": pb}
        sides |= {"model": xa} if xa else {}
        sides |= {"opponent_model": xb} if xb else {}
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore", UserWarning)  # the second seat starts lost
            run_tournament(
                TournamentConfig(
                    name=f"{ma}-{mb}".replace(":", ""), games=[SETTING], episodes=EPISODES,
                    seat="alternate", start="initial", seed=derive_seed(seed, "pairing", number),
                    results_dir=str(folder),
                    progress=False, record_decisions=False, **sides,
                )
            )  # fmt: skip


def _policy(game: Any, state: Any, kind: str, strength: float) -> dict[Any, float]:
    """A player's move distribution at `state`: the solver's uniform choice among winning
    moves (any move in a P-position), mixed with uniform moves (ε) or with the move that
    leaves the smallest heap (biased)."""
    moves = game.legal_moves(state)
    best = winning_moves(game, state) or moves
    out = {m: (1 - strength) * (m in best) / len(best) for m in moves}
    if kind == "epsilon":
        return {m: p + strength / len(moves) for m, p in out.items()}
    greedy = min(moves, key=lambda m: sum(game.apply(state, m)))
    out[greedy] += strength
    return out


def expected_ratings(sigma: float = PRIOR_SIGMA) -> dict[str, float]:
    """The ratings the fit gives the grid's exact win probabilities, observed without noise."""
    name, params = PRESETS[SETTING]
    game = make_game(name, **params)

    def first_wins(a: tuple[str, float], b: tuple[str, float]) -> float:
        @cache
        def to_move_wins(state: Any, a_moves: bool) -> float:
            if game.is_terminal(state):
                return 1.0 if game.mover_wins_at_terminal else 0.0
            policy = _policy(game, state, *(a if a_moves else b))
            return sum(p * (1 - to_move_wins(game.apply(state, m), not a_moves)) for m, p in policy.items())  # fmt: skip

        return to_move_wins(game.initial_state(), True)

    pairs = [(i, j) for i in range(len(PLAYERS)) for j in range(len(PLAYERS)) if i != j]
    first, second = np.array(pairs).T
    games = np.full(len(pairs), EPISODES / 2)
    wins = np.array([games[0] * first_wins(PLAYERS[i][4], PLAYERS[j][4]) for i, j in pairs])
    x = fit_bradley_terry(
        first, second, np.zeros(len(pairs), dtype=int), wins, games,
        players=len(PLAYERS), settings=1, prior_sigma=sigma,
    )  # fmt: skip
    theta = x[: len(PLAYERS)]
    return {
        p[0]: 1000 + 1000 * (theta[k] - theta[1]) / (theta[0] - theta[1])
        for k, p in enumerate(PLAYERS)
    }


def _rows(folder: Path, seed: int = 0) -> tuple[Any, dict[str, Any]]:
    ratings = rate([folder], seed=seed)
    (table,) = ratings.tables
    rows = {}
    for row in table.players:
        rows[next(n for n, m, x, _, _ in PLAYERS if row.player == m or (x and x in row.player))] = (
            row
        )
    return table, rows


def example(plot: Path) -> None:
    expected = expected_ratings()
    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        play_grid(Path(tmp), seed=0)
        played = time.perf_counter() - began
        table, rows = _rows(Path(tmp))
        ratings_plot(table, plot)
    print(f"grid played in {played:.1f} s; plot: {plot}\n")
    print("| player | kind | rating | 95% CI | expected | log-odds vs random | episodes | wins |")
    print("|---|---|---|---|---|---|---|---|")
    for row in table.players:
        name = next(n for n, r in rows.items() if r is row)
        print(
            f"| {name} (`{row.player}`) | {row.kind} | {row.rating:.0f} | [{row.low:.0f}, {row.high:.0f}] "
            f"| {expected[name]:.0f} | {row.logit:+.2f} | {row.episodes} | {row.wins} |"
        )
    (advantage,) = table.seat_advantage
    print(
        f"\nfirst seat's advantage {advantage.logit:+.2f} [{advantage.low:+.2f}, "
        f"{advantage.high:+.2f}] log-odds; anchors' gap {table.anchor_gap:.2f} log-odds"
    )


def coverage(seeds: int) -> None:
    expected = expected_ratings()
    order = sorted(expected, key=lambda n: -expected[n])
    covered = dict.fromkeys(expected, 0)
    exact = every = 0
    for seed in range(seeds):
        with tempfile.TemporaryDirectory() as tmp:
            play_grid(Path(tmp), seed=seed)
            _, rows = _rows(Path(tmp), seed=seed)
        in_order = sorted(rows, key=lambda n: -rows[n].rating) == order
        exact += in_order
        inside = {name: row.low <= expected[name] <= row.high for name, row in rows.items()}
        every += all(inside.values())
        for name, hit in inside.items():
            covered[name] += hit
        rated = [n for n in covered if n not in ("optimal", "random")]
        print(
            f"seed {seed}: order {'exact' if in_order else 'off'}; pooled coverage so far "
            f"{sum(covered[n] for n in rated)}/{len(rated) * (seed + 1)}; "
            + ", ".join(f"{n} {covered[n]}" for n in rated),
            file=sys.stderr,
        )
    print(
        f"{seeds} grids (seeds 0..{seeds - 1}): order recovered exactly in {exact}, "
        f"every expected rating inside its interval in {every}"
    )
    print("| player | expected | 95% CI covers it |")
    print("|---|---|---|")
    for name in order:
        print(f"| {name} | {expected[name]:.0f} | {covered[name]}/{seeds} |")
    rated = [n for n in order if n not in ("optimal", "random")]  # the anchors are fixed
    hits = sum(covered[n] for n in rated)
    print(f"pooled over the {len(rated)} rated players: {hits}/{len(rated) * seeds} "
          f"= {hits / (len(rated) * seeds):.3f}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plot", type=Path, default=Path("docs/img/ratings_grid.png"))
    ap.add_argument("--coverage", type=int, help="play this many seeds and count coverage")
    args = ap.parse_args()
    if args.coverage:
        coverage(args.coverage)
    else:
        example(args.plot)


if __name__ == "__main__":
    main()
