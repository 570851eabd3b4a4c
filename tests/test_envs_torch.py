"""Checks that need torch: torchrl's `GymEnv` + `check_env_specs`, and SB3's env checker.

Optional extra `torch-checks` (CPU torch); CI installs it (see .ci/run). Every registered
id runs with its defaults and with a resized board.
"""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("torch")

from test_envs_conformance import RESIZED

import metanim  # noqa: F401  (registers the ids)
from metanim.envs import ENV_IDS

CONFIGS = [(env_id, {}) for env_id in ENV_IDS] + [(env_id, RESIZED[env_id]) for env_id in ENV_IDS]
IDS = [f"{env_id}-{'resized' if kw else 'default'}" for env_id, kw in CONFIGS]


@pytest.mark.parametrize(("env_id", "kwargs"), CONFIGS, ids=IDS)
def test_torchrl_gym_env_and_check_env_specs(env_id: str, kwargs: dict[str, Any]) -> None:
    pytest.importorskip("torchrl")
    from torchrl.envs import GymEnv
    from torchrl.envs.utils import check_env_specs

    # GymEnv first tries frameskip=1 and relies on a TypeError to drop it.
    env = GymEnv(env_id, **kwargs)
    check_env_specs(env, seed=0)  # raises on any spec/rollout mismatch
    rollout = env.rollout(25, break_when_any_done=False)
    assert rollout.batch_size[0] == 25
    assert set(rollout["next", "reward"].unique().tolist()) <= {-1.0, 0.0, 1.0}


@pytest.mark.parametrize(("env_id", "kwargs"), CONFIGS, ids=IDS)
def test_stable_baselines3_env_checker(env_id: str, kwargs: dict[str, Any]) -> None:
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_checker import check_env

    env = gym.make(env_id, **kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)  # raises on a broken contract
    # The only remark allowed: SB3's advice to flatten 2-D boards (Kayles, Chomp) for an
    # MLP policy; with Gymnasium's FlattenObservation there is none at all.
    advice = [str(w.message) for w in caught]
    assert all("unconventional shape" in m for m in advice)
    assert bool(advice) == (len(env.observation_space.shape) > 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(gym.wrappers.FlattenObservation(env.unwrapped))
    assert [str(w.message) for w in caught] == []
