"""Hand-drawn renderings: a character board (`"ansi"`) and a small RGB image (`"rgb_array"`).

Both come from one cell grid per game, so the two views always agree and no
plotting library is needed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from metanim.games import Game

CELL = 12  # pixels per board cell

# cell kinds -> (ansi character, RGB colour)
EMPTY, PIECE, SPECIAL, TARGET, HIGHLIGHT, NO_SLOT = range(6)
# NO_SLOT: a cell past the end of a shorter row (Kayles rows of unequal length): no pin
# was ever there, so it must not look like a knocked-down pin (EMPTY).
_CHARS = {EMPTY: ".", PIECE: "#", SPECIAL: "P", TARGET: "X", HIGHLIGHT: "+", NO_SLOT: " "}
_COLOURS = np.array(
    [
        [235, 235, 235],  # empty / removed
        [70, 110, 180],  # an item, pin or chocolate square
        [200, 40, 40],  # poison square / the queen
        [60, 160, 80],  # the queen's target corner
        [240, 170, 40],  # stones the mover may take this turn
        [255, 255, 255],  # no slot: the grid-line white, so the row simply ends
    ],
    dtype=np.uint8,
)


def cells(game: Game[Any, Any], state: Any) -> np.ndarray:
    """The board as a 2-D grid of cell kinds."""
    name = game.name
    if name in ("nim", "subtraction"):
        grid = np.full((len(state), game.capacity), EMPTY, dtype=np.int8)  # type: ignore[attr-defined]
        for i, heap in enumerate(state):
            grid[i, :heap] = PIECE
        return grid
    if name == "fibonacci":
        remaining, max_take = state
        grid = np.full((1, game.n), EMPTY, dtype=np.int8)  # type: ignore[attr-defined]
        grid[0, :remaining] = PIECE
        grid[0, remaining - max_take : remaining] = HIGHLIGHT
        return grid
    if name in ("kayles", "octal"):
        grid = np.full((len(state), game.width), NO_SLOT, dtype=np.int8)  # type: ignore[attr-defined]
        for r, row in enumerate(state):
            grid[r, : len(row)] = [PIECE if c == "1" else EMPTY for c in row]
        return grid
    if name == "chomp":
        grid = game.observation(state).astype(np.int8) * PIECE
        grid[0, 0] = SPECIAL
        return grid
    if name == "corner_queen":
        grid = np.full((game.height, game.width), EMPTY, dtype=np.int8)  # type: ignore[attr-defined]
        grid[game.target] = TARGET  # type: ignore[attr-defined]
        grid[tuple(state)] = SPECIAL
        return grid
    # A game added later still renders: its observation as a bar per entry.
    obs = np.atleast_2d(game.observation(state))
    return (obs > 0).astype(np.int8) * PIECE


def ansi(game: Game[Any, Any], state: Any, status: str) -> str:
    """Title, character board and the state sentence of the prompt."""
    board = "\n".join("".join(_CHARS[int(k)] for k in row) for row in cells(game, state))
    variant = "misère" if game.misere else "normal"
    return f"{game.shown_title} ({variant}) — {status}\n{board}\n{game.describe(state)}\n"


def rgb(game: Game[Any, Any], state: Any) -> np.ndarray:
    """An (H·CELL, W·CELL, 3) uint8 image with 1-pixel grid lines."""
    image = _COLOURS[cells(game, state)]
    image = image.repeat(CELL, axis=0).repeat(CELL, axis=1)
    image[::CELL, :, :] = 255
    image[:, ::CELL, :] = 255
    return np.ascontiguousarray(image)
