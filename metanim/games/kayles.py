"""Kayles: knock down one pin or two adjacent standing pins."""

from __future__ import annotations

import re
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from metanim.games._base import (
    Game,
    GameInfo,
    int_list,
    param_ints,
)
from metanim.games.errors import (
    IllegalMoveError,
    InvalidStateError,
    UnparsableMoveError,
)

PinRows = tuple[str, ...]  # one '1'/'0' string per row; '1' is a standing pin
PinMove = tuple[int, int, int]  # (row, first pin, width)
KaylesState = PinRows
KaylesMove = PinMove  # width 1 or 2


#: The disguised variant's story for rows of pins (`Game.disguise_words`): a row of lamps
#: switched off, not pins knocked down (pins point to bowling, hence to Kayles).
LAMP_WORDS: tuple[tuple[str, str], ...] = (
    ("knocked-down", "switched-off"),
    ("knocked down", "switched off"),
    ("knocks down", "switches off"),
    ("knock down", "switch off"),
    ("already down", "already off"),
    ("standing", "lit"),
    ("pins", "lamps"),
    ("pin", "lamp"),
)

# '0'/'1' bytes to 0/1 bytes: an observation row is one C-level translate away.
_PIN_BYTES = bytes.maketrans(b"01", b"\x00\x01")


def runs(row: str) -> list[int]:
    """Lengths of the maximal runs of standing pins in a row."""
    return [len(part) for part in row.split("0") if part]


def run_spans(row: str) -> list[tuple[int, int]]:
    """(first pin, length) of each maximal run of standing pins, left to right."""
    # str.split walks the row in C; a regex match object per run costs more (solver hot path).
    spans = []
    i = 0
    for part in row.split("0"):
        if part:
            spans.append((i, len(part)))
            i += len(part) + 1
        else:
            i += 1
    return spans


class PinRowGame(Game[PinRows, PinMove]):
    """What the games on rows of pins share (Kayles, octal games): states are one
    '0'/'1' string per row, a move knocks down a block of adjacent pins in one row; the
    texts of a state and of a move, and the run (group) structure."""

    rows: tuple[int, ...]
    width: int
    #: How errors name a state of the game ("a Kayles state").
    state_what: ClassVar[str]

    @staticmethod
    def rows_from_text(text: str) -> list[int]:
        """The row lengths a prompt's Current State shows."""
        match = re.search(r"Current state: ([01]+)", text)
        if match:
            return [len(match.group(1))]
        return [len(row) for _, row in re.findall(r"Row (\d+): ([01]+)", text)]

    @property
    def single_row(self) -> bool:
        return len(self.rows) == 1

    def initial_state(self) -> PinRows:
        return tuple("1" * r for r in self.rows)

    def validate_state(self, state: Any) -> PinRows:
        if isinstance(state, str):
            state = (state,)
        if not isinstance(state, list | tuple) or not all(isinstance(r, str) for r in state):
            raise InvalidStateError(
                f"{self.state_what} is a list of '0'/'1' pin strings, one per row, got {state!r}"
            )
        rows = tuple(state)
        if len(rows) != len(self.rows):
            raise InvalidStateError(f"expected {len(self.rows)} row(s), got {len(rows)}")
        for i, (row, size) in enumerate(zip(rows, self.rows, strict=True)):
            if len(row) != size or set(row) - {"0", "1"}:
                raise InvalidStateError(
                    f"row {i} must be {size} character{'s' * (size != 1)} of '0'/'1', got {row!r}"
                )
        return rows

    def child(self, state: PinRows, move: PinMove) -> PinRows:
        r, i, w = move
        row = state[r][:i] + "0" * w + state[r][i + w :]
        return (*state[:r], row, *state[r + 1 :])

    def why_illegal(self, state: PinRows, move: PinMove) -> str:
        r, i, w = move
        if not 0 <= r < len(state):
            return f"there is no row {r}"
        row = state[r]
        pins = list(range(i, i + w))
        if any(not 0 <= p < len(row) for p in pins):
            return f"pins are numbered 0 to {len(row) - 1}; {self.move_text(move)} is off the row"
        down = [p for p in pins if row[p] == "0"]
        if down:
            return f"pin {down[0]} has already been knocked down"
        return self._why_block(state, move)

    def _why_block(self, state: PinRows, move: PinMove) -> str:
        """Why a block of standing pins on the row may not go (the game's own rule)."""
        return f"{self.move_text(move)} is not a legal move"

    def state_key(self, state: PinRows) -> tuple[int, ...]:
        return tuple(sorted(n for row in state for n in runs(row)))

    # The state index: the pins of the rows, concatenated, as bits with pin 0 of row 0
    # the lowest (a standing pin is a 1 bit): the batched env's Kayles bit masks.
    @property
    def num_states(self) -> int:
        return 1 << sum(self.rows)

    def state_index(self, state: PinRows) -> int:
        return int("".join(state)[::-1] or "0", 2)

    def _state_at(self, index: int) -> PinRows:
        bits = format(index, f"0{sum(self.rows)}b")[::-1]
        ends = np.cumsum(self.rows).tolist()
        return tuple(bits[end - size : end] for end, size in zip(ends, self.rows, strict=True))

    @cached_property
    def _index_weights(self) -> np.ndarray:
        """Each grid cell's bit in the state index (0 where a row has no such pin): made
        once, since a batched env reads every step's observations through it."""
        weights = np.zeros((len(self.rows), self.width), dtype=np.int64)
        bit = 0
        for r, size in enumerate(self.rows):
            weights[r, :size] = 1 << np.arange(bit, bit + size, dtype=np.int64)
            bit += size
        return weights

    def _observation_index(self, obs: np.ndarray) -> np.ndarray:
        return (obs * self._index_weights).sum(axis=(-2, -1))  # type: ignore[no-any-return]

    def observation(self, state: PinRows) -> np.ndarray:
        width = self.width
        pins = "".join([row.ljust(width, "0") for row in state]).encode().translate(_PIN_BYTES)
        return np.frombuffer(pins, np.uint8).astype(np.int64).reshape(len(state), width)

    def to_json(self, state: PinRows) -> list[str]:
        return list(state)

    def move_text(self, move: PinMove) -> str:
        # The pins knocked down, in order: "3", "[3, 4]"; with several rows the row first.
        r, i, w = move
        if self.single_row:
            return str(i) if w == 1 else "[" + ", ".join(map(str, range(i, i + w))) + "]"
        return "[" + ", ".join(map(str, [r, *range(i, i + w)])) + "]"

    def describe(self, state: PinRows) -> str:
        head = (
            "The pins are shown as a binary string: '1' is a standing pin, '0' a knocked-down pin."
        )
        if self.single_row:
            return f"{head} Current state: {state[0]}"
        body = "\n".join(f"Row {r}: {row}" for r, row in enumerate(state))
        return f"{head} Current state:\n{body}"

    def parse_state(self, text: str) -> PinRows:
        if self.single_row:
            match = re.search(r"Current state: ([01]+)", text)
            if match is None:
                raise InvalidStateError("could not find the pin string in the state text")
            return self.validate_state((match.group(1),))
        found = dict((int(r), row) for r, row in re.findall(r"Row (\d+): ([01]+)", text))
        if sorted(found) != list(range(len(self.rows))):
            raise InvalidStateError(f"expected pin strings for rows 0..{len(self.rows) - 1}")
        return self.validate_state(tuple(found[r] for r in range(len(self.rows))))


