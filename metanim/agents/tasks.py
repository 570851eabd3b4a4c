"""What a method decides over: a game position or a question, behind one small `Task` protocol.

Every method (prompting or debate) only needs the problem text, a one-line schema of the
answer, a parser that raises `UnparsableMoveError` / `IllegalMoveError`, a vote key and the
legal answers. `GameTask` adapts a `Game` and a state; `QuestionTask` a multiple-choice, numeric or
math question read from a question file (`metanim.datasets.questions`; the seeds also
evaluate debate on math and QA sets: Du et al. 2023, AceMAD's benchmarks, cross-model
debate on GSM8K/MATH). A question grades its own answers (`QuestionTask.grade`).
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol, runtime_checkable

from metanim.agents.grading import MathAnswer, equivalent, parse_math
from metanim.datasets.questions import Question, load_questions
from metanim.games import (
    Game,
    IllegalMoveError,
    MoveError,
    UnparsableMoveError,
    game_prompt_version,
)

__all__ = [
    "GameTask",
    "Question",
    "QuestionTask",
    "Task",
    "as_task",
    "game_problem",
    "load_questions",
    "sorted_answers",
]


@runtime_checkable
class Task(Protocol):
    """One decision problem as the methods see it."""

    #: "move" for games, "answer" for questions (used in feedback wording).
    noun: str

    def prompt(self, agent_name: str = "Player 1") -> str:
        """The problem statement, without the method's Output Format section."""
        ...

    def action_schema(self) -> str:
        """One line describing the JSON `action` value."""
        ...

    def parse(self, value: Any) -> Any:
        """An answer value or text to an answer; raises `UnparsableMoveError` or `IllegalMoveError`."""
        ...

    def key(self, answer: Any) -> Hashable:
        """The vote key of a parsed answer (equal keys are the same answer)."""
        ...

    def text(self, answer: Any) -> str:
        """Canonical text of a parsed answer."""
        ...

    def to_json(self, answer: Any) -> Any:
        """JSON value of a parsed answer."""
        ...

    def legal_answers(self) -> list[Any] | None:
        """All legal answers sorted by key, or None when the answer space is open (numeric)."""
        ...

    def short_state(self) -> str:
        """The current state (or question) in one short paragraph."""
        ...

    def describe(self) -> dict[str, Any]:
        """JSON record of the task, for decision records."""
        ...


@dataclass(frozen=True)
class GameTask:
    """A game position: the player to move must choose a move."""

    game: Game[Any, Any]
    state: Any
    agent_name: str = "Player 1"
    noun: str = "move"
    #: The prompt ends with every legal move (`Game.prompt(list_moves=True)`).
    list_moves: bool = False

    @property
    def prompt_version(self) -> str:
        """The version of the game prompt this task shows (`game_prompt_version`)."""
        return game_prompt_version(self.list_moves)

    def prompt(self, agent_name: str | None = None) -> str:
        return self.game.prompt(
            self.state, agent_name or self.agent_name, list_moves=self.list_moves
        )

    def action_schema(self) -> str:
        return self.game.action_schema(self.state)

    def action_json_schema(self) -> dict[str, Any]:
        return self.game.action_json_schema(self.state)

    def parse(self, value: Any) -> Any:
        return self.game.parse_move(value, self.state)

    def key(self, answer: Any) -> Hashable:
        return self.game.action_id(answer)

    def text(self, answer: Any) -> str:
        return self.game.move_text(answer)

    def to_json(self, answer: Any) -> Any:
        return self.game.to_json(answer)

    def legal_answers(self) -> list[Any] | None:
        return self.game.legal_moves(self.state)

    def short_state(self) -> str:
        return self.game.describe(self.state)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "game",
            "game": self.game.name,
            "params": self.game.params,
            "state": self.game.to_json(self.state),
        }


# An option label alone ("B", "(B)", "B.") or leading its text ("(B) Paris", "B) Paris").
_LABEL = r"[A-Za-z]|\d{1,2}"
_LETTER = re.compile(
    rf"^(?:\((?P<a>{_LABEL})\)(?:\s.*)?|(?P<b>{_LABEL})(?:[.):](?:\s.*)?)?)$", re.DOTALL
)

#: Longest open answer (text) a reply schema allows: an expression, not a derivation.
OPEN_ANSWER_MAX_CHARS = 100

_TASK_LINES = {
    "numeric": "#Task: Solve the problem and give the final numeric answer.",
    "math": "#Task: Solve the problem and give the final answer (a number or a LaTeX expression).",
}


