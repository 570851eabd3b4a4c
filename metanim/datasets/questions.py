"""Question files: math and multiple-choice questions as JSONL, in the project's shape or
a common public one.

The project's shape is one object per line::

    {"id": "q1", "question": "...", "answer": "\\\\frac{3}{4}", "type": "math"}
    {"id": "q2", "question": "...", "choices": ["...", "..."], "answer": "B"}
    {"id": "q3", "question": "...", "choices": {"A": "...", "B": "..."}, "answer": "A"}

`type` is `numeric`, `math` or `multiple_choice` (default: `multiple_choice` with
`choices`, else `math`). Adapters read the common shapes row by row:

* GSM8K: `question` and a worked `answer` ending in `#### 72`;
* MATH / MATH-500: `problem` and a `solution` whose last `\\boxed{...}` is the answer
  (an explicit `answer` field wins); MATH's own `type` is its subject;
* CommonsenseQA / ARC: `question` as `{"stem", "choices": [{"label", "text"}]}` (or
  ARC's `choices: {"text": [...], "label": [...]}`) and `answerKey`;
* MMLU-style: `choices` a list and `answer` a 0-based index.

This module only reads data (no grading, nothing above `metanim.datasets`), so the
simulated server can read the same files as the evaluation.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

QUESTION_TYPES = ("numeric", "math", "multiple_choice")
SHAPES = ("auto", "native", "gsm8k", "math", "choices")

#: The sample files shipped with the package (`samples/<name>` finds them).
SAMPLES_DIR = Path(__file__).resolve().parent.parent / "samples"


class QuestionFileError(ValueError):
    """A question file row that no shape can read (the message names the file and line)."""


@dataclass(frozen=True)
class Question:
    """One question of a QA or math set.

    Attributes:
        id: Stable identifier from the file (the line number if it has none).
        question: The question text, exactly as the model sees it.
        choices: Option texts for multiple choice; None for an open (numeric/math) answer.
        answer: The gold answer: an option label, or a number or LaTeX string (None if unknown).
        meta: Every other field of the row (solution, level, subject, ...).
        type: `numeric`, `math` or `multiple_choice` (None: inferred from `choices`).
        labels: The option labels (default A, B, C, ...), one per choice.
    """

    id: str
    question: str
    choices: tuple[str, ...] | None = None
    answer: Any = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    type: str | None = None
    labels: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.type is not None and self.type not in QUESTION_TYPES:
            raise ValueError(f"question type {self.type!r} is not one of {QUESTION_TYPES}")
        if self.choices is not None:
            labels = self.labels or tuple(chr(ord("A") + i) for i in range(len(self.choices)))
            if len(labels) != len(self.choices) or len(set(labels)) != len(labels):
                raise ValueError(
                    f"question {self.id}: {len(self.choices)} choices need as many distinct labels"
                )
            object.__setattr__(self, "labels", tuple(str(x) for x in labels))
        elif self.type == "multiple_choice":
            raise ValueError(f"question {self.id}: type multiple_choice needs choices")

    @property
    def kind(self) -> str:
        """The question type, inferred where the row does not say."""
        if self.type is not None:
            return self.type
        return "multiple_choice" if self.choices is not None else "math"

    @property
    def content_hash(self) -> str:
        """A digest of what is asked and the gold answer (a changed question is a new item)."""
        body = json.dumps(
            [self.question, self.choices, self.labels, self.answer, self.kind], sort_keys=True
        )
        return hashlib.sha256(body.encode()).hexdigest()[:16]


def last_boxed(text: str) -> str | None:
    """The content of the last `\\boxed{...}` (or `\\fbox{...}`) in `text`, braces balanced."""
    start = max(text.rfind("\\boxed"), text.rfind("\\fbox"))
    if start < 0:
        return None
    brace = text.find("{", start)
    if brace < 0:
        # `\boxed 5` (no braces): the next token.
        rest = text[start:].split(maxsplit=1)
        return rest[1].split("$")[0].strip() if len(rest) > 1 else None
    depth = 0
    for i in range(brace, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[brace + 1 : i].strip()
    return None  # unbalanced


_GSM8K = re.compile(r"####\s*(.+?)\s*$", re.DOTALL)


def _gsm8k_answer(text: str) -> str:
    match = _GSM8K.search(text)
    if match is None or not match.group(1).strip():
        raise ValueError("no answer after '####'")
    # GSM8K writes thousands with commas (#### 1,200); the number is 1200.
    return match.group(1).strip().replace(",", "")


def _choice_list(raw: Any) -> tuple[list[str], list[str] | None]:
    """(texts, labels or None) from a list, a label->text mapping, or the ARC/CSQA shapes."""
    if isinstance(raw, dict) and "text" in raw and isinstance(raw["text"], list):
        texts = [str(t) for t in raw["text"]]
        labels = raw.get("label")
        return texts, [str(x) for x in labels] if labels is not None else None
    if isinstance(raw, dict):
        keys = sorted(raw)
        return [str(raw[k]) for k in keys], [str(k) for k in keys]
    if isinstance(raw, list) and raw and all(isinstance(c, dict) for c in raw):
        return [str(c["text"]) for c in raw], [str(c["label"]) for c in raw]
    if isinstance(raw, list):
        return [str(c) for c in raw], None
    raise ValueError(
        f"choices must be a list or a mapping of labels to texts, got {type(raw).__name__}"
    )


def detect_shape(row: dict[str, Any]) -> str:
    """Which shape a row has: `gsm8k`, `math`, `choices` or `native`."""
    if "problem" in row and ("solution" in row or "answer" in row):
        return "math"
    if isinstance(row.get("question"), dict) or "answerKey" in row:
        return "choices"
    answer = row.get("answer")
    if "choices" not in row and isinstance(answer, str) and "####" in answer:
        return "gsm8k"
    return "native"


def question_from_row(row: dict[str, Any], default_id: str, shape: str = "auto") -> Question:
    """A `Question` from one row of any supported shape.

    Raises:
        ValueError: the row lacks what its shape needs (the message says what).
    """
    if not isinstance(row, dict):
        raise ValueError(f"a row must be a JSON object, got {type(row).__name__}")
    if shape not in SHAPES:
        raise ValueError(f"unknown question shape {shape!r}; choose one of {SHAPES}")
    shape = detect_shape(row) if shape == "auto" else shape
    qid = str(row.get("id", row.get("unique_id", default_id)))
    if shape == "gsm8k":
        solution = str(row["answer"])
        meta = {k: v for k, v in row.items() if k not in {"id", "question", "answer"}}
        return Question(
            qid, str(row["question"]), None, _gsm8k_answer(solution),
            {**meta, "solution": solution, "shape": "gsm8k"}, "numeric",
        )  # fmt: skip
    if shape == "math":
        solution = str(row.get("solution", ""))
        answer = row.get("answer")
        if answer is None or answer == "":
            answer = last_boxed(solution)
            if answer is None:
                raise ValueError("no 'answer' field and no \\boxed{...} in the solution")
        meta = {
            k: v
            for k, v in row.items()
            if k not in {"id", "unique_id", "problem", "answer", "type"}
        }
        if "type" in row:
            meta["subject"] = row["type"]  # MATH's `type` is the subject, not ours
        return Question(qid, str(row["problem"]), None, answer, {**meta, "shape": "math"}, "math")
    if shape == "choices":
        question = row["question"]
        raw_choices = row.get("choices")
        if isinstance(question, dict):
            raw_choices = question.get("choices", raw_choices)
            question = question["stem"]
        if raw_choices is None:
            raise ValueError("no choices")
        texts, labels = _choice_list(raw_choices)
        answer = row.get("answerKey", row.get("answer"))
        meta = {
            k: v
            for k, v in row.items()
            if k not in {"id", "question", "choices", "answerKey", "answer"}
        }
        return _choice_question(
            qid, str(question), texts, labels, answer, {**meta, "shape": "choices"}
        )
    # native
    if "question" not in row:
        raise ValueError("no 'question' field (nor a GSM8K, MATH or CommonsenseQA/ARC shape)")
    meta = {
        k: v for k, v in row.items() if k not in {"id", "question", "choices", "answer", "type"}
    }
    kind = row.get("type")
    if kind is not None and kind not in QUESTION_TYPES:
        raise ValueError(f"type {kind!r} is not one of {', '.join(QUESTION_TYPES)}")
    if row.get("choices") is not None:
        texts, labels = _choice_list(row["choices"])
        return _choice_question(qid, str(row["question"]), texts, labels, row.get("answer"), meta)
    return Question(qid, str(row["question"]), None, row.get("answer"), meta, kind)


def _choice_question(
    qid: str,
    question: str,
    texts: list[str],
    labels: list[str] | None,
    answer: Any,
    meta: dict[str, Any],
) -> Question:
    labels = labels or [chr(ord("A") + i) for i in range(len(texts))]
    if isinstance(answer, int) and not isinstance(answer, bool):
        # MMLU-style: a 0-based index into the choices.
        if not 0 <= answer < len(texts):
            raise ValueError(f"answer index {answer} is outside the {len(texts)} choices")
        answer = labels[answer]
    elif answer is not None:
        answer = str(answer).strip()
        if answer not in labels:
            # The option text itself, or a label in another case.
            by_text = {t.strip(): lab for t, lab in zip(texts, labels, strict=True)}
            by_label = {lab.upper(): lab for lab in labels}
            answer = by_text.get(answer) or by_label.get(answer.upper()) or answer
        if answer not in labels:
            raise ValueError(f"answer {answer!r} is not one of the labels {', '.join(labels)}")
    return Question(qid, question, tuple(texts), answer, meta, "multiple_choice", tuple(labels))


def read_rows(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-empty line of a JSONL file (a byte-order mark
    that an editor or a spreadsheet export puts first is dropped)."""
    out = []
    with Path(path).open(encoding="utf-8-sig") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                out.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise QuestionFileError(f"{path}:{number}: not JSON: {exc.msg}") from None
    return out


