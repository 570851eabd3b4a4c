"""Game settings as a run names them: a preset (`fibonacci-20`) or `NAME[:JSON params]`,
read once into a game and one canonical key.

The key is what a run's identity, its episode ids and its summary know a setting by: the
preset's name when the game is a preset's game, however it is spelled (`fibonacci`,
`fibonacci:{"n":20}` and `fibonacci-20` are one setting), else `name:{sorted params}`.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from metanim.games import PRESETS, Game, make_game
from metanim.util import strict_json

#: What a game setting's text after the colon is.
SETTING_FORMS = 'NAME:{JSON object of the parameters}, e.g. nim:{"heaps":[3,4,5]}'


def _resolved(game: Game[Any, Any]) -> str:
    return f"{game.name}:{json.dumps(game.params, sort_keys=True, separators=(',', ':'))}"


@functools.cache
def _presets() -> dict[str, str]:
    """Each preset's resolved game to its name (the first listed, if two are one game)."""
    out: dict[str, str] = {}
    for name in PRESETS:
        out.setdefault(_resolved(make_game(name)), name)
    return out


def setting_key(game: Game[Any, Any]) -> str:
    """The canonical key of a game: its preset's name, else `name:{sorted params}`."""
    resolved = _resolved(game)
    return _presets().get(resolved, resolved)


def parse_setting(text: str, *, as_spelled: bool = False) -> tuple[str, Game[Any, Any]]:
    """A game setting `PRESET` or `NAME[:JSON params]` to its canonical key and game.

    `as_spelled` keys it as a log whose identity is its config's text knows it: a bare
    preset by its name, anything else by `name:{sorted params}`.
    """
    name, sep, raw = text.strip().partition(":")
    # Whole numbers only: a game's sizes are never truncated from 12.5 to 12.
    params = strict_json(raw, f"game setting {text!r}", forms=SETTING_FORMS) if sep else {}
    if not isinstance(params, dict):
        raise ValueError(f"game parameters must be a JSON object, got {raw!r}")
    game = make_game(name, **params)
    if not as_spelled:
        return setting_key(game), game
    return (name if name in PRESETS and not params else _resolved(game)), game


@functools.cache
def canonical_key(text: str) -> str:
    """The canonical key of a setting's text, a key as spelled included (what a log's
    episodes carry); a text no game reads stays as it is (a log read back)."""
    try:
        return parse_setting(text)[0]
    except (ValueError, TypeError):
        return text
