"""Stable-Baselines3's `VecEnv` over the batched env, for sb3-contrib's MaskablePPO.

Needs `stable-baselines3` (the `torch-checks` or `rl` extra). SB3 trains on its own
`VecEnv` interface, not on Gymnasium's `VectorEnv`; `SB3VecEnv` translates, so MaskablePPO
steps all B boards in one numba call:

    vec = SB3VecEnv(gym.make_vec("MetaNIM/Nim-v0", num_envs=64, observation="onehot"))
    MaskablePPO("MlpPolicy", vec).learn(50_000)

The batched env must use same-step autoreset (its default), which is SB3's convention:
a finished board's returned observation is its next episode's first one, and its last
one is `infos[i]["terminal_observation"]`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices


class SB3VecEnv(VecEnv):
    """A Gymnasium `VectorEnv` with same-step autoreset (e.g. `ImpartialGameVectorEnv`)
    as an SB3 `VecEnv`.

    `reset()` seeds board `i` with `seed + i` after `seed(seed)`; `dones` is
    `terminated | truncated`; `infos[i]` holds `terminal_observation` and
    `TimeLimit.truncated` (truncated and not terminated) where board `i` ended, as SB3's
    own `DummyVecEnv` writes them. `env_method("action_masks")` gives each board's bool
    mask (what `sb3_contrib.common.maskable.utils.get_action_masks` stacks).

    Args:
        env: the batched env; its `metadata["autoreset_mode"]` must be same-step.
    """

    def __init__(self, env: VectorEnv) -> None:
        mode = env.metadata.get("autoreset_mode")
        if mode != AutoresetMode.SAME_STEP:
            raise ValueError(
                f"SB3 expects same-step autoreset; this vector env's is {mode!r} "
                "(make the batched env with autoreset_mode='same_step', its default)"
            )
        self.env = env
        self._actions: np.ndarray | None = None
        self._seed: int | None = None
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

    def reset(self) -> Any:
        obs, _ = self.env.reset(seed=self._seed)
        self._seed = None
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seeds for the next `reset()`: board `i` gets `seed + i`."""
        self._seed = seed
        return [None if seed is None else seed + i for i in range(self.num_envs)]

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        assert self._actions is not None, "step_async() comes first"
        obs, rewards, terminated, truncated, info = self.env.step(self._actions)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            final = info["final_obs"]
            for i in np.flatnonzero(dones):
                infos[i] = {
                    "terminal_observation": _row(final, i),
                    "TimeLimit.truncated": bool(truncated[i] and not terminated[i]),
                }
        return obs, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The batched env's attribute, once per board asked for (boards share it)."""
        value = getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """Calls the batched env's method once; a per-board result (an array of `num_envs`
        rows, such as `action_masks()`) is split into boards."""
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        rows = isinstance(result, np.ndarray) and result.shape[:1] == (self.num_envs,)
        return [result[i] if rows else result for i in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]


def _row(batch: Any, i: int) -> Any:
    """Board `i` of a batched observation (an array, or a dict of arrays)."""
    if isinstance(batch, dict):
        return {key: value[i] for key, value in batch.items()}
    return batch[i]


__all__ = ["SB3VecEnv"]
