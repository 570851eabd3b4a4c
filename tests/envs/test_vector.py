"""The batched env (`metanim.envs.vector`) against the single env and the rules."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import metanim  # noqa: F401  (registers the ids)
from metanim.envs import _stream
from metanim.envs.vector import (
    KAYLES_MAX_PINS,
    ImpartialGameVectorEnv,
    _episode_key,
    _integers,
    _kayles_draw,
    _kayles_moves,
    _kayles_pick,
    _KaylesBits,
)
from metanim.games import Kayles, SizeLimitError, make_game
from metanim.solver import ReferenceSolver, outcome

CASES: list[Any] = [
    ("MetaNIM/Nim-v0", {}),
    ("MetaNIM/Nim-v0", {"heaps": [3, 4, 5], "max_take": None, "misere": True}),
    ("MetaNIM/Fibonacci-v0", {"opponent": "random"}),
    ("MetaNIM/Fibonacci-v0", {"n": 12, "misere": True, "opponent": "epsilon:0.3"}),
    ("MetaNIM/Kayles-v0", {"rows": [5, 6]}),
    ("MetaNIM/Chomp-v0", {"preset": "chomp-2x8"}),
    ("MetaNIM/CornerQueen-v0", {"game_params": {"height": 8, "width": 9, "start": [1, 7]}}),
    ("MetaNIM/Nim-v0", {"start": [12]}),
    ("MetaNIM/Nim-v0", {"seat": "second"}),
    ("MetaNIM/Nim-v0", {"preset": "nim-31-k4-misere", "seat": "second"}),
    ("MetaNIM/Chomp-v0", {"preset": "chomp-2x8", "seat": "second", "opponent": "epsilon:0.5"}),
    # Kayles on bit masks (every Kayles of at most KAYLES_MAX_PINS pins), kayles-20 included.
    ("MetaNIM/Kayles-v0", {"preset": "kayles-20"}),
    ("MetaNIM/Kayles-v0", {"preset": "kayles-20", "seat": "second", "opponent": "random"}),
    ("MetaNIM/Kayles-v0", {"preset": "kayles-20", "misere": True, "start": "random_n"}),
    (
        "MetaNIM/Kayles-v0",
        {"preset": "kayles-20", "misere": True, "seat": "second", "start": "random_n"},
    ),
    ("MetaNIM/Kayles-v0", {"rows": [20], "misere": True, "opponent": "epsilon:0.3"}),
    ("MetaNIM/Kayles-v0", {"rows": [3, 1, 7], "misere": True, "start": "initial"}),
    ("MetaNIM/Kayles-v0", {"rows": [4, 6], "start": ["1011", "110111"], "seat": "second"}),
    # The bit-mask path's largest size (KAYLES_MAX_PINS = 24 pins in all).
    (
        "MetaNIM/Kayles-v0",
        {"rows": [12, 12], "misere": True, "seat": "second", "opponent": "epsilon:0.5"},
    ),
    # Encoded observations, as the single env encodes them: each encoding is another
    # compilation of the kernels, left to --full.
    *(
        pytest.param(env_id, kwargs, marks=pytest.mark.slow)
        for env_id, kwargs in [
            ("MetaNIM/Nim-v0", {"heaps": [3, 4, 5], "observation": "onehot"}),
            ("MetaNIM/Fibonacci-v0", {"n": 12, "observation": "binary", "seat": "second"}),
            ("MetaNIM/Kayles-v0", {"preset": "kayles-20", "observation": "onehot"}),
            ("MetaNIM/Kayles-v0", {"rows": [3, 5], "observation": "binary", "opponent": "random"}),
        ]
    ),
    # The state index (`observation="index"`): state tables and Kayles bit masks alike
    # keep int64 rows, so no kernel compiles again.
    ("MetaNIM/Nim-v0", {"heaps": [3, 4, 5], "observation": "index"}),
    ("MetaNIM/Fibonacci-v0", {"n": 12, "observation": "index", "misere": True}),
    ("MetaNIM/Chomp-v0", {"preset": "chomp-2x8", "observation": "index", "seat": "second"}),
    ("MetaNIM/CornerQueen-v0", {"height": 8, "width": 12, "observation": "index"}),
    ("MetaNIM/Kayles-v0", {"rows": [4, 6], "observation": "index", "opponent": "random"}),
    ("MetaNIM/Octal-v0", {"rows": [5, 7], "code": "0.137", "observation": "index"}),
    # The generated families (state tables), normal and misère.
    ("MetaNIM/Subtraction-v0", {"heaps": [9, 7], "subtraction_set": [1, 3, 4]}),
    ("MetaNIM/Subtraction-v0", {"subtraction_set": [2, 5], "misere": True, "seat": "second"}),
    # Past LAW_STATES (71 * 71 states): a start plays its playouts on the state tables.
    ("MetaNIM/Subtraction-v0", {"heaps": [70, 70], "subtraction_set": [1, 3, 4]}),
    (
        "MetaNIM/Subtraction-v0",
        {
            "heaps": [70, 70],
            "subtraction_set": [1, 3, 4],
            "seat": "second",
            "opponent": "epsilon:0.3",
        },
    ),
    ("MetaNIM/Octal-v0", {"rows": [10]}),
    ("MetaNIM/Octal-v0", {"rows": [5, 7], "code": "0.137", "misere": True, "opponent": "random"}),
]


def test_the_stream_is_splitmix64() -> None:
    # Published SplitMix64 output for state 0: the first word is mix(0 + GOLDEN).
    assert _stream.mix(_stream.GOLDEN) == 0xE220A8397B1DCDAF
    assert _stream.mix((2 * _stream.GOLDEN) & _stream.MASK) == 0x6E789E6AA1B965F4


def test_numba_draws_equal_the_python_stream() -> None:
    for seed, episode in [(0, 0), (7, 3), (2**63 + 5, 11)]:
        key = _stream.episode_key(seed, episode)
        assert int(_episode_key(np.uint64(seed), episode)) == key
        py = _stream.EpisodeStream(seed, episode)
        for count, n in enumerate([1, 2, 3, 31, 1000, 2**31], start=1):
            assert _integers(np.uint64(key), count, n) == py.integers(n)
        # `random()` is the top 53 bits of the word, by plain-Python `mix`, times 2**-53.
        word = _stream.mix((key + (count + 1) * _stream.GOLDEN) & _stream.MASK)
        assert (word >> 11) * 2.0**-53 == py.random()


def test_an_integer_bound_on_the_top_bits_is_the_float_test() -> None:
    # `random() < p` as the kernels test it (`_bits53(...) < below(p)`), against the
    # float test in Python, on words at and beside each bound and on random words.
    words = np.random.default_rng(3).integers(0, 2**53, 2000).tolist()
    rates = [0.0, 1.0, 0.2, 0.5, 1 / 3, 2**-53, 1 - 2**-53, 0.3, 0.7]
    for p in rates:
        bound = int(_stream.below(p))
        assert bound == int(_stream.below(np.array([p]))[0])
        for w in [*words, bound - 1, bound, bound + 1, 0, 2**53 - 1]:
            if 0 <= w < 2**53:
                assert (w < bound) == (w * 2.0**-53 < p)
    key = np.uint64(_stream.episode_key(11, 2))
    py = _stream.EpisodeStream(11, 2)
    for count in range(1, 200):
        p = rates[count % len(rates)]
        assert (_stream._bits53(key, count) < _stream.below(p)) == (py.random() < p)


def test_the_block_stream_gives_the_words_of_the_formula() -> None:
    # Draws in blocks against word(k) = mix(key + k * G) computed one at a time in
    # Python, across block ends, with uncounted-word draws (n = 1) between: a stream of
    # its own, and one stream restarted episode after episode from the words `Starts`
    # computes ahead (as an env's is), over a run of episodes and a fresh seed.
    rng = np.random.default_rng(3)
    starts, restarted = _stream.Starts(), _stream.EpisodeStream(0, 0)
    cases = [(0, 0, None), (2**64 - 1, 9, None), *((5, e, starts) for e in range(70)),
             (0, 0, starts), (5, 3, starts)]  # fmt: skip
    for seed, episode, ahead in cases:
        if ahead is None:
            stream = _stream.EpisodeStream(seed, episode)
        else:
            ahead.restart(restarted, seed, episode)
            stream = restarted
        key = _stream.episode_key(seed, episode)
        for count in range(1, 1500 if episode in (0, 9, 69) else 40):
            word = _stream.mix((key + count * _stream.GOLDEN) & _stream.MASK)
            kind = rng.integers(4)
            if kind == 0:
                assert stream.random() == (word >> 11) / 2**53
            elif kind == 1:
                assert stream.integers(1) == 0
            else:
                n = int(rng.choice([2, 3, 31, 10**5, 2**32 - 1]))
                assert stream.integers(n) == ((word >> 32) * n) >> 32
            assert stream.count == count


@pytest.mark.filterwarnings("ignore:the start")  # [12] is a P-position on purpose
# The threaded kernels are the serial loop's twin (`numba.prange`): compiled for --full only.
@pytest.mark.parametrize(
    "threads", [None, pytest.param(2, marks=pytest.mark.slow)], ids=["serial", "threads"]
)
@pytest.mark.parametrize(("env_id", "kwargs"), CASES)
def test_same_seeds_give_the_same_episodes_as_the_single_env(
    env_id: str, kwargs: dict[str, Any], threads: int | None
) -> None:
    batch = 3
    vec = gym.make_vec(
        env_id, num_envs=batch, vectorization_mode="vector_entry_point", num_threads=threads,
        **kwargs,
    )  # fmt: skip
    assert vec.num_threads == threads
    singles = [gym.make(env_id, **kwargs) for _ in range(batch)]
    assert vec.single_observation_space == singles[0].observation_space
    obs, info = vec.reset(seed=5)
    for i, env in enumerate(singles):
        single_obs, single_info = env.reset(seed=5 + i)
        assert np.array_equal(obs[i], single_obs)
        assert np.array_equal(info["action_mask"][i], single_info["action_mask"])
    picker = np.random.default_rng(1)
    ends = illegal = 0
    for _ in range(120):
        actions = []
        for i in range(batch):
            legal = np.flatnonzero(info["action_mask"][i])
            if picker.random() < 0.03:  # sometimes an illegal action, which loses
                blocked = np.flatnonzero(info["action_mask"][i] == 0)
                actions.append(int(blocked[0]) if len(blocked) else len(info["action_mask"][i]))
            else:
                actions.append(int(legal[picker.integers(len(legal))]))
        obs, rewards, terminated, truncated, info = vec.step(np.array(actions))
        assert not truncated.any() and vec.observation_space.contains(obs)
        for i, env in enumerate(singles):
            s_obs, s_reward, s_term, _, s_info = env.step(actions[i])
            assert s_reward == rewards[i] and s_term == terminated[i]
            if s_term:
                ends += 1
                illegal += s_info["illegal_action"]
                assert info["_final_obs"][i]
                assert np.array_equal(info["final_obs"][i], s_obs)
                s_obs, s_info = env.reset()
            assert np.array_equal(obs[i], s_obs)
            assert np.array_equal(info["action_mask"][i], s_info["action_mask"])
    assert ends > 10 and illegal > 0


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("MetaNIM/Nim-v0", {"heaps": [3, 4, 5], "misere": True}),
        ("MetaNIM/Chomp-v0", {"rows": 3, "cols": 5}),
        ("MetaNIM/Kayles-v0", {"rows": [4, 6], "seat": "second"}),
        ("MetaNIM/CornerQueen-v0", {"height": 6, "width": 9}),
    ],
)
def test_index_observations_are_the_state_index_of_each_board(
    env_id: str, kwargs: dict[str, Any]
) -> None:
    """The batched env's index (NumPy, from raw observations) is `Game.state_index` of the
    state the single env with the same seed holds (exact ints), final states included."""
    batch = 3
    vec = gym.make_vec(
        env_id, num_envs=batch, vectorization_mode="vector_entry_point", observation="index",
        **kwargs,
    )  # fmt: skip
    singles = [gym.make(env_id, observation="index", **kwargs).unwrapped for _ in range(batch)]
    game = singles[0].game
    assert vec.single_observation_space == gym.spaces.Discrete(game.num_states)
    obs, info = vec.reset(seed=11)
    for i, env in enumerate(singles):
        single_obs, _ = env.reset(seed=11 + i)
        assert obs[i] == single_obs == game.state_index(env.state)
    picker = np.random.default_rng(2)
    ends = 0
    for _ in range(60):
        actions = np.array([picker.choice(np.flatnonzero(m)) for m in info["action_mask"]])
        obs, _, terminated, _, info = vec.step(actions)
        assert obs.shape == (batch,) and obs.dtype == np.int64
        for i, env in enumerate(singles):
            single_obs, _, done, _, _ = env.step(int(actions[i]))
            assert single_obs == game.state_index(env.state) and done == terminated[i]
            if done:
                ends += 1
                assert info["final_obs"][i] == single_obs
                env.reset()
            assert obs[i] == game.state_index(env.state)
    assert ends > 5


def test_an_index_past_int64_is_refused_in_one_line() -> None:
    for make in (
        lambda: gym.make("MetaNIM/Kayles-v0", rows=[40, 30], observation="index"),
        lambda: gym.make_vec(
            "MetaNIM/Chomp-v0",
            num_envs=2,
            vectorization_mode="vector_entry_point",
            rows=40,
            cols=40,
            observation="index",
        ),
    ):
        with pytest.raises(SizeLimitError, match=r"observation='index'.*int64") as err:
            make()
        assert "\n" not in str(err.value)


def _state_of_obs(game: Any, obs: np.ndarray) -> Any:
    """The game state a raw observation shows (Fibonacci `[remaining, max_take]`, Kayles
    pin rows)."""
    if game.info.name == "kayles":
        return tuple(
            "".join(map(str, row[:size])) for row, size in zip(obs, game.rows, strict=True)
        )
    return (int(obs[0]), int(obs[1]))


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("MetaNIM/Fibonacci-v0", {}),
        ("MetaNIM/Kayles-v0", {"preset": "kayles-20", "start": "random_n"}),
        ("MetaNIM/Kayles-v0", {"preset": "kayles-20", "misere": True, "start": "random_n"}),
    ],
)
def test_conformance_spaces_autoreset_and_determinism(env_id: str, kwargs: dict[str, Any]) -> None:
    def run(seed: int) -> list[np.ndarray]:
        vec = gym.make_vec(env_id, num_envs=16, vectorization_mode="vector_entry_point", **kwargs)
        assert isinstance(vec, ImpartialGameVectorEnv)
        game = vec.game
        obs, info = vec.reset(seed=seed)
        trace = [obs]
        picker = np.random.default_rng(0)
        for _ in range(40):
            assert vec.observation_space.contains(obs)
            assert info["action_mask"].shape == (16, vec.single_action_space.n)
            assert np.array_equal(vec.action_masks(), info["action_mask"].astype(bool))
            actions = np.argmax(info["action_mask"] * picker.random(info["action_mask"].shape), 1)
            assert vec.action_space.contains(actions)
            obs, rewards, terminated, truncated, info = vec.step(actions)
            assert obs.dtype == np.int64 and rewards.dtype == np.float64
            assert terminated.dtype == truncated.dtype == np.bool_
            assert set(np.unique(rewards)) <= {-1.0, 0.0, 1.0}
            assert np.array_equal(rewards != 0, terminated)
            for i in range(16):
                state = _state_of_obs(game, obs[i])
                # Every returned observation, autoreset ones included, is a decision of
                # the agent: never over, and its mask is the rules' legal moves.
                assert not game.is_terminal(state)
                legal = sorted(game.action_id(m) for m in game.legal_moves(state))
                assert np.flatnonzero(info["action_mask"][i]).tolist() == legal
                if terminated[i]:
                    # A fresh start (random_n) is an N-position; all actions here are
                    # legal, so the final state is over.
                    assert outcome(game, state) == "N"
                    assert game.is_terminal(_state_of_obs(game, info["final_obs"][i]))
            trace += [obs, rewards, terminated]
        return trace

    first, again, other = run(3), run(3), run(4)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other, strict=True))


def test_optimal_replies_follow_the_closed_form() -> None:
    # NIM, one heap, take 1-3, normal play: the P-positions are the multiples of 4.
    vec = ImpartialGameVectorEnv("nim", 64, heaps=[31], max_take=3, start="initial")
    obs, info = vec.reset(seed=0)
    picker = np.random.default_rng(2)
    replies = 0
    for _ in range(50):
        actions = np.argmax(info["action_mask"] * picker.random(info["action_mask"].shape), 1)
        before = obs[:, 0]
        obs, _, terminated, _, info = vec.step(actions)
        left = before - (actions + 1)
        for i in np.flatnonzero(~terminated & (left % 4 != 0)):
            assert obs[i, 0] % 4 == 0
            replies += 1
    assert replies > 100


def test_unsupported_settings_fail_clearly() -> None:
    with pytest.raises(ValueError, match="seat must be one of"):
        ImpartialGameVectorEnv("nim", 2, seat="last")
    with pytest.warns(UserWarning, match="N-position for the opponent"):
        opponent_wins_at_once = ImpartialGameVectorEnv(
            "nim", 2, heaps=[3], seat="second", start=[3]
        )
    with pytest.raises(ValueError, match="ended the game"):  # 3 stones, take up to 3
        opponent_wins_at_once.reset(seed=0)
    with pytest.raises(ValueError, match="illegal='lose' only"):
        ImpartialGameVectorEnv("nim", 2, illegal="penalize")
    with pytest.raises(ValueError, match="max_states=100"):
        ImpartialGameVectorEnv("chomp", 2, rows=4, cols=6, max_states=100)
    # Up to KAYLES_MAX_PINS pins in all Kayles runs on bit masks; past it, on state tables.
    assert ImpartialGameVectorEnv("kayles", 2, rows=[12, KAYLES_MAX_PINS - 12]).kayles is not None
    with pytest.raises(ValueError, match=r"max_states=500.*at most 24 pins in all runs on bit"):
        ImpartialGameVectorEnv("kayles", 2, rows=[13, KAYLES_MAX_PINS - 12], max_states=500)
    with pytest.raises(ValueError, match="observation must be one of"):
        ImpartialGameVectorEnv("nim", 2, observation="pixels")
    vec = ImpartialGameVectorEnv("nim", 2)
    with pytest.raises(RuntimeError, match="reset"):
        vec.step(np.zeros(2, np.int64))
    vec.reset(seed=0)
    with pytest.raises(ValueError, match="2 integer action ids"):
        vec.step(np.zeros(3, np.int64))


def test_the_docs_example_runs() -> None:
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "envs.md").read_text()
    section = text[text.index("## Batched env") : text.index("### One loop")]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    namespace: dict[str, Any] = {}
    exec(compile(code, "docs/envs.md[batched env]", "exec"), namespace)
    assert namespace["obs"].shape == (1024, 1)


def _exact_random_n_starts(heap: int, k: int) -> dict[int, float]:
    """The documented start law, enumerated from the rules of one-heap NIM (take 1..k).

    A uniform random playout from `heap`; a uniform pick among its non-terminal
    N-positions (heap mod (k+1) != 0 in normal play).
    """
    law: dict[int, float] = {}

    def walk(h: int, trail: list[int], prob: float) -> None:
        if h == 0:
            cands = [s for s in trail if s % (k + 1)]
            for s in cands:
                law[s] = law.get(s, 0.0) + prob / len(cands)
            return
        takes = range(1, min(k, h) + 1)
        for t in takes:
            walk(h - t, [*trail, h], prob / len(takes))

    walk(heap, [], 1.0)
    return law


def test_random_n_starts_follow_the_documented_distribution() -> None:
    from scipy.stats import chisquare

    law = _exact_random_n_starts(10, 3)
    assert abs(sum(law.values()) - 1.0) < 1e-12  # 10 is an N-position: never a retry
    env = gym.make("MetaNIM/Nim-v0", heaps=[10], max_take=3, start="random_n")
    env.reset(seed=0)
    draws = 6000
    counts = dict.fromkeys(law, 0)
    for _ in range(draws):
        obs, _ = env.reset()
        counts[int(obs[0])] += 1
    states = sorted(law)
    result = chisquare([counts[s] for s in states], [law[s] * draws for s in states])
    assert result.pvalue > 1e-3, (counts, law)


@pytest.mark.slow
def test_encoded_observations_have_the_single_env_space() -> None:
    """`observation=` gives the single env's encoding (values are compared in
    `test_same_seeds_give_the_same_episodes_as_the_single_env`)."""
    for kwargs in ({"preset": "nim-31-k3"}, {"preset": "kayles-20"}):
        env_id = "MetaNIM/Kayles-v0" if "kayles" in kwargs["preset"] else "MetaNIM/Nim-v0"
        for kind in ("onehot", "binary"):
            vec = gym.make_vec(env_id, num_envs=4, observation=kind, **kwargs)
            single = gym.make(env_id, observation=kind, **kwargs)
            assert isinstance(vec, ImpartialGameVectorEnv)
            assert vec.single_observation_space == single.observation_space
            assert isinstance(single.observation_space, gym.spaces.MultiBinary)
            obs, _ = vec.reset(seed=0)
            assert obs.shape == (4, *single.observation_space.shape) and obs.dtype == np.int8


def test_the_kayles_move_draw_takes_the_kth_move_in_action_order() -> None:
    # The drawn bit (broadword select of the k-th set bit) against a list of the set
    # bits indexed by the plain-Python stream's draw, on move sets of up to 48 bits (24
    # pins), 200 draws each (nearly every k); and a drawn move against the move list of
    # the rules (`Kayles.legal_moves`, in action-id order) with the draw's index.
    rng = np.random.default_rng(5)
    sets = [1, 2**47, 2**48 - 1, 0x8000_0000_0001, *rng.integers(1, 2**48, 300).tolist()]
    for x in sets:
        bits = [p for p in range(48) if x >> p & 1]
        stream = _stream.EpisodeStream(9, 1)
        key = np.uint64(_stream.episode_key(9, 1))
        for count in range(1, 201):
            assert _kayles_pick(key, count, x) == bits[stream.integers(len(bits))]
    game = make_game("kayles", rows=[7, 5])
    bits = _KaylesBits(game.rows, game.width, game.misere)
    key = np.uint64(_stream.episode_key(2, 0))
    for count in range(1, 300):
        m = int(rng.integers(1, 2**12))
        state = (
            "".join(str(m >> p & 1) for p in range(7)),
            "".join(str(m >> p & 1) for p in range(7, 12)),
        )
        moves = game.legal_moves(state)
        move = moves[_integers(key, count, len(moves))]
        after = _kayles_draw(key, count, m, _kayles_moves(m, bits.pairs))
        assert after == game.state_index(game.child(state, move))


@pytest.mark.parametrize("misere", [False, True])
@pytest.mark.parametrize("rows", [[1], [5], [4, 6], [3, 1, 7], [2, 2, 2, 2]])
def test_kayles_outcome_table_matches_the_reference_solver(rows: list[int], misere: bool) -> None:
    """Every bit mask's outcome against the plain-Python memoized recursion."""
    bits = _KaylesBits(rows, max(rows), misere)
    game = Kayles(rows, misere=misere)
    reference = ReferenceSolver(game)
    assert bits.outcome.shape == (2 ** sum(rows),)
    for mask in range(2 ** sum(rows)):
        state = _state_of(mask, rows)
        # A board's bit mask is its state index (`Kayles.state_index`).
        assert game.state_index(state) == mask
        assert bits.outcome[mask] == (reference.outcome(state) == "N"), (state, misere)