@dataclass(frozen=True)
class QuestionTask:
    """A question: multiple choice (answer: an option label) or open (numeric or math).

    Open answers are read and compared by `math-verify` (`metanim.agents.grading`), so
    `\\frac{3}{4}`, `0.75` and `\\boxed{3/4}` are one answer; option labels match exactly,
    and a reply that names an option by its text gets that option's label.
    """

    item: Question
    noun: str = "answer"

    @property
    def kind(self) -> str:
        """`multiple_choice`, `numeric` or `math`."""
        return self.item.kind

    @property
    def letters(self) -> list[str]:
        return list(self.item.labels or ())

    def prompt(self, agent_name: str | None = None) -> str:
        lines = [f"#Question: {self.item.question}"]
        if self.item.choices is not None:
            options = "\n".join(
                f"({letter}) {text}"
                for letter, text in zip(self.letters, self.item.choices, strict=True)
            )
            lines.append(f"#Options:\n{options}")
            lines.append("#Task: Choose the single best option.")
        else:
            lines.append(_TASK_LINES.get(self.kind, _TASK_LINES["math"]))
        return "\n".join(lines)

    def action_schema(self) -> str:
        if self.item.choices is not None:
            return (
                f"string // the letter of the option you choose, one of {', '.join(self.letters)}"
            )
        if self.kind == "numeric":
            return "number // your final numeric answer"
        return 'string // your final answer: a number or a LaTeX expression, e.g. "\\\\frac{a}{b}"'

    def action_json_schema(self) -> dict[str, Any]:
        if self.item.choices is not None:
            return {"enum": list(self.letters)}
        # An open answer is a number or an expression ("2\\sqrt{3}", "\\{-2, 2\\}"), read by
        # math-verify either way: a number-only schema could not hold half the answers.
        return {"type": ["string", "number"], "maxLength": OPEN_ANSWER_MAX_CHARS}

    def parse(self, value: Any) -> Any:
        if self.item.choices is not None:
            return self._parse_letter(value)
        return parse_math(value)

    def _parse_letter(self, value: Any) -> str:
        if isinstance(value, int) and not isinstance(value, bool) and str(value) in self.letters:
            return str(value)  # numeric labels (ARC's 1-4)
        if not isinstance(value, str):
            raise UnparsableMoveError(f"expected an option letter, got {value!r}", str(value))
        cleaned = value.strip().strip("\"'").strip()
        choices = self.item.choices or ()
        by_text = {t.strip().lower(): lab for t, lab in zip(choices, self.letters, strict=True)}
        if cleaned.lower() in by_text:
            return by_text[cleaned.lower()]
        match = _LETTER.match(cleaned)
        if match is None:
            found = re.findall(rf"\(({_LABEL})\)", value)
            if not found:
                raise UnparsableMoveError(f"expected an option letter, got {value!r}", value)
            raw = found[-1]
        else:
            raw = match.group("a") or match.group("b")
        letter = self._label(raw)
        if letter is None:
            raise IllegalMoveError(
                f"({raw}) is not one of the options {', '.join(self.letters)}", value
            )
        return letter

    def _label(self, raw: str) -> str | None:
        if raw in self.letters:
            return raw
        return {lab.upper(): lab for lab in self.letters}.get(raw.upper())

    def key(self, answer: Any) -> Hashable:
        return answer.key if isinstance(answer, MathAnswer) else answer

    def text(self, answer: Any) -> str:
        return answer.text if isinstance(answer, MathAnswer) else str(answer)

    def to_json(self, answer: Any) -> Any:
        return answer.text if isinstance(answer, MathAnswer) else answer

    def legal_answers(self) -> list[Any] | None:
        return list(self.letters) if self.item.choices is not None else None

    def short_state(self) -> str:
        return self.item.question

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "question",
            "id": self.item.id,
            "type": self.kind,
            "multiple_choice": self.item.choices is not None,
        }

    @cached_property
    def gold(self) -> Any:
        """The gold answer read like a reply (None when the item has none).

        Raises:
            ValueError: the gold answer itself cannot be read (a broken item, not a model error).
        """
        if self.item.answer is None:
            return None
        try:
            return self.parse(self.item.answer)
        except MoveError as exc:
            raise ValueError(
                f"question {self.item.id}: its gold answer {self.item.answer!r} cannot be read: "
                f"{exc.reason}"
            ) from None

    @property
    def gold_text(self) -> str | None:
        """The gold answer as text (what a correct reply's `text` looks like)."""
        gold = self.gold
        return None if gold is None else self.text(gold)

    def is_correct(self, answer: Any) -> bool:
        """Whether a parsed answer equals the gold answer (math-verify for open answers)."""
        gold = self.gold
        if gold is None or answer is None:
            return False
        if isinstance(gold, MathAnswer):
            if not isinstance(answer, MathAnswer):
                return False
            # Repeats and debate rounds grade the same few answers again: verify each once.
            seen = self._verified
            key = (answer.text, str(answer.value))
            if key not in seen:
                seen[key] = equivalent(gold, answer)
            return seen[key]
        return bool(gold == answer)

    @cached_property
    def _verified(self) -> dict[tuple[str, str], bool]:
        return {}

    def grade(self, value: Any) -> tuple[str | None, str]:
        """A raw answer value to (extracted text, verdict `correct`, `wrong` or `unparsable`).

        An option label outside the options is `wrong`: an answer was given.
        """
        try:
            answer = self.parse(value)
        except IllegalMoveError:
            return str(value), "wrong"
        except UnparsableMoveError:
            return None, "unparsable"
        return self.text(answer), "correct" if self.is_correct(answer) else "wrong"


def as_task(problem: Task | Game[Any, Any] | Question, state: Any = None) -> Task:
    """Wrap a game and state, or a question, as a `Task` (a `Task` passes through)."""
    if isinstance(problem, Game):
        return GameTask(problem, problem.validate_state(state))
    if isinstance(problem, Question):
        return QuestionTask(problem)
    return problem


def game_problem(game: Game[Any, Any], state: Any, list_moves: bool = False) -> tuple[Any, Any]:
    """The (problem, state) a method's `decide` is given for a game position: the game
    and the state, which any method's `decide` takes, or with `list_moves` the `GameTask`
    whose prompt lists the legal moves (and no state)."""
    if not list_moves:
        return game, state
    return GameTask(game, game.validate_state(state), list_moves=True), None


def sorted_answers(task: Task, answers: Sequence[Any]) -> list[Any]:
    """Answers sorted by their vote key (stable, for seeded tie-breaks)."""
    return sorted(answers, key=lambda a: _sortable(task.key(a)))


def _sortable(key: Hashable) -> tuple[int, Any]:
    if isinstance(key, int | float):
        return (0, key)
    return (1, str(key))
