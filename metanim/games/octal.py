"""Octal games by code on rows of pins: knock down a block of adjacent standing pins.

An octal code "0.d1d2...dt" (Guy and Smith 1956) says, for each block width k, where a
block of k pins may be knocked down in a group (a maximal run of adjacent standing pins):
bit 1 of d_k: the block is the whole group; bit 2: it is at one end of a longer group;
bit 4: it is strictly inside, leaving standing pins on both sides. "0.77" is Kayles,
"0.07" Dawson's Kayles. Each group is one heap of the octal game, a position their sum.
"""

from __future__ import annotations

import re
from typing import Any

from metanim.games._base import GameInfo, int_list, param_ints
from metanim.games.errors import IllegalMoveError, InvalidStateError, UnparsableMoveError
from metanim.games.kayles import LAMP_WORDS, PinMove, PinRowGame, PinRows, run_spans

OctalState = PinRows
OctalMove = PinMove

#: Most digits a code may have: the widest block a move knocks down (the action space
#: is rows x pins x this).
MAX_OCTAL_DIGITS = 8

_CODE = re.compile(r"^0\.([0-7]*)$")
#: Where a block may lie in its group, per digit bit, in the rules' words.
_PLACES = (
    (1, "as a whole group"),
    (2, "at one end of a longer group"),
    (4, "strictly inside a group"),
)


def parse_code(code: Any) -> str:
    """An octal code "0.d1...dt" with digits 0-7, trailing zeros dropped; `ValueError` else."""
    if not isinstance(code, str):
        raise ValueError(f"code must be a text such as '0.07', got {code!r}")
    match = _CODE.match(code.strip())
    digits = match.group(1).rstrip("0") if match else ""
    if not digits:
        raise ValueError(
            f"code must be '0.' and octal digits (0-7) with one non-zero, such as '0.07', "
            f"got {code!r}"
        )
    if len(digits) > MAX_OCTAL_DIGITS:
        raise ValueError(f"code has at most {MAX_OCTAL_DIGITS} digits, got {code!r}")
    return "0." + digits


def block_allowed(digit: int, left: int, right: int) -> bool:
    """Whether a block with `left` and `right` standing pins beside it in its group may go."""
    if left == 0 and right == 0:
        return bool(digit & 1)
    if left == 0 or right == 0:
        return bool(digit & 2)
    return bool(digit & 4)


