"""The `Game` interface every layer reads: rules only, over immutable states.

A game instance is one *configuration* (sizes, max take, misère flag). States are
plain immutable, hashable values (tuples and ints), so they can be dict keys,
JSON values and pickled without ceremony. Moves are tuples as well.

Every game gives:

* rules: `initial_state`, `legal_moves`, `apply`, `is_terminal`, `validate_state`;
* encodings: `action_id` / `move_from_action` (one flat discrete action id),
  `observation` (a fixed-shape integer array), `state_index` / `state_from_index` (one
  integer per state in `[0, num_states)`, the code the solver's tables use where they
  have one; `observation_index` reads it off a batch of observations in NumPy) and
  `state_key` (a canonical form: equal keys mean the same game value, e.g. Kayles rows
  in any order);
* text: `move_text` (canonical), `rules_text` and `describe` (prompt sections),
  `parse_state` (inverse of `describe`) and `parse_move` (an LLM's answer to a move,
  raising `UnparsableMoveError` or `IllegalMoveError` with the precise reason).
"""

from __future__ import annotations

import functools
import json
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from metanim.games.errors import (
    IllegalMoveError,
    InvalidStateError,
    MoveError,
    SizeLimitError,
    UnparsableMoveError,
)
from metanim.games.reply import extract_action

#: Bumped whenever any prompt text of any game changes (see docs/prompts.md).
PROMPT_VERSION = "metanim-prompts/1"
#: The disguised prompt variant (`Game(disguise=True)`): every text a game shows, with
#: its name and the words that point to its known theory swapped for a neutral story.
#: Bumped whenever a disguised name or a swapped word changes.
DISGUISE_VERSION = "metanim-disguise/1"
#: What a game prompt's version gains when the prompt lists the legal moves
#: (`Game.prompt(list_moves=True)`, `game_prompt_version`): a prompt without the list
#: keeps the bare `PROMPT_VERSION`, so runs and logs without it keep their identity.
LISTED_MOVES_MARK = "+listed-moves"
#: The heading of the section a prompt that lists the legal moves ends with.
LEGAL_MOVES_HEADING = "#Legal Moves:"


def game_prompt_version(list_moves: bool = False, base: str = PROMPT_VERSION) -> str:
    """The game prompt version a decision records: `base` (the games' `PROMPT_VERSION`),
    marked with `LISTED_MOVES_MARK` when the prompt lists the legal moves."""
    return base + LISTED_MOVES_MARK if list_moves else base


#: The texts a game shows to a reader: a disguised game swaps their words.
_SHOWN_TEXTS = ("rules_text", "describe", "task_text", "action_schema", "why_illegal", "move_words")


def _swap(text: str, pairs: Sequence[tuple[str, str]]) -> str:
    for old, new in pairs:
        text = re.sub(rf"\b{re.escape(old)}\b", new, text)
    return text


def _presented(method: Any) -> Any:
    """`method`, whose text a disguised game shows with its neutral words."""

    @functools.wraps(method)
    def shown(self: Game[Any, Any], *args: Any, **kwargs: Any) -> str:
        text = method(self, *args, **kwargs)
        return _swap(text, self.disguise_words) if self.disguise else text

    return shown


def _read_back(method: Any) -> Any:
    """`parse_state`, reading a disguised game's text with its named words restored."""

    @functools.wraps(method)
    def parse(self: Game[Any, Any], text: str) -> Any:
        return method(self, self.named_text(text) if self.disguise else text)

    return parse


def _config_read_back(method: Any) -> Any:
    """`config_from_text` that also reads a disguised prompt (and says it is one)."""

    @functools.wraps(method)
    def config(cls: type[Game[Any, Any]], text: str) -> dict[str, Any]:
        if cls.disguised_role not in text:
            return method(cls, text)  # type: ignore[no-any-return]
        return {**method(cls, _swap(text, _reversed(cls.disguise_words))), "disguise": True}

    return classmethod(config)


def _reversed(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(new, old) for old, new in pairs]


StateT = TypeVar("StateT", bound=Hashable)
MoveT = TypeVar("MoveT", bound=Hashable)


#: The largest `num_states` an int64 index covers (`observation_index`, the envs'
#: `observation="index"`): indices 0 .. num_states - 1 must fit int64.
MAX_INT64_STATES = int(np.iinfo(np.int64).max)


