"""The disguised prompt variant: no name or theory word, the same rules, read back exactly."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from metanim.games import DISGUISE_VERSION, GAMES, Game, game_from_prompt, make_game
from metanim.solver import outcome, winning_moves

#: Names and theory words a disguised prompt must not contain (the issue's list and more).
WORDS = (
    "Nim", "Fibonacci", "Zeckendorf", "Kayles", "bowling", "Chomp", "chocolate", "poison",
    "queen", "Wythoff", "Grundy", "Sprague", "mex", "Bouton", "nimber", "octal",
    "subtraction", "Dawson", "Corner-Queen", "Whinihan", "Guy", "Smith", "pin",
)  # fmt: skip
# A word at a word start, in any case and any ending ("poisoned", "Queen's", "pins").
FORBIDDEN = re.compile(r"\b(?:" + "|".join(map(re.escape, WORDS)) + ")", re.IGNORECASE)

CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("nim", {}),
    ("nim", {"heaps": [3, 5, 7], "max_take": None}),
    ("fibonacci", {}),
    ("kayles", {}),
    ("kayles", {"rows": [5, 6]}),
    ("chomp", {}),
    ("corner_queen", {}),
    ("subtraction", {}),
    ("subtraction", {"heaps": [6, 9], "subtraction_set": [2, 5]}),
    ("octal", {}),
    ("octal", {"rows": [6, 8], "code": "0.137"}),
]


def _states(game: Game[Any, Any], count: int = 12) -> list[Any]:
    """The start and positions along seeded random playouts (from the rules)."""
    rng = np.random.default_rng(0)
    out = [game.initial_state()]
    state = game.initial_state()
    while len(out) < count:
        moves = game.legal_moves(state)
        if not moves:
            state = game.initial_state()
            continue
        state = game.child(state, moves[int(rng.integers(len(moves)))])
        out.append(state)
    return out


def test_every_game_has_a_config_here_and_a_distinct_disguised_name() -> None:
    assert {name for name, _ in CONFIGS} == set(GAMES)
    roles = [cls.disguised_role for cls in GAMES.values()]
    assert len(set(roles)) == len(roles)
    assert not any(a in b for a in roles for b in roles if a != b)
    assert not any(FORBIDDEN.search(role) for role in roles)


@pytest.mark.parametrize("misere", [False, True])
@pytest.mark.parametrize(("name", "params"), CONFIGS)
def test_disguised_texts_hold_no_listed_word_and_read_back(
    name: str, params: dict[str, Any], misere: bool
) -> None:
    named = make_game(name, **params, misere=misere)
    disguised = make_game(name, **params, misere=misere, disguise=True)
    assert disguised.params == {**named.params, "disguise": True}
    # The named prompt does name the game (the word test can fail).
    assert FORBIDDEN.search(named.prompt(named.initial_state()))
    for state in _states(named):
        shown = [
            disguised.prompt(state),
            disguised.action_schema(state),
            disguised.task_text(state),
            disguised.shown_title,
            *(disguised.move_words(m) for m in disguised.legal_moves(state)),
        ]
        # Reasons a model is told after an illegal answer: an action id that is not legal.
        mask = disguised.action_mask(state)
        illegal = [a for a in range(min(len(mask), 50)) if not mask[a]][:5]
        shown += [disguised.why_illegal(state, disguised.move_from_action(a)) for a in illegal]
        for text in shown:
            assert not FORBIDDEN.search(text), (text, FORBIDDEN.findall(text))
        # Same rules, same answers; the prompt parses back to the same game and state.
        assert disguised.legal_moves(state) == named.legal_moves(state)
        back, back_state = game_from_prompt(disguised.prompt(state))
        named_back, named_state = game_from_prompt(named.prompt(state))
        assert back_state == named_state == state
        assert back.disguise and back.params == {**named_back.params, "disguise": True}
        assert disguised.parse_state(disguised.describe(state)) == state
        if disguised.legal_moves(state):
            assert outcome(disguised, state) == outcome(named, state)
            assert winning_moves(disguised, state) == winning_moves(named, state)


def test_a_reply_reads_the_same_under_either_variant() -> None:
    named, disguised = make_game("kayles", rows=[9]), make_game("kayles", rows=[9], disguise=True)
    state = ("110111011",)
    for reply in ('```json\n{"action": [3, 4]}\n```', "action: 7", "[0, 1]"):
        assert disguised.parse_move(reply, state) == named.parse_move(reply, state)


def test_the_disguised_variant_enters_a_runs_identity() -> None:
    from metanim.arena import TournamentConfig
    from metanim.records import config_identity

    setting = 'nim:{"heaps":[9],"max_take":3,"disguise":true}'
    shown = TournamentConfig(games=[setting], method="react", opponent="random")
    plain = TournamentConfig(games=["nim-31-k3"], method="react", opponent="random")
    versions = config_identity(shown.model_dump(mode="json"))["prompt_versions"]
    assert versions["disguise"] == DISGUISE_VERSION
    assert "disguise" not in config_identity(plain.model_dump(mode="json"))["prompt_versions"]
