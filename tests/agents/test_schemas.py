"""Reply schemas admit their gold answers: every sample question's answer, alone and
inside each method's reply (jsonschema is the checker), and every critical state's
optimal move."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest

from metanim.agents import QuestionTask, load_questions, schemas
from metanim.agents.tasks import GameTask
from metanim.datasets import build

pytestmark = pytest.mark.usefixtures("fresh_probes")


SAMPLES = Path(__file__).resolve().parents[2] / "metanim" / "samples"


def _gold_values(path: Path) -> list[tuple[QuestionTask, object]]:
    out = []
    for question in load_questions(path):
        task = QuestionTask(question)
        out.append((task, question.answer))
    return out


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.jsonl")), ids=lambda p: p.name)
def test_every_reply_schema_admits_every_gold_answer_of_the_samples(path):
    tasks = _gold_values(path)
    assert tasks
    for task, gold in tasks:
        # jsonschema is the checker: the action schema alone and inside each method's reply.
        jsonschema.validate(gold, task.action_json_schema())
        for reasoning in (True, False):
            reply_schema = schemas.action_reply(task, reasoning=reasoning)
            value = {"reasoning": "because", "action": gold} if reasoning else {"action": gold}
            jsonschema.validate(value, reply_schema)
        # ... and the gold answer, sent as the schema allows, is graded right.
        assert task.grade(gold)[1] == "correct", (task.item.id, gold)


def test_a_game_task_schema_admits_its_optimal_move():
    # Games too: every critical state's optimal move is in its reply schema's enum.
    for record in build("nim", 5, seed=0, params={"heaps": [12], "max_take": 4}):
        task = GameTask(record.make_game(), record.game_state())
        move = task.parse(record.optimal_move)
        allowed = task.action_json_schema()["enum"]
        assert sum(task.parse(value) == move for value in allowed) == 1
