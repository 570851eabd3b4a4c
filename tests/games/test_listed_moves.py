"""`Game.prompt(list_moves=True)`: the prompt ends with every legal move, in the game's own
move text, in action-id order; without the option the prompt is the one the earlier
code sent, byte for byte; the simulator reads a prompt with the list as one without."""

from __future__ import annotations

import gzip
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from metanim.games import (
    GAMES,
    LEGAL_MOVES_HEADING,
    PROMPT_VERSION,
    Game,
    game_from_prompt,
    game_prompt_version,
    make_game,
)

#: One small configuration of every game (presets where one exists), normal and misère.
CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("nim-31-k3", {}),
    ("nim", {"heaps": [3, 4, 5]}),
    ("fibonacci-20", {}),
    ("kayles-20", {}),
    ("kayles-2rows", {}),
    ("chomp-2x8", {}),
    ("chomp-5x5-misere", {}),
    ("corner-queen", {}),
    ("subtraction", {}),
    ("octal", {}),
]
#: Captured requests of earlier code (tests/sim_golden.py): the prompts it sent.
CAPTURED = Path(__file__).resolve().parents[1] / "data" / "sim_prompts.json.gz"
ROLE = re.compile(r"#Game Role: You are (.+?), a participant in ")
# One move text: a bracketed list ("[0, 2]") or a bare token ("3").
ITEM = re.compile(r"\[[^\]]*\]|[^,\s\[\]]+")


def _states(game: Game[Any, Any], seed: int, count: int = 4) -> list[Any]:
    """The start and a few positions of a seeded random playout (not the terminal one)."""
    rng = random.Random(seed)
    state, out = game.initial_state(), []
    while game.legal_moves(state) and len(out) < count:
        out.append(state)
        for _ in range(rng.randrange(1, 4)):
            moves = game.legal_moves(state)
            if not moves:
                break
            state = game.apply(state, rng.choice(moves))
    return out


def _listed(prompt: str) -> list[str]:
    """The items of the prompt's Legal Moves section, split by their own shape."""
    last = prompt.splitlines()[-1]
    assert last.startswith(LEGAL_MOVES_HEADING + " "), last
    return ITEM.findall(last.removeprefix(LEGAL_MOVES_HEADING))


def test_every_game_is_covered() -> None:
    assert {make_game(name, **params).name for name, params in CONFIGS} == set(GAMES)


@pytest.mark.parametrize(("name", "params"), CONFIGS, ids=[n for n, _ in CONFIGS])
def test_the_list_is_the_legal_moves_in_action_id_order(name: str, params: dict) -> None:
    game = make_game(name, **params)
    for seed, state in enumerate(_states(game, seed=len(name))):
        items = _listed(game.prompt(state, list_moves=True))
        legal = game.legal_moves(state)
        assert len(items) == len(legal), (name, state)
        # Each item is a legal move, read back by the game's own parser; together they
        # are every legal move once, in rising action id.
        ids = [game.action_id(game.parse_move(item, state)) for item in items]
        assert all(game.is_legal(state, game.parse_move(item, state)) for item in items)
        assert sorted(set(ids)) == ids
        assert set(ids) == {game.action_id(m) for m in legal}, (name, seed)


@pytest.mark.parametrize(("name", "params"), CONFIGS, ids=[n for n, _ in CONFIGS])
def test_the_list_is_one_last_section_and_the_state_reads_back(name: str, params: dict) -> None:
    game = make_game(name, **params)
    for state in _states(game, seed=7):
        plain = game.prompt(state, "Alice")
        listed = game.prompt(state, "Alice", list_moves=True)
        assert plain == game.prompt(state, "Alice", list_moves=False)
        head, sep, _ = listed.rpartition("\n" + LEGAL_MOVES_HEADING + " ")
        assert sep and head == plain
        # What the simulator reads: the game and state, with the list skipped.
        rebuilt, parsed = game_from_prompt(listed)
        assert parsed == state and rebuilt.legal_moves(parsed) == game.legal_moves(state)


def test_without_the_option_prompts_are_those_earlier_code_sent() -> None:
    seen: set[str] = set()
    for messages in json.loads(gzip.decompress(CAPTURED.read_bytes())):
        for message in messages:
            text = message.get("content") or ""
            if message["role"] != "user" or not text.startswith("#Game Role"):
                continue
            game, state = game_from_prompt(text)
            agent = ROLE.match(text).group(1)  # type: ignore[union-attr]
            # The earlier prompt, then the method's own text (an Output Format, a debate).
            rendered = game.prompt(state, agent)
            assert text == rendered or text.startswith(rendered + "\n"), text[:200]
            assert LEGAL_MOVES_HEADING not in text
            seen.add(game.name)
    assert {"nim", "fibonacci", "kayles", "corner_queen"} <= seen


def test_the_version_is_marked_only_with_the_list() -> None:
    assert game_prompt_version() == game_prompt_version(False) == PROMPT_VERSION
    marked = game_prompt_version(True)
    assert marked != PROMPT_VERSION and marked.startswith(PROMPT_VERSION)