# Code that lists every action of a position (an env's mask, the simulator's candidate
# answers, a random fallback move) refuses games with more: rules and solver have no limit.
MAX_LISTED_ACTIONS = 100_000


def check_listable(game: Game[Any, Any], who: str) -> None:
    """Raise `SizeLimitError` when `game` has more actions than `who` can list."""
    count = game.info.num_actions
    if count > MAX_LISTED_ACTIONS:
        raise SizeLimitError(
            f"{who} lists every move of a position, and {game!r} has {count:,} actions "
            f"(the limit is {MAX_LISTED_ACTIONS:,})"
        )


def check_int64_states(game: Game[Any, Any], who: str, instead: str = "") -> None:
    """Raise `SizeLimitError` when `game`'s state indices do not fit int64 (`instead`: what
    to use then, said after the limit)."""
    if game.num_states > MAX_INT64_STATES:
        raise SizeLimitError(
            f"{who} needs state indices within int64, and {game!r} has {game.num_states:,} "
            f"(the limit is {MAX_INT64_STATES:,}){'; ' + instead if instead else ''}"
        )


def radix_index(digits: Sequence[Any], base: int) -> Any:
    """Digits (most significant first) in base `base`: ints give an exact int, int64
    arrays an int64 array (Horner's rule, one pass)."""
    code: Any = 0
    for digit in digits:
        code = code * base + digit
    return code


def radix_digits(code: int, base: int, count: int) -> tuple[int, ...]:
    """The `count` digits of `code` in base `base`, most significant first."""
    out = []
    for _ in range(count):
        code, digit = divmod(code, base)
        out.append(digit)
    return tuple(reversed(out))


@dataclass(frozen=True)
class GameInfo:
    """Metadata of one game configuration (OpenSpiel's GameType/GameInfo, in one record).

    Spaces, prompts, dataset generators and the env registry all read it.
    """

    name: str
    title: str
    num_actions: int
    max_game_length: int
    observation_shape: tuple[int, ...]
    observation_high: int
    params: dict[str, Any] = field(default_factory=dict)
    misere: bool = False

    @property
    def variant(self) -> str:
        return "misere" if self.misere else "normal"


