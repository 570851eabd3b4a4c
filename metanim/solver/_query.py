"""One state's whole answer (Grundy value, outcome, winning moves), as `metanim solve` gives it.

`solve_state` builds the game exactly as `make_game(name, **params)` does, with the
sizes a state typed on the command line implies when a game name (not a preset) is
given without them (`fit_params`), and asks the same public queries as
`metanim.solver.grundy / outcome / winning_moves`. The command prints `Solution.text()`
or, with `--json`, `Solution.to_json()`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from metanim.games import (
    PRESETS,
    Game,
    InvalidStateError,
    SizeLimitError,
    check_preset_params,
    game_class,
    make_game,
)
from metanim.solver._solvers import solver_for

#: Version of the `metanim solve --json` object; bumped when a key changes meaning.
SOLVE_SCHEMA = "metanim-solve/1"


@dataclass(frozen=True)
class Solution:
    """A state's Grundy value, outcome and winning moves, each with the path that gave it.

    A value no path can give is None, with the solver's reason in `unavailable`.
    """

    game: Game[Any, Any]
    state: Any
    terminal: bool
    outcome: str
    grundy: int | None
    winning_moves: list[Any] | None
    methods: dict[str, str] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The stable machine-readable form (`SOLVE_SCHEMA`): JSON values only.

        Moves are the JSON values of their canonical text (`3`, `[0, 4]`), the same
        values the Output Format asks a model for; `winning_actions` are their ids.
        """
        game = self.game
        moves = self.winning_moves
        return {
            "schema": SOLVE_SCHEMA,
            "game": game.name,
            "params": game.params,
            "variant": game.info.variant,
            "state": game.to_json(self.state),
            "terminal": self.terminal,
            "outcome": self.outcome,
            "grundy": self.grundy,
            "winning_moves": None
            if moves is None
            else [json.loads(game.move_text(m)) for m in moves],
            "winning_actions": None if moves is None else [game.action_id(m) for m in moves],
            "methods": dict(self.methods),
            "unavailable": dict(self.unavailable),
        }

    def text(self) -> str:
        """The answer for people: each move as its canonical text and in the game's words."""
        game = self.game
        play = "misère" if game.misere else "normal"
        value = (
            f"{self.grundy} (by {self.methods['grundy']})"
            if self.grundy is not None
            else f"not available ({self.unavailable['grundy']})"
        )
        if self.winning_moves is None:
            moves = f"not available ({self.unavailable['winning_moves']})"
        elif not self.winning_moves:
            moves = "none"
        else:
            moves = ", ".join(
                f"{game.move_text(m)} ({game.move_words(m)})" for m in self.winning_moves
            )
        return "\n".join(
            [
                f"game: {game!r}",
                f"state: {game.to_json(self.state)}",
                f"grundy (normal play): {value}",
                f"outcome ({play} play): {self.outcome}"
                + (" (terminal)" if self.terminal else "")
                + f" (by {self.methods['outcome']})",
                f"winning moves: {moves}",
            ]
        )


def solve_state(name: str, state: Any, **params: Any) -> Solution:
    """The whole answer for `state` of game or preset `name`.

    `params` are the parameters the user gave (`misere` among them). A preset keeps what
    it fixes: a parameter that contradicts it raises `ValueError`
    (`check_preset_params`). A game name gets its sizes from the state where they are not
    given (`fit_params`). Raises `SizeLimitError` when not even the outcome can be given.
    """
    if name in PRESETS:
        check_preset_params(name, params)
    else:
        state, params = fit_params(name, state, params)
    game = make_game(name, **params)
    state = game.validate_state(state)
    solver = solver_for(game)
    methods: dict[str, str] = {}
    unavailable: dict[str, str] = {}

    def ask(query: str, answer: Any) -> Any:
        try:
            methods[query] = solver.method(state, query)
            return answer(state)
        except SizeLimitError as exc:
            if query == "outcome":
                raise
            methods.pop(query, None)
            unavailable[query] = str(exc)
            return None

    outcome = ask("outcome", solver.outcome)
    return Solution(
        game=game,
        state=state,
        terminal=game.is_terminal(state),
        outcome=outcome,
        grundy=ask("grundy", solver.grundy),
        winning_moves=ask("winning_moves", solver.winning_moves),
        methods=methods,
        unavailable=unavailable,
    )