class Octal(PinRowGame):
    """An octal game given by its code, on one or more rows of pins (rows play as a sum).

    ## Description
    A move knocks down a block of k adjacent standing pins in one row, where digit d_k
    of the code allows a block in that place of its group (see the module). Normal play:
    the last mover wins; misère: the last mover loses. The code is data, part of the
    configuration, and spelled out in every prompt width by width.

    ## Action Space
    `Discrete(R * L * T)` for R rows of at most L pins and T digits: action
    `(row * L + pin) * T + (width - 1)`.

    ## Observation Space
    Pin bits, shape `(R, L)`, 1 = standing (rows shorter than L padded with 0).

    ## Starting State
    All pins standing (default one row of 20, code "0.07").

    ## Arguments
    `rows`: pins per row; `code`: the octal code; `misere`: bool.

    ## Version History
    v0: initial version.
    """

    name = "octal"
    title = "Octal game"
    state_what = "an octal game state"
    role_phrase = "an octal game"
    disguised_role = "a two-player game called Lantern Blocks"
    disguise_words = LAMP_WORDS

    def __init__(
        self,
        rows: tuple[int, ...] | list[int] | int = (20,),
        code: str = "0.07",
        *,
        misere: bool = False,
        disguise: bool = False,
    ) -> None:
        super().__init__(misere=misere, disguise=disguise)
        self.rows = param_ints(rows, "rows (pins per row)", low=1)
        self.code = parse_code(code)
        #: digits[k] for k = 1..T (digits[0] is 0).
        self.digits = (0, *(int(c) for c in self.code[2:]))
        self.max_width = len(self.digits) - 1
        self.width = max(self.rows)

    @property
    def info(self) -> GameInfo:
        return GameInfo(
            name=self.name,
            title=self.title,
            num_actions=len(self.rows) * self.width * self.max_width,
            max_game_length=sum(self.rows),
            observation_shape=(len(self.rows), self.width),
            observation_high=1,
            params={"rows": list(self.rows), "code": self.code},
            misere=self.misere,
        )

    def group_moves(self, n: int) -> list[tuple[int, int]]:
        """(offset, width) of every block a group of `n` pins may lose, in action-id order."""
        digits = self.digits
        return [
            (a, w)
            for a in range(n)
            for w in range(1, min(self.max_width, n - a) + 1)
            if digits[w] and block_allowed(digits[w], a, n - w - a)
        ]

    def legal_moves(self, state: OctalState) -> list[OctalMove]:
        return [
            (r, start + a, w)
            for r, row in enumerate(state)
            for start, n in run_spans(row)
            for a, w in self.group_moves(n)
        ]

    def is_legal(self, state: OctalState, move: Any) -> bool:
        if not (isinstance(move, tuple) and len(move) == 3):
            return False
        r, i, w = move
        if not (0 <= r < len(state) and 1 <= w <= self.max_width and self.digits[w]):
            return False
        row = state[r]
        if i < 0 or i + w > len(row) or "0" in row[i : i + w]:
            return False
        left = len(row[:i]) - len(row[:i].rstrip("1"))
        right = len(row[i + w :]) - len(row[i + w :].lstrip("1"))
        return block_allowed(self.digits[w], left, right)

    def _why_block(self, state: OctalState, move: OctalMove) -> str:
        w = move[2]
        if not (1 <= w <= self.max_width and self.digits[w]):
            return f"no move knocks down {w} pins at once ({self._widths_phrase()})"
        return f"{w} pins may be knocked down only {self._places(self.digits[w])}"

    def action_id(self, move: OctalMove) -> int:
        r, i, w = move
        return (r * self.width + i) * self.max_width + (w - 1)

    def move_from_action(self, action: int) -> OctalMove:
        cell, w = divmod(int(action), self.max_width)
        r, i = divmod(cell, self.width)
        return (r, i, w + 1)

    def move_words(self, move: OctalMove) -> str:
        r, i, w = move
        pins = f"pin {i}" if w == 1 else f"pins {i} to {i + w - 1}"
        return f"knock down {pins}" if self.single_row else f"knock down {pins} of row {r}"

    @staticmethod
    def _places(digit: int) -> str:
        return ", ".join(words for bit, words in _PLACES if digit & bit)

    def _widths_phrase(self) -> str:
        return "blocks of " + ", ".join(
            str(w) for w in range(1, self.max_width + 1) if self.digits[w]
        )

    def rules_text(self) -> str:
        last = "loses" if self.misere else "wins"
        where = (
            "There is a single row of pins"
            if self.single_row
            else f"There are {len(self.rows)} rows of pins, numbered from 0"
        )
        widths = " ".join(
            f"Taking {'1 pin' if w == 1 else f'{w} adjacent pins'}: allowed {self._places(d)}."
            for w, d in enumerate(self.digits)
            if d
        )
        return (
            f"#Objective: The player who makes the last move {last}; a player who cannot "
            f"move has {'won' if self.misere else 'lost'}.\n"
            f"#Game Rule: 1. {where}; pins are numbered from 0, left to right. A group is a "
            "maximal block of adjacent standing pins. 2. On your turn you knock down a block "
            "of adjacent standing pins"
            + ("" if self.single_row else " in one row")
            + ", of one of the widths below, placed as that width allows: "
            "as a whole group (the block is the entire group), at one end of a longer group "
            "(standing pins remain on one side only), or strictly inside a group (standing "
            f"pins remain on both sides). {widths} 3. No other move is allowed."
        )

    @classmethod
    def config_from_text(cls, text: str) -> dict[str, Any]:
        misere = "makes the last move loses" in text
        digits: dict[int, int] = {}
        for width, places in re.findall(
            r"Taking (\d+) (?:adjacent pins|pin): allowed ([a-z ,]+)\.", text
        ):
            digits[int(width)] = sum(bit for bit, words in _PLACES if words in places)
        if not digits:
            raise InvalidStateError("could not find the allowed blocks in the rules text")
        code = "0." + "".join(str(digits.get(w, 0)) for w in range(1, max(digits) + 1))
        return {"rows": cls.rows_from_text(text), "code": code, "misere": misere}

    def task_text(self, state: OctalState) -> str:
        return (
            "Based on the current state, decide which block of adjacent pins you will knock down."
        )

    def action_schema(self, state: OctalState) -> str:
        if self.single_row:
            return "integer or [i, i+1, ...] // one pin index, or the indices of adjacent pins"
        return "[row, pin, ...] // the row, then the indices of the adjacent pins"

    def _move_from_value(self, value: Any, state: OctalState) -> OctalMove:
        items = int_list(value, "pin indices")
        if not self.single_row:
            if len(items) < 2:
                raise UnparsableMoveError(f"expected [row, pin, ...], got {value!r}")
            row, pins = items[0], sorted(items[1:])
        else:
            row, pins = 0, sorted(items)
        if pins != list(range(pins[0], pins[0] + len(pins))):
            # Well formed but against the rules: an illegal move, not a parse failure.
            raise IllegalMoveError(f"the pins must be adjacent and distinct, got {pins}")
        return (row, pins[0], len(pins))
