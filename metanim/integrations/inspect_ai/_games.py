"""Whole games as inspect_ai agent tasks: the model plays through a `move` tool.

Tasks (registered as `metanim/<game>_game`): `nim_game`, `fibonacci_game`,
`kayles_game`, `chomp_game`, `corner_queen_game`, and `metanim_game` (any game by name).
Each sample is one game: the model moves first from a start drawn, seeded per sample, by
the envs' start rule (`start="random_n"`: an N-position from a random playout; `"auto"`,
`"initial"` or a state as `ImpartialGameEnv` reads them), and plays against `opponent`
("optimal": the solver, "random", "epsilon:<p>"). The episode is an `ImpartialGameEnv`
(rules, opponent and end of game are the env's); the model answers every position by
calling `move(action)`, its only tool, with a call required (`tool_choice="any"`, sent
as OpenAI's "required": llama.cpp's server reads only the string forms). An unparsable or
illegal action, or a reply without the call, is answered with the reason and the model
tries again; `max_invalid` such answers in a row forfeit the game.

Every move is graded by the exact solver (`metanim.integrations._grading.grade_reply`):
the grades go to the transcript (an info event per move), to the sample's store
(`metanim_game:moves`) and to the score's metadata, never to the model. The score is a
dict: `win` (1 or 0), `optimal_share` (winning moves played / turns in N-positions) and
`illegal` (rejected actions and replies without a call), each with its mean.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageUser, execute_tools, get_model
from inspect_ai.scorer import Score, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolDef, ToolParam, ToolParams
from inspect_ai.util import store

from metanim.envs import ImpartialGameEnv, make_opponent, start_setting
from metanim.games import GAMES, Game, game_class, game_prompt_version, make_game
from metanim.integrations._grading import game_and_state, grade_reply
from metanim.integrations.inspect_ai._tasks import _registered_name
from metanim.solver import outcome

MOVE_TOOL = "move"
STORE_MOVES = "metanim_game:moves"
STORE_WINNER = "metanim_game:winner"

_TOOL_FORMAT = (
    "#Output Format: Call the `{tool}` tool once with your action as `action`: {schema}. "
    "Put why you choose it in `reasoning`."
)


def position_text(game: Game[Any, Any], state: Any, list_moves: bool = False) -> str:
    """The game prompt of `state` with the tool's Output Format: what the model sees at
    each of its turns (`list_moves`: the prompt ends with the legal moves)."""
    return f"{game.prompt(state, list_moves=list_moves)}\n" + _TOOL_FORMAT.format(
        tool=MOVE_TOOL, schema=game.action_schema(state)
    )


# ------------------------------------------------------------------------- samples
def game_samples(
    game: Game[Any, Any], games: int, seed: int, start: Any = "random_n", list_moves: bool = False
) -> list[Sample]:
    """`games` samples, game `i` starting where the env's start rule puts it after
    `reset(seed=seed + i)`; with `list_moves`, every position shown lists the legal moves."""
    env = ImpartialGameEnv(game, start=start_setting(game, start, preset=False))
    samples = []
    for index in range(games):
        env.reset(seed=seed + index)
        state = env.state
        samples.append(
            Sample(
                id=index + 1,
                input=position_text(game, state, list_moves),
                metadata={
                    "game": game.name,
                    "game_params": game.params,
                    "state": game.to_json(state),
                    "seed": seed + index,
                    "list_moves": list_moves,
                },
            )
        )
    return samples


# -------------------------------------------------------------------------- solver
class _Game:
    """One game in progress: the env, the counts and the graded moves."""

    def __init__(
        self, game: Game[Any, Any], start: Any, opponent: str, seed: int, list_moves: bool = False
    ) -> None:
        self.game = game
        self.list_moves = list_moves
        self.env = ImpartialGameEnv(game, opponent=opponent, start=start, illegal="penalize")
        self.env.reset(seed=seed)
        self.moves: list[dict[str, Any]] = []
        self.invalid_run = 0  # rejected answers in a row
        self.winner: str | None = None
        self.moved = False  # a legal move was made in the current reply
        self.turn = 0  # the model's turns so far (legal moves made)

    def reject(self, kind: str, explanation: str, attempt: Any) -> str:
        """Count an answer that made no move (`kind`: unparsable, illegal, no_call)."""
        self.invalid_run += 1
        position = self.env.state
        entry = {
            "player": "model",
            "turn": self.turn,
            "state": self.game.to_json(position),
            "outcome": outcome(self.game, position),
            "move": attempt,
            "error": kind,
            "explanation": explanation,
        }
        self.moves.append(entry)
        transcript().info(entry, source="metanim move")
        return f"{explanation}. The position is unchanged; call `{MOVE_TOOL}` again."

    def play(self, action: Any) -> str:
        """The `move` tool: one attempted action in the current position."""
        if self.winner is not None or self.moved:
            return "You have already moved this turn; wait for the next position."
        position = self.env.state
        grade = grade_reply(self.game, position, json.dumps({"action": action}))
        if grade.error is not None:
            return self.reject(grade.error, grade.explanation, action)
        _, _, _, _, info = self.env.step(json.dumps({"action": action}))
        self.moved, self.invalid_run = True, 0
        entry = {
            "player": "model",
            "turn": self.turn,
            "state": self.game.to_json(position),
            "move": grade.answer,
            "outcome": grade.outcome,
            "winning": grade.outcome == "N" and grade.correct,
            "explanation": grade.explanation,
        }
        self.turn += 1
        self.moves.append(entry)
        transcript().info(entry, source="metanim move")
        lines = [f"You played {grade.answer}."]
        if info["opponent_move"] is not None:
            reply = {"player": "opponent", "move": info["opponent_move"]}
            self.moves.append(reply)
            transcript().info(reply, source="metanim move")
            lines.append(f"Your opponent played {info['opponent_move']}.")
        self.winner = info["winner"]
        if self.winner is not None:
            rule = "loses" if self.game.misere else "wins"
            result = "won" if self.winner == "agent" else "lost"
            lines.append(f"The game is over (whoever makes the last move {rule}): you {result}.")
        else:
            lines.append(position_text(self.game, self.env.state, self.list_moves))
        return "\n".join(lines)

    def tool(self) -> ToolDef:
        async def move(action: Any, reasoning: str = "") -> str:
            return self.play(action)

        schema = self.game.action_schema(self.env.state)
        return ToolDef(
            move,
            name=MOVE_TOOL,
            description="Make your move in the game: the position after your opponent's "
            "reply comes back.",
            parameters=ToolParams(
                properties={
                    "action": ToolParam(
                        anyOf=[
                            ToolParam(type="integer"),
                            ToolParam(type="array", items=ToolParam(type="integer")),
                        ],
                        description=f"your action: {schema}",
                    ),
                    "reasoning": ToolParam(
                        type="string", description="why you choose this action", default=""
                    ),
                },
                required=["action"],
            ),
            parallel=False,
        )


@solver
def play_game(opponent: str = "optimal", max_invalid: int = 3) -> Any:
    """Play the sample's game to its end: generate with the `move` call forced, run it,
    and repeat until the game is over or `max_invalid` invalid answers come in a row."""
    make_opponent(opponent)  # refuses an unknown opponent before any game starts
    if max_invalid < 1:
        raise ValueError(f"max_invalid must be >= 1, got {max_invalid}")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        game, start = game_and_state(state.metadata)
        meta = state.metadata
        match = _Game(game, start, opponent, meta["seed"], bool(meta.get("list_moves")))
        tools = [match.tool()]
        model = get_model()
        while match.winner is None and match.invalid_run < max_invalid:
            # Kept up to date: a sample limit may stop the game between two calls.
            store().set(STORE_MOVES, match.moves)
            match.moved = False
            # "any" with one tool forces it; llama.cpp ignores a named-function object.
            output = await model.generate(state.messages, tools=tools, tool_choice="any")
            state.output = output
            state.messages.append(output.message)
            if not output.message.tool_calls:
                text = output.completion[:200]
                note = match.reject("no_call", "no_call: the reply called no tool", text)
                state.messages.append(ChatMessageUser(content=note))
                continue
            result = await execute_tools(state.messages, tools)
            state.messages.extend(result.messages)
            for message in result.messages:  # arguments the tool never saw (bad schema)
                if getattr(message, "error", None) is not None:
                    match.reject("unparsable", f"unparsable: {message.error.message}", None)
        if match.winner is None:
            match.winner = "opponent"  # forfeited by `max_invalid` invalid answers
        store().set(STORE_MOVES, match.moves)
        store().set(STORE_WINNER, match.winner)
        return state

    return solve


def _shown(move: dict[str, Any]) -> str:
    """A move in the score's answer: winning moves starred, rejected answers in brackets."""
    if move.get("error") is None:
        return move["move"] + ("*" if move.get("winning") else "")
    if move["error"] == "no_call":
        return "(no_call)"
    return f"({move['error']} {json.dumps(move['move'])})"


