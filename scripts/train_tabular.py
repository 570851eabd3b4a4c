"""Tabular Q-learning (plain numpy) on a MetaNIM env: learns to beat the random opponent.

    python scripts/train_tabular.py --env MetaNIM/Nim-v0 --episodes 3000
    python scripts/train_tabular.py --env MetaNIM/Fibonacci-v0 --episodes 3000

The agent trains from random N-positions (the env's default start, which also
covers the state space) with masked epsilon-greedy exploration, then the
greedy policy and a uniformly random policy are evaluated on the same seeds.
The env's observation is the game's state index (`observation="index"`), the key
of the Q-table.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import gymnasium as gym
import numpy as np

import metanim  # noqa: F401  (registers the env ids)

#: Action values by state index (only the states visited: Kayles-20 has 2**20).
QTable = dict[int, np.ndarray]


def _greedy(q: QTable, obs: int, mask: np.ndarray) -> int:
    values = q.get(int(obs))
    legal = np.flatnonzero(mask)
    if values is None:
        return int(legal[0])
    return int(legal[np.argmax(values[legal])])


def train(
    env_id: str,
    episodes: int,
    *,
    opponent: str = "random",
    alpha: float = 0.5,
    epsilon: float = 0.2,
    seed: int = 0,
    **env_kwargs: Any,
) -> QTable:
    """Q-learning with terminal rewards ±1 and no discount (games are short and finite)."""
    env = gym.make(env_id, opponent=opponent, observation="index", **env_kwargs)
    n_actions = int(env.action_space.n)
    rng = np.random.default_rng(seed)
    q: QTable = {}
    obs, info = env.reset(seed=seed)
    for _ in range(episodes):
        terminated = False
        while not terminated:
            values = q.setdefault(int(obs), np.zeros(n_actions))
            mask = info["action_mask"]
            if rng.random() < epsilon:
                action = int(rng.choice(np.flatnonzero(mask)))
            else:
                action = _greedy(q, obs, mask)
            next_obs, reward, terminated, _, info = env.step(action)
            target = float(reward)
            if not terminated:
                nxt = q.setdefault(int(next_obs), np.zeros(n_actions))
                target += float(nxt[np.flatnonzero(info["action_mask"])].max())
            values[action] += alpha * (target - values[action])
            obs = next_obs
        obs, info = env.reset()
    env.close()
    return q


def win_rate(
    env_id: str,
    policy: str | QTable,
    episodes: int,
    *,
    opponent: str = "random",
    seed: int = 1000,
    **env_kwargs: Any,
) -> float:
    """Share of episodes won by `policy` (a Q-table, or "random") from the env's starts."""
    env = gym.make(env_id, opponent=opponent, observation="index", **env_kwargs)
    rng = np.random.default_rng(seed)
    wins = 0
    for episode in range(episodes):
        obs, info = env.reset(seed=seed + episode)
        terminated, reward = False, 0.0
        while not terminated:
            mask = info["action_mask"]
            if isinstance(policy, str):
                action = int(rng.choice(np.flatnonzero(mask)))
            else:
                action = _greedy(policy, obs, mask)
            obs, reward, terminated, _, info = env.step(action)
        wins += reward > 0
    env.close()
    return wins / episodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="MetaNIM/Nim-v0")
    parser.add_argument("--episodes", type=int, default=3000)
    parser.add_argument("--eval-episodes", type=int, default=500)
    parser.add_argument("--opponent", default="random")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    q = train(args.env, args.episodes, opponent=args.opponent, seed=args.seed)
    seconds = time.perf_counter() - start
    learned = win_rate(args.env, q, args.eval_episodes, opponent=args.opponent)
    baseline = win_rate(args.env, "random", args.eval_episodes, opponent=args.opponent)
    print(f"{args.env}: trained {args.episodes} episodes in {seconds:.1f} s, {len(q)} states")
    print(f"win rate vs {args.opponent} opponent: Q-learning {learned:.2f}, random {baseline:.2f}")


if __name__ == "__main__":
    main()
