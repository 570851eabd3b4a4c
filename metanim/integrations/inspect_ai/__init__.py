"""MetaNIM as an inspect_ai task package (optional extra `inspect`: `pip install metanim-arena[inspect]`).

```bash
inspect eval metanim/nim --model openai/gpt-4o-mini -T variant=misere -T limit_n=10
inspect eval metanim/chomp -T dataset=datasets/ -T style=cot
inspect eval metanim/kayles -T samples=5          # Self-Consistency, 5 votes
inspect eval metanim/nim_game --model openai/gpt-4o-mini -T opponent=random   # whole games
```

The tasks, the solver-graded scorer (`solver_grade`) and the method solvers
(`metanim_prompt`, `self_consistency`) are in `_tasks`; `inspect` finds them through the
`inspect_ai` entry point of this package. The whole-game tasks (`<game>_game`: the model
plays complete games through a `move` tool, every move graded), their solver `play_game`
and scorer `game_score` are in `_games`. See docs/integrations.md.
"""

from __future__ import annotations

from metanim.integrations.inspect_ai._games import (
    GAME_GAME_TASKS,
    chomp_game,
    corner_queen_game,
    fibonacci_game,
    game_samples,
    game_score,
    kayles_game,
    metanim_game,
    nim_game,
    play_game,
    position_text,
    whole_game_task,
)
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
    "GAME_GAME_TASKS",
    "GAME_TASKS",
    "STYLES",
    "chomp",
    "chomp_game",
    "corner_queen",
    "corner_queen_game",
    "fibonacci",
    "fibonacci_game",
    "game_samples",
    "game_score",
    "game_task",
    "kayles",
    "kayles_game",
    "metanim",
    "metanim_game",
    "metanim_prompt",
    "nim",
    "nim_game",
    "octal",
    "play_game",
    "position_text",
    "question_sample",
    "questions",
    "record_sample",
    "self_consistency",
    "solver_grade",
    "subtraction",
    "whole_game_task",
]