class Game(ABC, Generic[StateT, MoveT]):
    """Rules of one impartial game in one configuration.

    Normal play: the player who makes the last move wins. Misère play: the player
    who makes the last move loses. Either way the player to move at a terminal
    state has no move; `mover_wins_at_terminal` says whether that is a win.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    #: How the Game Role line names the game (one word can change an LLM's play).
    role_phrase: ClassVar[str]
    #: The Game Role line's name in the disguised variant: an invented name with no word
    #: of the game's known theory (distinct per game, so `game_from_prompt` reads it).
    disguised_role: ClassVar[str]
    #: (named word, neutral word) pairs a disguised game swaps in every text it shows
    #: (`_SHOWN_TEXTS`), longest first; no neutral word occurs in the named texts, so the
    #: swap reads back exactly (`named_text`).
    disguise_words: ClassVar[tuple[tuple[str, str], ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Each game writes its texts once, in the named words; the disguised variant is
        # the same texts with the words swapped, and read back by swapping them again.
        for name in _SHOWN_TEXTS:
            if name in cls.__dict__:
                setattr(cls, name, _presented(cls.__dict__[name]))
        if "parse_state" in cls.__dict__:
            cls.parse_state = _read_back(cls.__dict__["parse_state"])  # type: ignore[method-assign]
        if "config_from_text" in cls.__dict__:
            original = cls.__dict__["config_from_text"].__func__
            cls.config_from_text = _config_read_back(original)  # type: ignore[method-assign]

    def __init__(self, *, misere: bool = False, disguise: bool = False) -> None:
        if not isinstance(misere, bool | np.bool_):
            raise ValueError(f"misere must be true or false, got {misere!r}")
        if not isinstance(disguise, bool | np.bool_):
            raise ValueError(f"disguise must be true or false, got {disguise!r}")
        self.misere = bool(misere)
        #: Whether prompts present the game without its name or theory words (the
        #: "disguised" prompt variant, `DISGUISE_VERSION`); the rules are the same.
        self.disguise = bool(disguise)

    # ----------------------------------------------------------------- metadata
    @property
    @abstractmethod
    def info(self) -> GameInfo: ...

    @property
    def shown_title(self) -> str:
        """The game's title as a reader sees it (the disguised name when disguised)."""
        return self.disguised_role.split(" called ")[-1] if self.disguise else self.title

    def named_text(self, text: str) -> str:
        """A disguised text with the game's named words restored (what its parser reads)."""
        return _swap(text, _reversed(self.disguise_words))

    @property
    def params(self) -> dict[str, Any]:
        """JSON-friendly constructor arguments; `type(game)(**game.params)` rebuilds it."""
        # `disguise` appears only when set, so a named game keeps its identity.
        extra = {"disguise": True} if self.disguise else {}
        return {**self.info.params, "misere": self.misere, **extra}

    @property
    def mover_wins_at_terminal(self) -> bool:
        return self.misere

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.params == self.params  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, json.dumps(self.params, sort_keys=True)))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"

    # -------------------------------------------------------------------- rules
    @abstractmethod
    def initial_state(self) -> StateT: ...

    @abstractmethod
    def validate_state(self, state: Any) -> StateT:
        """Return `state` in its canonical Python form, or raise `InvalidStateError`."""

    @abstractmethod
    def legal_moves(self, state: StateT) -> list[MoveT]:
        """All legal moves, sorted by action id."""

    @abstractmethod
    def child(self, state: StateT, move: MoveT) -> StateT:
        """The state after a move already known to be legal, unchecked (OpenSpiel's `child`).

        Solvers, envs and simulators that take moves from `legal_moves` call this;
        anything that takes a move from outside calls `apply`, which checks it first.
        """

    def apply(self, state: StateT, move: MoveT) -> StateT:
        """The state after `move`; raises `IllegalMoveError` if the move is not legal."""
        parts = move if isinstance(move, tuple) else (move,)
        if not all(is_int(p) for p in parts):
            raise IllegalMoveError(f"a move is made of whole numbers, got {move!r}", repr(move))
        if not self.is_legal(state, move):
            raise IllegalMoveError(self.why_illegal(state, move), self.move_text(move))
        return self.child(state, move)

    def is_legal(self, state: StateT, move: Any) -> bool:
        """`move in self.legal_moves(state)`; games override it to skip listing every move
        (a tournament checks each answer's legality two or three times)."""
        return move in self.legal_moves(state)

    def is_terminal(self, state: StateT) -> bool:
        return not self.legal_moves(state)

    def num_legal_moves(self, state: StateT) -> int:
        """`len(legal_moves(state))`, counted without listing them where a game can."""
        return len(self.legal_moves(state))

    def legal_move_at(self, state: StateT, k: int) -> MoveT:
        """`legal_moves(state)[k]` (0 <= k < `num_legal_moves(state)`); games with a
        closed form find it without listing every move (a random opponent's pick)."""
        return self.legal_moves(state)[k]

    def why_illegal(self, state: StateT, move: MoveT) -> str:
        """One sentence saying why `move` is not legal in `state` (override for detail)."""
        return f"{self.move_text(move)} is not a legal move in this position"

    def state_key(self, state: StateT) -> Hashable:
        """Canonical form for memoization: equal keys have equal game values."""
        return state

    # ------------------------------------------------------------ state indices
    @property
    @abstractmethod
    def num_states(self) -> int:
        """How many indices the encoding spans: `state_index` of every valid state of this
        configuration (reachable from the start or not) lies in `[0, num_states)`.

        An exact Python int. Some games leave gaps (an index no valid state has, such as
        Chomp's empty board): `state_from_index` refuses those.
        """

    @abstractmethod
    def state_index(self, state: StateT) -> int:
        """The canonical integer of a valid state, in `[0, num_states)` (an exact int)."""

    def state_from_index(self, index: int) -> StateT:
        """The state whose `state_index` is `index`; `InvalidStateError` for an index out
        of range or one no valid state has."""
        if not is_int(index) or not 0 <= index < self.num_states:
            raise InvalidStateError(
                f"a state index of {self!r} is a whole number in [0, {self.num_states:,}), "
                f"got {index!r}"
            )
        return self.validate_state(self._state_at(int(index)))

    @abstractmethod
    def _state_at(self, index: int) -> Any:
        """The state value `index` decodes to (in range; `state_from_index` validates it)."""

    def observation_index(self, observations: np.ndarray) -> np.ndarray:
        """`state_index` of the states behind raw observations (`observation`), vectorised
        over any leading axes, as int64; `SizeLimitError` where `num_states` passes int64."""
        check_int64_states(self, "observation_index")
        obs = np.asarray(observations, dtype=np.int64)
        if obs.shape[obs.ndim - len(self.info.observation_shape) :] != self.info.observation_shape:
            raise ValueError(
                f"observations of {self!r} end in shape {self.info.observation_shape}, "
                f"got {obs.shape}"
            )
        return np.asarray(self._observation_index(obs), dtype=np.int64)

    @abstractmethod
    def _observation_index(self, obs: np.ndarray) -> np.ndarray:
        """`observation_index` once the shape and the int64 bound are checked."""

    # ---------------------------------------------------------------- encodings
    @abstractmethod
    def action_id(self, move: MoveT) -> int: ...

    @abstractmethod
    def move_from_action(self, action: int) -> MoveT: ...

    @abstractmethod
    def observation(self, state: StateT) -> np.ndarray:
        """Fixed-shape int array (shape and bound in `info`)."""

    def action_mask(self, state: StateT) -> np.ndarray:
        """The legal actions of `state` as a new int8 0/1 array of `info.num_actions`."""
        return self.legal_mask(state, np.empty(self.info.num_actions, dtype=np.int8))

    def legal_mask(self, state: StateT, out: np.ndarray) -> np.ndarray:
        """Write the legal actions of `state` into `out` (a C-contiguous int8 array,
        `info.num_actions` long: 1 where legal, 0 elsewhere) and return it.

        Games override it with a closed form (slices of the action ids, no move listed):
        an env derives every mask through it, so a position with 10**5 legal moves costs
        one pass over the mask and no Python object per move.
        """
        out[:] = 0
        for move in self.legal_moves(state):
            out[self.action_id(move)] = 1
        return out

    def to_json(self, state: StateT) -> Any:
        """JSON value of a state (lists instead of tuples); `validate_state` inverts it."""
        return _listify(state)

    # --------------------------------------------------------------------- text
    @abstractmethod
    def move_text(self, move: MoveT) -> str:
        """Canonical text of a move: what prompts show and `parse_move` accepts."""

    @abstractmethod
    def move_words(self, move: MoveT) -> str:
        """The move in the game's own words ("take 2 from heap 1"), for people to read."""

    @abstractmethod
    def rules_text(self) -> str:
        """The Objective and Game Rule sections of the game prompt."""

    @abstractmethod
    def describe(self, state: StateT) -> str:
        """The Current State section of the game prompt (all a state needs)."""

    @abstractmethod
    def parse_state(self, text: str) -> StateT:
        """Inverse of `describe` (also finds the state inside a whole prompt)."""

    @classmethod
    @abstractmethod
    def config_from_text(cls, text: str) -> dict[str, Any]:
        """Constructor arguments recovered from a rendered prompt (see `game_from_prompt`)."""

    def prompt(
        self, state: StateT, agent_name: str = "Player 1", *, list_moves: bool = False
    ) -> str:
        """The game prompt: Game Role, Objective, Game Rule, Current State and Task.

        With `list_moves` the prompt ends with one more section, every legal move in its
        `move_text`, in action-id order (`#Legal Moves: 1, 2, 3`); the version it is
        recorded with is `game_prompt_version(True)`. The section comes last, so the
        prompt without it is a prefix of the prompt with it. The Output Format section
        belongs to the prompting method (agents layer).
        """
        text = (
            f"#Game Role: You are {agent_name}, a participant in "
            f"{self.disguised_role if self.disguise else self.role_phrase}.\n"
            f"{self.rules_text()}\n"
            f"#Current State: {self.describe(state)}\n"
            f"#Task: {self.task_text(state)}"
        )
        if not list_moves:
            return text
        moves = sorted(self.legal_moves(state), key=self.action_id)
        return f"{text}\n{LEGAL_MOVES_HEADING} {', '.join(map(self.move_text, moves))}"

    @abstractmethod
    def task_text(self, state: StateT) -> str:
        """The Task section: what decision is asked and in which form."""

    @abstractmethod
    def action_schema(self, state: StateT) -> str:
        """One line describing the JSON `action` value, for the Output Format section."""

    def action_json_schema(self, state: StateT) -> dict[str, Any]:
        """The JSON Schema of the `action` value: the legal moves of `state` as an `enum`.

        Each member is the move as the Output Format asks for it (its `move_text` read as
        JSON), so a schema-constrained reply parses back to exactly that move.
        """
        return {"enum": [json.loads(self.move_text(m)) for m in self.legal_moves(state)]}

    @abstractmethod
    def _move_from_value(self, value: Any, state: StateT) -> MoveT:
        """Interpret a parsed value (int, list, str) as a move, or raise `UnparsableMoveError`."""

    def parse_move(
        self,
        answer: str | int | Sequence[int],
        state: StateT,
        *,
        finish_reason: str | None = None,
    ) -> MoveT:
        """Turn an answer, or a model's whole reply, into a legal move, or raise the `MoveError`.

        A text is read by the one reply parser (`metanim.games.reply.extract_action`):
        prose with a fenced JSON block, a JSON object with an "action", `action: 3`, or
        a bare answer ("3", "[1, 2]", "(1, 2)"). Other values go to `move_from_value`.
        Unparsable and illegal answers raise different exception types so that callers
        can count them apart.

        Args:
            answer: A reply text, a JSON value (int, list, {"action": ...}) or a move.
            state: The position the answer is a move in.
            finish_reason: The server's finish reason of the reply, when known
                ("length": only a complete strict answer counts).
        """
        if isinstance(answer, str):
            try:
                value, _ = extract_action(answer, finish_reason=finish_reason)
            except UnparsableMoveError as err:
                if err.kind != "unparsable":
                    raise
                # No stage found an action. The text read as a value may name what is
                # wrong with it ("expected [row, col], found no number in ..."); it is
                # never read as a move, so every reader of replies gets the same answer.
                try:
                    self.move_from_value(_json_or_text(answer), state)
                except UnparsableMoveError as reason:
                    raise UnparsableMoveError(reason.reason, answer[:200]) from None
                except MoveError:
                    pass
                raise
            return self.move_from_value(value, state, text=answer)
        return self.move_from_value(answer, state)

    def move_from_value(self, value: Any, state: StateT, *, text: str | None = None) -> MoveT:
        """An action value already extracted from a reply (int, list, text, or an object
        with an "action" key) as a legal move, or the precise `MoveError`.

        A text value counts only when it *is* a number or a list of numbers ("2",
        "[0, 3]"): "take 2 from heap 1" is unparsable, never heap 2 take 1.
        """
        if isinstance(value, dict):
            # The Output Format of every prompt asks for {"action": ...}.
            if "action" not in value:
                raise UnparsableMoveError(f"expected an 'action' key, got keys {sorted(value)}")
            value = value["action"]
        move = self._move_from_value(value, state)
        if not self.is_legal(state, move):
            raise IllegalMoveError(
                self.why_illegal(state, move), text if text is not None else str(value)
            )
        return move


