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
from metanim.envs import start_law
from metanim.games import make_game

CASES: list[tuple[str, dict[str, Any]]] = [
    # The default path: random N-position starts, the optimal opponent.
    ("MetaNIM/Nim-v0", {}),
    ("MetaNIM/Fibonacci-v0", {}),
    ("MetaNIM/Kayles-v0", {}),
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


class LawStarts:
    """Random N-position starts for a NumPy reference, from the law the env's default
    path draws from (`metanim.envs.start_law`: one random playout, a uniform N-position
    on it), computed before timing and drawn by inverse CDF: one `searchsorted` over
    the law's support per step for every board that restarts."""

    def __init__(self, game: Any, code: Any, seed: int = 1) -> None:
        law = start_law(game, mover_wins=True)
        assert law is not None, "a game of more states plays playouts (see NumpyKayles)"
        self.cdf = np.cumsum(law.chance)
        self.cdf[-1] = 1.0
        self.codes = np.array([code(state) for state in law.states])
        self.rng = np.random.default_rng(seed)

    def draw(self, count: int) -> np.ndarray:
        return self.codes[np.searchsorted(self.cdf, self.rng.random(count), side="right")]


class ClosedFormNim:
    """The 30-line NumPy batched NIM: one heap, take 1..k, normal play; a finished board
    restarts at `heap`, or with `starts` at a random N-position of the env's start law.

    The optimal opponent by the closed form (take heap mod (k+1); a random take from a
    P-position, drawn only for those boards); masks are rows of a (k+1, k) table picked
    by min(heap, k). Returns what the batched env returns.
    """

    def __init__(
        self, num_envs: int, heap: int, k: int, seed: int = 0, starts: LawStarts | None = None
    ) -> None:
        self.start, self.k, self.starts = heap, k, starts
        self.h = np.full(num_envs, heap, np.int64)
        self.rng = np.random.default_rng(seed)
        self.masks = (np.arange(k)[None, :] < np.arange(k + 1)[:, None]).astype(np.int8)

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        self.h[:] = self.start if self.starts is None else self.starts.draw(len(self.h))
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
        if self.starts is None:
            self.h = np.where(done, self.start, after)
        else:
            after[done] = self.starts.draw(int(done.sum()))
            self.h = after
        info = {"action_mask": self.masks[np.minimum(self.h, self.k)],
                "final_obs": final[:, None], "_final_obs": done}  # fmt: skip
        return self.h[:, None].copy(), rewards, done, np.zeros_like(done), info


class NumpyFibonacci:
    """NumPy batched Fibonacci Nim: `n` stones, normal play; a finished board restarts at
    `n`, or with `starts` at a random N-position of the env's start law.

    A take of x (action x - 1) leaves (remaining - x, min(2x, remaining - x)). The
    opponent takes the smallest winning take of a (remaining, max take) table filled by
    a plain-Python pass before timing, else a random legal take. Returns what the batched
    env returns ([remaining, max take] observations, int8 masks).
    """

    def __init__(
        self, num_envs: int, n: int, seed: int = 0, starts: LawStarts | None = None
    ) -> None:
        self.n, self.starts = n, starts
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

    def _restart(self, done: np.ndarray, rest: np.ndarray, cap: np.ndarray) -> None:
        if self.starts is None:
            rest[done], cap[done] = self.n, self.n - 1
        else:
            drawn = self.starts.draw(int(done.sum()))  # codes rest * (n + 1) + cap
            rest[done], cap[done] = np.divmod(drawn, self.n + 1)

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        self._restart(np.ones(len(self.rest), bool), self.rest, self.cap)
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
        self._restart(done, after, cap)
        self.rest, self.cap = after, cap
        obs, mask = self._out()
        info = {"action_mask": mask, "final_obs": final, "_final_obs": done}
        return obs, rewards, done, np.zeros_like(done), info


class NumpyKayles:
    """NumPy batched Kayles on bit masks: one row of `pins`, normal play; a finished
    board restarts full, or with `playouts` at a random N-position drawn as the env's
    default path draws it for a game of this size (one uniformly random playout from the
    full row, vectorized over the boards that restart, then a uniform pick among its
    N-positions).

    Action 2i knocks pin i, 2i + 1 pins i and i + 1. The outcome of every mask comes
    from a NumPy pass by pin count before timing (a move removes pins, so a child is
    solved first); the opponent plays a random winning move (to a P-position), else a
    random legal one. Masks and observations are bit tests over all actions and pins.
    """

    def __init__(self, num_envs: int, pins: int, seed: int = 0, playouts: bool = False) -> None:
        bits = np.arange(pins)
        self.pins, self.playouts = pins, playouts
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

    def _starts(self, count: int) -> np.ndarray:
        """`count` starts: the full row, or a random N-position of a random playout."""
        if not self.playouts:
            return np.full(count, self.full, np.int64)
        out = np.empty(count, np.int64)
        todo = np.arange(count)
        while len(todo):  # a playout with no N-position (none here) would be replayed
            m = np.full(len(todo), self.full, np.int64)
            trail = np.zeros((len(todo), self.pins), np.int64)  # 0: no state there
            for t in range(self.pins):
                live = m != 0
                if not live.any():
                    break
                trail[live, t] = m[live]
                legal = self._legal(m[live])
                pick = np.argmax(legal * self.rng.random(legal.shape), axis=1)
                m[live] ^= self.clears[pick]
            wanted = (trail != 0) & self.wins[trail]
            counts = wanted.sum(1)
            found = counts > 0
            nth = (self.rng.random(len(todo)) * counts).astype(np.int64)
            column = np.argmax(np.cumsum(wanted, axis=1) > nth[:, None], axis=1)
            out[todo[found]] = trail[found, column[found]]
            todo = todo[~found]
        return out

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        self.m = self._starts(len(self.m))
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
        after[done] = self._starts(int(done.sum()))
        self.m = after
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


#: The NumPy comparisons: (name, env id, reference factory of B). The env runs its
#: default path (no preset: random N-position starts, the optimal opponent, same-step
#: autoreset); the reference restarts its finished boards at random N-positions of the
#: same law.
VERSUS: list[tuple[str, str, Any]] = [
    ("NIM, one heap of 31, take 1-3", "MetaNIM/Nim-v0",
     lambda b: ClosedFormNim(b, 31, 3, starts=LawStarts(make_game("nim", heaps=[31], max_take=3),
                                                         lambda state: state[0]))),
    ("Fibonacci Nim, 20 stones", "MetaNIM/Fibonacci-v0",
     lambda b: NumpyFibonacci(b, 20, starts=LawStarts(make_game("fibonacci", n=20),
                                                      lambda state: state[0] * 21 + state[1]))),
    ("Kayles, one row of 20 pins", "MetaNIM/Kayles-v0",
     lambda b: NumpyKayles(b, 20, playouts=True)),
]  # fmt: skip

#: Each documented start and opponent option of each game, for the table of options:
#: (label, kwargs). The default path is the first; `seat="second"` closes the list.
OPTIONS: list[tuple[str, dict[str, Any]]] = [
    ("default (random_n, optimal)", {}),
    ("start=auto", {"start": "auto"}),
    ("start=initial", {"start": "initial"}),
    ("start=a state", {"start": "STATE"}),
    ("opponent=random", {"opponent": "random"}),
    ("opponent=epsilon:0.2", {"opponent": "epsilon:0.2"}),
    ("start=initial, opponent=random", {"start": "initial", "opponent": "random"}),
    ("seat=second", {"seat": "second"}),
]
#: A state of each game's default configuration, for "start=a state".
STATES: dict[str, Any] = {
    "MetaNIM/Nim-v0": [31], "MetaNIM/Fibonacci-v0": [12, 8],
    "MetaNIM/Kayles-v0": ["1" * 20], "MetaNIM/Chomp-v0": [5, 5, 5, 5, 4],
    "MetaNIM/CornerQueen-v0": [4, 16],
}  # fmt: skip


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
    """One table per NumPy comparison: ns per board-step of the env's default path (one
    thread and two) and of its random-start NumPy reference at each B, min of `repeats`
    interleaved timings."""
    out = []
    for name, env_id, make_reference in VERSUS:
        rows = []
        for batch in sizes:
            calls = max(20, work // batch)
            envs = {
                "ours": gym.make_vec(env_id, num_envs=batch),
                "ours, 2 threads": gym.make_vec(env_id, num_envs=batch, num_threads=2),
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
            f"**{name}** (`{env_id}`, default path):",
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


def options_rows(batch: int, repeats: int, work: int, games: list[str]) -> list[list[str]]:
    """Per game, ns per board-step of each option (`OPTIONS`) at B = `batch`, min of
    `repeats` interleaved timings, and its ratio to the fastest of them."""
    rows = []
    for env_id in games:
        envs = {}
        for label, kwargs in OPTIONS:
            given = {k: (STATES[env_id] if v == "STATE" else v) for k, v in kwargs.items()}
            envs[label] = gym.make_vec(env_id, num_envs=batch, **given)
        calls = max(20, work // batch)
        best = dict.fromkeys(envs, 0.0)
        for _ in range(repeats):
            for key, env in envs.items():
                best[key] = max(best[key], time_vector(env, calls, batch))
        fastest = max(best.values())
        for label, rate in best.items():
            rows.append([f"`{env_id}`", label, f"{1e9 / rate:.1f}", f"{fastest / rate:.2f}"])
        print(rows[-len(envs) :], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=1024, help="B of the all-games table")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 4096, 65536, 262144],
                        help="B of the NumPy comparisons")  # fmt: skip
    parser.add_argument("--options-batch", type=int, default=16384,
                        help="B of the table of options")  # fmt: skip
    parser.add_argument("--repeats", type=int, default=5, help="interleaved timings, min")
    parser.add_argument("--work", type=int, default=2_000_000,
                        help="board-steps per timing of a NumPy comparison")  # fmt: skip
    parser.add_argument("--games", nargs="*", default=list(STATES),
                        help="env ids of the table of options")  # fmt: skip
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    batch = args.num_envs

    load = os.getloadavg()  # the 2 cores are shared: say how busy they were
    bandwidth = copy_bandwidth()
    versus = versus_rows(args.sizes, args.repeats, args.work, bandwidth)
    options = options_rows(args.options_batch, args.repeats, args.work, args.games)
    rows = []
    for env_id, kwargs in CASES:
        vec = gym.make_vec(env_id, num_envs=batch, vectorization_mode="vector_entry_point",
                           **kwargs)  # fmt: skip
        # Best of 2 alternating timings, so that load from other processes hits both.
        fast, single = 0.0, 0.0
        for _ in range(2):
            fast = max(fast, time_vector(vec, args.calls, batch))
            single = max(single, time_single(env_id, kwargs))
        config = ", ".join(f"{k}={v}" for k, v in kwargs.items()) or "default"
        rows.append([f"`{env_id}` ({config})", states_text(vec.unwrapped), f"{fast:,.0f}",
                     f"{single:,.0f}", f"{fast / single:,.0f}x"])  # fmt: skip
        print(rows[-1], flush=True)
    spiel = time_openspiel()
    random_row = next(
        row for row, (_, kwargs) in zip(rows, CASES, strict=True) if kwargs.get("opponent")
    )
    spiel_text = (
        "OpenSpiel (`open_spiel`) is not installed here, so it was not timed."
        if spiel is None
        else f"OpenSpiel's `nim` (pile_sizes=31) through its Python API, one state at a time "
        f"(it has no batched API), same run: {spiel:,.0f} agent steps/s (the agent's "
        "`apply_action` and a random reply, with `legal_actions` before each); the batched "
        "env on the same game with the same random reply (`heaps=[31], max_take=None, "
        "start=initial, opponent=random` row above) is "
        f"{float(random_row[2].replace(',', '')) / spiel:,.0f}x that."
    )
    markdown = "\n\n".join(
        [
            "## Batched environment (`scripts/bench_vector_env.py`)",
            f"Machine: {machine()}. Load average (1, 5, 15 min) at the start: "
            f"{load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f} (the 2 cores are shared with other "
            "jobs: absolute rates are noisy, ratios within the run less so). One agent step is "
            "the agent's move, the opponent's reply, reward, flags, the next masks and "
            "autoreset; random legal agent actions are drawn from the returned masks outside "
            "the timed region; only the time inside `step()` counts, in steady state (after a "
            "warm-up call).",
            f"### The default path against NumPy, by batch size B\n\nThe env as "
            "`gym.make_vec(id, num_envs=B)` makes it: no preset, so random N-position starts "
            "(`start='random_n'`), the optimal opponent and same-step autoreset. Each cell is "
            f"the minimum of {args.repeats} interleaved timings of about {args.work:,} "
            "board-steps each (the env on one thread, on two (`num_threads=2`), and the NumPy "
            "reference of the same game, all in this run). The references restart a finished "
            "board at a random N-position of the same law: NIM and Fibonacci Nim draw it from "
            "the law's table (`metanim.envs.start_law`, made before timing) by one "
            "`searchsorted` per restarting board (`LawStarts`); Kayles of 20 pins, whose "
            "2^20 states the env does not table, plays the random playouts themselves, "
            "vectorized over the restarting boards (`NumpyKayles`), as the env does. "
            "*Bytes/board-step* is what a step must move at least (action in; observation, "
            "mask, reward and two flags out); the *bandwidth floor* is that over this "
            "machine's one-core copy bandwidth measured in the same run "
            f"({bandwidth / 1e9:.1f} GB/s, a 64 MiB `np.copyto`).",
            *versus,
            f"### Every start and opponent option at B = {args.options_batch:,}\n\nns per "
            f"board-step, min of {args.repeats} interleaved timings, one thread, each game's "
            "default configuration; *vs fastest* is its time over the fastest option's of the "
            "same game (`seat=second`, the opponent moving first, is listed last).",
            table(["env", "option", "ns/board-step", "vs fastest"], options),
            f"### Every game at B = {batch:,}\n\n{args.calls} `step()` calls per timing "
            "(best of 2 alternating with the single env), one thread, optimal opponent unless "
            "the row says otherwise. *States* is the size of the tables the env builds at "
            "construction; Kayles of at most 24 pins runs on bit masks instead.",
            table(["env", "states", "batched steps/s", "single env steps/s", "speed-up"], rows),
            spiel_text,
        ]
    )
    if not args.no_write:
        write_section("env-vector", markdown)
    print(markdown)


if __name__ == "__main__":
    main()
