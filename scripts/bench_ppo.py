"""MaskablePPO learning NIM against the optimal opponent: raw vs onehot vs binary observations.

    pip install -e '.[rl]'   # sb3-contrib, stable-baselines3, torch (CPU wheel is enough)
    python scripts/bench_ppo.py [--steps 30000] [--seeds 0] [--episodes 200]

The numbers in docs/ come from `--seeds 0 1`: six training runs of about 60 s
of CPU each on this 2-core machine (17 min wall while others shared it); the
default one seed takes half that.

For each observation encoding and seed, sb3-contrib's MaskablePPO (default
hyper-parameters, `MlpPolicy`, one torch thread) trains on `MetaNIM/Nim-v0`
(one heap of 31, take 1 to 3) against the optimal opponent for `--steps` agent
steps. It is then scored greedily (`deterministic=True`, masked) on the same
`--episodes` seeded starts: random N-positions, so a perfect policy wins every
episode and one mistake loses it. The reference measured in the same run is a
uniformly random legal policy on the same starts. Win rates carry a Wilson 95%
interval (scipy). Writes the `ppo` section of docs/benchmarks.md and the
`results` section of docs/maskable_ppo.md. `--cost-only` instead times env
steps per encoding against raw (the `obs_encodings` section; no torch needed).
"""

from __future__ import annotations

import argparse
import os
import re
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

# scripts/ is on sys.path when this file runs, so the shared helpers import directly.
from _bench import machine, random_steps, table, write_section

import metanim  # noqa: F401  (registers the env ids)

ENV_ID = "MetaNIM/Nim-v0"
PPO_DOC = Path(__file__).resolve().parent.parent / "docs" / "maskable_ppo.md"


def _require_rl() -> Any:
    try:
        import sb3_contrib
        import torch
    except ImportError as exc:  # an optional extra: say how to get it
        raise SystemExit(
            f"bench_ppo needs the rl extra ({exc.name} is missing): pip install -e '.[rl]'"
        ) from exc
    return sb3_contrib, torch


def evaluate(env: gym.Env[Any, Any], policy: Any, episodes: int) -> int:
    """Wins of `policy(obs, mask) -> action` over `episodes` seeded starts."""
    wins = 0
    for episode in range(episodes):
        obs, _ = env.reset(seed=10_000 + episode)
        terminated = False
        reward = 0.0
        while not terminated:
            mask = env.unwrapped.action_masks()
            obs, reward, terminated, _, _ = env.step(int(policy(obs, mask)))
        wins += reward > 0
    return wins


def wilson(wins: int, n: int) -> tuple[float, float]:
    from scipy.stats import binomtest

    ci = binomtest(wins, n).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


def train_and_score(observation: str, seed: int, steps: int, episodes: int) -> dict[str, Any]:
    sb3_contrib, torch = _require_rl()
    torch.manual_seed(seed)
    env = gym.make(ENV_ID, opponent="optimal", observation=observation)
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, seed=seed, verbose=0, device="cpu")
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=steps)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu

    def greedy(obs: np.ndarray, mask: np.ndarray) -> int:
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        return int(action)

    test_env = gym.make(ENV_ID, opponent="optimal", observation=observation)
    wins = evaluate(test_env, greedy, episodes)
    return {"observation": observation, "seed": seed, "wins": wins, "wall": wall, "cpu": cpu}


def random_reference(episodes: int, seed: int) -> int:
    picker = np.random.default_rng(seed)
    env = gym.make(ENV_ID, opponent="optimal")
    return evaluate(env, lambda obs, mask: picker.choice(np.flatnonzero(mask)), episodes)


def step_rates(steps: int) -> list[list[Any]]:
    """Env steps/s per encoding for every registered id, the raw env as the reference.

    Random legal actions (the same seeded sequence for each encoding), time inside
    `step()` only; the encodings alternate and each keeps its best of 5 passes, so
    load from other jobs on the machine hits all alike.
    """
    from metanim.envs import ENV_IDS

    kinds = ("raw", "onehot", "binary")
    rows = []
    for env_id in ENV_IDS:
        best = dict.fromkeys(kinds, float("inf"))
        for _ in range(5):
            for kind in kinds:
                env = gym.make(env_id, observation=kind)
                picker = np.random.default_rng(0)
                _, info = env.reset(seed=0)
                inside, _ = random_steps(env, info, steps, picker)
                best[kind] = min(best[kind], inside)
        rate = {kind: steps / best[kind] for kind in kinds}
        size = {kind: gym.make(env_id, observation=kind).observation_space.shape for kind in kinds}
        rows.append(
            [f"`{env_id}`"]
            + [f"{rate['raw']:,.0f}"]
            + [
                f"{rate[k]:,.0f} ({rate[k] / rate['raw']:.2f}x), {size[k][0]} features"
                for k in ("onehot", "binary")
            ]
        )
    return rows


