"""A simulated model's reply read back: the output format a prompt asks for, the JSON
block of the reply, and the move it names, parsed by the game's own rules."""

from __future__ import annotations

import json
import re

FORMAT = '\n#Output Format: ```json\n{"reasoning": "...", "action": <value>}\n```'


def parsed(text):
    """The JSON block of a reply (the format FORMAT asks for)."""
    block = re.search(r"```json\n(.*?)\n```", text, re.DOTALL)
    assert block, text
    return json.loads(block.group(1))


def move(game, state, text):
    """The move a reply names, read by the game's own parser."""
    return game.parse_move(json.dumps(parsed(text)["action"]), state)
