"""lm-evaluation-harness tasks for the critical-state datasets, with one answer filter.

The task YAMLs ship as package data in `tasks/` (one task per game and variant of the
default build, and the group `metanim`); they read `datasets/<game>-<variant>.jsonl`
relative to the working directory (`metanim dataset build --out datasets`). To point them
at another folder, write a copy: `python -m metanim.integrations.lm_eval DIR --data FOLDER`.

    lm_eval --include_path "$(python -m metanim.integrations.lm_eval --path)" \\
        --tasks metanim --model local-chat-completions --apply_chat_template \\
        --model_args model=NAME,base_url=http://HOST/v1/chat/completions

Every task uses the one filter `canonical_move`: it reads each reply with the game's own
reply parser (`Game.parse_move`) against the row's state and writes the move's canonical
text, so `exact_match` against `target` grades every game alike (lists such as `[1, 0]`
included). lm-eval itself is not a dependency: the filter is plain Python.
"""

from __future__ import annotations

from metanim.integrations.lm_eval.filter import INVALID, canonical_move, canonical_reply
from metanim.integrations.lm_eval.yamls import TASKS_DIR, task_names, write_tasks

__all__ = ["INVALID", "TASKS_DIR", "canonical_move", "canonical_reply", "task_names", "write_tasks"]