def load_questions(path: str | Path, shape: str = "auto") -> list[Question]:
    """Read a question file (any supported shape, detected per row unless `shape` is given).

    Raises:
        QuestionFileError: a row cannot be read (names the file, the line and why);
            two rows share an id.
    """
    out: list[Question] = []
    seen: dict[str, int] = {}
    for number, row in read_rows(path):
        try:
            question = question_from_row(row, str(number), shape)
        except (KeyError, ValueError, TypeError) as exc:
            reason = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
            raise QuestionFileError(f"{path}:{number}: not a question: {reason}") from None
        if question.id in seen:
            raise QuestionFileError(
                f"{path}:{number}: id {question.id!r} is already used on line {seen[question.id]}"
            )
        seen[question.id] = number
        out.append(question)
    return out


def is_question_file(path: str | Path) -> bool:
    """Whether a JSONL file holds questions (its first row has no `game` field)."""
    first = _first_row(path)
    return first is not None and "game" not in first


def _first_row(path: str | Path) -> dict[str, Any] | None:
    """The first non-empty row of a JSONL file as an object, or None if it is not one."""
    with Path(path).open(encoding="utf-8-sig") as fh:
        try:
            line = next((line for line in fh if line.strip()), None)
        except UnicodeDecodeError:  # not text: the dataset reader says so
            return None
    if line is None:
        return None
    try:
        row = json.loads(line)
    except json.JSONDecodeError:
        return None
    return row if isinstance(row, dict) else None


def resolve_path(path: str | Path) -> Path:
    """`path` if it exists, else the shipped sample of that name (`samples/math.jsonl`)."""
    given = Path(path)
    if given.exists():
        return given
    if given.parent.name == "samples" and (SAMPLES_DIR / given.name).exists():
        return SAMPLES_DIR / given.name
    return given
