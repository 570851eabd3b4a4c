"""Gymnasium environments over the five games, opponents, and a PettingZoo view.

`import metanim` registers `MetaNIM/Nim-v0`, `MetaNIM/Fibonacci-v0`,
`MetaNIM/Kayles-v0`, `MetaNIM/Chomp-v0` and `MetaNIM/CornerQueen-v0`. The
PettingZoo adapter lives in `metanim.envs.pettingzoo_env` (one classic-style module
per game in `metanim.envs.pettingzoo`: `from metanim.envs.pettingzoo import nim_v0`)
and is imported only when asked for, so PettingZoo stays an optional extra.
"""

from __future__ import annotations

from metanim.envs.env import ImpartialGameEnv, OpponentForfeitError
from metanim.envs.opponents import (
    ActionId,
    EpsilonOptimalOpponent,
    Opponent,
    OptimalOpponent,
    RandomOpponent,
    make_opponent,
)
from metanim.envs.registration import ENV_IDS, PRESET_IDS, register_envs

__all__ = [
    "ENV_IDS",
    "PRESET_IDS",
    "ActionId",
    "EpsilonOptimalOpponent",
    "ImpartialGameEnv",
    "Opponent",
    "OpponentForfeitError",
    "OptimalOpponent",
    "RandomOpponent",
    "make_opponent",
    "register_envs",
]
