"""NIM: heaps of items; take between 1 and `max_take` items from one heap."""

from __future__ import annotations

import re
from typing import Any, ClassVar

import numpy as np

from metanim.games._base import (
    Game,
    GameInfo,
    find_int,
    ints,
    is_int,
    param_int,
    param_ints,
    radix_digits,
    radix_index,
    state_ints,
    there_are,
)
from metanim.games.errors import (
    InvalidStateError,
)

HeapState = tuple[int, ...]
HeapMove = tuple[int, int]  # (heap index, count taken)
NimState = HeapState
NimMove = HeapMove


class HeapGame(Game[HeapState, HeapMove]):
    """What the games on heaps of items share (NIM, subtraction games): states are heap
    sizes, each heap holding up to the largest initial heap; a move takes items from one
    heap; the texts of a state and of a move."""

    heaps: tuple[int, ...]
    capacity: int
    #: How errors name a state of the game ("a NIM state").
    state_what: ClassVar[str]

    @staticmethod
    def heaps_from_text(text: str) -> list[int]:
        """The heap sizes a prompt's Current State shows (at least 1 each: capacities)."""
        if "single pile" in text:
            heaps = [find_int(r"There (?:are|is) (\d+) items? remaining", text, "the pile size")]
        else:
            heaps = [int(h) for _, h in re.findall(r"heap (\d+): (\d+)", text)]
        return [max(h, 1) for h in heaps]

    @property
    def single_heap(self) -> bool:
        return len(self.heaps) == 1

    def initial_state(self) -> HeapState:
        return self.heaps

    def validate_state(self, state: Any) -> HeapState:
        if is_int(state):
            state = (state,)
        heaps = state_ints(state, f"{self.state_what} (heap sizes)")
        if len(heaps) != len(self.heaps):
            raise InvalidStateError(f"expected {len(self.heaps)} heap(s), got {len(heaps)}")
        for h in heaps:
            if not 0 <= h <= self.capacity:
                raise InvalidStateError(
                    f"heap size {h} is not allowed: heaps hold 0 to {self.capacity} items "
                    "(the largest initial heap)"
                )
        return heaps

    def child(self, state: HeapState, move: HeapMove) -> HeapState:
        i, c = move
        if len(state) == 1:  # one heap (the papers' setting): no slicing
            return (state[0] - c,)
        return (*state[:i], state[i] - c, *state[i + 1 :])

    def state_key(self, state: HeapState) -> tuple[int, ...]:
        return tuple(sorted(h for h in state if h))

    # The state index: the heap sizes as digits in base capacity + 1, heap 0 most
    # significant; one heap's index is its size (the solver's code of a heap).
    @property
    def num_states(self) -> int:
        return (self.capacity + 1) ** len(self.heaps)

    def state_index(self, state: HeapState) -> int:
        return radix_index(state, self.capacity + 1)  # type: ignore[no-any-return]

    def _state_at(self, index: int) -> HeapState:
        return radix_digits(index, self.capacity + 1, len(self.heaps))

    def _observation_index(self, obs: np.ndarray) -> np.ndarray:
        return radix_index([obs[..., i] for i in range(len(self.heaps))], self.capacity + 1)  # type: ignore[no-any-return]

    def observation(self, state: HeapState) -> np.ndarray:
        return np.asarray(state, dtype=np.int64)

    def to_json(self, state: HeapState) -> list[int]:
        return list(state)  # states and moves alike are flat tuples of ints

    def move_text(self, move: HeapMove) -> str:
        return str(move[1]) if self.single_heap else f"[{move[0]}, {move[1]}]"

    def move_words(self, move: HeapMove) -> str:
        heap, count = move
        return f"take {count}" if self.single_heap else f"take {count} from heap {heap}"

    def describe(self, state: HeapState) -> str:
        if self.single_heap:
            return f"{there_are(state[0], 'item')} remaining in the pile."
        listing = ", ".join(f"heap {i}: {h}" for i, h in enumerate(state))
        return f"The heaps hold these numbers of items: {listing}."

    def parse_state(self, text: str) -> HeapState:
        if self.single_heap:
            return self.validate_state(
                (find_int(r"There (?:are|is) (\d+) items? remaining", text, "the pile size"),)
            )
        found = dict((int(i), int(h)) for i, h in re.findall(r"heap (\d+): (\d+)", text))
        if sorted(found) != list(range(len(self.heaps))):
            raise InvalidStateError(f"expected heap sizes for heaps 0..{len(self.heaps) - 1}")
        return self.validate_state(tuple(found[i] for i in range(len(self.heaps))))

    def _move_from_value(self, value: Any, state: HeapState) -> HeapMove:
        if self.single_heap:
            (count,) = ints(value, 1, "the number of items to take")
            return (0, count)
        heap, count = ints(value, 2, "[heap, count]")
        return (heap, count)


