"""Env throughput: the single env against a plain-Python env of the same games,
OpenSpiel's nim, and the cost of big positions, all in one run.

    python scripts/bench_env.py [--steps 5000] [--repeats 9]

Three workloads, one table each: (1) for every game, `gym.make` env µs per step with
the optimal and the random opponent against the plain-Python env written below
(`Plain` over each game's `Rules`: everything a state needs made once and kept per
state, children filled as they are played; with the optimal opponent, a plain-Python
memo of which states the mover wins), which returns what the single env returns at
least: a NumPy observation, the reward, the two flags and an info dict holding the
int8 action mask; (2) NIM (one heap of 31, any take) against OpenSpiel's `nim` per agent
step, when `open_spiel` (the `bench` extra) is installed; (3) no cliff: NIM with any
take at heaps up to 10^5, and a fresh 12x12 Chomp env's first steps. The agent plays
uniformly random legal actions; only the time inside `step()` counts. Timings are
interleaved, min of several rounds. Writes the `env` section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from typing import Any

import gymnasium as gym
import numpy as np

# scripts/ is on sys.path when this file runs, so the shared helpers import directly.
from _bench import machine, random_steps, table, write_section

import metanim  # noqa: F401  (registers the env ids)


class Rules:
    """The rules of one game over action ids, in the representation its plain-Python env
    finds fastest. Subclasses set `num_actions` and `initial`."""

    num_actions: int
    initial: Any

    def legal(self, state: Any) -> list[int]:
        """The legal action ids, in increasing order."""
        raise NotImplementedError

    def apply(self, state: Any, action: int) -> Any:
        raise NotImplementedError

    def observe(self, state: Any) -> np.ndarray:
        return np.array(state, dtype=np.int64)

    def json(self, state: Any) -> tuple[Any, ...]:
        """The state's JSON form, as the single env's `info["state"]` (a tuple, copied to
        a list on return)."""
        return tuple(state)


class Plain:
    """A plain-Python env as a careful engineer writes one for speed: the reference of
    the single env. `step` returns what the single env's does: a new int64 observation
    array, the reward, the two flags and an info dict with a new int8 action mask, the
    state's JSON form (a new list), both moves' texts, the winner and the illegal flag
    (`texts`, the game's text of each action id; without it, `info` holds the mask only).

    What a state needs is made the first time the env meets it and kept in one tuple
    per state (its node): the state, its legal actions, the opponent's choices there,
    the mask (also as bytes, so that legality is an index) and the observation (both
    copied on return: a caller may keep them), and a dict of its children by action,
    filled as actions are played. With `optimal` the choices are the winning actions,
    from a plain-Python memo of which states the mover wins (recursion over the rules);
    the opponent (normal play) draws with `random.Random`: a uniform winning action,
    else (or always, without `optimal`) a uniform legal one.
    """

    def __init__(
        self, rules: Rules, *, optimal: bool, texts: list[str] | None = None, seed: int = 0
    ) -> None:
        self.rules = rules
        self.optimal = optimal
        self.texts = texts
        self.random = random.Random(seed).random
        self.nodes: dict[Any, tuple[Any, ...]] = {}
        self.wins: dict[Any, bool] = {}
        self.node = self._node(rules.initial)

    def _mover_wins(self, state: Any) -> bool:
        found = self.wins.get(state)
        if found is None:
            rules = self.rules
            found = self.wins[state] = any(
                not self._mover_wins(rules.apply(state, a)) for a in rules.legal(state)
            )
        return found

    def _node(self, state: Any) -> tuple[Any, ...]:
        """(state, legal actions, the opponent's choices, mask, mask bytes, observation,
        children by action, JSON form), made on first use."""
        node = self.nodes.get(state)
        if node is None:
            rules = self.rules
            legal = tuple(rules.legal(state))
            choices = legal
            if self.optimal:
                apply, wins = rules.apply, self._mover_wins
                choices = tuple(a for a in legal if not wins(apply(state, a))) or legal
            mask = np.zeros(rules.num_actions, dtype=np.int8)
            mask[list(legal)] = 1
            node = (state, legal, choices, mask, mask.tobytes(), rules.observe(state), {},
                    rules.json(state))  # fmt: skip
            self.nodes[state] = node
        return node

    def _child(self, node: tuple[Any, ...], action: int) -> tuple[Any, ...]:
        """The node after `action` (legal) in `node`."""
        state = node[6].get(action)
        if state is None:
            state = node[6][action] = self.rules.apply(node[0], action)
        return self.nodes.get(state) or self._node(state)

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        node = self.node = self._node(self.rules.initial)
        return node[5].copy(), {"action_mask": node[3].copy()}

    def step(self, action: int) -> tuple[Any, ...]:
        node = self.node
        if not 0 <= action < len(node[4]) or not node[4][action]:  # illegal: a loss
            return node[5].copy(), -1.0, True, False, {"action_mask": node[3].copy()}
        node = self._child(node, action)
        reply = None
        if node[1]:
            choices = node[2]
            reply = choices[int(self.random() * len(choices))]
            node = self._child(node, reply)
            reward = 0.0 if node[1] else -1.0  # the opponent moved last: the agent lost
        else:
            reward = 1.0  # the agent moved last (normal play)
        self.node = node
        texts = self.texts
        if texts is None:
            return node[5].copy(), reward, reward != 0.0, False, {"action_mask": node[3].copy()}
        info = {
            "action_mask": node[3].copy(),
            "state": list(node[7]),
            "agent_move": texts[action],
            "opponent_move": None if reply is None else texts[reply],
            "winner": None if reward == 0.0 else "agent" if reward > 0.0 else "opponent",
            "illegal_action": False,
        }
        return node[5].copy(), reward, reward != 0.0, False, info


class NimRules(Rules):
    def __init__(self, heaps: list[int], max_take: int | None) -> None:
        self.k = max_take or max(heaps)
        self.num_actions = len(heaps) * self.k
        self.initial = tuple(heaps)

    def legal(self, state: Any) -> list[int]:
        k = self.k
        return [i * k + c for i, h in enumerate(state) for c in range(min(h, k))]

    def apply(self, state: Any, action: int) -> Any:
        i, c = divmod(action, self.k)
        return (*state[:i], state[i] - c - 1, *state[i + 1 :])


class FibonacciRules(Rules):
    def __init__(self, n: int) -> None:
        self.num_actions = n - 1
        self.initial = (n, n - 1)

    def legal(self, state: Any) -> list[int]:
        return list(range(state[1]))

    def apply(self, state: Any, action: int) -> Any:
        left = state[0] - action - 1
        return (left, min(2 * (action + 1), left))


class KaylesRules(Rules):
    """A state is the int whose bit `row * width + pin` is a standing pin."""

    def __init__(self, rows: list[int]) -> None:
        self.rows = rows
        self.width = max(rows)
        self.shape = (len(rows), self.width)
        self.num_actions = len(rows) * self.width * 2
        self.cells = [r * self.width + i for r, n in enumerate(rows) for i in range(n)]
        self.pairs = [r * self.width + i for r, n in enumerate(rows) for i in range(n - 1)]
        self.initial = sum(1 << c for c in self.cells)

    def legal(self, state: Any) -> list[int]:
        out = [2 * c for c in self.cells if state >> c & 1]
        out += [2 * c + 1 for c in self.pairs if state >> c & 3 == 3]
        return sorted(out)

    def apply(self, state: Any, action: int) -> Any:
        cell, wide = divmod(action, 2)
        return state & ~((3 if wide else 1) << cell)

    def observe(self, state: Any) -> np.ndarray:
        bits = [state >> c & 1 for c in range(self.shape[0] * self.width)]
        return np.array(bits, dtype=np.int64).reshape(self.shape)

    def json(self, state: Any) -> tuple[Any, ...]:
        rows = []
        for r in range(self.shape[0]):
            n = self.rows[r]
            rows.append(
                "".join("1" if state >> (r * self.width + i) & 1 else "0" for i in range(n))
            )
        return tuple(rows)


class ChompRules(Rules):
    """Chomp: taking the poison square (0, 0) loses, so it is never listed: the player
    left with the poison alone has no action and loses, as in normal play."""

    def __init__(self, rows: int, cols: int) -> None:
        self.rows, self.cols = rows, cols
        self.num_actions = rows * cols
        self.initial = (cols,) * rows

    def legal(self, state: Any) -> list[int]:
        return [r * self.cols + c for r, n in enumerate(state) for c in range(n) if r or c]

    def apply(self, state: Any, action: int) -> Any:
        r, c = divmod(action, self.cols)
        return state[:r] + tuple(min(x, c) for x in state[r:])

    def observe(self, state: Any) -> np.ndarray:
        grid = np.zeros((self.rows, self.cols), dtype=np.int64)
        for r, n in enumerate(state):
            grid[r, :n] = 1
        return grid


class CornerQueenRules(Rules):
    def __init__(self, height: int, width: int, start: list[int]) -> None:
        self.height, self.width = height, width
        self.num_actions = height * width
        self.initial = tuple(start)

    def legal(self, state: Any) -> list[int]:
        r, c = state
        w = self.width
        out = [r * w + c2 for c2 in range(c)]
        out += [(r + d) * w + c - d for d in range(1, min(self.height - 1 - r, c) + 1)]
        out += [r2 * w + c for r2 in range(r + 1, self.height)]
        return sorted(out)

    def apply(self, state: Any, action: int) -> Any:
        return divmod(action, self.width)


#: The single env against the plain-Python env of the same game, both from the game's
#: initial state: (label, env id, kwargs, the game's rules).
VERSUS: list[tuple[str, str, dict[str, Any], Any]] = [
    ("nim-31-k3", "MetaNIM/Nim-v0", {"preset": "nim-31-k3"}, lambda: NimRules([31], 3)),
    ("fibonacci-20", "MetaNIM/Fibonacci-v0", {"preset": "fibonacci-20"},
     lambda: FibonacciRules(20)),
    ("kayles-20", "MetaNIM/Kayles-v0", {"preset": "kayles-20"}, lambda: KaylesRules([20])),
    ("chomp-5x5", "MetaNIM/Chomp-v0", {"preset": "chomp-5x5"}, lambda: ChompRules(5, 5)),
    ("corner-queen", "MetaNIM/CornerQueen-v0", {"preset": "corner-queen"},
     lambda: CornerQueenRules(20, 20, [4, 16])),
    ("NIM 31, any take", "MetaNIM/Nim-v0", {"heaps": [31], "max_take": None},
     lambda: NimRules([31], None)),
]  # fmt: skip


def per_step(env: Any, steps: int, seed: int) -> float:
    """Seconds per `env.step()` over `steps` random legal steps (resets not counted)."""
    _, info = env.reset(seed=0)
    inside, _ = random_steps(env, info, steps, np.random.default_rng(seed))
    return inside / steps


def interleaved(
    envs: dict[Any, Any], steps: int, repeats: int, warm: int | None = None
) -> dict[Any, float]:
    """Min over `repeats` rounds of each env's seconds per step, the envs taken in turn
    within each round (load from other jobs then hits every env alike), after `warm`
    warm-up steps of each (default `steps`: caches, memos and solver tables). Each
    timed round starts with a fifth as many untimed steps: the other envs' rounds
    evict an env's caches from the CPU's, and a round times the steady state."""
    for env in envs.values():
        per_step(env, steps if warm is None else warm, 0)
    best = dict.fromkeys(envs, float("inf"))
    for r in range(repeats):
        for key, env in envs.items():
            per_step(env, max(steps // 5, 10), 100 + r)
            best[key] = min(best[key], per_step(env, steps, r + 1))
    return best


def openspiel_per_agent_step(steps: int, seed: int) -> float | None:
    """Seconds per agent step of OpenSpiel's `nim` (one heap of 31, any take): the agent's
    `apply_action`, then `legal_actions`, a uniformly random choice and `apply_action`
    for the opponent; new games (`new_initial_state`) not counted. None without it."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("nim", {"pile_sizes": "31"})
    rng = random.Random(seed)
    state = game.new_initial_state()
    inside = 0.0
    for _ in range(steps):
        legal = state.legal_actions()
        action = legal[rng.randrange(len(legal))]
        start = time.perf_counter()
        state.apply_action(action)
        if not state.is_terminal():
            replies = state.legal_actions()
            state.apply_action(replies[rng.randrange(len(replies))])
        inside += time.perf_counter() - start
        if state.is_terminal():
            state = game.new_initial_state()
    return inside / steps


#: Heaps of the no-cliff table: 10^3 to 10^5 stones, the 2,000-5,000 band included (the
#: single env keeps no mask per state past 4,096 actions).
CLIFF_HEAPS = (1_000, 2_000, 4_096, 5_000, 10_000, 100_000)


class WideNimFloor:
    """The least a step of NIM with one heap and any take can do, as a plain-Python env:
    the agent's take, the opponent's reply (optimal: take the rest; or a uniformly random
    take, `random.Random`), a new int64 observation, the reward, the two flags and an
    info dict holding a new int8 mask of `heap` bytes (`np.empty`, then the legal run set
    to 1 and the rest to 0): nothing kept per state, so its cost per step is a constant
    plus the mask's two fills. The floor the single env is measured against: a caller may
    keep what a step returns, so the mask of a new state is new memory, one byte per
    action (Gymnasium's `Discrete` space and MaskablePPO's `action_masks()` read it so).
    """

    def __init__(self, heap: int, *, optimal: bool, seed: int = 0) -> None:
        self.heap, self.optimal = heap, optimal
        self.random = random.Random(seed).random
        self.left = heap

    def _out(self) -> tuple[np.ndarray, dict[str, Any]]:
        mask = np.empty(self.heap, dtype=np.int8)
        mask[: self.left] = 1
        mask[self.left :] = 0
        return np.array([self.left], dtype=np.int64), {"action_mask": mask}

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        self.left = self.heap
        return self._out()

    def step(self, action: int) -> tuple[Any, ...]:
        left = self.left - action - 1
        reward = 1.0
        if left:  # the opponent's reply; its last move loses the agent the game
            left = 0 if self.optimal else left - 1 - int(self.random() * left)
            reward = 0.0 if left else -1.0
        self.left = left
        obs, info = self._out()
        return obs, reward, reward != 0.0, False, info


def cliff_rows(
    steps: int, repeats: int, warm: int, heaps: tuple[int, ...] = CLIFF_HEAPS
) -> tuple[list[list[str]], list[list[str]]]:
    """NIM with any take at growing heaps against the floor (`WideNimFloor`): us per step,
    min of `repeats` after `warm` warm-up steps, and each one's growth over the smallest
    heap; and a fresh 12x12 Chomp env's cost per step over its first steps."""
    opponents = ("optimal", "random")
    envs: dict[Any, Any] = {}
    for heap in heaps:
        for opponent in opponents:
            envs[heap, opponent] = gym.make("MetaNIM/Nim-v0", heaps=[heap], max_take=None,
                                            start="initial", opponent=opponent)  # fmt: skip
            envs[heap, opponent, "floor"] = WideNimFloor(heap, optimal=opponent == "optimal")
    # Steady state: every state a step can reach from a fresh episode's heap, met once
    # (random warm-up steps alone would leave most of 10^5 states new), then a warm-up.
    for key, env in envs.items():
        for action in range(key[0]):
            env.reset(seed=action)
            env.step(action)
    best = interleaved(envs, steps, repeats, warm)
    nim = []
    for heap in heaps:
        row = [f"{heap:,}"]
        for opponent in opponents:
            ours, floor = best[heap, opponent], best[heap, opponent, "floor"]
            row += [f"{ours * 1e6:.1f}", f"{ours / best[heaps[0], opponent]:.2f}",
                    f"{floor * 1e6:.1f}", f"{floor / best[heaps[0], opponent, 'floor']:.2f}",
                    f"{ours / floor:.2f}"]  # fmt: skip
        nim.append(row)
    chunks = [(0, 200), (200, 1_000), (1_000, 3_000), (3_000, 6_000)]
    if steps < 1_000:  # a smoke run
        chunks = [(0, 20), (20, 40)]
    costs = []
    made = time.perf_counter()
    env = gym.make("MetaNIM/Chomp-v0", rows=12, cols=12, start="initial")
    made = time.perf_counter() - made
    _, info = env.reset(seed=0)
    picker = np.random.default_rng(0)
    for lo, hi in chunks:
        inside, info = random_steps(env, info, hi - lo, picker)
        costs.append(inside / (hi - lo))
    chomp = [[f"{lo:,}-{hi - 1:,}", f"{c * 1e6:.1f}", f"{c / costs[-1]:.2f}"]
             for (lo, hi), c in zip(chunks, costs, strict=True)]  # fmt: skip
    chomp.append(["(making the env)", f"{made * 1e6:,.0f}", "-"])
    return nim, chomp


def move_texts(env: Any) -> list[str]:
    """The game's text of every action id (the plain env's `texts`)."""
    game = env.unwrapped.game
    return [game.move_text(game.move_from_action(a)) for a in range(game.info.num_actions)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5_000, help="steps per timing")
    parser.add_argument("--repeats", type=int, default=9, help="interleaved rounds, min")
    parser.add_argument("--warm", type=int, default=50_000,
                        help="warm-up steps of each no-cliff env (states met once)")  # fmt: skip
    parser.add_argument("--games", nargs="*", help="labels of the games to time (default all)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    load = os.getloadavg()

    rows = []
    for label, env_id, kwargs, rules in VERSUS:
        if args.games and label not in args.games:
            continue
        ours = gym.make(env_id, start="initial", **kwargs)
        texts = move_texts(ours)
        envs = {
            "ours": ours,
            "plain": Plain(rules(), optimal=True, texts=texts),
            "mask only": Plain(rules(), optimal=True),
            "ours, random opp.": gym.make(env_id, start="initial", opponent="random", **kwargs),
            "plain, random opp.": Plain(rules(), optimal=False, texts=texts),
            "mask only, random opp.": Plain(rules(), optimal=False),
        }
        t = interleaved(envs, args.steps, args.repeats)
        row = [f"{label} (`{env_id}`)"]
        for opp in ("", ", random opp."):
            ours_t = t["ours" + opp]
            row += [f"{ours_t * 1e6:.2f}", f"{t['plain' + opp] * 1e6:.2f}",
                    f"{t['plain' + opp] / ours_t:.2f}", f"{t['mask only' + opp] / ours_t:.2f}"]  # fmt: skip
        rows.append(row)
        print(rows[-1], flush=True)

    spiel_rows = []
    if openspiel_per_agent_step(args.steps, 0) is not None:  # installed; also a warm-up
        envs = {opp: gym.make("MetaNIM/Nim-v0", heaps=[31], max_take=None, start="initial",
                              opponent=opp) for opp in ("random", "optimal")}  # fmt: skip
        for env in envs.values():
            per_step(env, args.steps, 0)
        # OpenSpiel's rounds interleaved with ours, so load from other jobs hits both alike.
        spiel_best = float("inf")
        ours = dict.fromkeys(envs, float("inf"))
        for r in range(args.repeats):
            spiel_best = min(spiel_best, openspiel_per_agent_step(args.steps, r + 1) or 0.0)
            for opp, env in envs.items():
                ours[opp] = min(ours[opp], per_step(env, args.steps, r + 1))
        spiel_rows = [
            ["OpenSpiel `nim` (pile_sizes=31), random reply", f"{spiel_best * 1e6:.2f}", "1.00"]
        ]
        for opp, t in ours.items():
            spiel_rows.append([f"`MetaNIM/Nim-v0` (heaps=[31], max_take=None), {opp} opponent",
                               f"{t * 1e6:.2f}", f"{spiel_best / t:.2f}"])  # fmt: skip
        print(spiel_rows, flush=True)
    heaps = CLIFF_HEAPS if not args.games else CLIFF_HEAPS[:2]
    nim, chomp = cliff_rows(max(args.steps // 2, 10), args.repeats, args.warm, heaps)
    print(nim, chomp, flush=True)

    parts = [
        "## Environments (`scripts/bench_env.py`)",
        f"Machine: {machine()}. Load average (1, 5, 15 min) at the start: {load[0]:.1f}, "
        f"{load[1]:.1f}, {load[2]:.1f} (the 2 cores are shared with other jobs: absolute "
        "times are noisy, ratios within the run less so). Time inside `step()` only (resets "
        "not counted), random legal agent actions, every env from the game's initial state, "
        "made by `gym.make` (which adds no wrapper to these envs).",
        f"### The single env against a plain-Python env\n\nµs per step, the min of "
        f"{args.repeats} interleaved rounds of {args.steps:,} steps, after a warm-up round. "
        "*Plain* is the plain-Python env of the same game written in the script for speed "
        "(`Plain` over each game's `Rules`: a node per state made once, with its legal actions, "
        "the opponent's choices, mask, observation, JSON form and children by action, filled "
        "as they are played; `random.Random` draws; with the optimal opponent a plain-Python "
        "memo of which states the mover wins), returning what the single env returns: a new "
        "observation, the reward, the two flags and an info dict of the same six fields (a "
        "new int8 mask, the state's JSON as a new list, both moves' texts, the winner, the "
        "illegal flag). *Ratio* is plain/ours: at or above 1.00 the single env is as fast. "
        "*Mask only* is the same plain env returning only the mask in its info: plain (mask "
        "only)/ours says what the five other fields of `info` cost.",
        table(
            [
                "game",
                "ours, optimal opp.",
                "plain, optimal opp.",
                "ratio",
                "mask only ratio",
                "ours, random opp.",
                "plain, random opp.",
                "ratio",
                "mask only ratio",
            ],
            rows,
        ),
    ]
    if spiel_rows:
        parts += [
            "### NIM against OpenSpiel, per agent step\n\nOne heap of 31, any take. OpenSpiel "
            "timed as the agent's `apply_action`, then the opponent's `legal_actions`, random "
            "choice and `apply_action` (new games not counted); ours as one `step()` (the "
            "agent's move, the opponent's reply, reward, flags, the next mask, observation and "
            f"info). µs per agent step, min of {args.repeats} interleaved rounds of "
            f"{args.steps:,}; *ratio* is OpenSpiel/ours (at or above 1.00: ours as fast); "
            "OpenSpiel is the compiled-API reference: its agent step is four calls into C++.",
            table(["env", "µs per agent step", "ratio"], spiel_rows),
        ]
    else:
        parts.append("OpenSpiel (`open_spiel`, the `bench` extra) is not installed here.")
    parts += [
        "### NIM with any take, 10³ to 10⁵ stones\n\nOne heap (`start='initial'`): µs per "
        f"step, min of {args.repeats} interleaved rounds of {max(args.steps // 2, 10):,} steps, "
        "after a sweep that plays every first move of a fresh episode once (up to 4,096 "
        "stones the env then holds every state a run meets; a wider one keeps 2,048 and "
        f"derives the rest on each step) and {args.warm:,} warm-up steps of each env, and "
        f"the ratio to {heaps[0]:,} stones. A step must return a new mask of one byte per "
        "action (the caller may keep it; Gymnasium's `Discrete` space and MaskablePPO read "
        "it so), so its cost grows with the heap: *floor* is `WideNimFloor`, the least a "
        "plain-Python env of this game does per step (the two moves, a new observation, and "
        "a new mask by `np.empty` and two slice fills, nothing kept), timed in the same "
        f"rounds, with its own growth over {heaps[0]:,} stones; *vs floor* is the env's "
        "time over the floor's at the same heap. Up to 4,096 actions the env keeps a mask "
        "per state and copies it; past that it writes each one from the game's closed form, "
        "as the floor does, and derives the rest through the game's rules (the agent's "
        "legality, both moves' texts, the new state's count, observation and JSON), keeping "
        "the records of 2,048 states at most: the step past 4,096 is that derivation. Past "
        "it the env grows about twice as much as the floor: each of its Python calls meets "
        "cold caches too, where the floor makes few. The picker, outside the timed "
        "region, reads each mask too (`np.flatnonzero`: at 10⁵ stones it writes 400 KB per "
        "step, evicting from the CPU's caches what either env keeps; a lookup in a table of "
        "10⁵ states then costs about 15 µs, which is why the env keeps no such table).",
        table(
            [
                "heap",
                "optimal opp. µs",
                f"vs {heaps[0]:,}",
                "floor µs",
                f"floor vs {heaps[0]:,}",
                "vs floor",
                "random opp. µs",
                f"vs {heaps[0]:,}",
                "floor µs",
                f"floor vs {heaps[0]:,}",
                "vs floor",
            ],
            nim,
        ),
        "A fresh 12×12 Chomp env (optimal opponent, `start='initial'`), µs per step by step "
        "range, and the ratio to the last range (steady state); the env builds the whole "
        "board's solver table when it is made (last row). Its first steps meet states no "
        "cache holds yet (the opponent's winning moves, each state's mask and observation).",
        table(["steps", "µs per step", "vs steady"], chomp),
    ]
    markdown = "\n\n".join(parts)
    if not args.no_write:
        write_section("env", markdown)
    print(markdown)


if __name__ == "__main__":
    main()
