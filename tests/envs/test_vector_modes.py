"""The batched env's autoreset modes, time limit and masked observations, against
Gymnasium's own sync vector env over the single env (same seeds, same actions)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers import vector as vector_wrappers

import metanim  # noqa: F401  (registers the ids)
from metanim.envs.vector import ImpartialGameVectorEnv

ROOT = Path(__file__).resolve().parents[2]

CASES: list[tuple[str, dict[str, Any]]] = [
    ("MetaNIM/Nim-v0", {}),
    ("MetaNIM/Kayles-v0", {"preset": "kayles-20", "opponent": "random"}),
    ("MetaNIM/Chomp-v0", {"preset": "chomp-2x8", "seat": "second", "opponent": "epsilon:0.3"}),
    ("MetaNIM/Fibonacci-v0", {"n": 12, "misere": True, "observation": "onehot"}),
]


def _actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random legal actions, an illegal one now and then; any action on an all-zero row."""
    actions = np.argmax(mask * rng.random(mask.shape), axis=1)
    wrong = rng.random(len(mask)) < 0.03
    return np.where(wrong, mask.shape[1] - 1 - actions, actions)


def _pair(env_id: str, kwargs: dict[str, Any], mode: AutoresetMode, **extra: Any) -> tuple:
    batched = gym.make_vec(env_id, num_envs=4, autoreset_mode=mode.value, **extra, **kwargs)
    assert isinstance(batched, ImpartialGameVectorEnv)
    sync = gym.make_vec(
        env_id,
        num_envs=4,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": mode},
        **extra,
        **kwargs,
    )
    return batched, sync


@pytest.mark.filterwarnings("ignore:.*precision lowered")
@pytest.mark.parametrize("limit", [None, 3])
@pytest.mark.parametrize(("env_id", "kwargs"), CASES)
def test_next_step_autoreset_equals_the_sync_vector_env(
    env_id: str, kwargs: dict[str, Any], limit: int | None
) -> None:
    extra = {} if limit is None else {"max_episode_steps": limit}
    batched, sync = _pair(env_id, kwargs, AutoresetMode.NEXT_STEP, **extra)
    assert batched.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = batched.reset(seed=7)
    s_obs, s_info = sync.reset(seed=7)
    assert np.array_equal(obs, s_obs)
    rng = np.random.default_rng(0)
    zero_rows = ends = truncations = 0
    for _ in range(80):
        assert np.array_equal(info["action_mask"], s_info["action_mask"])
        zero_rows += int((info["action_mask"].sum(axis=1) == 0).sum())
        actions = _actions(info["action_mask"], rng)
        obs, rewards, terminated, truncated, info = batched.step(actions)
        s_obs, s_rewards, s_terminated, s_truncated, s_info = sync.step(actions)
        assert np.array_equal(obs, s_obs)
        assert np.array_equal(rewards, s_rewards)
        assert np.array_equal(terminated, s_terminated)
        assert np.array_equal(truncated, s_truncated)
        assert "final_obs" not in info
        ends += int(terminated.sum())
        truncations += int(truncated.sum())
    # Finished boards show their final state, whose mask is all zeros at a game's end.
    assert ends + truncations > 5 and (truncations > 0) == (limit is not None)
    if limit is None:
        assert zero_rows > 0


