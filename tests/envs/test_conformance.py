"""Conformance of every registered env id and every paper preset with the Gymnasium API.

Parametrized over the registry's own lists (`ENV_IDS`, `PRESET_IDS`), so a new
game or preset gets every test by being registered.
"""

from __future__ import annotations

import pickle
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec
from gymnasium.utils.env_checker import check_env

import metanim
from metanim.envs import ENV_IDS, PRESET_IDS

#: A resized board (or other sizes) for every registered id: the defaults of a resized
#: game (e.g. the Corner Queen start) must be valid too.
RESIZED: dict[str, dict[str, Any]] = {
    "MetaNIM/Nim-v0": {"heaps": [3, 4, 5], "max_take": None},
    "MetaNIM/Fibonacci-v0": {"n": 30},
    "MetaNIM/Kayles-v0": {"rows": [7, 9]},
    "MetaNIM/Chomp-v0": {"rows": 3, "cols": 7},
    "MetaNIM/CornerQueen-v0": {"height": 8, "width": 12},
    "MetaNIM/Subtraction-v0": {"heaps": [7, 9, 4], "subtraction_set": [2, 5, 6]},
    "MetaNIM/Octal-v0": {"rows": [6, 11], "code": "0.137"},
}

CONFIGS: list[tuple[str, dict[str, Any]]] = (
    [(env_id, {}) for env_id in ENV_IDS]
    + [(env_id, RESIZED[env_id]) for env_id in ENV_IDS]
    + [(env_id, {"preset": preset}) for env_id, preset in PRESET_IDS]
    + [(env_id, {"misere": True, "seat": "second"}) for env_id in ENV_IDS]
    + [
        (env_id, {"observation": kind})
        for env_id in ENV_IDS
        for kind in ("onehot", "binary", "index")
    ]
    + [(env_id, {"disguise": True}) for env_id in ENV_IDS]
)
IDS = [f"{env_id}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for env_id, kw in CONFIGS]


def test_resized_boards_cover_every_id_and_start_on_the_board() -> None:
    assert set(RESIZED) == set(ENV_IDS)
    env = gym.make("MetaNIM/CornerQueen-v0", height=8, width=12, start="initial")
    obs, _ = env.reset(seed=0)
    assert obs.tolist() == [0, 11]  # [4, 16] is off an 8x12 board: the top-right corner
    obs, _ = gym.make("MetaNIM/CornerQueen-v0", start="initial").reset(seed=0)
    assert obs.tolist() == [4, 16]  # the paper's start where it fits


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_an_unknown_keyword_is_a_type_error(env_id: str) -> None:
    # torchrl's GymEnv probes with e.g. `frameskip` and catches exactly TypeError.
    with pytest.raises(TypeError, match="frameskip"):
        gym.make(env_id, frameskip=4)


def test_human_render_mode_prints_the_board(capsys: pytest.CaptureFixture[str]) -> None:
    env = gym.make("MetaNIM/Nim-v0", render_mode="human")
    env.reset(seed=0)
    assert env.render() is None
    assert "remaining in the pile" in capsys.readouterr().out


def test_every_id_and_preset_is_listed() -> None:
    assert ENV_IDS == [
        "MetaNIM/Nim-v0",
        "MetaNIM/Fibonacci-v0",
        "MetaNIM/Kayles-v0",
        "MetaNIM/Chomp-v0",
        "MetaNIM/CornerQueen-v0",
        "MetaNIM/Subtraction-v0",
        "MetaNIM/Octal-v0",
    ]
    assert all(env_id in gym.registry for env_id in ENV_IDS)
    assert {preset for _, preset in PRESET_IDS} == set(metanim.PRESETS)


def rollout(env: gym.Env[Any, Any], seed: int, steps: int = 40) -> list[Any]:
    """A trajectory under seeded random legal actions, across episode ends."""
    picker = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    trace: list[Any] = [obs.tolist(), info["state"]]
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(picker.choice(legal)))
        trace += [obs.tolist(), reward, terminated, info["state"], info["opponent_move"]]
        if terminated or truncated:
            obs, info = env.reset()
            trace += ["reset", obs.tolist()]
    return trace


@pytest.mark.parametrize(("env_id", "kwargs"), CONFIGS, ids=IDS)
def test_check_env_without_warnings(env_id: str, kwargs: dict[str, Any]) -> None:
    env = gym.make(env_id, **kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped, skip_render_check=True)  # raises on a broken contract
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize(("env_id", "kwargs"), CONFIGS, ids=IDS)
def test_same_seed_same_trajectory(env_id: str, kwargs: dict[str, Any]) -> None:
    first = rollout(gym.make(env_id, **kwargs), seed=3)
    assert first == rollout(gym.make(env_id, **kwargs), seed=3)
    other = [rollout(gym.make(env_id, **kwargs), seed=s) for s in (4, 5, 6)]
    assert any(t != first for t in other), "the seed has no effect"


@pytest.mark.parametrize(("env_id", "kwargs"), CONFIGS, ids=IDS)
def test_pickled_env_continues_identically(env_id: str, kwargs: dict[str, Any]) -> None:
    env = gym.make(env_id, **kwargs)
    env.reset(seed=11)
    clone = pickle.loads(pickle.dumps(env))
    actions = np.random.default_rng(0)
    for _ in range(30):
        mask = env.unwrapped.action_masks()
        assert np.array_equal(mask, clone.unwrapped.action_masks())
        action = int(actions.choice(np.flatnonzero(mask)))
        a, b = env.step(action), clone.step(action)
        assert a[0].tolist() == b[0].tolist() and a[1:3] == b[1:3]
        assert a[4]["state"] == b[4]["state"]
        if a[2]:
            assert env.reset()[1]["state"] == clone.reset()[1]["state"]


@pytest.mark.parametrize(("env_id", "kwargs"), CONFIGS, ids=IDS)
def test_spec_json_round_trip(env_id: str, kwargs: dict[str, Any]) -> None:
    env = gym.make(env_id, **kwargs)
    assert env.spec is not None
    spec = EnvSpec.from_json(env.spec.to_json())
    assert spec == env.spec
    assert rollout(gym.make(spec), seed=1) == rollout(env, seed=1)


@pytest.mark.parametrize(("env_id", "kwargs"), CONFIGS, ids=IDS)
@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_every_render_mode(env_id: str, kwargs: dict[str, Any], mode: str) -> None:
    env = gym.make(env_id, render_mode=mode, **kwargs)
    assert mode in env.metadata["render_modes"]
    env.reset(seed=0)
    frame = env.render()
    if mode == "ansi":
        assert isinstance(frame, str)
        assert env.unwrapped.game.describe(env.unwrapped.state) in frame
    else:
        assert isinstance(frame, np.ndarray)
        assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
        assert frame.min() < frame.max()


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec(env_id: str, mode: str) -> None:
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode)
    try:
        obs, info = envs.reset(seed=[1, 2])
        assert obs.shape == (2, *envs.single_observation_space.shape)
        for _ in range(8):
            # A finished sub-env shows an empty mask; its next step is an autoreset.
            masks = np.stack(info["action_mask"])
            actions = np.array([np.flatnonzero(m)[0] if m.any() else 0 for m in masks])
            obs, reward, _, _, info = envs.step(actions)
            assert obs.shape[0] == 2 and reward.shape == (2,)
            assert set(np.unique(reward)) <= {-1.0, 0.0, 1.0}
            assert not info["illegal_action"].any()
    finally:
        envs.close()
