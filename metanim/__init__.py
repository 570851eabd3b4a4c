"""MetaNIM Arena: exactly solvable impartial games for testing LLM agents' reasoning.

`import metanim` registers the Gymnasium environments (`MetaNIM/Nim-v0`, ...).
"""

import metanim.envs.registration  # noqa: F401  (registers the Gymnasium ids on import)
from metanim.games import (
    GAMES,
    PRESETS,
    Chomp,
    CornerQueen,
    FibonacciNim,
    Game,
    IllegalMoveError,
    InvalidStateError,
    Kayles,
    MoveError,
    Nim,
    Octal,
    Subtraction,
    UnparsableMoveError,
    make_game,
)

__version__ = "0.1.0"

__all__ = [
    "GAMES",
    "PRESETS",
    "Chomp",
    "CornerQueen",
    "FibonacciNim",
    "Game",
    "IllegalMoveError",
    "InvalidStateError",
    "Kayles",
    "MoveError",
    "Nim",
    "Octal",
    "Subtraction",
    "UnparsableMoveError",
    "__version__",
    "make_game",
]
