"""Chomp: bite a square and everything below-right of it; the poison is top-left."""

from __future__ import annotations

import itertools
import re
from functools import cached_property
from math import comb
from typing import Any

import numpy as np

from metanim.games._base import (
    Game,
    GameInfo,
    ints,
    is_int,
    param_int,
    state_ints,
)
from metanim.games.errors import (
    IllegalMoveError,
    InvalidStateError,
)
from metanim.util.jit import interpreted, njit

ChompState = tuple[int, ...]  # row lengths, non-increasing, row 0 >= 1 (the poison stays)
ChompMove = tuple[int, int]  # (row, col) of the bitten square


_ROW_TABLE_COLS = 256
_ONE_INT64 = np.int64(1).tobytes()


# ------------------------------------------------------------------ shape ranks
# The rank of a shape is its state index and the solver's table index: the kernels run
# compiled in the solver (int64 tables), and by Python here (exact ints, any board).


def chomp_rank_table(rows: int, cols: int) -> list[int]:
    """[rows, cols, T...] with T[level*(cols+1)+v] = C(level+v, level), exact ints."""
    table = [comb(level + v, level) for level in range(rows + 1) for v in range(cols + 1)]
    return [rows, cols, *table]


def chomp_params(rows: int, cols: int) -> np.ndarray:
    """`chomp_rank_table` as the int64 array the compiled kernels read."""
    return np.array(chomp_rank_table(rows, cols), dtype=np.int64)


def chomp_states(rows: int, cols: int) -> int:
    """Number of shapes (non-increasing row lengths) within a rows x cols box."""
    return comb(rows + cols, rows)


@njit(cache=True, nogil=True)
def chomp_term(params, i, s):  # pragma: no cover - numba
    """What row `i` of length `s` adds to a shape's rank."""
    # Shapes that agree before row i and have a shorter row i: C(L+s, L+1), L = rows-1-i.
    if s == 0:
        return 0
    rows, cols = params[0], params[1]
    level = rows - i
    return params[2 + level * (cols + 1) + (s - 1)]


@njit(cache=True, nogil=True)
def chomp_rank(params, lengths):  # pragma: no cover - numba
    """Lexicographic rank (row 0 most significant): a bite always lowers it."""
    r = 0
    for i in range(params[0]):
        r += chomp_term(params, i, lengths[i])
    return r


@njit(cache=True, nogil=True)
def chomp_unrank(params, code, lengths):  # pragma: no cover - numba
    rows, cols = params[0], params[1]
    prev = cols
    for i in range(rows):
        s = prev
        while s > 0 and chomp_term(params, i, s) > code:
            s -= 1
        code -= chomp_term(params, i, s)
        lengths[i] = s
        prev = s


def _row(n: int, cols: int, one: bytes) -> bytes:
    """A row of `cols` squares whose first `n` remain, `one` per remaining square."""
    return one * n + bytes(len(one) * (cols - n))