class Nim(HeapGame):
    """NIM with one or more heaps and an optional maximum take per move.

    ## Description
    Players alternately remove between 1 and `max_take` items (any number when
    `max_take` is None) from exactly one heap. Normal play: whoever takes the last
    item wins. Misère: whoever takes the last item loses. With one heap of n and
    max take k, the P-positions are n ≡ 0 (mod k+1) (misère: n ≡ 1); with unbounded
    takes, Bouton's theorem: the Nim-sum (XOR of heaps) is 0.

    ## Action Space
    `Discrete(H * T)` with H heaps and T = `max_take` (or the largest heap when
    unbounded): action `h * T + (count - 1)` takes `count` from heap `h`.

    ## Observation Space
    The heap sizes, shape `(H,)`, each in `[0, max(heaps)]`.

    ## Starting State
    `heaps` (paper default: one heap of 31 with `max_take` 3, 4 or 5).

    ## Arguments
    `heaps`: initial heap sizes (also the per-heap capacity); `max_take`: int or None;
    `misere`: bool.

    ## Version History
    v0: initial version.
    """

    name = "nim"
    title = "NIM"
    state_what = "a NIM state"
    role_phrase = "a game of Nim variants"
    disguised_role = "a two-player game called Pile Taking"

    def __init__(
        self,
        heaps: tuple[int, ...] | list[int] | int = (31,),
        max_take: int | None = 3,
        *,
        misere: bool = False,
        disguise: bool = False,
    ) -> None:
        super().__init__(misere=misere, disguise=disguise)
        heaps_t = param_ints(heaps, "heaps (initial heap sizes)", low=1)
        self.heaps = heaps_t
        self.max_take = None if max_take is None else param_int(max_take, "max_take", low=1)
        self.capacity = max(heaps_t)
        self._take_slots = self.max_take if self.max_take is not None else self.capacity

    @property
    def info(self) -> GameInfo:
        return GameInfo(
            name=self.name,
            title=self.title,
            num_actions=len(self.heaps) * self._take_slots,
            max_game_length=sum(self.heaps),
            observation_shape=(len(self.heaps),),
            observation_high=self.capacity,
            params={"heaps": list(self.heaps), "max_take": self.max_take},
            misere=self.misere,
        )

    def is_terminal(self, state: NimState) -> bool:
        return not any(state)

    def num_legal_moves(self, state: NimState) -> int:
        k = self.max_take
        return sum(state) if k is None else sum([h if h < k else k for h in state])

    def take_limit(self, heap: int) -> int:
        return heap if self.max_take is None else min(heap, self.max_take)

    def legal_moves(self, state: NimState) -> list[NimMove]:
        return [(i, c) for i, h in enumerate(state) for c in range(1, self.take_limit(h) + 1)]

    def legal_move_at(self, state: NimState, k: int) -> NimMove:
        limit = self.max_take
        for i, h in enumerate(state):
            takes = h if limit is None or h < limit else limit
            if k < takes:
                return (i, k + 1)
            k -= takes
        raise IndexError("no such legal move")

    def legal_mask(self, state: NimState, out: np.ndarray) -> np.ndarray:
        # Heap i's legal ids are one run: i * T .. i * T + take_limit(h) - 1; each id is
        # written once (a mask of 10**5 actions is the only O(heap) work of a step).
        slots = self._take_slots
        for i, h in enumerate(state):
            legal = i * slots + self.take_limit(h)
            out[i * slots : legal] = 1
            out[legal : (i + 1) * slots] = 0
        return out

    def is_legal(self, state: NimState, move: Any) -> bool:
        if not (isinstance(move, tuple) and len(move) == 2 and all(map(is_int, move))):
            return super().is_legal(state, move)  # odd input: compare as the list would
        i, c = move
        return 0 <= i < len(state) and 1 <= c <= self.take_limit(state[i])

    def why_illegal(self, state: NimState, move: NimMove) -> str:
        i, c = move
        if not 0 <= i < len(state):
            return f"there is no heap {i} (heaps are numbered 0 to {len(state) - 1})"
        if c < 1:
            return f"you must take at least 1 item, not {c}"
        if self.max_take is not None and c > self.max_take:
            return f"you may take at most {self.max_take} items per turn, not {c}"
        return f"heap {i} has only {state[i]} item(s), so you cannot take {c}"

    # encodings
    def action_id(self, move: NimMove) -> int:
        i, c = move
        return i * self._take_slots + (c - 1)

    def move_from_action(self, action: int) -> NimMove:
        i, c = divmod(int(action), self._take_slots)
        return (i, c + 1)

    def _take_phrase(self) -> str:
        if self.max_take is None:
            return "any number of items (at least 1)"
        return f"between 1 and {self.max_take} items"

    def rules_text(self) -> str:
        last = "loses" if self.misere else "wins"
        goal = (
            "make your opponent take the last item"
            if self.misere
            else "take the last item, leaving nothing for your opponent"
        )
        pile = (
            "There is a single pile of items."
            if self.single_heap
            else f"There are {len(self.heaps)} heaps of items, numbered 0 to {len(self.heaps) - 1}."
        )
        where = "" if self.single_heap else " from exactly one heap"
        return (
            f"#Objective: Your goal is to {goal}. The player who takes the last item {last}.\n"
            f"#Game Rule: {pile} On your turn you take {self._take_phrase()}{where}."
        )

    @classmethod
    def config_from_text(cls, text: str) -> dict[str, Any]:
        misere = "takes the last item loses" in text
        max_take = None
        match = re.search(r"you take between 1 and (\d+) items", text)
        if match:
            max_take = int(match.group(1))
        return {"heaps": cls.heaps_from_text(text), "max_take": max_take, "misere": misere}

    def task_text(self, state: NimState) -> str:
        if self.single_heap:
            hi = self.take_limit(state[0])
            return f"Based on the current state, decide how many items you will take (between 1 and {hi}) on this turn."
        return "Based on the current state, decide which heap you take from and how many items you take."

    def action_schema(self, state: NimState) -> str:
        if self.single_heap:
            return f"integer // how many items you take, between 1 and {self.take_limit(state[0])}"
        return "[heap, count] // the heap index and how many items you take from it"
