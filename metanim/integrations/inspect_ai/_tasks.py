"""inspect_ai tasks over the critical-state datasets and question files; solver-graded scorer.

Tasks (registered as `metanim/<name>` through the `inspect_ai` entry-point group):
`nim`, `fibonacci`, `kayles`, `chomp`, `corner_queen` (each with `variant="normal"` or
`"misere"`), `metanim` (any game by name) and `questions` (a question JSONL file).
Every task takes `dataset` (a JSONL file, or a build folder holding
`<game>-<variant>.jsonl`; default: the default build's records, built in memory from
`seed`), `limit_n`, `style` (the Output Format: react, standard or cot) and
`samples` (> 1: Self-Consistency, a majority vote over that many sampled replies).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver

from metanim.agents.parsing import parse_reply
from metanim.agents.tasks import GameTask, Question, QuestionTask, load_questions
from metanim.datasets import DEFAULT_SPECS, GENERATED_SPECS, DatasetRecord, build, load_dataset
from metanim.games import game_class, game_prompt_version
from metanim.games.reply import with_format
from metanim.integrations._grading import game_and_state, grade_reply

STYLES = ("react", "standard", "cot")

try:  # inspect's CLI prints this error's message alone, without a traceback
    from inspect_ai._util.error import PrerequisiteError as _OneLineError
except ImportError:  # pragma: no cover - inspect moved its error class
    _OneLineError = Exception  # type: ignore[assignment,misc]


class TaskArgumentError(_OneLineError, ValueError):  # type: ignore[misc]
    """A task argument that is missing or wrong; `inspect eval` shows its one line."""

    def __init__(self, message: str) -> None:
        ValueError.__init__(self, message)
        self.message = message


def _registered_name(name: str) -> str:
    """`metanim/<name>` however metanim is installed.

    inspect prefixes the package name itself only when it can tell the package is
    installed (site-packages, or an editable install whose distribution is named like
    the package; ours is `metanim-arena`), so the prefix is added here when it won't be.
    """
    try:
        from inspect_ai._util.package import get_installed_package_name  # private: guarded

        if get_installed_package_name(_registered_name) == "metanim":
            return name
    except ImportError:  # pragma: no cover - inspect moved its helper
        pass
    return f"metanim/{name}"


# ------------------------------------------------------------------------- samples
def record_sample(record: DatasetRecord, list_moves: bool = False) -> Sample:
    """One inspect `Sample` of a dataset record: `input`, `target` and the state as metadata;
    with `list_moves`, its game prompt ends with the legal moves (`Game.prompt`)."""
    game = record.make_game()
    state = record.game_state()
    schema = game.action_schema(state)
    prompt = game.prompt(state, list_moves=True) if list_moves else record.prompt
    shown = None if list_moves else record.input
    return Sample(
        id=record.id,
        input=shown or with_format(prompt, "react", schema),
        target=record.target or record.optimal_move,
        metadata={
            "kind": "game",
            "game": record.game,
            "variant": record.variant,
            "game_params": record.game_params,
            "state": record.state,
            "prompt": prompt,
            "schema": schema,
            "list_moves": list_moves,
            "optimal_action": record.optimal_action,
            "stratum": record.features.stratum,
            "n_legal_moves": record.features.n_legal_moves,
        },
    )


def question_sample(item: Question) -> Sample:
    """One inspect `Sample` of a question (multiple choice or numeric)."""
    qt = QuestionTask(item)
    return Sample(
        id=item.id,
        input=with_format(qt.prompt(), "react", qt.action_schema()),
        target="" if item.answer is None else str(item.answer),
        metadata={
            "kind": "question",
            "prompt": qt.prompt(),
            "schema": qt.action_schema(),
            "question": {
                "id": item.id,
                "question": item.question,
                "choices": None if item.choices is None else list(item.choices),
                "answer": item.answer,
            },
        },
    )


def game_records(
    game: str,
    variant: str,
    dataset: str | None,
    seed: int,
    limit_n: int | None,
    disguise: bool = False,
) -> list[DatasetRecord]:
    """The records of one game and variant: from a file or build folder, else built
    (the default build; the generated build for the families and disguised games)."""
    name = game_class(game).name
    if variant not in ("normal", "misere"):
        raise ValueError(f"variant must be 'normal' or 'misere', got {variant!r}")
    shown = "-disguised" if disguise else ""
    if dataset is not None:
        path = Path(dataset)
        if path.is_dir():
            path = path / f"{name}{shown}-{variant}.jsonl"
        if not path.is_file():
            raise FileNotFoundError(f"no dataset file {path}")
        records = [
            r
            for r in load_dataset(path)
            if r.game == name
            and r.variant == variant
            and bool(r.game_params.get("disguise")) == disguise
        ]
    else:
        spec = next(
            s for s in (*DEFAULT_SPECS, *GENERATED_SPECS) if s.name == f"{name}{shown}-{variant}"
        )
        records = build(spec, seed=seed)
    return records[:limit_n] if limit_n is not None else records


# ------------------------------------------------------------------- solvers/scorer
def _problem(meta: dict[str, Any]) -> Any:
    """The agents-layer task of a sample (a game position or a question)."""
    if meta["kind"] == "question":
        q = meta["question"]
        choices = tuple(q["choices"]) if q["choices"] is not None else None
        return QuestionTask(Question(q["id"], q["question"], choices, q["answer"]))
    game, state = game_and_state(meta)
    return GameTask(game, state, list_moves=bool(meta.get("list_moves")))


@solver
def metanim_prompt(style: str = "react") -> Any:
    """Standard, ReAct or zero-shot CoT prompting (MetaNIM Table 8): the problem with that
    Output Format, one generation."""
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, got {style!r}")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        state.messages = [
            ChatMessageUser(content=with_format(meta["prompt"], style, meta["schema"]))
        ]
        return await generate(state)

    return solve


@solver
def self_consistency(samples: int = 5, style: str = "react", temperature: float = 0.7) -> Any:
    """Self-Consistency (Wang et al. 2023): `samples` sampled replies, majority vote on the
    parsed answer; the winning reply becomes the output (ties: the earliest answer)."""
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        state.messages = [
            ChatMessageUser(content=with_format(meta["prompt"], style, meta["schema"]))
        ]
        problem = _problem(meta)
        model = get_model()
        outputs = [
            await model.generate(
                state.messages, config=GenerateConfig(temperature=temperature, seed=index)
            )
            for index in range(samples)
        ]
        keys: list[Any] = []
        for output in outputs:
            parsed = parse_reply(problem, output.completion)
            keys.append(problem.key(parsed.answer) if parsed.ok else None)
        votes = Counter(k for k in keys if k is not None)
        chosen = keys.index(votes.most_common(1)[0][0]) if votes else 0
        state.output = outputs[chosen]
        state.messages.append(outputs[chosen].message)
        state.metadata = {**meta, "votes": {str(k): v for k, v in votes.items()}}
        return state

    return solve


def _finish_reason(state: TaskState) -> str | None:
    return "length" if state.output.stop_reason == "max_tokens" else None


@scorer(metrics=[accuracy(), stderr()])
def solver_grade() -> Any:
    """Grades with the exact solver: the unique winning move in a critical state; any winning
    move elsewhere; in a P-position, that no winning move exists. Questions: the gold answer."""

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        reply = state.output.completion
        if meta["kind"] == "question":
            problem = _problem(meta)
            parsed = parse_reply(problem, reply, finish_reason=_finish_reason(state))
            ok = parsed.ok and problem.is_correct(parsed.answer)
            return Score(
                value=CORRECT if ok else INCORRECT,
                answer=None if not parsed.ok else problem.text(parsed.answer),
                explanation=parsed.reason or f"gold answer {target.text}",
                metadata={"error": parsed.error},
            )
        game, position = game_and_state(meta)
        grade = grade_reply(game, position, reply, finish_reason=_finish_reason(state))
        return Score(
            value=CORRECT if grade.correct else INCORRECT,
            answer=grade.answer,
            explanation=grade.explanation,
            metadata={"outcome": grade.outcome, "n_winning": grade.n_winning, "error": grade.error},
        )

    return score


def _plan(style: str, samples: int) -> Any:
    return self_consistency(samples, style) if samples > 1 else metanim_prompt(style)


def game_task(
    game: str,
    variant: str = "normal",
    dataset: str | None = None,
    seed: int = 0,
    limit_n: int | None = None,
    style: str = "react",
    samples: int = 1,
    disguise: bool = False,
    list_moves: bool = False,
) -> Task:
    """The inspect `Task` of one game and variant (see the module docstring); with
    `disguise`, the game's disguised prompt variant; with `list_moves`, prompts that end
    with the legal moves (the task's `game_prompt_version` says which)."""
    records = game_records(game, variant, dataset, seed, limit_n, disguise)
    name = f"{game_class(game).name}{'-disguised' if disguise else ''}-{variant}"
    return Task(
        dataset=MemoryDataset([record_sample(r, list_moves) for r in records], name=name),
        solver=_plan(style, samples),
        scorer=solver_grade(),
        name=name,
        metadata={
            "game": game_class(game).name,
            "variant": variant,
            "style": style,
            "game_prompt_version": game_prompt_version(list_moves),
        },
    )


@task(name=_registered_name("metanim"))
def metanim(
    game: str = "nim",
    variant: str = "normal",
    dataset: str | None = None,
    seed: int = 0,
    limit_n: int | None = None,
    style: str = "react",
    samples: int = 1,
    disguise: bool = False,
    list_moves: bool = False,
) -> Task:
    """Critical states of any game (`game`: nim, fibonacci, kayles, chomp, corner_queen,
    subtraction, octal), named or disguised (`disguise`), the legal moves listed in the
    prompt or not (`list_moves`)."""
    return game_task(game, variant, dataset, seed, limit_n, style, samples, disguise, list_moves)


@task(name=_registered_name("nim"))
def nim(variant: str = "normal", dataset: str | None = None, seed: int = 0,
        limit_n: int | None = None, style: str = "react", samples: int = 1) -> Task:  # fmt: skip
    """NIM critical states (default: one heap of 31, take 1-3)."""
    return game_task("nim", variant, dataset, seed, limit_n, style, samples)


@task(name=_registered_name("fibonacci"))
def fibonacci(variant: str = "normal", dataset: str | None = None, seed: int = 0,
              limit_n: int | None = None, style: str = "react", samples: int = 1) -> Task:  # fmt: skip
    """Fibonacci NIM critical states (default: 31 stones)."""
    return game_task("fibonacci", variant, dataset, seed, limit_n, style, samples)


@task(name=_registered_name("kayles"))
def kayles(variant: str = "normal", dataset: str | None = None, seed: int = 0,
           limit_n: int | None = None, style: str = "react", samples: int = 1) -> Task:  # fmt: skip
    """Kayles critical states (default: one row of 20 pins)."""
    return game_task("kayles", variant, dataset, seed, limit_n, style, samples)


@task(name=_registered_name("chomp"))
def chomp(variant: str = "normal", dataset: str | None = None, seed: int = 0,
          limit_n: int | None = None, style: str = "react", samples: int = 1) -> Task:  # fmt: skip
    """Chomp critical states (default: square boards 2x2 to 19x19)."""
    return game_task("chomp", variant, dataset, seed, limit_n, style, samples)


@task(name=_registered_name("corner_queen"))
def corner_queen(variant: str = "normal", dataset: str | None = None, seed: int = 0,
                 limit_n: int | None = None, style: str = "react", samples: int = 1) -> Task:  # fmt: skip
    """Corner Queen critical states (default: 20x20 board)."""
    return game_task("corner_queen", variant, dataset, seed, limit_n, style, samples)


@task(name=_registered_name("subtraction"))
def subtraction(variant: str = "normal", dataset: str | None = None, seed: int = 0,
                limit_n: int | None = None, style: str = "react", samples: int = 1) -> Task:  # fmt: skip
    """Subtraction-game critical states (default: sets {1,3,4}, {2,5,6}, {1,4,5})."""
    return game_task("subtraction", variant, dataset, seed, limit_n, style, samples)


@task(name=_registered_name("octal"))
def octal(variant: str = "normal", dataset: str | None = None, seed: int = 0,
          limit_n: int | None = None, style: str = "react", samples: int = 1) -> Task:  # fmt: skip
    """Octal-game critical states (default: codes 0.07, 0.137 and 0.6 on rows of pins)."""
    return game_task("octal", variant, dataset, seed, limit_n, style, samples)


@task(name=_registered_name("questions"))
def questions(
    path: str | None = None, limit_n: int | None = None, style: str = "react", samples: int = 1
) -> Task:
    """A question file (JSONL: question, choices, answer), graded against the gold answer."""
    if path is None:
        # Short enough for one terminal line: inspect prints it wrapped at the width.
        raise TaskArgumentError("metanim/questions needs a question file: -T path=FILE.jsonl")
    items = load_questions(path)[:limit_n]
    return Task(
        dataset=MemoryDataset([question_sample(q) for q in items], name=Path(path).stem),
        solver=_plan(style, samples),
        scorer=solver_grade(),
        name=f"questions-{Path(path).stem}",
    )


#: The game tasks by game name (every game of `metanim.games.GAMES`).
GAME_TASKS = {
    "nim": nim,
    "fibonacci": fibonacci,
    "kayles": kayles,
    "chomp": chomp,
    "corner_queen": corner_queen,
    "subtraction": subtraction,
    "octal": octal,
}

__all__ = [
    "GAME_TASKS",
    "STYLES",
    "game_task",
    "metanim",
    "metanim_prompt",
    "question_sample",
    "questions",
    "record_sample",
    "self_consistency",
    "solver_grade",
]