@scorer(metrics={"win": [mean(), stderr()], "optimal_share": [mean()], "illegal": [mean()]})
def game_score() -> Any:
    """Win, share of winning moves among the model's turns in N-positions, rejected answers."""

    async def score(state: TaskState, target: Target) -> Score:
        moves = store().get(STORE_MOVES, [])
        winner = store().get(STORE_WINNER)
        mine = [m for m in moves if m["player"] == "model"]
        # A turn in an N-position counts once, however many answers it took; one that
        # ends in a forfeit counts as a turn without a winning move.
        n_turns = len({m["turn"] for m in mine if m["outcome"] == "N"})
        wins = sum(1 for m in mine if m.get("winning"))
        illegal = sum(1 for m in mine if m.get("error"))
        share = wins / n_turns if n_turns else 0.0
        played = " ".join(_shown(m) for m in moves)
        return Score(
            value={"win": float(winner == "agent"), "optimal_share": share, "illegal": illegal},
            answer=played,
            explanation=f"winner: {winner}; model turns in N-positions: {n_turns}, "
            f"winning moves: {wins}, rejected: {illegal}",
            metadata={"moves": moves, "winner": winner},
        )

    return score


def whole_game_task(
    game: str = "nim",
    variant: str | None = None,
    opponent: str = "optimal",
    games: int = 10,
    seed: int = 0,
    start: Any = "random_n",
    max_invalid: int = 3,
    list_moves: bool = False,
    **params: Any,
) -> Task:
    """Whole games of `game` (a game or preset name; `params`: its sizes) in `variant`,
    every position's prompt listing the legal moves with `list_moves` (see the module
    docstring for the other arguments)."""
    if variant not in (None, "normal", "misere"):
        raise ValueError(f"variant must be 'normal' or 'misere', got {variant!r}")
    if variant is not None:
        params["misere"] = variant == "misere"
    the_game = make_game(game, **params)
    name = f"{the_game.name}-{'misere' if the_game.misere else 'normal'}-game"
    return Task(
        dataset=MemoryDataset(game_samples(the_game, games, seed, start, list_moves), name=name),
        solver=play_game(opponent, max_invalid),
        scorer=game_score(),
        name=name,
        metadata={
            "game": the_game.name,
            "params": the_game.params,
            "opponent": opponent,
            "game_prompt_version": game_prompt_version(list_moves),
        },
    )