@pytest.mark.filterwarnings("ignore:.*precision lowered")
@pytest.mark.parametrize(("env_id", "kwargs"), CASES)
def test_a_reset_with_boards_pending_restarts_every_board_as_the_sync_vector_env(
    env_id: str, kwargs: dict[str, Any]
) -> None:
    # A reset mid-run, in next-step mode, while some boards wait to restart on their next
    # step: every board starts its first episode of the new seed, none a pending one's.
    batched, sync = _pair(env_id, kwargs, AutoresetMode.NEXT_STEP)
    _, info = batched.reset(seed=3)
    sync.reset(seed=3)
    rng = np.random.default_rng(1)
    pending = 0
    for _ in range(60):
        actions = _actions(info["action_mask"], rng)
        _, _, terminated, _, info = batched.step(actions)
        sync.step(actions)
        pending = int(terminated.sum())
        if 0 < pending < len(terminated):
            break
    assert 0 < pending < 4
    obs, info = batched.reset(seed=11)
    s_obs, s_info = sync.reset(seed=11)
    for _ in range(20):
        assert np.array_equal(obs, s_obs)
        assert np.array_equal(info["action_mask"], s_info["action_mask"])
        actions = _actions(info["action_mask"], rng)
        obs, rewards, terminated, _, info = batched.step(actions)
        s_obs, s_rewards, s_terminated, _, s_info = sync.step(actions)
        assert np.array_equal(rewards, s_rewards)
        assert np.array_equal(terminated, s_terminated)


@pytest.mark.parametrize(("env_id", "kwargs"), CASES[:3])
def test_same_step_autoreset_with_a_time_limit_equals_the_sync_vector_env(
    env_id: str, kwargs: dict[str, Any]
) -> None:
    batched, sync = _pair(env_id, kwargs, AutoresetMode.SAME_STEP, max_episode_steps=2)
    obs, info = batched.reset(seed=3)
    s_obs, s_info = sync.reset(seed=3)
    rng = np.random.default_rng(1)
    finals = 0
    for _ in range(60):
        actions = _actions(info["action_mask"], rng)
        obs, rewards, terminated, truncated, info = batched.step(actions)
        s_obs, s_rewards, s_terminated, s_truncated, s_info = sync.step(actions)
        for ours, theirs in [(obs, s_obs), (rewards, s_rewards), (terminated, s_terminated),
                             (truncated, s_truncated), (info["action_mask"], s_info["action_mask"])]:  # fmt: skip
            assert np.array_equal(ours, theirs)
        # Never an all-zero mask: a finished board already shows its next start.
        assert info["action_mask"].sum(axis=1).min() > 0
        ended = terminated | truncated
        assert np.array_equal(info.get("_final_obs", np.zeros(4, bool)), ended)
        for i in np.flatnonzero(ended):
            assert np.array_equal(info["final_obs"][i], s_info["final_obs"][i])
            finals += 1
    assert finals > 10


def test_max_episode_steps_reaches_the_batched_env_through_make_vec() -> None:
    # Gymnasium passes it to a vector entry point as a keyword argument.
    vec = gym.make_vec("MetaNIM/Nim-v0", num_envs=2, max_episode_steps=3, start="initial",
                       opponent="random")  # fmt: skip
    assert isinstance(vec, ImpartialGameVectorEnv) and vec.max_episode_steps == 3
    vec.reset(seed=0)
    # Taking one stone of 31 each step never ends a game within 3 steps: the third truncates.
    for step in range(1, 7):
        _, rewards, terminated, truncated, info = vec.step(np.zeros(2, np.int64))
        assert not terminated.any() and not rewards.any()
        assert truncated.tolist() == [step % 3 == 0] * 2
        assert ("final_obs" in info) == (step % 3 == 0)
    with pytest.raises(ValueError, match="max_episode_steps must be"):
        ImpartialGameVectorEnv("nim", 2, max_episode_steps=0)
    with pytest.raises(ValueError, match="autoreset_mode must be"):
        ImpartialGameVectorEnv("nim", 2, autoreset_mode="disabled")


WRAPPERS = {
    "FlattenObservation": lambda env: vector_wrappers.FlattenObservation(env),
    "NormalizeObservation": lambda env: vector_wrappers.NormalizeObservation(env),
    "DtypeObservation": lambda env: vector_wrappers.DtypeObservation(env, np.float32),
    "TransformObservation": lambda env: vector_wrappers.TransformObservation(
        env, lambda obs: obs * 2, env.observation_space
    ),
}


