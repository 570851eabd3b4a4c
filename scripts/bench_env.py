"""Env throughput: steps/s with the optimal opponent vs the random opponent, same run.

    python scripts/bench_env.py [--steps 20000]

The agent plays uniformly random legal actions (the same seeded sequence for
both opponents); only the time inside `step()` counts, since the optimal
opponent ends games sooner and counting resets would measure game length. The
ratio optimal/random shows what the solver adds to a step (target ≥ 0.5: the
solver costs at most as much as the rest of a step). When `open_spiel` is
installed, OpenSpiel's `nim` is timed in the same run through its Python API
next to the same game in this package (one heap of 31, unbounded take).
Writes the `env` section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import gymnasium as gym
import numpy as np

# scripts/ is on sys.path when this file runs, so the shared helpers import directly.
from _bench import machine, median_time, table, write_section

import metanim  # noqa: F401  (registers the env ids)

CASES: list[tuple[str, dict[str, Any]]] = [
    ("MetaNIM/Nim-v0", {"preset": "nim-31-k3"}),
    ("MetaNIM/Fibonacci-v0", {"preset": "fibonacci-20"}),
    ("MetaNIM/Kayles-v0", {"preset": "kayles-20"}),
    ("MetaNIM/Chomp-v0", {"preset": "chomp-5x5"}),
    ("MetaNIM/CornerQueen-v0", {"preset": "corner-queen"}),
    ("MetaNIM/Nim-v0", {"heaps": [31], "max_take": None}),
]


def env_steps(env_id: str, kwargs: dict[str, Any], opponent: str, steps: int) -> float:
    """Seconds spent inside `step()` for `steps` steps (median of 5 runs after a warmup).

    Resets are not counted: the optimal opponent ends games sooner, and counting
    resets would measure game length rather than what the solver adds to a step.
    """
    env = gym.make(env_id, opponent=opponent, **kwargs)
    picker = np.random.default_rng(0)
    _, info = env.reset(seed=0)

    def run() -> float:
        nonlocal info
        inside = 0.0
        for _ in range(steps):
            legal = np.flatnonzero(info["action_mask"])
            action = int(legal[int(picker.integers(len(legal)))])
            start = time.perf_counter()
            _, _, terminated, _, info = env.step(action)
            inside += time.perf_counter() - start
            if terminated:
                _, info = env.reset()
        return inside

    run()
    return statistics.median(run() for _ in range(5))


def openspiel_steps(steps: int) -> float | None:
    """Seconds for `steps` random moves of OpenSpiel's nim(31), or None if not installed."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("nim", {"pile_sizes": "31"})
    picker = np.random.default_rng(0)
    state = game.new_initial_state()

    def run() -> None:
        nonlocal state
        for _ in range(steps):
            legal = state.legal_actions()
            state.apply_action(legal[int(picker.integers(len(legal)))])
            if state.is_terminal():
                state = game.new_initial_state()

    return median_time(run, repeats=5, warmup=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()

    rows = []
    for env_id, kwargs in CASES:
        # Alternate the two opponents and keep each one's best median, so that load from
        # other processes on the machine hits both sides of the ratio alike.
        times: dict[str, list[float]] = {"optimal": [], "random": []}
        for _ in range(2):
            for opponent in times:
                times[opponent].append(env_steps(env_id, kwargs, opponent, args.steps))
        optimal = args.steps / min(times["optimal"])
        rand = args.steps / min(times["random"])
        config = ", ".join(f"{k}={v}" for k, v in kwargs.items())
        rows.append(
            [f"`{env_id}` ({config})", f"{optimal:,.0f}", f"{rand:,.0f}", f"{optimal / rand:.2f}"]
        )
        print(rows[-1], flush=True)

    spiel = openspiel_steps(args.steps)
    if spiel is None:
        spiel_text = "OpenSpiel (`open_spiel`) is not installed here, so it was not timed."
    else:
        ours = args.steps / env_steps("MetaNIM/Nim-v0", CASES[-1][1], "random", args.steps)
        spiel_rate = args.steps / spiel
        print("open_spiel nim", spiel_rate, "ours", ours)
        spiel_text = (
            "OpenSpiel's `nim` (pile_sizes=31) through its Python API, same run: "
            f"{spiel_rate:,.0f} moves/s (`legal_actions` + `apply_action`, one move per step). "
            f"`MetaNIM/Nim-v0` on the same game (heaps=[31], max_take=None, random opponent): "
            f"{ours:,.0f} steps/s, where one step is the agent's move, the opponent's reply, "
            "the action mask and the info dict, so about two OpenSpiel moves of work."
        )
    markdown = "\n\n".join(
        [
            "## Environments (`scripts/bench_env.py`)",
            f"Machine: {machine()}. {args.steps:,} `gym.make` env steps per timing (best of "
            "2 alternating medians of 5), random legal agent actions; time inside `step()` only (resets excluded). The ratio is optimal/random "
            "opponent in the same run (target ≥ 0.5). It can exceed 1: the env memoizes the "
            "solver's answers per state, so an optimal reply is a dict lookup (cheaper than "
            "listing legal moves), and the two opponents give games of different lengths.",
            table(["env", "optimal opp. steps/s", "random opp. steps/s", "ratio"], rows),
            spiel_text,
        ]
    )
    if not args.no_write:
        write_section("env", markdown)
    print(markdown)


if __name__ == "__main__":
    main()