def _family_task(family: str, preset: str | None, **args: Any) -> Task:
    """The whole-game task of one family: its default configuration, or `preset`."""
    if preset is not None and make_game(preset).name != family:
        raise ValueError(f"preset {preset!r} is not a {family} preset")
    return whole_game_task(preset or family, **args)


@task(name=_registered_name("metanim_game"))
def metanim_game(game: str = "nim", **args: Any) -> Task:
    """Whole games of any game or preset (`game`: nim, fibonacci, kayles-2rows, ...);
    the other arguments are `whole_game_task`'s (`-T variant=misere -T opponent=random`)."""
    return whole_game_task(game, **args)


def _family_game(family: str) -> Any:
    """The registered task `metanim/<family>_game`: whole games of one family, in its
    default configuration or one of its presets."""

    def family_game(preset: str | None = None, **args: Any) -> Task:
        return _family_task(family, preset, **args)

    family_game.__name__ = family_game.__qualname__ = f"{family}_game"
    family_game.__doc__ = (
        f"Whole {game_class(family).title} games (default: {make_game(family).params}; "
        "`preset`: one of its presets); the other arguments are `whole_game_task`'s."
    )
    return task(name=_registered_name(f"{family}_game"))(family_game)


#: The whole-game tasks by game name: every game of `metanim.games.GAMES`, so a family
#: added there gets its task without a change here.
GAME_GAME_TASKS = {family: _family_game(family) for family in GAMES}
nim_game = GAME_GAME_TASKS["nim"]
fibonacci_game = GAME_GAME_TASKS["fibonacci"]
kayles_game = GAME_GAME_TASKS["kayles"]
chomp_game = GAME_GAME_TASKS["chomp"]
corner_queen_game = GAME_GAME_TASKS["corner_queen"]

__all__ = [
    "GAME_GAME_TASKS",
    "MOVE_TOOL",
    "STORE_MOVES",
    "STORE_WINNER",
    "chomp_game",
    "corner_queen_game",
    "fibonacci_game",
    "game_samples",
    "game_score",
    "kayles_game",
    "metanim_game",
    "nim_game",
    "play_game",
    "position_text",
    "whole_game_task",
]
