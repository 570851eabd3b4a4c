"""PettingZoo module of the subtraction game: `subtraction_v0.env()` and `subtraction_v0.raw_env()`."""

from __future__ import annotations

from typing import Any

from metanim.envs import pettingzoo_env as _aec


def env(**kwargs: Any) -> Any:
    """The wrapped AEC env (see `metanim.envs.pettingzoo_env.env`)."""
    return _aec.env(game="subtraction", **kwargs)


def raw_env(**kwargs: Any) -> _aec.MetaNimAECEnv:
    """The unwrapped AEC env."""
    return _aec.raw_env(game="subtraction", **kwargs)


__all__ = ["env", "raw_env"]