def describe_solution(name: str, state: Any, *, misere: bool | None = None, **params: Any) -> str:
    """Human-readable solution of a state, for `metanim solve` (see `solve_state`)."""
    if misere is not None:
        params["misere"] = misere
    return solve_state(name, state, **params).text()


def fit_params(name: str, state: Any, params: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The state and the game parameters for a state typed on the command line.

    A size the user gave is kept; a missing one is read from the state:

    * NIM: one heap per number, each holding up to its size (at least 1); takes are
      unbounded unless `max_take` is given;
    * Fibonacci Nim: a bare number n is a pile at its start, [n, n - 1], in a game of
      n stones; [r, k] is a game of r stones when k < r, else of r + 1 (a max take equal
      to the pile comes only after the first move);
    * Subtraction: one heap per number, each holding up to its size; the set S from
      `subtraction_set` (default [1, 3, 4]);
    * Kayles and Octal: one row per pin string, as long as the string (Octal: the rule
      from `code`, default "0.07");
    * Chomp: as many rows as row lengths given, as wide as the longest (at least 2);
    * Corner Queen: the paper's 20x20 board (a [row, col] position means a different
      game on a board of another height), or the board given with height and width.
    """
    cls = game_class(name)
    fitted: dict[str, Any] = {}
    try:
        if cls.name in ("nim", "subtraction"):
            if not isinstance(state, int | list | tuple):
                raise InvalidStateError(
                    f"cannot read {state!r} as a {cls.title} state: give {STATE_FORMATS[cls.name]}"
                )
            heaps = [state] if isinstance(state, int) else list(state)
            for h in heaps:
                if isinstance(h, bool) or not isinstance(h, int) or h < 0:
                    raise InvalidStateError(
                        f"NIM heap sizes are whole numbers >= 0, got {h!r} in {state!r}"
                    )
            fitted = {"heaps": [max(h, 1) for h in heaps]}
            if cls.name == "nim":
                fitted["max_take"] = None
        elif cls.name == "fibonacci":
            if isinstance(state, int) and not isinstance(state, bool):
                if state < 2:
                    raise InvalidStateError(
                        f"a Fibonacci Nim pile at its start needs at least 2 stones (the first "
                        f"move may take any number but the whole pile), got {state}; give "
                        "[remaining, max_take] for a later position"
                    )
                state = [state, state - 1]
            remaining, max_take = (int(x) for x in state)
            fitted = {"n": max(remaining if max_take < remaining else remaining + 1, 2)}
        elif cls.name in ("kayles", "octal"):
            if isinstance(state, int):
                raise InvalidStateError(
                    f"{cls.title} pins are a string per row; write them as JSON, "
                    f"e.g. '[\"{state}\"]'"
                )
            rows = [state] if isinstance(state, str) else [str(r) for r in state]
            fitted = {"rows": [max(len(r), 1) for r in rows]}
        elif cls.name == "chomp":
            fitted = {"rows": len(state), "cols": max(max(int(x) for x in state), 2)}
        elif cls.name == "corner_queen":
            height, width = int(params.get("height", 20)), int(params.get("width", 20))
            row, col = (int(x) for x in state)
            if not (0 <= row < height and 0 <= col < width):
                raise InvalidStateError(
                    f"[{row}, {col}] is off the {height}x{width} board; give the board with "
                    "-p height=H -p width=W (row 0 is the top row, the target is [H-1, 0])"
                )
            fitted = {"height": height, "width": width, "start": [0, width - 1]}
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InvalidStateError):
            raise
        raise InvalidStateError(
            f"cannot read {state!r} as a {cls.title} state: give {STATE_FORMATS[cls.name]}"
        ) from exc
    return state, {**fitted, **params}


#: How a state is typed on the command line, with an example, per game.
STATE_FORMATS = {
    "nim": "heap sizes as a number or a JSON list such as [3, 4, 5]",
    "fibonacci": "the stones left and the largest take allowed, [remaining, max_take], "
    "such as [20, 19], or a number n for a pile at its start",
    "subtraction": "heap sizes as a number or a JSON list such as [10, 7]",
    "kayles": "a JSON list of '0'/'1' pin strings, one per row, such as [\"1111\"]",
    "octal": "a JSON list of '0'/'1' pin strings, one per row, such as [\"1111111111\"]",
    "chomp": "the row lengths from the top (each row no longer than the one above) as a "
    "JSON list of numbers, such as [4, 3, 1]",
    "corner_queen": "the queen's square as [row, col], such as [0, 19] (row 0 is the top row)",
}