def _listify(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        # Recurse only into nested sequences: states are mostly flat tuples of ints,
        # and the env builds this JSON form on every step.
        return [_listify(v) if isinstance(v, (tuple, list)) else v for v in value]
    return value


# The number rule of every reply stage: a move number is an ASCII decimal integer.
_INT = re.compile(r"-?[0-9]+")
# A text value that *is* a number or a list of numbers: "2", "[0, 3]", "(1,2)", "0 3".
_NUMERIC_TEXT = re.compile(r"^\s*[\[(]?\s*-?[0-9]+(?:\s*[,\s]\s*-?[0-9]+)*\s*[\])]?\s*\.?\s*$")
# Text made of numbers that break the rule: "2.0", "1e2", "1/2", full-width "３".
_NUMBER_LIKE = re.compile(
    r"^\s*[\[(]?\s*[-+]?\d+(?:[./]\d+)?(?:[eE][-+]?\d+)?"
    r"(?:\s*[,\s]\s*[-+]?\d+(?:[./]\d+)?(?:[eE][-+]?\d+)?)*\s*[\])]?\s*\.?\s*$"
)


def _json_or_text(text: str) -> Any:
    """A whole text as a JSON value if it is one, else the stripped text."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except (json.JSONDecodeError, ValueError):
        return stripped


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def int_list(value: Any, what: str) -> tuple[int, ...]:
    """The integers of a parsed answer (a number, a list, or text), or `UnparsableMoveError`."""
    if isinstance(value, bool):
        raise UnparsableMoveError(f"expected {what}, got a boolean")
    if isinstance(value, int | float):
        items: list[Any] = [value]
    elif isinstance(value, list | tuple):
        items = list(value)
    elif isinstance(value, str):
        # The strict rule: a text counts only when it is numbers and nothing else, so
        # "take 2 from heap 1" never reads as [2, 1] nor "pin 3 (the 4th pin)" as [3, 4].
        if not _NUMERIC_TEXT.match(value) and _NUMBER_LIKE.match(value):
            raise UnparsableMoveError(
                f"expected {what}: a move number is a whole number in ASCII digits (0-9), "
                f"without a decimal point, exponent or fraction, got {_short(value)}"
            )
        if not _INT.search(value):
            raise UnparsableMoveError(f"expected {what}, found no number in {_short(value)}")
        if not _NUMERIC_TEXT.match(value):
            raise UnparsableMoveError(
                f"expected {what} as a number or a list of numbers, got the text {_short(value)}"
            )
        try:
            items = [int(x) for x in _INT.findall(value)]
        except ValueError:  # past Python's 4,300-digit limit for int(str)
            raise UnparsableMoveError(f"expected {what}, got a number too long to read") from None
    else:
        raise UnparsableMoveError(f"expected {what}, got {type(value).__name__}")
    out = []
    for item in items:
        # inf and nan (JSON's 1e400, NaN, Infinity) are no whole numbers, nor is 2.5.
        if (
            isinstance(item, bool)
            or not isinstance(item, int | float)
            or (isinstance(item, float) and not math.isfinite(item))
            or int(item) != item
        ):
            raise UnparsableMoveError(f"expected {what} as integers, got {_short(value)}")
        out.append(int(item))
    if not out:
        raise UnparsableMoveError(f"expected {what}, found no number in {value!r}")
    return tuple(out)


def ints(value: Any, count: int, what: str) -> tuple[int, ...]:
    """Exactly `count` integers from a parsed answer, or `UnparsableMoveError` naming `what`."""
    out = int_list(value, what)
    if len(out) != count:
        raise UnparsableMoveError(f"expected {what} ({count} integer(s)), got {value!r}")
    return out


def is_int(value: Any) -> bool:
    """Whether `value` is a whole number type (int or numpy integer; never a bool)."""
    if type(value) is int:  # nearly every call: skips two isinstance checks on unions
        return True
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def param_int(value: Any, what: str, low: int | None = None) -> int:
    """A constructor argument that must be an int (3.7, True, "4" are errors), >= low."""
    if not is_int(value):
        raise ValueError(f"{what} must be a whole number, got {value!r} ({type(value).__name__})")
    if low is not None and value < low:
        raise ValueError(f"{what} must be at least {low}, got {value}")
    return int(value)


def param_ints(value: Any, what: str, low: int | None = None) -> tuple[int, ...]:
    """One int or a list of ints as a tuple (strictly typed, each >= low)."""
    items = [value] if is_int(value) else value
    if not isinstance(items, list | tuple | np.ndarray) or len(items) == 0:
        raise ValueError(
            f"{what} must be a whole number or a non-empty list of them, got {value!r}"
        )
    return tuple(param_int(v, what, low) for v in items)


def state_ints(value: Any, what: str, count: int | None = None) -> tuple[int, ...]:
    """The integers of a state given as a list/tuple/array of ints, or `InvalidStateError`.

    Strict: a string ("47"), a float (3.7) or a bool (True) is an error, never read
    as a number.
    """
    # The common case (a state the library made): a tuple of plain ints, returned as is.
    # `type(x) is int` excludes bool, whose type is bool.
    if type(value) is tuple and all(type(x) is int for x in value):
        if count is not None and len(value) != count:
            raise InvalidStateError(f"{what} must have {count} entries, got {len(value)}")
        return value
    if not isinstance(value, list | tuple | np.ndarray):
        raise InvalidStateError(f"{what} must be a list of whole numbers, got {value!r}")
    for item in value:
        if not is_int(item):
            raise InvalidStateError(
                f"{what} must hold whole numbers, got {item!r} ({type(item).__name__}) in {value!r}"
            )
    if count is not None and len(value) != count:
        raise InvalidStateError(f"{what} must have {count} entries, got {len(value)}")
    return tuple(int(x) for x in value)


def plural(count: int, word: str) -> str:
    return word if count == 1 else word + "s"


def there_are(count: int, word: str) -> str:
    """ "There is 1 stone" / "There are 3 stones" (prompts should read naturally)."""
    return f"There is 1 {word}" if count == 1 else f"There are {count} {word}s"


def find_int(pattern: str, text: str, what: str) -> int:
    """The integer captured by `pattern` in `text`, or `InvalidStateError` naming `what`."""
    match = re.search(pattern, text)
    if match is None:
        raise InvalidStateError(f"could not find {what} in the state text")
    return int(match.group(1))
