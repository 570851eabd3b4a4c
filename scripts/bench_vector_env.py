"""Batched env throughput: `ImpartialGameVectorEnv` against NumPy batched references of
NIM, Fibonacci Nim and Kayles at several B, the single env, and OpenSpiel's nim.

    python scripts/bench_vector_env.py [--sizes 256 4096 65536 262144] [--repeats 5]

One agent step is the agent's move, the opponent's reply, the reward, the flags, the
next action masks and the autoreset of finished boards. The agent plays uniformly
random legal actions, drawn outside the timed region from the returned masks; only
the time inside `step()` counts. Every comparison is interleaved in one run, min of
several repeats. Writes the `env-vector` section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import gymnasium as gym
import numpy as np

# scripts/ is on sys.path when this file runs, so the shared helpers import directly.
from _bench import machine, table, write_section

import metanim  # noqa: F401  (registers the env ids)

CASES: list[tuple[str, dict[str, Any]]] = [
    ("MetaNIM/Nim-v0", {"preset": "nim-31-k3"}),
    ("MetaNIM/Nim-v0", {"preset": "nim-31-k3", "start": "initial"}),
    ("MetaNIM/Nim-v0", {"heaps": [31], "max_take": None, "start": "initial"}),
    # OpenSpiel's nim game and reply policy (random), for the comparison below.
    ("MetaNIM/Nim-v0", {"heaps": [31], "max_take": None, "start": "initial", "opponent": "random"}),
    ("MetaNIM/Fibonacci-v0", {"preset": "fibonacci-20"}),
    ("MetaNIM/Kayles-v0", {"preset": "kayles-2rows"}),
    # Kayles of at most 24 pins runs on bit masks: every one of the 2**20 subsets is a state.
    ("MetaNIM/Kayles-v0", {"preset": "kayles-20"}),
    ("MetaNIM/Kayles-v0", {"preset": "kayles-20", "misere": True}),
    ("MetaNIM/Chomp-v0", {"preset": "chomp-5x5"}),
    ("MetaNIM/CornerQueen-v0", {"preset": "corner-queen"}),
    # Encoded observations (the single env's `observation=` option) on both paths.
    ("MetaNIM/Nim-v0", {"preset": "nim-31-k3", "observation": "onehot"}),
    ("MetaNIM/Kayles-v0", {"preset": "kayles-20", "observation": "onehot"}),
]


def pick(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of a (B, A) mask."""
    return np.argmax(mask * rng.random(mask.shape), axis=1)


def time_vector(env: Any, calls: int, num_envs: int) -> float:
    """Agent steps/s inside `env.step()` over `calls` calls (after a warm-up call)."""
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(pick(info["action_mask"], rng))  # compiles / warms up
    inside = 0.0
    for _ in range(calls):
        actions = pick(info["action_mask"], rng)
        start = time.perf_counter()
        _, _, _, _, info = env.step(actions)
        inside += time.perf_counter() - start
    return calls * num_envs / inside


class NumpyNim:
    """A plain NumPy batched NIM (one heap, take 1..k, normal play, start at `heap`).

    The optimal opponent is the closed form (take heap mod (k+1) when that is not 0,
    else a random legal take); finished boards restart at once. Returns what the
    batched env returns: observations, rewards, flags and the (B, k) int8 masks.
    """

    def __init__(self, num_envs: int, heap: int, k: int, seed: int = 0) -> None:
        self.heap, self.k = heap, k
        self.rng = np.random.default_rng(seed)
        self.h = np.full(num_envs, heap, np.int64)
        self.takes = np.arange(1, k + 1)

    def masks(self) -> np.ndarray:
        return (self.takes[None, :] <= self.h[:, None]).astype(np.int8)

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        self.h[:] = self.heap
        return self.h[:, None].copy(), {"action_mask": self.masks()}

    def step(self, actions: np.ndarray) -> tuple[Any, ...]:
        take = actions + 1
        illegal = take > self.h
        h = np.where(illegal, self.h, self.h - take)
        agent_won = ~illegal & (h == 0)
        win = h % (self.k + 1)
        rand = 1 + (self.rng.random(h.shape) * np.minimum(self.k, np.maximum(h, 1))).astype(
            np.int64
        )
        reply = np.where(win > 0, win, rand)
        moving = ~illegal & ~agent_won
        h = np.where(moving, h - reply, h)
        opp_won = moving & (h == 0)
        done = illegal | agent_won | opp_won
        rewards = np.where(agent_won, 1.0, np.where(done, -1.0, 0.0))
        final = h[:, None].copy()
        self.h = np.where(done, self.heap, h)
        info = {"action_mask": self.masks(), "final_obs": final, "_final_obs": done}
        return self.h[:, None].copy(), rewards, done, np.zeros_like(done), info


