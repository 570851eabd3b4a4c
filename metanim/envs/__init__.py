"""Gymnasium environments over the five games, opponents, and a PettingZoo view.

`import metanim` registers `MetaNIM/Nim-v0`, `MetaNIM/Fibonacci-v0`,
`MetaNIM/Kayles-v0`, `MetaNIM/Chomp-v0` and `MetaNIM/CornerQueen-v0`. The
PettingZoo adapter lives in `metanim.envs.pettingzoo_env` (one classic-style module
per game in `metanim.envs.pettingzoo`: `from metanim.envs.pettingzoo import nim_v0`)
and is imported only when asked for, so PettingZoo stays an optional extra. The names
below load on first use: registering the ids imports no env, solver or numba.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metanim.util.lazy import lazy_exports

if TYPE_CHECKING:
    from metanim.envs._starts import StartLaw, start_law
    from metanim.envs._stream import EpisodeStream
    from metanim.envs.env import (
        START_MODES,
        ImpartialGameEnv,
        OpponentForfeitError,
        check_playout_length,
        resolve_start,
        start_setting,
    )
    from metanim.envs.opponents import (
        ActionId,
        EpsilonOptimalOpponent,
        Opponent,
        OptimalOpponent,
        RandomOpponent,
        is_solver_player,
        make_opponent,
        resolve_move,
    )
    from metanim.envs.registration import ENV_IDS, PRESET_IDS, register_envs

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "_starts": ["StartLaw", "start_law"],
        "_stream": ["EpisodeStream"],
        "env": [
            "START_MODES",
            "ImpartialGameEnv",
            "OpponentForfeitError",
            "check_playout_length",
            "resolve_start",
            "start_setting",
        ],
        "opponents": [
            "ActionId",
            "EpsilonOptimalOpponent",
            "Opponent",
            "OptimalOpponent",
            "RandomOpponent",
            "is_solver_player",
            "make_opponent",
            "resolve_move",
        ],
        "registration": ["ENV_IDS", "PRESET_IDS", "register_envs"],
    },
)

__all__ = [
    "ENV_IDS",
    "PRESET_IDS",
    "START_MODES",
    "ActionId",
    "EpisodeStream",
    "EpsilonOptimalOpponent",
    "ImpartialGameEnv",
    "Opponent",
    "OpponentForfeitError",
    "OptimalOpponent",
    "RandomOpponent",
    "StartLaw",
    "check_playout_length",
    "is_solver_player",
    "make_opponent",
    "register_envs",
    "resolve_move",
    "resolve_start",
    "start_law",
    "start_setting",
]
