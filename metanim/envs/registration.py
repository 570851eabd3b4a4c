"""Registration of the Gymnasium ids, generated from one small table.

Imported by `import metanim`, so `gym.make("MetaNIM/Nim-v0")` works after that
import and `gym.make("metanim:MetaNIM/Nim-v0")` works in a fresh interpreter
(Gymnasium imports the module named before the colon). Idempotent.
"""

from __future__ import annotations

import gymnasium as gym

from metanim.games import PRESETS

NAMESPACE = "MetaNIM"
VERSION = 0
ENTRY_POINT = "metanim.envs.env:ImpartialGameEnv"
#: `gym.make_vec(id, num_envs=B, vectorization_mode="vector_entry_point")` builds this.
VECTOR_ENTRY_POINT = "metanim.envs.vector:ImpartialGameVectorEnv"

#: Env name -> game name. Each id's defaults are the game's own (the paper's) defaults.
ENV_GAMES: dict[str, str] = {
    "Nim": "nim",
    "Fibonacci": "fibonacci",
    "Kayles": "kayles",
    "Chomp": "chomp",
    "CornerQueen": "corner_queen",
    "Subtraction": "subtraction",
    "Octal": "octal",
}


def env_id(name: str) -> str:
    """The registered id of an env name, e.g. `env_id("Nim") == "MetaNIM/Nim-v0"`."""
    return f"{NAMESPACE}/{name}-v{VERSION}"


#: Every registered id.
ENV_IDS: list[str] = [env_id(name) for name in ENV_GAMES]

#: (id, preset name) for every paper preset, e.g. ("MetaNIM/Nim-v0", "nim-31-k4").
PRESET_IDS: list[tuple[str, str]] = [
    (env_id(name), preset)
    for name, game in ENV_GAMES.items()
    for preset, (base, _) in PRESETS.items()
    if base == game
]


def register_envs() -> None:
    """Register every id once; calling it again changes nothing.

    `gym.make` returns the env itself, without Gymnasium's `OrderEnforcing` and
    `PassiveEnvChecker` wrappers: the env refuses `step` before `reset` on its own, and
    passes `gymnasium.utils.env_checker.check_env` in the test suite, where each wrapper
    would add a Python call to every step (a third of one, `docs/benchmarks.md`).
    `gym.make(id, disable_env_checker=False)` still adds the checker.
    """
    for name, game in ENV_GAMES.items():
        if env_id(name) not in gym.registry:
            gym.register(
                id=env_id(name),
                entry_point=ENTRY_POINT,
                vector_entry_point=VECTOR_ENTRY_POINT,
                kwargs={"game": game},
                order_enforce=False,
                disable_env_checker=True,
            )


register_envs()