class ClosedFormNim:
    """The 30-line NumPy batched NIM: one heap, take 1..k, normal play, restart at `heap`.

    The optimal opponent by the closed form (take heap mod (k+1); a random take from a
    P-position, drawn only for those boards); masks are rows of a (k+1, k) table picked
    by min(heap, k). Returns what the batched env returns.
    """

    def __init__(self, num_envs: int, heap: int, k: int, seed: int = 0) -> None:
        self.start, self.k = heap, k
        self.h = np.full(num_envs, heap, np.int64)
        self.rng = np.random.default_rng(seed)
        self.masks = (np.arange(k)[None, :] < np.arange(k + 1)[:, None]).astype(np.int8)

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        self.h[:] = self.start
        return self.h[:, None].copy(), {"action_mask": self.masks[np.minimum(self.h, self.k)]}

    def step(self, actions: np.ndarray) -> tuple[Any, ...]:
        h = self.h - (actions + 1)
        illegal = (h < 0) | (actions >= self.k)
        agent_won = ~illegal & (h == 0)
        reply = h % (self.k + 1)
        stuck = ~illegal & (reply == 0) & (h > 0)  # a P-position: any take
        reply[stuck] = 1 + self.rng.integers(np.minimum(h[stuck], self.k))
        after = h - reply
        opp_won = ~illegal & ~agent_won & (after == 0)
        done = illegal | agent_won | opp_won
        final = np.where(illegal, self.h, np.where(agent_won, 0, after))
        rewards = np.where(agent_won, 1.0, -1.0 * done)
        self.h = np.where(done, self.start, after)
        info = {"action_mask": self.masks[np.minimum(self.h, self.k)],
                "final_obs": final[:, None], "_final_obs": done}  # fmt: skip
        return self.h[:, None].copy(), rewards, done, np.zeros_like(done), info


class NumpyFibonacci:
    """NumPy batched Fibonacci Nim: `n` stones, normal play, restart at `n`.

    A take of x (action x - 1) leaves (remaining - x, min(2x, remaining - x)). The
    opponent takes the smallest winning take of a (remaining, max take) table filled by
    a plain-Python pass before timing, else a random legal take. Returns what the batched
    env returns ([remaining, max take] observations, int8 masks).
    """

    def __init__(self, num_envs: int, n: int, seed: int = 0) -> None:
        self.n = n
        self.win = np.zeros((n + 1, n + 1), np.int64)  # smallest winning take, 0: none
        for rest in range(1, n + 1):
            for cap in range(1, n + 1):
                for x in range(1, min(cap, rest) + 1):
                    if rest == x or self.win[rest - x, min(2 * x, rest - x)] == 0:
                        self.win[rest, cap] = x
                        break
        self.rng = np.random.default_rng(seed)
        self.rest = np.full(num_envs, n, np.int64)
        self.cap = np.full(num_envs, n - 1, np.int64)
        self.takes = np.arange(1, n)

    def _out(self) -> tuple[np.ndarray, np.ndarray]:
        mask = (self.takes[None, :] <= self.cap[:, None]).astype(np.int8)
        return np.stack([self.rest, self.cap], axis=1), mask

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        self.rest[:], self.cap[:] = self.n, self.n - 1
        obs, mask = self._out()
        return obs, {"action_mask": mask}

    def step(self, actions: np.ndarray) -> tuple[Any, ...]:
        x = actions + 1
        illegal = x > self.cap
        rest = np.where(illegal, self.rest, self.rest - x)
        cap = np.where(illegal, self.cap, np.minimum(2 * x, rest))
        agent_won = ~illegal & (rest == 0)
        moving = ~illegal & ~agent_won
        reply = self.win[rest, cap]
        stuck = moving & (reply == 0)  # a P-position: any take
        reply[stuck] = 1 + self.rng.integers(cap[stuck])
        after = np.where(moving, rest - reply, rest)
        cap = np.where(moving, np.minimum(2 * reply, after), cap)
        done = illegal | agent_won | (moving & (after == 0))
        final = np.stack([after, cap], axis=1)
        rewards = np.where(agent_won, 1.0, -1.0 * done)
        self.rest = np.where(done, self.n, after)
        self.cap = np.where(done, self.n - 1, cap)
        obs, mask = self._out()
        info = {"action_mask": mask, "final_obs": final, "_final_obs": done}
        return obs, rewards, done, np.zeros_like(done), info


