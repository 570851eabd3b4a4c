"""What every adapter shows a model: the game prompt of a position with its Output Format."""

from __future__ import annotations

from typing import Any

from metanim.games import Game
from metanim.games.reply import with_format


def move_prompt(
    game: Game[Any, Any], state: Any, style: str = "react", agent_name: str = "Player 1"
) -> str:
    """The game prompt of `state` followed by the Output Format of `style` (react, standard
    or cot), as the datasets' `input` field and the inspect tasks write it."""
    return with_format(game.prompt(state, agent_name), style, game.action_schema(state))
