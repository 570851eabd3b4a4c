"""Exact rewards for training language models on the games (TRL's `GRPOTrainer` form).

The solver grades every reply, so the reward needs no reference answer and no judge:

    from trl import GRPOConfig, GRPOTrainer
    from metanim.integrations.rewards import SolverReward, grpo_dataset

    trainer = GRPOTrainer(
        model="HuggingFaceTB/SmolLM2-135M-Instruct",
        reward_funcs=SolverReward(),
        train_dataset=grpo_dataset("nim", n=64),
        args=GRPOConfig(output_dir="grpo-nim", num_generations=8),
    )

`grpo_dataset` gives a `datasets.Dataset` with TRL's `prompt` column (the game prompt
and its Output Format, as a chat turn or plain text) and the columns the reward reads,
`game`, `game_params` and `state` (JSON text, as in the dataset files); TRL passes a
dataset's other columns to every reward function by name.

`SolverReward` scores a reply, read by the game's one reply parser:

| reply | reward (default) |
|---|---|
| a winning move (it leaves a P-position) | `winning` (1.0) |
| any other legal move (including every move of a P-position, where none wins) | `legal` (0.0) |
| an illegal move | `illegal` (-1.0) |
| no move found | `unparsable` (-1.0) |

The shaped variant adds `format_bonus` to a reply that names a legal move in the
Output Format itself (the fenced JSON object the prompt asks for, read by the parser's
strict stage), so a model is paid a little for the format while the game reward stays
exact: `SolverReward(format_bonus=0.1)`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from metanim.datasets import DEFAULT_SPECS, DatasetRecord, build
from metanim.games import Game, game_class
from metanim.games.reply import extract_action
from metanim.integrations._grading import game_and_state, grade_reply
from metanim.integrations._positions import move_prompt
from metanim.util import MissingExtra


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _text(completion: Any) -> str:
    """A completion's text: TRL passes a string, or a list of chat messages."""
    if isinstance(completion, str):
        return completion
    return str(completion[-1]["content"])


@dataclass(frozen=True)
class SolverReward:
    """A TRL reward function: `reward(prompts, completions, game=..., game_params=...,
    state=..., **kwargs) -> list[float]`, one reward per completion (see the module
    docstring for the values)."""

    winning: float = 1.0
    legal: float = 0.0
    illegal: float = -1.0
    unparsable: float = -1.0
    format_bonus: float = 0.0

    @property
    def __name__(self) -> str:  # TRL logs each reward function under its name
        return "solver_reward" if self.format_bonus == 0 else "solver_reward_shaped"

    def score(self, game: Game[Any, Any], state: Any, reply: str) -> float:
        """The reward of one reply to `state`."""
        grade = grade_reply(game, state, reply)
        if grade.error == "illegal":
            return self.illegal
        if grade.error is not None:  # unparsable, or truncated
            return self.unparsable
        reward = self.winning if grade.outcome == "N" and grade.correct else self.legal
        if self.format_bonus and extract_action(reply)[1] == "strict":
            reward += self.format_bonus
        return reward

    def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        *,
        game: Sequence[str],
        game_params: Sequence[Any],
        state: Sequence[Any],
        **kwargs: Any,
    ) -> list[float]:
        rewards = []
        for completion, name, params, position in zip(
            completions, game, game_params, state, strict=True
        ):
            rules, value = game_and_state(
                {"game": name, "game_params": _json(params), "state": _json(position)}
            )
            rewards.append(self.score(rules, value, _text(completion)))
        return rewards


def grpo_rows(
    records: Iterable[DatasetRecord], *, style: str = "react", chat: bool = True
) -> list[dict[str, Any]]:
    """One TRL row per record: `prompt` (a user turn when `chat`, else plain text),
    `game`, `game_params` and `state` (JSON text), `variant` and the record's `id`."""
    rows = []
    for record in records:
        game, state = record.make_game(), record.game_state()
        text = move_prompt(game, state, style)
        rows.append(
            {
                "prompt": [{"role": "user", "content": text}] if chat else text,
                "game": record.game,
                "variant": record.variant,
                "game_params": json.dumps(record.game_params, sort_keys=True),
                "state": json.dumps(game.to_json(state)),
                "id": record.id,
            }
        )
    return rows


def grpo_dataset(
    game: str = "nim",
    n: int | None = None,
    *,
    variant: str = "normal",
    seed: int = 0,
    style: str = "react",
    chat: bool = True,
    records: Iterable[DatasetRecord] | None = None,
) -> Any:
    """A `datasets.Dataset` of game positions for `GRPOTrainer` (see `grpo_rows`).

    The positions are the critical states of the default build for `game` and `variant`
    (N-positions with exactly one winning move, over several sizes; a game without a
    default build gets `build(game, n)`), the first `n` of them; or `records`, e.g. a
    dataset file read with `metanim.datasets.load_dataset`.
    """
    try:
        from datasets import Dataset
    except ImportError as err:  # pragma: no cover - the extras install it
        raise MissingExtra(
            "grpo_dataset needs Hugging Face `datasets`: pip install 'metanim-arena[trl]'"
        ) from err
    if records is None:
        name = game_class(game).name
        spec = next((s for s in DEFAULT_SPECS if s.game == name and s.variant == variant), None)
        records = (
            build(spec, seed=seed)
            if spec is not None
            else build(game, n or 64, seed, variant=variant)
        )
        records = records[:n] if n is not None else records
    return Dataset.from_list(grpo_rows(records, style=style, chat=chat))


__all__ = ["SolverReward", "grpo_dataset", "grpo_rows"]
