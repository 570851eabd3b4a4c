"""Checks that need torch: torchrl's `GymEnv` + `check_env_specs` and its masked-policy
recipe, SB3's env checker, and sb3-contrib's MaskablePPO over the batched env.

Optional extra `torch-checks` (CPU torch); CI installs it (see .ci/run) and sets
`METANIM_REQUIRE`, so there these tests fail rather than skip when a module is missing
(`conftest.need`). Every registered id runs with its defaults and with a resized board.
"""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import metanim  # noqa: F401  (registers the ids)
from metanim.envs import ENV_IDS
from tests.conftest import need
from tests.envs.test_conformance import RESIZED

CONFIGS = [(env_id, {}) for env_id in ENV_IDS] + [(env_id, RESIZED[env_id]) for env_id in ENV_IDS]
IDS = [f"{env_id}-{'resized' if kw else 'default'}" for env_id, kw in CONFIGS]


@pytest.mark.slow
@pytest.mark.parametrize(("env_id", "kwargs"), CONFIGS, ids=IDS)
def test_torchrl_gym_env_and_check_env_specs(env_id: str, kwargs: dict[str, Any]) -> None:
    need("torch")
    need("torchrl")
    from torchrl.envs import GymEnv
    from torchrl.envs.utils import check_env_specs

    # GymEnv first tries frameskip=1 and relies on a TypeError to drop it.
    env = GymEnv(env_id, **kwargs)
    check_env_specs(env, seed=0)  # raises on any spec/rollout mismatch
    rollout = env.rollout(25, break_when_any_done=False)
    assert rollout.batch_size[0] == 25
    assert set(rollout["next", "reward"].unique().tolist()) <= {-1.0, 0.0, 1.0}


@pytest.mark.slow
@pytest.mark.parametrize(("env_id", "kwargs"), CONFIGS, ids=IDS)
def test_stable_baselines3_env_checker(env_id: str, kwargs: dict[str, Any]) -> None:
    need("torch")
    need("stable_baselines3")
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


def _legal_ids(game: Any, obs: np.ndarray) -> list[int]:
    """The legal action ids of a Kayles observation (pin rows), from the rules."""
    state = tuple(
        "".join(str(int(p)) for p in row[:size]) for row, size in zip(obs, game.rows, strict=True)
    )
    return sorted(game.action_id(m) for m in game.legal_moves(state))


@pytest.mark.slow
def test_torchrl_masked_policy_recipe_plays_only_legal_moves() -> None:
    """The recipe of docs/envs.md: `GymEnv` -> `ActionMask` -> a masked policy, 1,000 steps."""
    torch = need("torch")
    need("torchrl")
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "envs.md").read_text()
    section = text[text.index("### Masks inside the observation") :]
    code = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)[0]
    torch.manual_seed(0)
    namespace: dict[str, Any] = {}
    exec(compile(code, "docs/envs.md[torchrl recipe]", "exec"), namespace)
    env, rollout = namespace["env"], namespace["rollout"]
    assert rollout.batch_size[0] == 1000
    assert rollout["action_mask"].dtype == torch.bool
    game = env.base_env._env.unwrapped.game
    played = rollout["action"].tolist()
    observed = rollout["observation"].numpy()
    # Each action is legal in the position it was played in, by the rules (not the mask).
    for action, obs in zip(played, observed, strict=True):
        assert action in _legal_ids(game, obs)
    rewards = rollout["next", "reward"].flatten().tolist()
    assert set(rewards) == {-1.0, 0.0, 1.0}  # games ended, won and lost, over 1,000 steps
    # Without a policy, torchrl samples from the action spec that ActionMask masked.
    plain = env.rollout(300, break_when_any_done=False)
    for action, obs in zip(plain["action"].tolist(), plain["observation"].numpy(), strict=True):
        assert action in _legal_ids(game, obs)


class _Checked:
    """Counts actions that are illegal in the boards' current positions (from the env's
    masks before the step), then steps."""

    def __init__(self, vec: Any) -> None:
        self.vec, self.illegal, self.steps = vec, 0, 0
        step_async = vec.step_async

        def checked(actions: np.ndarray) -> None:
            masks = vec.env.action_masks()
            self.illegal += int((~masks[np.arange(len(actions)), actions]).sum())
            self.steps += len(actions)
            step_async(actions)

        vec.step_async = checked