class Chomp(Game[ChompState, ChompMove]):
    """Chomp (Gale 1974) on an m×n bar with the poisoned square at (0, 0).

    ## Description
    Choosing a remaining square (r, c) removes every square (r', c') with r' ≥ r and
    c' ≥ c. The poison (0, 0) is never a legal choice: the player who faces the bare
    poison has no move and, in normal play, loses (they would have to eat it). In
    misère play that player wins. States are Young-diagram shapes, stored as row
    lengths. By strategy stealing the full rectangle is an N-position; on a square
    board the winning bite is (1, 1).

    ## Action Space
    `Discrete(m * n)`: action `r * n + c` bites (r, c).

    ## Observation Space
    The binary grid, shape `(m, n)`, 1 = square still there.

    ## Starting State
    The full m×n bar; paper presets 2×8 and 5×5.

    ## Arguments
    `rows` (m), `cols` (n); `misere`: bool.

    ## Version History
    v0: initial version.
    """

    name = "chomp"
    title = "Chomp"
    role_phrase = "a game of Chomp"
    disguised_role = "a two-player game called Grid Clearing"
    disguise_words = (("poisoned", "marked"),)

    def __init__(
        self, rows: int = 5, cols: int = 5, *, misere: bool = False, disguise: bool = False
    ) -> None:
        super().__init__(misere=misere, disguise=disguise)
        rows, cols = param_int(rows, "rows", low=1), param_int(cols, "cols", low=1)
        if rows * cols < 2:
            raise ValueError(f"Chomp needs a board of at least 2 squares, got {rows}x{cols}")
        self.rows = rows
        self.cols = cols
        # Row bytes by row length (n ones, then zeros to the board's width), one byte
        # and eight (int64) per square, so a board's mask or observation is one join;
        # kept for boards up to _ROW_TABLE_COLS wide (the tables grow as width squared).
        self._row_bytes: list[bytes] = []
        self._row_int64: list[bytes] = []
        if cols <= _ROW_TABLE_COLS:
            self._row_bytes = [_row(n, cols, b"\x01") for n in range(cols + 1)]
            self._row_int64 = [_row(n, cols, _ONE_INT64) for n in range(cols + 1)]

    @property
    def info(self) -> GameInfo:
        return GameInfo(
            name=self.name,
            title=self.title,
            num_actions=self.rows * self.cols,
            max_game_length=self.rows * self.cols - 1,
            observation_shape=(self.rows, self.cols),
            observation_high=1,
            params={"rows": self.rows, "cols": self.cols},
            misere=self.misere,
        )

    def initial_state(self) -> ChompState:
        return (self.cols,) * self.rows

    def validate_state(self, state: Any) -> ChompState:
        lengths = state_ints(state, "a Chomp state (row lengths)")
        if len(lengths) != self.rows:
            raise InvalidStateError(f"expected {self.rows} row lengths, got {len(lengths)}")
        if any(not 0 <= x <= self.cols for x in lengths):
            raise InvalidStateError(
                f"row lengths must lie in [0, {self.cols}], got {list(lengths)}"
            )
        if lengths[0] < 1:
            raise InvalidStateError("the poisoned square (0, 0) must still be on the board")
        if any(a < b for a, b in itertools.pairwise(lengths)):
            raise InvalidStateError(
                f"row lengths must not increase downwards (a bite removes everything below-right), "
                f"got {list(lengths)}"
            )
        return lengths

    def is_terminal(self, state: ChompState) -> bool:
        return state[0] <= 1 and (len(state) == 1 or state[1] == 0)

    def num_legal_moves(self, state: ChompState) -> int:
        return sum(state) - 1  # every remaining square but the poison

    def legal_moves(self, state: ChompState) -> list[ChompMove]:
        return [(r, c) for r, n in enumerate(state) for c in range(n) if (r, c) != (0, 0)]

    def legal_move_at(self, state: ChompState, k: int) -> ChompMove:
        k += 1  # the poison (0, 0) is never a move: count as if it were, and skip it
        for r, n in enumerate(state):
            if k < n:
                return (r, k)
            k -= n
        raise IndexError("no such legal move")

    def _squares(self, state: ChompState, table: list[bytes], one: bytes) -> bytes:
        """Each square of the board in id order, `one` where it remains, zeros elsewhere."""
        if table:
            return b"".join([table[n] for n in state])
        return b"".join([_row(n, self.cols, one) for n in state])

    def legal_mask(self, state: ChompState, out: np.ndarray) -> np.ndarray:
        # Row r's remaining squares are ids r * cols .. r * cols + n - 1; not the poison.
        memoryview(out).cast("B")[:] = self._squares(state, self._row_bytes, b"\x01")
        out[0] = 0
        return out

    def is_legal(self, state: ChompState, move: Any) -> bool:
        if not (isinstance(move, tuple) and len(move) == 2 and all(map(is_int, move))):
            return super().is_legal(state, move)
        r, c = move
        return 0 <= r < len(state) and 0 <= c < state[r] and (r, c) != (0, 0)

    def child(self, state: ChompState, move: ChompMove) -> ChompState:
        r, c = move
        return state[:r] + tuple([x if x < c else c for x in state[r:]])

    def why_illegal(self, state: ChompState, move: ChompMove) -> str:
        r, c = move
        if not (0 <= r < self.rows and 0 <= c < self.cols):
            return f"({r}, {c}) is off the {self.rows}x{self.cols} board"
        if (r, c) == (0, 0):
            return "(0, 0) is the poisoned square; choose any other remaining square"
        return f"square ({r}, {c}) has already been removed"

    def action_id(self, move: ChompMove) -> int:
        return move[0] * self.cols + move[1]

    def move_from_action(self, action: int) -> ChompMove:
        r, c = divmod(int(action), self.cols)
        return (r, c)

    # The state index: the shape's rank (`chomp_rank`). Index 0 is the empty board,
    # which is no state (the poison stays): `state_from_index` refuses it.
    @property
    def num_states(self) -> int:
        return chomp_states(self.rows, self.cols)

    @cached_property
    def _rank_table(self) -> list[int]:
        return chomp_rank_table(self.rows, self.cols)

    def state_index(self, state: ChompState) -> int:
        return interpreted(chomp_rank)(self._rank_table, state)  # type: ignore[no-any-return]

    def _state_at(self, index: int) -> ChompState:
        lengths = [0] * self.rows
        interpreted(chomp_unrank)(self._rank_table, index, lengths)
        return tuple(lengths)

    @cached_property
    def _terms(self) -> np.ndarray:
        """`chomp_term` of row i with length s at [i, s], int64 (for `observation_index`)."""
        table, cols = self._rank_table, self.cols
        terms = [
            [interpreted(chomp_term)(table, i, s) for s in range(cols + 1)]
            for i in range(self.rows)
        ]
        return np.array(terms, dtype=np.int64)

    def _observation_index(self, obs: np.ndarray) -> np.ndarray:
        # A row of the grid holds its squares first: its sum is its length.
        lengths = obs.sum(axis=-1)
        return self._terms[np.arange(self.rows), lengths].sum(axis=-1)  # type: ignore[no-any-return]

    def observation(self, state: ChompState) -> np.ndarray:
        grid = bytearray(self._squares(state, self._row_int64, _ONE_INT64))  # writable
        return np.frombuffer(grid, np.int64).reshape(self.rows, self.cols)

    def to_json(self, state: ChompState) -> list[int]:
        return list(state)  # states and moves alike are flat tuples of ints

    def move_text(self, move: ChompMove) -> str:
        return f"[{move[0]}, {move[1]}]"

    def move_words(self, move: ChompMove) -> str:
        return f"select row {move[0]}, column {move[1]}"

    def rules_text(self) -> str:
        if self.misere:
            objective = (
                "#Objective: This is the misère form: your goal is to be the player who is left "
                "facing the poisoned top-left square (position (0, 0)) alone."
            )
        else:
            objective = (
                "#Objective: Your goal is to force your opponent to take the poisoned top-left "
                "square (position (0, 0))."
            )
        return (
            f"{objective}\n"
            f"#Game Rule: 1. The game is played on a {self.rows} x {self.cols} grid. "
            "2. On your turn you select a remaining position (row, col), zero-based, row 0 at "
            "the top and col 0 at the left. 3. The selected square and every square below it "
            "and/or to its right are removed. 4. The player forced to select (0, 0) loses."
            + (" In this misère form that player wins instead." if self.misere else "")
        )

    def describe(self, state: ChompState) -> str:
        grid = "\n".join(
            "[" + ", ".join("1" if c < n else "0" for c in range(self.cols)) + "]" for n in state
        )
        return (
            "The grid is a binary matrix, where '1' means the position is still available "
            f"and '0' means it has been removed:\n{grid}"
        )

    def parse_state(self, text: str) -> ChompState:
        rows = re.findall(r"^\[([01](?:, [01])*)\]$", text, flags=re.MULTILINE)
        if len(rows) != self.rows:
            raise InvalidStateError(f"expected a {self.rows}-row binary matrix in the state text")
        lengths = []
        for r, line in enumerate(rows):
            bits = line.split(", ")
            if len(bits) != self.cols:
                raise InvalidStateError(f"row {r} of the matrix must have {self.cols} entries")
            n = bits.count("1")
            if bits != ["1"] * n + ["0"] * (self.cols - n):
                raise InvalidStateError(
                    f"row {r} is not a prefix of 1s: removed squares are below-right"
                )
            lengths.append(n)
        return self.validate_state(lengths)

    @classmethod
    def config_from_text(cls, text: str) -> dict[str, Any]:
        match = re.search(r"played on a (\d+) x (\d+) grid", text)
        if match is None:
            raise InvalidStateError("could not find the board size in the prompt")
        return {
            "rows": int(match.group(1)),
            "cols": int(match.group(2)),
            "misere": "misère form" in text,
        }

    def task_text(self, state: ChompState) -> str:
        return "Based on the current state of the grid, decide which position (row, col) you will select."

    def action_schema(self, state: ChompState) -> str:
        return "[row, col] // the zero-based position you select"

    def _move_from_value(self, value: Any, state: ChompState) -> ChompMove:
        r, c = ints(value, 2, "a position [row, col]")
        if (r, c) == (0, 0):
            raise IllegalMoveError(
                "(0, 0) is the poisoned square; choose any other remaining square"
            )
        return (r, c)