@pytest.mark.parametrize("misere", [False, True])
def test_kayles_20_outcome_table_matches_the_reference_solver(misere: bool) -> None:
    rows = [20]
    bits = _KaylesBits(rows, 20, misere)
    reference = ReferenceSolver(Kayles(rows, misere=misere))
    masks = np.random.default_rng(0).integers(0, 2**20, 3000)
    # The full row, the empty row, one pin, and random subsets (every run length shows up).
    for mask in [2**20 - 1, 0, 1, 2**19, *masks.tolist()]:
        state = _state_of(mask, rows)
        assert bits.outcome[mask] == (reference.outcome(state) == "N"), (state, misere)


def _state_of(mask: int, rows: list[int]) -> tuple[str, ...]:
    """The Kayles state of a bit mask: rows concatenated, pin 0 of row 0 at bit 0."""
    cells = "".join("1" if mask >> p & 1 else "0" for p in range(sum(rows)))
    ends = np.cumsum([0, *rows])
    return tuple(cells[a:b] for a, b in itertools.pairwise(ends))


def _rules_outcome_of_starts(game: Any) -> tuple[bool, bool]:
    """From the rules alone (legal moves, children; the last mover loses in misère play):
    whether any reachable state is an N-position the agent may start at, and whether any
    is a P-position from which no move ends the game (the opponent's start)."""
    import functools

    @functools.cache
    def wins(state: Any) -> bool:
        moves = game.legal_moves(state)
        if not moves:
            return game.misere  # the last mover lost in misère play, won in normal play
        return any(not wins(game.child(state, m)) for m in moves)

    seen, todo, n_start, p_start = set(), [game.initial_state()], False, False
    while todo:
        state = todo.pop()
        if state in seen:
            continue
        seen.add(state)
        children = [game.child(state, m) for m in game.legal_moves(state)]
        if children:
            n_start |= wins(state)
            p_start |= not wins(state) and all(game.legal_moves(c) for c in children)
        todo.extend(children)
    return n_start, p_start


