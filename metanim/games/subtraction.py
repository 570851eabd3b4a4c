"""Subtraction games: heaps of items; a move takes s items from one heap, s in a set S."""

from __future__ import annotations

import re
from typing import Any

from metanim.games._base import (
    GameInfo,
    is_int,
    param_ints,
)
from metanim.games.errors import InvalidStateError
from metanim.games.nim import HeapGame, HeapMove, HeapState

SubtractionState = HeapState
SubtractionMove = HeapMove

#: The largest element a subtraction set may hold (the action space grows with |S|, and
#: the set is the rule a prompt spells out).
MAX_SUBTRACTION = 64


def parse_subtraction_set(value: Any) -> tuple[int, ...]:
    """A subtraction set as a sorted tuple of distinct whole numbers in 1..MAX_SUBTRACTION."""
    items = param_ints(value, "subtraction_set (the allowed takes)", low=1)
    if len(set(items)) != len(items):
        raise ValueError(f"subtraction_set has repeated takes: {list(items)}")
    if max(items) > MAX_SUBTRACTION:
        raise ValueError(
            f"subtraction_set takes are at most {MAX_SUBTRACTION}, got {max(items)} "
            "(metanim.games.subtraction.MAX_SUBTRACTION)"
        )
    return tuple(sorted(items))


def subtraction_code(takes: tuple[int, ...]) -> str:
    """The octal code of the subtraction game S: digit d_s = 3 for s in S, else 0.

    Digit bit 1 lets a move take a whole heap of s, bit 2 leave one smaller heap, so
    d_s = 3 is "take s from a heap of at least s" (Winning Ways, ch. 4).
    """
    return "0." + "".join("3" if k in takes else "0" for k in range(1, max(takes) + 1))


class Subtraction(HeapGame):
    """A subtraction game S on one or more heaps (several heaps play as a sum).

    ## Description
    Players alternately take s items from exactly one heap, s in the subtraction set
    S (for example {1, 3, 4}). Normal play: whoever makes the last move wins (a player
    with no allowed take, such as a heap smaller than every s, has lost). Misère: the
    last mover loses. The set is data, part of the configuration and of every prompt.

    ## Action Space
    `Discrete(H * |S|)`: action `h * |S| + j` takes the j-th smallest s from heap h.

    ## Observation Space
    The heap sizes, shape `(H,)`, each in `[0, max(heaps)]`.

    ## Starting State
    `heaps` (default one heap of 20, S = {1, 3, 4}).

    ## Arguments
    `heaps`: initial heap sizes (also each heap's capacity); `subtraction_set`: the
    allowed takes; `misere`: bool.

    ## Version History
    v0: initial version.
    """

    name = "subtraction"
    title = "Subtraction game"
    state_what = "a subtraction game state"
    role_phrase = "a subtraction game"
    disguised_role = "a two-player game called Fixed Takes"

    def __init__(
        self,
        heaps: tuple[int, ...] | list[int] | int = (20,),
        subtraction_set: tuple[int, ...] | list[int] = (1, 3, 4),
        *,
        misere: bool = False,
        disguise: bool = False,
    ) -> None:
        super().__init__(misere=misere, disguise=disguise)
        self.heaps = param_ints(heaps, "heaps (initial heap sizes)", low=1)
        self.takes = parse_subtraction_set(subtraction_set)
        self.capacity = max(self.heaps)
        self._slot = {s: j for j, s in enumerate(self.takes)}

    @property
    def code(self) -> str:
        """The octal code of this rule (the solver's name for it)."""
        return subtraction_code(self.takes)

    @property
    def info(self) -> GameInfo:
        return GameInfo(
            name=self.name,
            title=self.title,
            num_actions=len(self.heaps) * len(self.takes),
            max_game_length=sum(self.heaps) // self.takes[0],
            observation_shape=(len(self.heaps),),
            observation_high=self.capacity,
            params={"heaps": list(self.heaps), "subtraction_set": list(self.takes)},
            misere=self.misere,
        )

    def legal_moves(self, state: SubtractionState) -> list[SubtractionMove]:
        return [(i, s) for i, h in enumerate(state) for s in self.takes if s <= h]

    def is_legal(self, state: SubtractionState, move: Any) -> bool:
        if not (isinstance(move, tuple) and len(move) == 2 and all(map(is_int, move))):
            return super().is_legal(state, move)
        i, s = move
        return 0 <= i < len(state) and s in self._slot and s <= state[i]

    def why_illegal(self, state: SubtractionState, move: SubtractionMove) -> str:
        i, s = move
        if not 0 <= i < len(state):
            return f"there is no heap {i} (heaps are numbered 0 to {len(state) - 1})"
        if s not in self._slot:
            return f"you may take only {self._takes_phrase()} items, not {s}"
        return f"heap {i} has only {state[i]} item(s), so you cannot take {s}"

    def action_id(self, move: SubtractionMove) -> int:
        i, s = move
        return i * len(self.takes) + self._slot[s]

    def move_from_action(self, action: int) -> SubtractionMove:
        i, j = divmod(int(action), len(self.takes))
        return (i, self.takes[j])

    def _takes_phrase(self) -> str:
        takes = [str(s) for s in self.takes]
        return takes[0] if len(takes) == 1 else ", ".join(takes[:-1]) + " or " + takes[-1]

    def rules_text(self) -> str:
        last = "loses" if self.misere else "wins"
        pile = (
            "There is a single pile of items."
            if self.single_heap
            else f"There are {len(self.heaps)} heaps of items, numbered 0 to {len(self.heaps) - 1}."
        )
        where = "" if self.single_heap else " from exactly one heap"
        return (
            f"#Objective: The player who makes the last move {last}; a player who cannot "
            f"move has {'won' if self.misere else 'lost'}.\n"
            f"#Game Rule: {pile} On your turn you take exactly {self._takes_phrase()} "
            f"items{where} (allowed takes: {list(self.takes)}); you cannot take more items "
            "than a heap holds."
        )

    @classmethod
    def config_from_text(cls, text: str) -> dict[str, Any]:
        misere = "makes the last move loses" in text
        match = re.search(r"allowed takes: \[([0-9, ]+)\]", text)
        if match is None:
            raise InvalidStateError("could not find the allowed takes in the rules text")
        takes = [int(x) for x in match.group(1).split(",")]
        return {"heaps": cls.heaps_from_text(text), "subtraction_set": takes, "misere": misere}

    def task_text(self, state: SubtractionState) -> str:
        if self.single_heap:
            return (
                "Based on the current state, decide how many items you will take "
                f"({self._takes_phrase()}) on this turn."
            )
        return "Based on the current state, decide which heap you take from and how many items you take."

    def action_schema(self, state: SubtractionState) -> str:
        if self.single_heap:
            return f"integer // how many items you take: {self._takes_phrase()}"
        return "[heap, count] // the heap index and how many items you take from it"
