"""`check_game`: the rule invariants and solver agreement any game must satisfy.

Shipped as library code (like Gymnasium's `check_env`) so that whoever adds a
game can run the same checks the test suite runs on the built-in ones.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from metanim.games import Game, game_from_prompt
from metanim.solver._solvers import solver_for
from metanim.solver.reference import ReferenceSolver


class GameCheckError(AssertionError):
    """A rule invariant or a solver answer that does not hold; the message names the state."""


@dataclass(frozen=True)
class CheckReport:
    states: int
    terminal_states: int
    p_positions: int
    complete: bool  # every reachable state was visited (not cut at max_states)


def reachable_states(
    game: Game[Any, Any], start: Any = None, max_states: int = 20_000
) -> list[Any]:
    """States reachable from `start` (default: the initial state), breadth first."""
    first = game.initial_state() if start is None else game.validate_state(start)
    seen = {first}
    order = [first]
    queue = deque([first])
    while queue and len(order) < max_states:
        state = queue.popleft()
        for move in game.legal_moves(state):
            child = game.child(state, move)
            if child not in seen:
                seen.add(child)
                order.append(child)
                queue.append(child)
    return order


def _fail(game: Game[Any, Any], state: Any, what: str) -> GameCheckError:
    return GameCheckError(f"{game!r} at state {game.to_json(state)}: {what}")


def check_game(
    game: Game[Any, Any], *, max_states: int = 5_000, solver: bool = True
) -> CheckReport:
    """Verify rules, encodings, text round trips and (optionally) the solver on every
    state reachable from the initial one (up to `max_states`).

    Raises:
        GameCheckError: naming the game, the state and the broken invariant.
    """
    info = game.info
    states = reachable_states(game, max_states=max_states + 1)
    complete = len(states) <= max_states
    states = states[:max_states]
    reference = ReferenceSolver(game)
    fast = solver_for(game) if solver else None
    terminal = p_count = 0
    for state in states:
        if game.validate_state(game.to_json(state)) != state:
            raise _fail(game, state, "JSON form does not round-trip through validate_state")
        json.dumps(game.to_json(state))  # must be JSON-serializable
        moves = game.legal_moves(state)
        ids = [game.action_id(m) for m in moves]
        if ids != sorted(set(ids)):
            raise _fail(game, state, "legal moves are not sorted by distinct action ids")
        if any(not 0 <= a < info.num_actions for a in ids):
            raise _fail(game, state, f"an action id is outside [0, {info.num_actions})")
        if any(game.move_from_action(a) != m for a, m in zip(ids, moves, strict=True)):
            raise _fail(game, state, "move_from_action does not invert action_id")
        mask = game.action_mask(state)
        if mask.shape != (info.num_actions,) or set(np.flatnonzero(mask)) != set(ids):
            raise _fail(game, state, "action_mask disagrees with legal_moves")
        obs = game.observation(state)
        if (
            obs.shape != info.observation_shape
            or obs.min() < 0
            or obs.max() > info.observation_high
        ):
            raise _fail(game, state, "observation outside its declared shape or bounds")
        if game.is_terminal(state) != (not moves):
            raise _fail(game, state, "is_terminal disagrees with legal_moves")
        terminal += not moves
        if game.parse_state(game.describe(state)) != state:
            raise _fail(game, state, "parse_state(describe(state)) differs from the state")
        again, parsed = game_from_prompt(game.prompt(state))
        if parsed != state or again.misere != game.misere:
            raise _fail(game, state, "the prompt does not identify the game and state")
        for move in moves:
            if game.parse_move(game.move_text(move), state) != move:
                raise _fail(game, state, f"parse_move does not invert move_text for {move!r}")
            child = game.apply(state, move)
            if game.validate_state(child) != child:
                raise _fail(game, state, f"apply({move!r}) gave an invalid state")
        p_count += reference.outcome(state) == "P"
        if fast is not None:
            if fast.grundy(state) != reference.grundy(state):
                raise _fail(game, state, "solver Grundy value differs from the brute force")
            if fast.outcome(state) != reference.outcome(state):
                raise _fail(game, state, "solver outcome differs from the brute force")
            if fast.winning_moves(state) != reference.winning_moves(state):
                raise _fail(game, state, "solver winning moves differ from the brute force")
    return CheckReport(len(states), terminal, p_count, complete)