@pytest.mark.slow
def test_maskable_ppo_trains_on_the_batched_env_through_the_sb3_adapter() -> None:
    torch = need("torch")
    need("stable_baselines3")
    need("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from metanim.integrations.sb3 import SB3VecEnv

    torch.set_num_threads(1)
    setting = {"heaps": [15], "max_take": 3, "observation": "onehot", "opponent": "optimal"}
    vec = SB3VecEnv(gym.make_vec("MetaNIM/Nim-v0", num_envs=16, **setting))
    checked = _Checked(vec)
    vec.seed(0)
    model = MaskablePPO("MlpPolicy", vec, n_steps=32, batch_size=128, seed=0, verbose=0)
    model.learn(4096)
    assert checked.steps >= 4096 and checked.illegal == 0

    def win_rate(policy: Any) -> float:
        env = gym.make_vec("MetaNIM/Nim-v0", num_envs=64, **setting)
        obs, info = env.reset(seed=123)
        rng, wins, ends = np.random.default_rng(0), 0, 0
        for _ in range(60):
            masks = info["action_mask"].astype(bool)
            obs, rewards, terminated, _, info = env.step(policy(obs, masks, rng))
            wins, ends = wins + int((rewards > 0).sum()), ends + int(terminated.sum())
        return wins / ends

    trained = win_rate(lambda o, m, rng: model.predict(o, action_masks=m, deterministic=True)[0])
    rand = win_rate(lambda o, m, rng: np.argmax(m * rng.random(m.shape), axis=1))
    # Every start is an N-position: a perfect policy wins them all (heap mod 4 is the rule).
    assert trained >= 0.9 and rand <= 0.4, (trained, rand)


@pytest.mark.slow
def test_the_sb3_adapter_matches_sb3s_own_dummy_vec_env() -> None:
    """Same seeds and actions: SB3's DummyVecEnv over single envs and the adapter over the
    batched env return the same observations, rewards, dones and terminal observations."""
    need("stable_baselines3")
    from stable_baselines3.common.vec_env import DummyVecEnv

    from metanim.integrations.sb3 import SB3VecEnv

    setting = {"preset": "kayles-2rows", "max_episode_steps": 4, "mask_in_obs": True}
    ours = SB3VecEnv(gym.make_vec("MetaNIM/Kayles-v0", num_envs=3, **setting))
    theirs = DummyVecEnv([lambda: gym.make("MetaNIM/Kayles-v0", **setting) for _ in range(3)])
    ours.seed(5)
    theirs.seed(5)
    obs, s_obs = ours.reset(), theirs.reset()
    rng, ends = np.random.default_rng(0), 0
    for _ in range(40):
        for key in ("observation", "action_mask"):
            assert np.array_equal(obs[key], s_obs[key])
        masks = np.stack(ours.env_method("action_masks"))
        assert np.array_equal(masks, obs["action_mask"])
        actions = np.argmax(masks * rng.random(masks.shape), axis=1)
        obs, rewards, dones, infos = ours.step(actions)
        s_obs, s_rewards, s_dones, s_infos = theirs.step(actions)
        assert np.array_equal(rewards, s_rewards) and np.array_equal(dones, s_dones)
        for i in np.flatnonzero(dones):
            ends += 1
            assert infos[i]["TimeLimit.truncated"] == s_infos[i]["TimeLimit.truncated"]
            for key in ("observation", "action_mask"):
                assert np.array_equal(
                    infos[i]["terminal_observation"][key], s_infos[i]["terminal_observation"][key]
                )
    assert ends > 5
    with pytest.raises(ValueError, match="same-step"):
        SB3VecEnv(gym.make_vec("MetaNIM/Kayles-v0", num_envs=2, autoreset_mode="next_step"))


def test_a_missing_required_module_fails_instead_of_skipping(monkeypatch) -> None:
    missing = "metanim_no_such_module"
    monkeypatch.delenv("METANIM_REQUIRE", raising=False)
    with pytest.raises(pytest.skip.Exception):
        need(missing)
    monkeypatch.setenv("METANIM_REQUIRE", f"torch, {missing}")
    with pytest.raises(pytest.fail.Exception, match="METANIM_REQUIRE"):
        need(missing)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_check_env_specs_as_the_docs_run_it_before_action_mask(env_id: str) -> None:
    """docs/envs.md runs torchrl's `check_env_specs` on the masked env before `ActionMask`
    (after it, a game that ends within the check's rollout samples an empty mask): its
    block runs as written, and the same check passes on every id."""
    torch = need("torch")
    need("torchrl")
    import re
    from pathlib import Path

    from torchrl.envs import GymEnv
    from torchrl.envs.utils import check_env_specs

    text = (Path(__file__).resolve().parents[2] / "docs" / "envs.md").read_text()
    section = text[text.index("### Masks inside the observation") :]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    (code,) = [b for b in blocks if "check_env_specs(" in b]
    exec(compile(code, "docs/envs.md[check_env_specs]", "exec"), {})
    env = GymEnv(env_id, mask_in_obs=True, categorical_action_encoding=True)
    check_env_specs(env, seed=0)  # raises on a spec the env's outputs do not meet
    first = env.reset()
    mask = first["action_mask"]
    assert mask.dtype == torch.bool and bool(mask.any())  # a legal move to make