def test_an_unstartable_seat_says_the_rule_the_same_in_both_envs() -> None:
    # Misère Chomp 2x8: no P-position from which no move ends the game (by the rules).
    kwargs = dict(rows=2, cols=8, misere=True, seat="second")
    n_start, p_start = _rules_outcome_of_starts(make_game("chomp", rows=2, cols=8, misere=True))
    assert n_start and not p_start
    makers = (
        lambda: gym.make("MetaNIM/Chomp-v0", **kwargs),
        lambda: gym.make_vec(
            "MetaNIM/Chomp-v0", num_envs=2, vectorization_mode="vector_entry_point", **kwargs
        ),
    )
    messages = []
    for make in makers:  # refused when made (the batched env tables its starts) or reset
        with pytest.raises(ValueError) as info:
            make().reset(seed=0)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert (
        "cannot start this seat: no reachable state is a P-position for the opponent" in messages[0]
    )
    assert "random playouts" not in messages[0] and "N-position reachable" not in messages[0]


@pytest.mark.parametrize(
    ("kwargs", "playout_compiled"),
    [
        ({"preset": "nim-31-k3", "start": "random_n"}, False),  # a start law
        ({"preset": "nim-31-k3", "start": "initial"}, False),  # a fixed start
        ({"heaps": [70, 70], "subtraction_set": [1, 3, 4]}, True),  # no law: playouts
    ],
)
def test_only_a_game_whose_starts_are_played_out_compiles_the_playout(
    kwargs: dict[str, Any], playout_compiled: bool, tmp_path: Any
) -> None:
    """The step kernel gets no `wanted` table where no start is played out, and numba
    prunes the playout branch before typing: `_playout` is not compiled there (it was
    0.4 s of a cold first step). In a fresh process with an empty numba cache, so the
    kernel is compiled, not loaded (a loaded kernel holds its callees' code)."""
    env_id = "MetaNIM/Nim-v0" if "preset" in kwargs else "MetaNIM/Subtraction-v0"
    code = (
        "import gymnasium as gym, numpy as np, metanim\n"
        "from metanim.envs import vector\n"
        f"env = gym.make_vec({env_id!r}, num_envs=8, **{kwargs!r})\n"
        "env.reset(seed=0)\n"
        "for _ in range(20):\n"
        "    env.step(np.argmax(env.action_masks(), axis=1))\n"
        "print(len(vector._step.signatures), len(vector._playout.signatures))\n"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300,
        env=env,
    )  # fmt: skip
    assert out.stdout.split() == ["1", "1" if playout_compiled else "0"]