@pytest.mark.parametrize("name", list(WRAPPERS))
def test_gymnasium_vector_observation_wrappers_in_next_step(name: str) -> None:
    wrap = WRAPPERS[name]
    batched = wrap(gym.make_vec("MetaNIM/Kayles-v0", num_envs=4, autoreset_mode="next_step"))
    sync = wrap(gym.make_vec("MetaNIM/Kayles-v0", num_envs=4, vectorization_mode="sync"))
    obs, info = batched.reset(seed=0)
    s_obs, _ = sync.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(30):
        assert np.allclose(obs, s_obs) and obs.dtype == s_obs.dtype
        actions = _actions(info["action_mask"], rng)
        obs, _, _, _, info = batched.step(actions)
        s_obs = sync.step(actions)[0]
    if name == "FlattenObservation":
        assert obs.shape == (4, 20)
    # The same-step default is refused by these wrappers, as Gymnasium documents.
    with pytest.raises(ValueError, match="autoreset_mode"):
        wrap(gym.make_vec("MetaNIM/Kayles-v0", num_envs=4))


def test_mask_in_obs_is_the_pettingzoo_layout_with_a_bool_mask() -> None:
    from gymnasium.utils.env_checker import check_env

    env = gym.make("MetaNIM/Chomp-v0", mask_in_obs=True)
    assert set(env.observation_space.spaces) == {"observation", "action_mask"}
    assert env.observation_space["action_mask"].dtype == np.bool_
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert obs["action_mask"].dtype == np.bool_
    assert np.array_equal(obs["action_mask"], info["action_mask"].astype(bool))
    game = env.unwrapped.game
    state = tuple(int(n) for n in obs["observation"].sum(axis=1))  # Chomp rows as lengths
    legal = sorted(game.action_id(m) for m in game.legal_moves(state))
    assert np.flatnonzero(obs["action_mask"]).tolist() == legal
    # The batched env gives the same dicts, batched.
    vec = gym.make_vec("MetaNIM/Chomp-v0", num_envs=3, mask_in_obs=True)
    v_obs, v_info = vec.reset(seed=0)
    assert vec.single_observation_space == env.observation_space
    assert vec.observation_space.contains(v_obs)
    assert np.array_equal(v_obs["observation"][0], obs["observation"])
    assert np.array_equal(v_obs["action_mask"], v_info["action_mask"].astype(bool))


def _docs_loop() -> str:
    text = (ROOT / "docs" / "envs.md").read_text()
    section = text[text.index("### One loop for every vector mode") :]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)[0]


@pytest.mark.slow
def test_the_docs_loop_runs_unchanged_in_sync_async_and_the_batched_env() -> None:
    namespace: dict[str, Any] = {}
    exec(compile(_docs_loop(), "docs/envs.md[one loop]", "exec"), namespace)
    play = namespace["play"]
    results = {}
    for mode, extra in [("sync", {}), ("async", {}), ("vector_entry_point", {}),
                        ("vector_entry_point", {"autoreset_mode": "next_step"})]:  # fmt: skip
        vec = gym.make_vec("MetaNIM/Kayles-v0", num_envs=8, vectorization_mode=mode, **extra)
        results[mode, tuple(extra)] = play(vec, steps=200)
    # sync, async and the batched env in next_step see the same episodes; all finish some.
    same = {
        results["sync", ()],
        results["async", ()],
        results["vector_entry_point", ("autoreset_mode",)],
    }
    assert len(same) == 1 and min(results.values())[0] > 0
    # What the docs warn about: in sync mode, rows of zeros on the steps after a game ends.
    sync = gym.make_vec("MetaNIM/Kayles-v0", num_envs=8, vectorization_mode="sync")
    _, info = sync.reset(seed=0)
    rng, zero_rows = np.random.default_rng(0), 0
    for _ in range(200):
        zero_rows += int((info["action_mask"].sum(axis=1) == 0).sum())
        _, _, _, _, info = sync.step(np.argmax(info["action_mask"] * rng.random((8, 40)), 1))
    assert zero_rows > 0
