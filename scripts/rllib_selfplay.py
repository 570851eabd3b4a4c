"""Self-play with RLlib's multi-agent PPO over the PettingZoo view.

One shared policy plays both seats of a MetaNIM game; afterwards it plays `--games`
games against a uniformly random legal player from each seat, next to random-vs-random
as the baseline. Illegal actions end the game with -1 for their player (PettingZoo's
TerminateIllegalWrapper, applied by `env()`), so the policy learns the rules as well.
Prints one line per iteration (the mean self-play return of each seat and the wall
time so far) and a JSON report; exits non-zero if training produced no episodes.

Needs ray[rllib] and CPU torch in their own environment (ray pins its own Gymnasium):

    python -m venv .venv-ray
    .venv-ray/bin/pip install torch==2.13.0 'ray[rllib]' -e '.[pettingzoo]'
    .venv-ray/bin/python scripts/rllib_selfplay.py --game nim --heaps 7 --iterations 20

`.ci/run` runs the smoke setting (`--smoke`: NIM 7, SMOKE_ITERATIONS iterations of
SMOKE_BATCH steps, 100 games per seat) in such an environment.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import numpy as np

#: The CI smoke run: iterations and steps per iteration (train batch).
SMOKE_ITERATIONS = 6
SMOKE_BATCH = 500


def env_params(args: argparse.Namespace) -> dict[str, Any]:
    if args.game == "nim":
        return {"heaps": args.heaps, "max_take": args.max_take, "start": "initial"}
    return {"start": "initial"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="nim", help="nim, fibonacci, kayles, chomp, corner_queen")
    parser.add_argument("--heaps", type=int, nargs="+", default=[7], help="NIM heap sizes")
    parser.add_argument("--max-take", type=int, default=3, help="NIM maximum take")
    parser.add_argument("--iterations", type=int, default=20, help="PPO training iterations")
    parser.add_argument("--games", type=int, default=200, help="evaluation games per seat")
    parser.add_argument("--batch", type=int, default=2000, help="agent steps per iteration")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"CI's setting: NIM 7, {SMOKE_ITERATIONS} iterations of {SMOKE_BATCH} steps, "
        "100 games per seat",
    )
    args = parser.parse_args()
    if args.smoke:
        args.game, args.heaps, args.max_take = "nim", [7], 3
        args.iterations, args.batch, args.games = SMOKE_ITERATIONS, SMOKE_BATCH, 100
    began = time.perf_counter()

    import ray
    import torch
    from pettingzoo.utils.env_logger import EnvLogger
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.connectors.env_to_module import FlattenObservations
    from ray.rllib.core.columns import Columns
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.tune.registry import register_env

    from metanim.envs.pettingzoo import MODULES

    EnvLogger.suppress_output()  # one "illegal move" warning per early episode is noise here
    params = env_params(args)
    register_env("metanim", lambda cfg: PettingZooEnv(MODULES[args.game].env(**params)))
    config = (
        PPOConfig()
        .environment("metanim")
        .env_runners(
            num_env_runners=0,
            # The Dict observation (board + action mask) as one flat vector.
            env_to_module_connector=lambda env, spaces=None, device=None: FlattenObservations(
                multi_agent=True
            ),
        )
        .multi_agent(
            # Self-play: both seats map to the one trained policy.
            policies={"shared"},
            policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared",
        )
        .training(lr=3e-4, train_batch_size_per_learner=args.batch, num_epochs=5)
        .debugging(seed=args.seed)
    )
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    algo = config.build_algo()
    curve = []
    for iteration in range(args.iterations):
        result = algo.train()
        returns = result.get("env_runners", {}).get("agent_episode_returns_mean", {})
        seats = {seat: round(float(value), 3) for seat, value in sorted(returns.items())}
        curve.append(seats)
        print(
            f"iteration {iteration + 1}: mean return per seat {seats} "
            f"({time.perf_counter() - began:.0f} s)",
            flush=True,
        )
    module = algo.get_module("shared")

    def flat(obs: dict[str, np.ndarray]) -> np.ndarray:
        # FlattenObservations orders Dict keys alphabetically: action_mask, observation.
        return np.concatenate([obs["action_mask"].ravel(), obs["observation"].ravel()])

    def trained(obs: dict[str, np.ndarray], rng: np.random.Generator) -> int:
        batch = {Columns.OBS: torch.as_tensor(flat(obs)[None], dtype=torch.float32)}
        logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0].detach().numpy()
        logits = np.where(obs["action_mask"] > 0, logits, -np.inf)  # greedy among legal moves
        return int(np.argmax(logits))

    def random_player(obs: dict[str, np.ndarray], rng: np.random.Generator) -> int:
        return int(rng.choice(np.flatnonzero(obs["action_mask"])))

    def win_rate(first: Any, second: Any, seat: str) -> float:
        rng = np.random.default_rng(args.seed)
        wins = 0
        for game in range(args.games):
            aec = MODULES[args.game].env(**params)
            aec.reset(seed=args.seed + game)
            players = {"player_0": first, "player_1": second}
            totals = {"player_0": 0.0, "player_1": 0.0}
            for agent in aec.agent_iter():
                obs, reward, terminated, truncated, _ = aec.last()
                totals[agent] += reward
                aec.step(None if terminated or truncated else players[agent](obs, rng))
            wins += totals[seat] > 0
        return wins / args.games

    report = {
        "game": args.game,
        "params": params,
        "iterations": args.iterations,
        "steps_per_iteration": args.batch,
        "curve": curve,
        "trained_first_vs_random": win_rate(trained, random_player, "player_0"),
        "trained_second_vs_random": win_rate(random_player, trained, "player_1"),
        "random_first_vs_random": win_rate(random_player, random_player, "player_0"),
    }
    report["wall_s"] = round(time.perf_counter() - began, 1)
    print(json.dumps(report, indent=2))
    algo.stop()
    ray.shutdown()
    if not curve or not all(curve):
        sys.exit("no self-play episode finished in some iteration")


if __name__ == "__main__":
    main()