class NumpyKayles:
    """NumPy batched Kayles on bit masks: one row of `pins`, normal play, restart full.

    Action 2i knocks pin i, 2i + 1 pins i and i + 1. The outcome of every mask comes
    from a NumPy pass by pin count before timing (a move removes pins, so a child is
    solved first); the opponent plays a random winning move (to a P-position), else a
    random legal one. Masks and observations are bit tests over all actions and pins.
    """

    def __init__(self, num_envs: int, pins: int, seed: int = 0) -> None:
        bits = np.arange(pins)
        self.clears = np.zeros(2 * pins, np.int64)
        self.clears[0::2] = 1 << bits
        self.clears[1:-1:2] = 3 << bits[:-1]
        self.some, self.full, self.bits = self.clears != 0, (1 << pins) - 1, bits
        masks = np.arange(1 << pins)
        count = np.unpackbits(masks.astype(">u4").view(np.uint8).reshape(-1, 4), axis=1).sum(1)
        self.wins = np.zeros(1 << pins, bool)  # the empty row: a P-position
        for n in range(1, pins + 1):
            at = masks[count == n]
            ok = self._legal(at)
            self.wins[at] = (ok & ~self.wins[np.where(ok, at[:, None] ^ self.clears, 0)]).any(1)
        self.rng = np.random.default_rng(seed)
        self.m = np.full(num_envs, self.full, np.int64)

    def _legal(self, m: np.ndarray) -> np.ndarray:
        return self.some & ((m[:, None] & self.clears) == self.clears)

    def _obs(self, m: np.ndarray) -> np.ndarray:
        return ((m[:, None] >> self.bits) & 1)[:, None, :]  # (B, 1 row, pins), as the env

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        self.m[:] = self.full
        return self._obs(self.m), {"action_mask": self._legal(self.m).astype(np.int8)}

    def step(self, actions: np.ndarray) -> tuple[Any, ...]:
        c = self.clears[actions]
        legal = (c != 0) & ((self.m & c) == c)
        m = np.where(legal, self.m ^ c, self.m)
        agent_won = legal & (m == 0)
        moving = legal & ~agent_won
        ok = self._legal(m)
        good = ok & ~self.wins[np.where(ok, m[:, None] ^ self.clears, 0)]
        pick = np.where(good.any(1)[:, None], good, ok)  # winning moves, else legal ones
        reply = self.clears[np.argmax(pick * self.rng.random(pick.shape), axis=1)]
        after = np.where(moving, m ^ reply, m)
        done = ~legal | agent_won | (moving & (after == 0))
        rewards = np.where(agent_won, 1.0, -1.0 * done)
        final = self._obs(after)
        self.m = np.where(done, self.full, after)
        info = {"action_mask": self._legal(self.m).astype(np.int8), "final_obs": final,
                "_final_obs": done}  # fmt: skip
        return self._obs(self.m), rewards, done, np.zeros_like(done), info


def states_text(env: Any) -> str:
    """The env's state count: tabled states, or the outcome table of the Kayles bit path."""
    if env.tables is not None:
        return f"{len(env.tables.states):,}"
    return f"{env.kayles.outcome.size:,} (bit masks)"


def time_single(env_id: str, kwargs: dict[str, Any], steps: int = 5000) -> float:
    """Single-env agent steps/s inside `step()` (random legal actions)."""
    env = gym.make(env_id, **kwargs)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    inside = 0.0
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        action = int(legal[rng.integers(len(legal))])
        start = time.perf_counter()
        _, _, terminated, _, info = env.step(action)
        inside += time.perf_counter() - start
        if terminated:
            _, info = env.reset()
    return steps / inside


