"""Corner Queen: move a queen left, down or diagonally left-down toward the lower-left corner."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from metanim.games._base import (
    Game,
    GameInfo,
    find_int,
    ints,
    param_int,
    state_ints,
)
from metanim.games.errors import (
    InvalidStateError,
)

QueenState = tuple[int, int]  # (row, col); row 0 is the top row
QueenMove = tuple[int, int]  # destination (row, col)

#: The seed paper's queen start (its simulator, Table 7).
PAPER_START: QueenState = (4, 16)


def queen_code(row: Any, col: Any, height: int, width: int) -> Any:
    """y * width + x for the queen at [row, col] (x = col, y = height - 1 - row): the
    state index and the solver's table index; ints or int64 arrays."""
    return (height - 1 - row) * width + col


class CornerQueen(Game[QueenState, QueenMove]):
    """Corner Queen on an H×W board (Isaacs' game; Wythoff's game in disguise).

    ## Description
    A queen stands at [row, col]; a move takes it any distance ≥ 1 left, down, or
    diagonally left-down. The game ends when the queen reaches the lower-left
    corner [H-1, 0]; in normal play whoever moves it there wins. With x = col and
    y = H-1-row this is Wythoff's game: the P-positions are the Beatty pairs
    (⌊kφ⌋, ⌊kφ²⌋) and their mirror images.

    ## Action Space
    `Discrete(H * W)`: action `row * W + col` moves the queen to [row, col].

    ## Observation Space
    `[row, col]`, shape `(2,)`, each in `[0, max(H, W) - 1]`.

    ## Starting State
    `start` (paper: queen at [4, 16]; this package plays it on a 20×20 board). When
    `start` is not given, the paper's [4, 16] wherever it lies on the board, else the
    top-right corner [0, W-1] (the square farthest from the target), so a resized board
    such as 8×12 gets a valid start.

    ## Arguments
    `height`, `width`, `start` ([row, col]); `misere`: bool.

    ## Version History
    v0: initial version.
    """

    name = "corner_queen"
    title = "Corner Queen"
    role_phrase = "a Corner-Queen game"
    disguised_role = "a two-player game called Corner Walk"
    disguise_words = (("queen's", "token's"), ("queen", "token"))

    def __init__(
        self,
        height: int = 20,
        width: int = 20,
        start: tuple[int, int] | list[int] | None = None,
        *,
        misere: bool = False,
        disguise: bool = False,
    ) -> None:
        super().__init__(misere=misere, disguise=disguise)
        height, width = param_int(height, "height", low=1), param_int(width, "width", low=1)
        if height * width < 2:
            raise ValueError(f"the board needs at least 2 squares, got {height}x{width}")
        self.height = height
        self.width = width
        if start is None:
            fits = PAPER_START[0] < self.height and PAPER_START[1] < self.width
            start_t = PAPER_START if fits else (0, self.width - 1)
        else:
            start_t = start
        try:
            self.start = self.validate_state(start_t)
        except InvalidStateError as exc:
            raise ValueError(f"start: {exc}") from exc
        if self.start == self.target:
            raise ValueError("the start square must differ from the target corner")

    @property
    def target(self) -> QueenState:
        return (self.height - 1, 0)

    @property
    def info(self) -> GameInfo:
        return GameInfo(
            name=self.name,
            title=self.title,
            num_actions=self.height * self.width,
            max_game_length=self.height - 1 + self.width - 1,
            observation_shape=(2,),
            observation_high=max(self.height, self.width) - 1,
            params={"height": self.height, "width": self.width, "start": list(self.start)},
            misere=self.misere,
        )

    def initial_state(self) -> QueenState:
        return self.start

    def validate_state(self, state: Any) -> QueenState:
        row, col = state_ints(state, "a Corner Queen state [row, col]", count=2)
        if not (0 <= row < self.height and 0 <= col < self.width):
            raise InvalidStateError(f"[{row}, {col}] is off the {self.height}x{self.width} board")
        return (row, col)

    def is_terminal(self, state: QueenState) -> bool:
        return state == self.target

    def num_legal_moves(self, state: QueenState) -> int:
        x, y = self.wythoff(state)
        return x + y + min(x, y)

    def legal_moves(self, state: QueenState) -> list[QueenMove]:
        r, c = state
        moves = [(r, c2) for c2 in range(c)]
        moves += [(r + d, c - d) for d in range(1, min(self.height - 1 - r, c) + 1)]
        moves += [(r2, c) for r2 in range(r + 1, self.height)]
        return sorted(moves, key=self.action_id)

    def legal_move_at(self, state: QueenState, k: int) -> QueenMove:
        # In id order: the c squares left along the row; then, row by row below, the
        # diagonal square (while one is on the board) before the square straight down.
        r, c = state
        if k < c:
            return (r, k)
        k -= c
        below = self.height - 1 - r
        pairs = min(below, c)  # rows below holding both a diagonal and a straight move
        if k < 2 * pairs:
            d = k // 2 + 1
            return (r + d, c - d) if k % 2 == 0 else (r + d, c)
        d = pairs + 1 + (k - 2 * pairs)
        if d > below:
            raise IndexError("no such legal move")
        return (r + d, c)

    def legal_mask(self, state: QueenState, out: np.ndarray) -> np.ndarray:
        # Ids are row * width + col: left along the row, then down-left every width - 1
        # ids, then straight down every width ids.
        out[:] = 0
        r, c = state
        w = self.width
        out[r * w : r * w + c] = 1
        steps = min(self.height - 1 - r, c)
        if steps:
            out[r * w + c + (w - 1) : r * w + c + (w - 1) * steps + 1 : w - 1] = 1
        out[(r + 1) * w + c :: w] = 1
        return out

    def child(self, state: QueenState, move: QueenMove) -> QueenState:
        return move

    def why_illegal(self, state: QueenState, move: QueenMove) -> str:
        r, c = state
        r2, c2 = move
        if not (0 <= r2 < self.height and 0 <= c2 < self.width):
            return f"[{r2}, {c2}] is off the {self.height}x{self.width} board"
        if (r2, c2) == (r, c):
            return "the queen must move at least one square"
        if r2 < r or c2 > c:
            return "the queen may only move left, down, or diagonally left-down (never up or right)"
        return f"[{r2}, {c2}] is not on the same row, column or left-down diagonal as [{r}, {c}]"

    def wythoff(self, state: QueenState) -> tuple[int, int]:
        """Wythoff coordinates (x, y) = (col, H-1-row): distances to the target."""
        return (state[1], self.height - 1 - state[0])

    # The state index: y * width + x in Wythoff coordinates, the solver's table index.
    @property
    def num_states(self) -> int:
        return self.height * self.width

    def state_index(self, state: QueenState) -> int:
        return queen_code(state[0], state[1], self.height, self.width)  # type: ignore[no-any-return]

    def _state_at(self, index: int) -> QueenState:
        y, x = divmod(index, self.width)
        return (self.height - 1 - y, x)

    def _observation_index(self, obs: np.ndarray) -> np.ndarray:
        return queen_code(obs[..., 0], obs[..., 1], self.height, self.width)  # type: ignore[no-any-return]

    def action_id(self, move: QueenMove) -> int:
        return move[0] * self.width + move[1]

    def move_from_action(self, action: int) -> QueenMove:
        r, c = divmod(int(action), self.width)
        return (r, c)

    def observation(self, state: QueenState) -> np.ndarray:
        return np.asarray(state, dtype=np.int64)

    def to_json(self, state: QueenState) -> list[int]:
        return list(state)  # states and moves alike are flat tuples of ints

    def move_text(self, move: QueenMove) -> str:
        return f"[{move[0]}, {move[1]}]"

    def move_words(self, move: QueenMove) -> str:
        return f"move the queen to row {move[0]}, column {move[1]}"

    def rules_text(self) -> str:
        h, w = self.height, self.width
        objective = (
            "#Objective: This is the misère form: make your opponent be the one who places the "
            "queen on the lower-left corner square."
            if self.misere
            else "#Objective: Move the queen so that you are the first to place it on the "
            "lower-left corner square."
        )
        return (
            f"{objective}\n"
            f"#Game Rule: 1. Board size: {h} x {w}. 2. Coordinates are zero-based [row, col]; "
            f"row 0 is the top row and col 0 the leftmost column; row is in [0, {h - 1}] and col "
            f"in [0, {w - 1}]. 3. From [r, c] the queen moves to exactly one of: (a) left: [r, c'] "
            "with c' < c; (b) down: [r', c] with r' > r; (c) left-down diagonal: [r + d, c - d] "
            f"with d > 0. 4. The game ends when the queen reaches [row = {h - 1}, col = 0]."
        )

    def describe(self, state: QueenState) -> str:
        return f"Current position: [row = {state[0]}, col = {state[1]}]."

    def parse_state(self, text: str) -> QueenState:
        match = re.search(r"Current position: \[row = (\d+), col = (\d+)\]", text)
        if match is None:
            raise InvalidStateError("could not find the queen's position in the state text")
        return self.validate_state((int(match.group(1)), int(match.group(2))))

    @classmethod
    def config_from_text(cls, text: str) -> dict[str, Any]:
        h = find_int(r"Board size: (\d+) x", text, "the board height")
        w = find_int(r"Board size: \d+ x (\d+)", text, "the board width")
        match = re.search(r"Current position: \[row = (\d+), col = (\d+)\]", text)
        start = [0, w - 1] if match is None else [int(match.group(1)), int(match.group(2))]
        if tuple(start) == (h - 1, 0):
            start = [0, w - 1]
        return {"height": h, "width": w, "start": start, "misere": "misère form" in text}

    def task_text(self, state: QueenState) -> str:
        return "Based on the current state, decide the next position [row, col] of the queen."

    def action_schema(self, state: QueenState) -> str:
        return "[row, col] // the square you move the queen to"

    def _move_from_value(self, value: Any, state: QueenState) -> QueenMove:
        r, c = ints(value, 2, "a position [row, col]")
        return (r, c)
