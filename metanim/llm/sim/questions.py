"""The simulator's answer key for questions: the question files it was given, indexed by text.

A real model sees only the question; so does the simulated one. The server is started
with question files (`metanim serve-sim --questions FILE`, or `SimServer(questions=[...])`,
which `metanim evaluate` does for its own files) and looks each prompt's question up here
to know the gold answer and the options. Answers may be numbers or LaTeX; the
simulator never converts them (wrong answers are built around the text).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metanim.datasets.questions import Question, QuestionFileError, load_questions

_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


@dataclass(frozen=True)
class KeyEntry:
    """What the simulator knows about one question: its gold answer and option labels."""

    id: str
    question: str
    answer: Any
    labels: tuple[str, ...] | None

    @property
    def candidates_and_correct(self) -> tuple[list[Any], Any]:
        """Answers the policies choose among (the gold one included) and the gold one."""
        if self.labels is not None:
            return list(self.labels), str(self.answer)
        gold = self.answer
        if isinstance(gold, bool) or gold is None:
            gold = str(gold)
        if isinstance(gold, str) and _NUMBER.match(gold.strip()):
            gold = json.loads(gold.strip())
        if isinstance(gold, int | float):
            step = 1 if float(gold).is_integer() else abs(gold) / 10 or 0.1
            cands = [round(gold + k * step, 10) for k in range(-5, 6)]
            if isinstance(gold, int):
                cands = [int(c) for c in cands]
            return cands, gold
        # A LaTeX answer: wrong ones are the expression shifted (still valid LaTeX); a
        # set, tuple, interval or equation cannot be shifted, so its wrong ones are numbers.
        text = str(gold)
        if "," in text or "=" in text:
            below, above = [str(-k) for k in range(1, 6)], [str(k) for k in range(1, 6)]
        else:
            below = [f"{text}-{k}" for k in range(1, 6)]
            above = [f"{text}+{k}" for k in range(1, 6)]
        return [*below[::-1], text, *above], text


class AnswerKey:
    """Questions indexed by their normalized text; `find` returns the one a message asks."""

    def __init__(self, questions: Iterable[Question] = ()) -> None:
        self._by_text: dict[str, KeyEntry] = {}
        for q in questions:
            entry = KeyEntry(q.id, q.question, q.answer, q.labels if q.choices else None)
            self._by_text[_norm(q.question)] = entry
        self._texts = list(self._by_text)

    @classmethod
    def from_files(cls, paths: Iterable[str | Path]) -> AnswerKey:
        """Read question files of any shape `metanim.datasets.questions` reads."""
        questions: list[Question] = []
        for path in paths:
            read = load_questions(path)
            if not read:  # a file given to answer from that answers nothing is a mistake
                raise QuestionFileError(f"no questions in {path}: nothing to answer from it")
            questions.extend(read)
        return cls(questions)

    def __len__(self) -> int:
        return len(self._by_text)

    def find(self, text: str) -> KeyEntry | None:
        """The question whose text appears in `text`: the one ending last, the longest on a tie
        (so a question that contains another is found as itself)."""
        if not self._texts:
            return None
        body = _norm(text)
        best: tuple[int, int, str] | None = None
        for q in self._texts:
            at = body.rfind(q)
            if at >= 0 and (best is None or (at + len(q), len(q)) > best[:2]):
                best = (at + len(q), len(q), q)
        return self._by_text[best[2]] if best else None
