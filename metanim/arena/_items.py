"""What `evaluate` decides over: a critical-state record or a question, behind one shape.

Both give the task a method decides, the fields of its log line (`record_id`, `game`
(the game, or the question set's name), `variant`, `stratum`, `optimal_move` (the gold
answer's text)), and a grader: the final answer's verdict (`correct`, `wrong`, or
`forfeit` when the method gave no answer of its own) and every debate agent's verdict per
round (`round_verdicts`, the same field for games and questions).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metanim.agents import Method, QuestionTask, game_problem
from metanim.arena._players import decide
from metanim.datasets import load_dataset
from metanim.datasets.questions import Question, is_question_file, load_questions
from metanim.games import MoveError
from metanim.records import log_kind

#: The verdict of a decision that never gave an answer of its own (a forfeit, or a
#: fallback's random move), whatever its replies were: truncated, unparsable and
#: illegal replies are counted apart, on the line.
NO_ANSWER = "forfeit"


@dataclass(frozen=True)
class GameItem:
    """A critical-state dataset record: one optimal move."""

    record: Any  # DatasetRecord
    kind: str = "game"

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def content_hash(self) -> str:
        return self.record.content_hash

    @property
    def group(self) -> tuple[str, str]:
        return self.record.game, self.record.variant

    def fields(self) -> dict[str, Any]:
        r = self.record
        return {
            "record_id": r.id, "kind": "game", "game": r.game, "variant": r.variant,
            "stratum": r.features.stratum, "difficulty": r.difficulty,
            # For the chance baselines: one right move among these, listed in the game's order.
            "legal_answers": len(r.legal_moves), "first_is_gold": r.legal_moves[0] == r.optimal_move,
        }  # fmt: skip

    @property
    def gold_text(self) -> str:
        return self.record.optimal_move

    async def decide(
        self, method: Method, seed: int, *, list_moves: bool = False
    ) -> tuple[Any, str, str | None]:
        """(decision, status, error) of `method` on this record's position; `list_moves`:
        its prompt lists the legal moves."""
        game, state = self.record.make_game(), self.record.game_state()
        return await decide(method, *game_problem(game, state, list_moves), seed)

    def verdict(self, decision: Any, status: str) -> tuple[str | None, str]:
        """(extracted answer text, verdict) of a decision with a result status."""
        if status != "ok":
            return None, NO_ANSWER
        game = self.record.make_game()
        right = game.action_id(decision.move) == self.record.optimal_action
        return decision.answer_text, "correct" if right else "wrong"

    def grade_text(self, text: str | None) -> bool | None:
        """Whether an answer text (a debate agent's, per round) is the optimal move."""
        if text is None:
            return None
        game = self.record.make_game()
        try:
            move = game.parse_move(text, self.record.game_state())
        except MoveError:
            return False
        return game.action_id(move) == self.record.optimal_action


@dataclass(frozen=True)
class QuestionItem:
    """A question from a question file, graded by its `QuestionTask`."""

    question: Question
    source: str  # the question set's name (the file stem), shown where games show the game
    task: QuestionTask = field(init=False, compare=False)
    kind: str = "question"

    def __post_init__(self) -> None:
        task = QuestionTask(self.question)
        if self.question.answer is None:
            raise ValueError(
                f"{self.source}: question {self.question.id} has no answer; evaluate grades "
                "every question against its gold answer"
            )
        task.gold  # noqa: B018 - read the gold answer now: a broken item stops the run early
        object.__setattr__(self, "task", task)

    @property
    def id(self) -> str:
        return self.question.id

    @property
    def content_hash(self) -> str:
        return self.question.content_hash

    @property
    def group(self) -> tuple[str, str]:
        return self.source, "normal"

    @property
    def gold_text(self) -> str | None:
        return self.task.gold_text

    def fields(self) -> dict[str, Any]:
        q = self.question
        level = q.meta.get("level")
        labels = self.task.letters
        return {
            "record_id": q.id, "kind": "question", "game": self.source, "variant": "normal",
            "stratum": str(level) if level is not None else q.kind, "question_type": q.kind,
            # For the chance baselines (an open question has no finite answer set).
            "legal_answers": len(labels) or None,
            "first_is_gold": labels[0] == self.task.gold if labels else None,
        }  # fmt: skip

    async def decide(
        self, method: Method, seed: int, *, list_moves: bool = False
    ) -> tuple[Any, str, str | None]:
        """(decision, status, error) of `method` on this question (`list_moves` is for
        games: a question's options are its prompt's own)."""
        return await decide(method, self.task, None, seed)

    def verdict(self, decision: Any, status: str) -> tuple[str | None, str]:
        if status != "ok":
            return None, NO_ANSWER
        right = self.task.is_correct(decision.move)
        return decision.answer_text, "correct" if right else "wrong"

    def grade_text(self, text: str | None) -> bool | None:
        if text is None:
            return None
        return self.task.grade(text)[1] == "correct"


def load_items(path: str | Path) -> list[GameItem] | list[QuestionItem]:
    """The items of one file: questions if its rows have no `game` field, else dataset records."""
    kind = log_kind(Path(path))
    if kind is not None:
        raise ValueError(
            f"{path}: a run's log of {kind} (what tournament or evaluate writes), not a dataset "
            "or question file"
        )
    if is_question_file(path):
        return [QuestionItem(q, Path(path).stem) for q in load_questions(path)]
    return [GameItem(r) for r in load_dataset(path)]


def round_verdicts(item: GameItem | QuestionItem, rounds: list[dict[str, str | None]]) -> list:
    """Each debate agent's verdict per round: {agent: True/False, or None for no answer}."""
    cache: dict[str | None, bool | None] = {}
    out = []
    for answers in rounds:
        row = {}
        for agent, text in answers.items():
            if text not in cache:
                cache[text] = item.grade_text(text)
            row[agent] = cache[text]
        out.append(row)
    return out