class Kayles(PinRowGame):
    """Kayles (Dudeney 1908; octal game 0.77) on one or more rows of pins.

    ## Description
    A move knocks down one standing pin, or two adjacent standing pins, in one row.
    Normal play: the last mover wins. A row splits into independent runs of
    standing pins; by Sprague–Grundy the value is the XOR of the run values, which
    are periodic with period 12 from n = 71 on (Guy & Smith 1956).

    ## Action Space
    `Discrete(R * L * 2)` for R rows of at most L pins: action
    `(row * L + pin) * 2 + (width - 1)`.

    ## Observation Space
    Pin bits, shape `(R, L)`, 1 = standing (rows shorter than L padded with 0).

    ## Starting State
    All pins standing; paper defaults: one row of 20, and two rows (5 and 6).

    ## Arguments
    `rows`: pins per row; `misere`: bool.

    ## Version History
    v0: initial version.
    """

    name = "kayles"
    title = "Kayles"
    state_what = "a Kayles state"
    role_phrase = "a game of Kayles"
    disguised_role = "a two-player game called Lantern Row"
    disguise_words = LAMP_WORDS

    def __init__(
        self,
        rows: tuple[int, ...] | list[int] | int = (20,),
        *,
        misere: bool = False,
        disguise: bool = False,
    ) -> None:
        super().__init__(misere=misere, disguise=disguise)
        self.rows = param_ints(rows, "rows (pins per row)", low=1)
        self.width = max(self.rows)
        self._flat: list[list[KaylesMove]] | None = None

    def _row_moves(self) -> list[list[KaylesMove]]:
        """Per row, every (pin, width) move in action-id order, built once.

        The moves of a run of standing pins [i, e) are the contiguous slice
        `[2 * i : 2 * e - 1]` of its row's list (each pin, then the pair from it,
        except the pair past the run's end), so `legal_moves` only slices.
        """
        if self._flat is None:
            self._flat = [
                [(r, i, w) for i in range(size) for w in (1, 2)] for r, size in enumerate(self.rows)
            ]
        return self._flat

    @property
    def info(self) -> GameInfo:
        return GameInfo(
            name=self.name,
            title=self.title,
            num_actions=len(self.rows) * self.width * 2,
            max_game_length=sum(self.rows),
            observation_shape=(len(self.rows), self.width),
            observation_high=1,
            params={"rows": list(self.rows)},
            misere=self.misere,
        )

    def is_terminal(self, state: KaylesState) -> bool:
        return "1" not in "".join(state)

    def num_legal_moves(self, state: KaylesState) -> int:
        # Each standing pin, plus each pair of adjacent standing pins: twice the pins
        # less one per run (a run starts where '1' follows '0' or the row's start).
        return sum([2 * row.count("1") - ("0" + row).count("01") for row in state])

    def legal_moves(self, state: KaylesState) -> list[KaylesMove]:
        # One slice per run of standing pins (the env's step is mostly this call).
        moves: list[KaylesMove] = []
        for flat, row in zip(self._row_moves(), state, strict=True):
            i = 0
            for part in row.split("0"):
                if part:
                    end = i + len(part)
                    moves += flat[2 * i : 2 * end - 1]
                    i = end + 1
                else:
                    i += 1
        return moves

    def legal_move_at(self, state: KaylesState, k: int) -> KaylesMove:
        # A run of n pins from pin i holds 2n - 1 moves in id order: (i, 1), (i, 2),
        # (i + 1, 1), ..., (i + n - 1, 1); move j of it is pin i + j // 2, width 1 + j % 2.
        for r, row in enumerate(state):
            i = 0
            for part in row.split("0"):
                if part:
                    moves = 2 * len(part) - 1
                    if k < moves:
                        return (r, i + k // 2, 1 + k % 2)
                    k -= moves
                    i += len(part) + 1
                else:
                    i += 1
        raise IndexError("no such legal move")

    def legal_mask(self, state: KaylesState, out: np.ndarray) -> np.ndarray:
        # Pin p's ids are 2(rL + p) (knock p) and 2(rL + p) + 1 (knock p and p + 1): the
        # row's pin bytes interleaved with its pair bytes, pin p AND pin p + 1 (one
        # big-integer AND of the pin bytes with themselves moved one byte), in C.
        width = self.width
        flat = memoryview(out).cast("B")  # the mask's bytes, written in place
        flat[:] = bytes(len(flat))
        for r, row in enumerate(state):
            n = len(row)
            pins = row.encode().translate(_PIN_BYTES)
            bits = int.from_bytes(pins, "big")
            pairs = (bits & (bits << 8) & ((1 << 8 * n) - 1)).to_bytes(n, "big")
            start = 2 * r * width
            flat[start : start + 2 * n : 2] = pins
            flat[start + 1 : start + 2 * n : 2] = pairs
        return out

    def action_id(self, move: KaylesMove) -> int:
        r, i, w = move
        return (r * self.width + i) * 2 + (w - 1)

    def move_from_action(self, action: int) -> KaylesMove:
        cell, w = divmod(int(action), 2)
        r, i = divmod(cell, self.width)
        return (r, i, w + 1)

    def move_words(self, move: KaylesMove) -> str:
        r, i, w = move
        pins = f"pin {i}" if w == 1 else f"pins {i} and {i + 1}"
        return f"knock down {pins}" if self.single_row else f"knock down {pins} of row {r}"

    def rules_text(self) -> str:
        last = "loses" if self.misere else "wins"
        goal = (
            "make your opponent knock down the last pin(s)"
            if self.misere
            else "leave your opponent with no valid move"
        )
        where = (
            "There is a single row of pins"
            if self.single_row
            else f"There are {len(self.rows)} rows of pins, numbered from 0"
        )
        return (
            f"#Objective: Your goal is to {goal}. The player who knocks down the last pin(s) {last}.\n"
            f"#Game Rule: 1. {where}; pins are numbered from 0, left to right. "
            "2. On your turn you knock down either one standing pin or two adjacent standing pins"
            + ("" if self.single_row else " in the same row")
            + ". 3. You cannot knock down pins that are not adjacent or that are already down."
        )

    @classmethod
    def config_from_text(cls, text: str) -> dict[str, Any]:
        return {"rows": cls.rows_from_text(text), "misere": "last pin(s) loses" in text}

    def task_text(self, state: KaylesState) -> str:
        return "Based on the current state, decide which pin or pair of adjacent pins you will knock down."

    def action_schema(self, state: KaylesState) -> str:
        if self.single_row:
            return "integer or [i, i+1] // one pin index, or two adjacent pin indices"
        return "[row, pin] or [row, pin, pin+1] // the row, then one pin or two adjacent pins"

    def _move_from_value(self, value: Any, state: KaylesState) -> KaylesMove:
        items = int_list(value, "pin indices")
        if self.single_row:
            items = (0, *items)
        if len(items) == 2:
            return (items[0], items[1], 1)
        if len(items) == 3:
            row, a, b = items
            if abs(a - b) != 1:
                # Well formed but against the rules: an illegal move, not a parse failure.
                raise IllegalMoveError(f"two pins must be adjacent (i and i+1), got {a} and {b}")
            return (row, min(a, b), 2)
        want = (
            "a pin or two adjacent pins" if self.single_row else "[row, pin] or [row, pin, pin+1]"
        )
        raise UnparsableMoveError(f"expected {want}, got {value!r}")