def encoding_cost(steps: int, write: bool) -> None:
    rows = step_rates(steps)
    load = os.getloadavg()[0]  # other jobs on the machine make the ratios noisy; say how busy
    section = (
        "## Observation encodings: env step cost (`scripts/bench_ppo.py --cost-only`)\n\n"
        f"Machine: {machine()}. `python scripts/bench_ppo.py --cost-only --cost-steps {steps}`: "
        "steps/s of each registered id with `observation=` raw (the reference), onehot and "
        f"binary, {steps:,} random legal steps each, time inside `step()` only, best of 5 "
        "alternating passes; the ratio is against raw in the same run. A single observation's "
        "encoding is memoized per env (up to 65,536 distinct observations). Load average "
        f"at the end: {load:.1f} on {os.cpu_count()} cores, so ratios are noisy.\n\n"
        + table(["id", "raw steps/s", "onehot steps/s (vs raw)", "binary steps/s (vs raw)"], rows)
        + "\n"
    )
    print(section)
    if write:
        write_section("obs_encodings", section)


def replace_section(path: Path, name: str, markdown: str) -> None:
    """Replace (or append) the marked section `name` of a Markdown file."""
    text = path.read_text()
    start, end = f"<!-- bench:{name}:start -->", f"<!-- bench:{name}:end -->"
    block = f"{start}\n{markdown.strip()}\n{end}"
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30_000, help="training steps per run")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--episodes", type=int, default=200, help="evaluation episodes")
    parser.add_argument(
        "--observations", nargs="+", default=["raw", "onehot", "binary"], help="encodings"
    )
    parser.add_argument("--no-write", action="store_true", help="print only, leave docs alone")
    parser.add_argument(
        "--cost-only",
        action="store_true",
        help="only time env steps per encoding (no torch needed)",
    )
    parser.add_argument("--cost-steps", type=int, default=5_000)
    args = parser.parse_args()
    if args.cost_only:
        encoding_cost(args.cost_steps, write=not args.no_write)
        return
    _, torch = _require_rl()
    torch.set_num_threads(1)  # the machine is shared; PPO on a 64x64 MLP gains little more

    ref_wins = random_reference(args.episodes, seed=0)
    ref_rate = ref_wins / args.episodes
    results = []
    for observation in args.observations:
        for seed in args.seeds:
            result = train_and_score(observation, seed, args.steps, args.episodes)
            results.append(result)
            print(
                f"{observation:7s} seed {seed}: win rate {result['wins'] / args.episodes:.3f} "
                f"({result['wall']:.0f} s wall, {result['cpu']:.0f} s CPU)",
                flush=True,
            )
    print(f"random legal policy: win rate {ref_rate:.3f}")

    raw_rates = [r["wins"] / args.episodes for r in results if r["observation"] == "raw"]
    raw_mean = float(np.mean(raw_rates)) if raw_rates else float("nan")
    rows = []
    for r in results:
        rate = r["wins"] / args.episodes
        low, high = wilson(r["wins"], args.episodes)
        rows.append(
            [
                f"`{r['observation']}`",
                r["seed"],
                f"{rate:.3f} [{low:.3f}, {high:.3f}]",
                f"{rate / ref_rate:.1f}x" if ref_rate else "n/a",
                f"{rate / raw_mean:.1f}x" if raw_mean else "n/a",
                f"{args.steps / r['wall']:,.0f}",
            ]
        )
    low, high = wilson(ref_wins, args.episodes)
    rows.append(
        ["random legal policy", "-", f"{ref_rate:.3f} [{low:.3f}, {high:.3f}]", "1.0x", "", ""]
    )
    body = table(
        [
            "observation",
            "seed",
            "win rate [Wilson 95%]",
            "vs random policy",
            "vs raw (mean)",
            "train steps/s",
        ],
        rows,
    )
    command = (
        f"python scripts/bench_ppo.py --steps {args.steps} "
        f"--seeds {' '.join(map(str, args.seeds))} --episodes {args.episodes}"
    )
    if args.observations != ["raw", "onehot", "binary"]:
        command += f" --observations {' '.join(args.observations)}"
    import sb3_contrib

    setup = (
        f"Machine: {machine()}, torch {torch.__version__} (1 thread), sb3-contrib "
        f"{sb3_contrib.__version__}. `{command}`: MaskablePPO (default hyper-parameters, "
        f"`MlpPolicy`) trained {args.steps:,} agent steps on `{ENV_ID}` (one heap of 31, take "
        "1-3) against the optimal opponent, then played greedily (masked, deterministic) on "
        f"{args.episodes} seeded random N-positions against the optimal opponent (a perfect "
        "policy wins them all). Reference in the same run: a uniformly random legal policy on "
        "the same starts. Train steps/s is wall time on the shared 2-core machine (noisy)."
    )
    section = f"## MaskablePPO on NIM (`scripts/bench_ppo.py`)\n\n{setup}\n\n{body}\n"
    print(section)
    if not args.no_write:
        write_section("ppo", section)
        replace_section(PPO_DOC, "results", section.replace("## ", "### Measured: ", 1))


if __name__ == "__main__":
    main()
