"""MetaNIM as an inspect_ai task package (optional extra `inspect`: `pip install metanim-arena[inspect]`).

```bash
inspect eval metanim/nim --model openai/gpt-4o-mini -T variant=misere -T limit_n=10
inspect eval metanim/chomp -T dataset=datasets/ -T style=cot
inspect eval metanim/kayles -T samples=5          # Self-Consistency, 5 votes
```

The tasks, the solver-graded scorer (`solver_grade`) and the method solvers
(`metanim_prompt`, `self_consistency`) are in `_tasks`; `inspect` finds them through the
`inspect_ai` entry point of this package. See docs/integrations.md.
"""

from __future__ import annotations

from metanim.integrations.inspect_ai._tasks import (
    GAME_TASKS,
    STYLES,
    chomp,
    corner_queen,
    fibonacci,
    game_task,
    kayles,
    metanim,
    metanim_prompt,
    nim,
    octal,
    question_sample,
    questions,
    record_sample,
    self_consistency,
    solver_grade,
    subtraction,
)

__all__ = [
    "GAME_TASKS",
    "STYLES",
    "chomp",
    "corner_queen",
    "fibonacci",
    "game_task",
    "kayles",
    "metanim",
    "metanim_prompt",
    "nim",
    "octal",
    "question_sample",
    "questions",
    "record_sample",
    "self_consistency",
    "solver_grade",
    "subtraction",
]
