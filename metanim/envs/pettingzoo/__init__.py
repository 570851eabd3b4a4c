"""PettingZoo modules, one per game, loaded as PettingZoo's classic games are.

>>> from metanim.envs.pettingzoo import nim_v0
>>> aec = nim_v0.env(render_mode="ansi")

Each module has `env(**kwargs)` (wrapped like the classic envs) and `raw_env(**kwargs)`;
the arguments are those of `metanim.envs.pettingzoo_env.MetaNimAECEnv` without `game`.
Needs the optional extra `pettingzoo`.
"""

from __future__ import annotations

from metanim.envs.pettingzoo import (
    chomp_v0,
    corner_queen_v0,
    fibonacci_v0,
    kayles_v0,
    nim_v0,
    octal_v0,
    subtraction_v0,
)

#: Module by game name.
MODULES = {
    "nim": nim_v0,
    "fibonacci": fibonacci_v0,
    "kayles": kayles_v0,
    "chomp": chomp_v0,
    "corner_queen": corner_queen_v0,
    "subtraction": subtraction_v0,
    "octal": octal_v0,
}

__all__ = [
    "MODULES",
    "chomp_v0",
    "corner_queen_v0",
    "fibonacci_v0",
    "kayles_v0",
    "nim_v0",
    "octal_v0",
    "subtraction_v0",
]