def time_openspiel(steps: int = 20_000) -> float | None:
    """OpenSpiel nim(31) agent steps/s (two moves: the agent's and a random reply)."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("nim", {"pile_sizes": "31"})
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    start = time.perf_counter()
    for _ in range(steps):
        for _ in range(2):
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
            if state.is_terminal():
                state = game.new_initial_state()
                break
    return steps / (time.perf_counter() - start)


#: The NumPy comparisons: (name, env id, kwargs, reference factory of B). The env runs
#: the reference's setting: its start, its rules, the optimal opponent.
VERSUS: list[tuple[str, str, dict[str, Any], Any]] = [
    ("NIM, one heap of 31, take 1-3", "MetaNIM/Nim-v0", {"preset": "nim-31-k3", "start": "initial"},
     lambda b: ClosedFormNim(b, 31, 3)),
    ("Fibonacci Nim, 20 stones", "MetaNIM/Fibonacci-v0",
     {"preset": "fibonacci-20", "start": "initial"}, lambda b: NumpyFibonacci(b, 20)),
    ("Kayles, one row of 20 pins", "MetaNIM/Kayles-v0", {"preset": "kayles-20", "start": "initial"},
     lambda b: NumpyKayles(b, 20)),
]  # fmt: skip


def step_bytes(env: Any) -> int:
    """Bytes one board-step must move at least: the action read, and the observation,
    mask, reward and two flags written."""
    obs = env.single_observation_space
    return 8 + int(np.prod(obs.shape)) * obs.dtype.itemsize + env.single_action_space.n + 8 + 2


def copy_bandwidth(size: int = 64 << 20, repeats: int = 5) -> float:
    """This machine's memory bandwidth for one core, bytes/s: a large array copied (read
    and written), best of `repeats`."""
    src, dst = np.ones(size, np.uint8), np.empty(size, np.uint8)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - start)
    return 2 * size / best


def versus_rows(sizes: list[int], repeats: int, work: int, bandwidth: float) -> list[str]:
    """One table per NumPy comparison: ns per board-step of the env (one thread and two)
    and of its NumPy reference at each B, min of `repeats` interleaved timings."""
    out = []
    for name, env_id, kwargs, make_reference in VERSUS:
        rows = []
        for batch in sizes:
            calls = max(20, work // batch)
            envs = {
                "ours": gym.make_vec(env_id, num_envs=batch, **kwargs),
                "ours, 2 threads": gym.make_vec(env_id, num_envs=batch, num_threads=2, **kwargs),
                "numpy": make_reference(batch),
            }
            best = dict.fromkeys(envs, 0.0)
            for _ in range(repeats):  # interleaved: load from other jobs hits every side
                for key, env in envs.items():
                    best[key] = max(best[key], time_vector(env, calls, batch))
            ns = {key: 1e9 / rate for key, rate in best.items()}
            moved = step_bytes(envs["ours"])
            rows.append([f"{batch:,}", f"{ns['ours']:.1f}", f"{ns['ours, 2 threads']:.1f}",
                         f"{ns['numpy']:.1f}", f"{ns['numpy'] / ns['ours']:.2f}",
                         f"{ns['numpy'] / ns['ours, 2 threads']:.2f}", str(moved),
                         f"{moved / bandwidth * 1e9:.2f}"])  # fmt: skip
            print(name, rows[-1], flush=True)
        out += [
            f"**{name}** (`{env_id}`, {', '.join(f'{k}={v}' for k, v in kwargs.items())}; "
            "optimal opponent):",
            table(
                [
                    "B",
                    "ours ns/board-step",
                    "ours, 2 threads",
                    "NumPy ns/board-step",
                    "NumPy/ours",
                    "NumPy/ours, 2 threads",
                    "bytes/board-step",
                    "bandwidth floor ns",
                ],
                rows,
            ),
        ]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=1024, help="B of the all-games table")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 4096, 65536, 262144],
                        help="B of the NumPy comparisons")  # fmt: skip
    parser.add_argument("--repeats", type=int, default=5, help="interleaved timings, min")
    parser.add_argument("--work", type=int, default=2_000_000,
                        help="board-steps per timing of a NumPy comparison")  # fmt: skip
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    batch = args.num_envs

    load = os.getloadavg()  # the 2 cores are shared: say how busy they were
    bandwidth = copy_bandwidth()
    versus = versus_rows(args.sizes, args.repeats, args.work, bandwidth)
    rows = []
    for env_id, kwargs in CASES:
        vec = gym.make_vec(env_id, num_envs=batch, vectorization_mode="vector_entry_point",
                           **kwargs)  # fmt: skip
        # Best of 2 alternating timings, so that load from other processes hits both.
        fast, single = 0.0, 0.0
        for _ in range(2):
            fast = max(fast, time_vector(vec, args.calls, batch))
            single = max(single, time_single(env_id, kwargs))
        config = ", ".join(f"{k}={v}" for k, v in kwargs.items())
        rows.append([f"`{env_id}` ({config})", states_text(vec.unwrapped), f"{fast:,.0f}",
                     f"{single:,.0f}", f"{fast / single:,.0f}x"])  # fmt: skip
        print(rows[-1], flush=True)
    closed = ClosedFormNim(batch, 31, 3)
    project = NumpyNim(batch, 31, 3)
    ours = gym.make_vec("MetaNIM/Nim-v0", num_envs=batch, preset="nim-31-k3", start="initial")
    nim = dict.fromkeys(["ours", "closed", "project"], 0.0)
    for _ in range(args.repeats):
        for key, env in (("ours", ours), ("closed", closed), ("project", project)):
            nim[key] = max(nim[key], time_vector(env, args.calls, batch))
    spiel = time_openspiel()
    spiel_text = (
        "OpenSpiel (`open_spiel`) is not installed here, so it was not timed."
        if spiel is None
        else f"OpenSpiel's `nim` (pile_sizes=31) through its Python API, one state at a time "
        f"(it has no batched API), same run: {spiel:,.0f} agent steps/s (the agent's "
        "`apply_action` and a random reply, with `legal_actions` before each); the batched "
        "env on the same game with the same random reply (`heaps=[31], max_take=None, "
        "start=initial, opponent=random` row above) is "
        f"{float(rows[3][2].replace(',', '')) / spiel:,.0f}x that."
    )
    markdown = "\n\n".join(
        [
            "## Batched environment (`scripts/bench_vector_env.py`)",
            f"Machine: {machine()}. Load average (1, 5, 15 min) at the start: "
            f"{load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f} (the 2 cores are shared with other "
            "jobs: absolute rates are noisy, ratios within the run less so). One agent step is "
            "the agent's move, the opponent's reply, reward, flags, the next masks and "
            "autoreset; random legal agent actions are drawn from the returned masks outside "
            "the timed region; only the time inside `step()` counts.",
            f"### Against NumPy, by batch size B\n\nEach cell is the minimum of {args.repeats} "
            f"interleaved timings of about {args.work:,} board-steps each (the env on one "
            "thread, on two (`num_threads=2`), and the NumPy reference of the same game, all "
            "in this run). *Bytes/board-step* is what a step must move at least (action in; "
            "observation, mask, reward and two flags out); the *bandwidth floor* is that over "
            f"this machine's one-core copy bandwidth measured in the same run "
            f"({bandwidth / 1e9:.1f} GB/s, a 64 MiB `np.copyto`). The references are the "
            "classes `ClosedFormNim`, `NumpyFibonacci` and `NumpyKayles` in the script.",
            *versus,
            f"### Every game at B = {batch:,}\n\n{args.calls} `step()` calls per timing "
            "(best of 2 alternating with the single env), one thread, optimal opponent unless "
            "the row says otherwise. *States* is the size of the tables the env builds at "
            "construction; Kayles of at most 24 pins runs on bit masks instead.",
            table(["env", "states", "batched steps/s", "single env steps/s", "speed-up"], rows),
            f"NIM-31 k = 3 (`start='initial'`) at B = {batch:,}, best of {args.repeats} "
            f"interleaved: the batched env {nim['ours']:,.0f} agent steps/s, the 30-line "
            f"closed-form NumPy NIM (`ClosedFormNim`) {nim['closed']:,.0f} "
            f"({nim['ours'] / nim['closed']:.2f}x), the project's first NumPy NIM "
            f"(`NumpyNim`) {nim['project']:,.0f} ({nim['ours'] / nim['project']:.2f}x).",
            spiel_text,
        ]
    )
    if not args.no_write:
        write_section("env-vector", markdown)
    print(markdown)


if __name__ == "__main__":
    main()
