"""A game setting has one key however it is spelled: a preset by its name, its game
written as `NAME:JSON` by the same name; a key as a log spelled it reads back to it."""

from __future__ import annotations

import json

import pytest

from metanim.games import PRESETS
from metanim.games.settings import canonical_key, parse_setting


@pytest.mark.parametrize("preset", list(PRESETS))
def test_a_preset_written_as_its_game_is_the_preset(preset: str) -> None:
    game, params = PRESETS[preset]
    spelled = f"{game}:{json.dumps(params)}"
    assert parse_setting(spelled)[0] == parse_setting(preset)[0] == preset
    # As spelled, the JSON form keeps its own key; read back, it is the preset's.
    as_spelled = parse_setting(spelled, as_spelled=True)[0]
    assert as_spelled != preset and canonical_key(as_spelled) == preset


def test_another_size_is_another_setting() -> None:
    assert parse_setting('fibonacci:{"n":21}')[0] == 'fibonacci:{"misere":false,"n":21}'
    assert canonical_key("not a game") == "not a game"
