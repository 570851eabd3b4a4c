"""Rules of the five impartial games, behind one `Game` interface.

Every other layer (solver, envs, prompts, datasets) reads a game through this
interface; no rule is written twice.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from typing import Any

from metanim.games._base import (
    DISGUISE_VERSION,
    LEGAL_MOVES_HEADING,
    LISTED_MOVES_MARK,
    MAX_INT64_STATES,
    MAX_LISTED_ACTIONS,
    PROMPT_VERSION,
    Game,
    GameInfo,
    check_int64_states,
    check_listable,
    game_prompt_version,
)
from metanim.games.chomp import Chomp
from metanim.games.corner_queen import CornerQueen
from metanim.games.errors import (
    IllegalMoveError,
    InvalidStateError,
    MoveError,
    SizeLimitError,
    TruncatedReplyError,
    UnparsableMoveError,
)
from metanim.games.fibonacci import FibonacciNim
from metanim.games.kayles import Kayles
from metanim.games.nim import Nim
from metanim.games.octal import Octal
from metanim.games.reply import extract_action
from metanim.games.subtraction import Subtraction
from metanim.util import MetaNimError

#: Game classes by their short name.
GAMES: dict[str, type[Game[Any, Any]]] = {
    cls.name: cls for cls in (Nim, FibonacciNim, Kayles, Chomp, CornerQueen, Subtraction, Octal)
}

#: The generated families: the rule is data (a subtraction set, an octal code), part of
#: the configuration and drawn per run by `metanim.solver.sample_game`.
FAMILIES: tuple[str, ...] = (Subtraction.name, Octal.name)

_ALIASES = {
    "fib": "fibonacci",
    "fibonacci_nim": "fibonacci",
    "queen": "corner_queen",
    "cornerqueen": "corner_queen",
    "wythoff": "corner_queen",
}

_PAPER_SETTINGS: dict[str, tuple[str, dict[str, Any]]] = {
    "nim-31-k3": ("nim", {"heaps": [31], "max_take": 3}),
    "nim-31-k4": ("nim", {"heaps": [31], "max_take": 4}),
    "nim-31-k5": ("nim", {"heaps": [31], "max_take": 5}),
    "fibonacci-20": ("fibonacci", {"n": 20}),
    "kayles-20": ("kayles", {"rows": [20]}),
    "kayles-2rows": ("kayles", {"rows": [5, 6]}),
    "chomp-2x8": ("chomp", {"rows": 2, "cols": 8}),
    "chomp-5x5": ("chomp", {"rows": 5, "cols": 5}),
    "corner-queen": ("corner_queen", {"height": 20, "width": 20, "start": [4, 16]}),
}

#: The seed paper's simulator settings (Tables 6–7), by preset name, in both play
#: rules: `nim-31-k3` (normal) and `nim-31-k3-misere`, and so on. Every preset starts
#: by the one start rule (`metanim.envs.env.resolve_start`, mode "auto"): its initial
#: state when that is an N-position (the paper's misère NIM-31 k=3 and Fibonacci-20
#: among them), else a random N-position (misère Kayles-20 and NIM-31 k=4/5).
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    **_PAPER_SETTINGS,
    **{
        f"{name}-misere": (base, {**params, "misere": True})
        for name, (base, params) in _PAPER_SETTINGS.items()
    },
}


def check_preset_params(name: str, params: Mapping[str, Any]) -> None:
    """Refuse parameters that contradict what preset `name` fixes (nothing for a game name).

    A preset fixes its sizes and its play rule: `nim-31-k3` is normal play and
    `nim-31-k3-misere` misère. A parameter equal to the preset's value is accepted; one
    that differs raises `ValueError` naming both, so that no flag silently changes a
    preset and no default silently overrides one (`make_game` itself still merges).
    """
    if name not in PRESETS:
        return
    base, fixed = PRESETS[name]
    fixed = {"misere": False, **fixed}
    for key, value in params.items():
        if key not in fixed or value == fixed[key]:
            continue
        if key == "misere":
            other = name.removesuffix("-misere") + ("" if fixed["misere"] else "-misere")
            rule = "misère" if fixed["misere"] else "normal"
            raise ValueError(
                f"{name} is the {rule} play preset; {'misère' if value else 'normal'} play "
                f"contradicts it: use {other}"
            )
        raise ValueError(
            f"{name} is a preset with {key}={json.dumps(fixed[key])}; {key}={json.dumps(value)} "
            f"contradicts it: use the game {base} with your own parameters"
        )


def game_class(name: str) -> type[Game[Any, Any]]:
    """The game class for a name such as "nim", "fibonacci", "corner-queen"."""
    key = name.strip().lower().replace("-", "_")
    key = _ALIASES.get(key, key)
    if key not in GAMES:
        raise ValueError(f"unknown game {name!r}; choose one of {sorted(GAMES)}")
    return GAMES[key]


def make_game(name: str, **params: Any) -> Game[Any, Any]:
    """Build a game from its name (or a preset name) and JSON-friendly parameters."""
    if name in PRESETS:
        cls, params = GAMES[PRESETS[name][0]], {**PRESETS[name][1], **params}
    else:
        cls = game_class(name)
    valid = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ValueError(
            f"unknown parameter(s) {', '.join(unknown)} for {cls.name}; valid: {', '.join(valid)}"
        )
    return cls(**params)


def game_from_prompt(text: str) -> tuple[Game[Any, Any], Any]:
    """Recover the game configuration and the exact state from a rendered prompt."""
    for cls in GAMES.values():
        # The named or the disguised Game Role (`config_from_text` says which it was).
        if cls.role_phrase in text or cls.disguised_role in text:
            game = cls(**cls.config_from_text(text))  # type: ignore[attr-defined]
            return game, game.parse_state(text)
    raise InvalidStateError("the text does not contain a MetaNIM game prompt")


__all__ = [
    "DISGUISE_VERSION",
    "FAMILIES",
    "GAMES",
    "LEGAL_MOVES_HEADING",
    "LISTED_MOVES_MARK",
    "MAX_INT64_STATES",
    "MAX_LISTED_ACTIONS",
    "PRESETS",
    "PROMPT_VERSION",
    "Chomp",
    "CornerQueen",
    "FibonacciNim",
    "Game",
    "GameInfo",
    "IllegalMoveError",
    "InvalidStateError",
    "Kayles",
    "MetaNimError",
    "MoveError",
    "Nim",
    "Octal",
    "SizeLimitError",
    "Subtraction",
    "TruncatedReplyError",
    "UnparsableMoveError",
    "check_int64_states",
    "check_listable",
    "check_preset_params",
    "extract_action",
    "game_class",
    "game_from_prompt",
    "game_prompt_version",
    "make_game",
]
