"""What a method decides over: a game position or a question, behind one small `Task` protocol.

Every method (prompting or debate) only needs the problem text, a one-line schema of the
answer, a parser that raises `UnparsableMoveError` / `IllegalMoveError`, a vote key and the
legal answers. `GameTask` adapts a `Game` and a state; `QuestionTask` a multiple-choice or
numeric question loaded from local JSONL (the seeds also evaluate debate on math and QA
sets: Du et al. 2023, AceMAD's benchmarks, cross-model debate on GSM8K/MATH).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from metanim.games import Game, IllegalMoveError, UnparsableMoveError


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

    def prompt(self, agent_name: str | None = None) -> str:
        return self.game.prompt(self.state, agent_name or self.agent_name)

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


_LETTER = re.compile(r"^\(?([A-Za-z])\)?[.):]?$")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:/\d+)?|-?\.\d+")


@dataclass(frozen=True)
class Question:
    """One question of a QA or math set.

    Attributes:
        id: Stable identifier from the JSONL file.
        question: The question text.
        choices: Option texts for multiple choice (labelled A, B, ...); None for a numeric answer.
        answer: The gold answer: a letter for multiple choice, a number otherwise (None if unknown).
    """

    id: str
    question: str
    choices: tuple[str, ...] | None = None
    answer: Any = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class QuestionTask:
    """A multiple-choice (answer: a letter) or numeric (answer: a number) question."""

    item: Question
    noun: str = "answer"

    @property
    def letters(self) -> list[str]:
        return [chr(ord("A") + i) for i in range(len(self.item.choices or ()))]

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
            lines.append("#Task: Solve the problem and give the final numeric answer.")
        return "\n".join(lines)

    def action_schema(self) -> str:
        if self.item.choices is not None:
            return (
                f"string // the letter of the option you choose, one of {', '.join(self.letters)}"
            )
        return "number // your final numeric answer"

    def action_json_schema(self) -> dict[str, Any]:
        if self.item.choices is not None:
            return {"enum": list(self.letters)}
        return {"type": "number"}

    def parse(self, value: Any) -> Any:
        if self.item.choices is not None:
            return self._parse_letter(value)
        return self._parse_number(value)

    def _parse_letter(self, value: Any) -> str:
        if not isinstance(value, str):
            raise UnparsableMoveError(f"expected an option letter, got {value!r}", str(value))
        match = _LETTER.match(value.strip().strip("\"'").strip())
        if match is None:
            found = re.findall(r"\(([A-Za-z])\)", value)
            if not found:
                raise UnparsableMoveError(f"expected an option letter, got {value!r}", value)
            letter = found[-1].upper()
        else:
            letter = match.group(1).upper()
        if letter not in self.letters:
            raise IllegalMoveError(
                f"({letter}) is not one of the options {', '.join(self.letters)}", value
            )
        return letter

    def _parse_number(self, value: Any) -> float:
        if isinstance(value, bool):
            raise UnparsableMoveError("expected a number, got a boolean", str(value))
        if isinstance(value, int | float):
            number = float(value)
        elif isinstance(value, str):
            found = _NUMBER.findall(value)
            if not found:
                raise UnparsableMoveError(f"expected a number, found none in {value!r}", value)
            token = found[-1].replace(",", "")
            if "/" in token:
                num, den = token.split("/")
                if float(den) == 0:
                    raise UnparsableMoveError(f"division by zero in {token!r}", value)
                number = float(num) / float(den)
            else:
                number = float(token)
        else:
            raise UnparsableMoveError(f"expected a number, got {type(value).__name__}", str(value))
        if not math.isfinite(number):
            raise UnparsableMoveError(f"expected a finite number, got {value!r}", str(value))
        return number

    def key(self, answer: Any) -> Hashable:
        if isinstance(answer, float):
            # Round so that 0.1 + 0.2 and 0.3 vote together.
            return round(answer, 9)
        return answer

    def text(self, answer: Any) -> str:
        if isinstance(answer, float):
            return str(int(answer)) if answer.is_integer() else repr(answer)
        return str(answer)

    def to_json(self, answer: Any) -> Any:
        return answer

    def legal_answers(self) -> list[Any] | None:
        return list(self.letters) if self.item.choices is not None else None

    def short_state(self) -> str:
        return self.item.question

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "question",
            "id": self.item.id,
            "multiple_choice": self.item.choices is not None,
        }

    def is_correct(self, answer: Any) -> bool:
        """Whether a parsed answer equals the gold answer."""
        if self.item.answer is None or answer is None:
            return False
        gold = self.parse(self.item.answer)
        return self.key(gold) == self.key(answer)


def load_questions(path: str | Path) -> list[Question]:
    """Read questions from a JSONL file.

    Each line is an object with `question`, optional `id`, optional `choices` (a list of
    option texts, or a dict letter -> text) and optional `answer`.
    """
    out: list[Question] = []
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        choices = row.get("choices")
        if isinstance(choices, dict):
            choices = [choices[k] for k in sorted(choices)]
        out.append(
            Question(
                id=str(row.get("id", number)),
                question=str(row["question"]),
                choices=tuple(str(c) for c in choices) if choices is not None else None,
                answer=row.get("answer"),
                meta={
                    k: v for k, v in row.items() if k not in {"id", "question", "choices", "answer"}
                },
            )
        )
    return out


def as_task(problem: Task | Game[Any, Any] | Question, state: Any = None) -> Task:
    """Wrap a game and state, or a question, as a `Task` (a `Task` passes through)."""
    if isinstance(problem, Game):
        return GameTask(problem, problem.validate_state(state))
    if isinstance(problem, Question):
        return QuestionTask(problem)
    return problem


def sorted_answers(task: Task, answers: Sequence[Any]) -> list[Any]:
    """Answers sorted by their vote key (stable, for seeded tie-breaks)."""
    return sorted(answers, key=lambda a: _sortable(task.key(a)))


def _sortable(key: Hashable) -> tuple[int, Any]:
    if isinstance(key, int | float):
        return (0, key)
    return (1, str(key))
