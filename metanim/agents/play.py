"""Play one game between two methods and grade every move with the solver (`metanim play`).

`play_arguments` and `play` are the command's flags and handler (the CLI loads them as a
library command): a `sim-*` model with no server URL gets the simulated server started
in-process, as for `tournament`, `evaluate` and `demo`, and an infrastructure error prints
the moves played so far before the error.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from typing import Any

from metanim.agents.base import Decision
from metanim.agents.policy import LLMPolicy
from metanim.games import Game
from metanim.llm._types import (
    DEFAULT_MAX_COMPLETION_TOKENS,
    STRUCTURED_OUTPUT_MODES,
    InfrastructureError,
)


@dataclass
class PlayedMove:
    """One move of a played game, graded against the solver."""

    player: str
    state: Any
    decision: Decision
    position: str  # "N" (the mover can win) or "P"
    grade: str  # "optimal", "mistake", "any (P-position)", "forfeit", "fallback"


@dataclass
class GameRecord:
    """The moves of one game and its winner ("agent", "opponent")."""

    game: Game[Any, Any]
    moves: list[PlayedMove] = field(default_factory=list)
    winner: str | None = None
    reason: str = ""
    interrupted: bool = False  # a model could not be reached: the game did not finish


class PlayInfrastructureError(InfrastructureError):
    """A model could not be reached mid-game; `.record` holds the moves played so far."""

    def __init__(self, cause: InfrastructureError, record: GameRecord) -> None:
        super().__init__(str(cause), kind=cause.kind, status=cause.status, attempts=cause.attempts)
        self.record = record


def play_game(
    game: Game[Any, Any],
    agent: LLMPolicy,
    opponent: LLMPolicy,
    *,
    seed: int = 0,
    start: Any = None,
    agent_first: bool = True,
    max_moves: int | None = None,
) -> GameRecord:
    """Alternate `agent` and `opponent` from `start` until the game ends or someone forfeits."""
    from metanim.solver import outcome, winning_moves

    state = game.initial_state() if start is None else game.validate_state(start)
    if game.is_terminal(state):
        raise ValueError(f"the start state {state} is terminal: nothing to play")
    record = GameRecord(game)
    players = [("agent", agent), ("opponent", opponent)]
    if not agent_first:
        players.reverse()
    limit = max_moves or game.info.max_game_length
    for ply in range(limit):
        if game.is_terminal(state):
            break
        name, policy = players[ply % 2]
        try:
            decision = policy.act(game, state, seed=seed * 1000 + ply)
        except InfrastructureError as exc:
            record.interrupted = True
            record.reason = f"{name}'s model could not be reached at move {ply + 1}"
            raise PlayInfrastructureError(exc, record) from exc
        position = "N" if outcome(game, state).upper().startswith("N") else "P"
        if decision.move is None:
            record.moves.append(PlayedMove(name, state, decision, position, "forfeit"))
            record.winner = players[(ply + 1) % 2][0]
            record.reason = f"{name} forfeited (no valid move after re-asks)"
            return record
        if position == "P":
            grade = "any (P-position)"
        else:
            grade = "optimal" if decision.move in winning_moves(game, state) else "mistake"
        if decision.status == "fallback":
            grade += ", fallback"
        record.moves.append(PlayedMove(name, state, decision, position, grade))
        state = game.apply(state, decision.move)
    if game.is_terminal(state):
        last = record.moves[-1].player
        other = "opponent" if last == "agent" else "agent"
        # The game says who wins at a terminal state: the player to move there (`other`)
        # exactly when `mover_wins_at_terminal` (misère play).
        mover_wins = game.mover_wins_at_terminal
        record.winner = other if mover_wins else last
        record.reason = "opponent took the last move" if mover_wins else "took the last move"
    else:
        record.reason = f"stopped after {limit} moves"
    return record


def format_record(record: GameRecord) -> str:
    """A readable transcript: each move with its state, position class, grade and cost."""
    game = record.game
    lines = [f"{game.title} {game.params}"]
    for i, move in enumerate(record.moves, start=1):
        d = move.decision
        lines.append(
            f"{i:3d}. {move.player:8s} at {game.describe(move.state)}\n"
            f"     -> {d.answer_text or '(none)'}  [{move.position}-position: {move.grade}]"
            f"  calls={d.n_calls} tokens={d.usage.total_tokens} unparsable={d.unparsable}"
            f" illegal={d.illegal} status={d.status}"
        )
    if record.interrupted:
        lines.append(f"interrupted: {record.reason}")
    else:
        lines.append(f"winner: {record.winner} ({record.reason})")
    return "\n".join(lines)


# ------------------------------------------------------------------ the play command
def play_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of `metanim play`."""
    p.add_argument("--game", required=True, help="game or preset name, e.g. fibonacci, nim-31-k3")
    p.add_argument("--agent", required=True, help="method spec, e.g. dreamad, mad:agents=3")
    p.add_argument("--model", required=True, help="the agent's model (model or model@base_url)")
    p.add_argument("--opponent", default="react:gpt-4o", help="method:model (default react:gpt-4o)")
    p.add_argument(
        "--base-url",
        default=None,
        help="OpenAI-compatible server for both sides (default: the simulated server, "
        "started in-process, for sim-* models; else OPENAI_BASE_URL or the OpenAI API)",
    )
    p.add_argument("--seed", type=int, default=0, help="decision seeds derive from it")
    p.add_argument("--start", type=_json_arg, default=None, help="start state as JSON")
    p.add_argument("--second", action="store_true", help="the opponent moves first")
    p.add_argument(
        "--max-reasks", type=int, default=2, help="re-asks after an invalid reply (default 2)"
    )
    p.add_argument(
        "--on-failure",
        choices=("forfeit", "random"),
        default="forfeit",
        help="when every re-ask stays invalid: forfeit, or a seeded random legal move "
        "(recorded as a fallback); default forfeit",
    )
    p.add_argument(
        "--structured-output",
        choices=STRUCTURED_OUTPUT_MODES,
        default="off",
        help="send each reply's JSON Schema (legal moves as an enum); default off",
    )
    p.add_argument(
        "--max-completion-tokens",
        type=int,
        default=DEFAULT_MAX_COMPLETION_TOKENS,
        help=f"completion cap of every call (default {DEFAULT_MAX_COMPLETION_TOKENS})",
    )
    p.add_argument(
        "--extra-body",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="extra request-body field for every call, e.g. cache_prompt=false (repeatable)",
    )


def play_defaults(args: argparse.Namespace) -> dict[str, Any]:
    """The method keyword arguments `metanim play`'s flags set."""
    from metanim.llm._types import CallOptions

    extra = {}
    for item in args.extra_body:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--extra-body expects KEY=JSON, got {item!r}")
        extra[key.strip()] = _json_arg(value)
    options = CallOptions(
        max_tokens=args.max_completion_tokens,
        structured_output=args.structured_output,
        extra_body=extra,
    )
    return {"options": options, "max_reasks": args.max_reasks, "on_failure": args.on_failure}


def _json_arg(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def play(args: argparse.Namespace) -> int:
    """Run `metanim play`: print the graded transcript; 1 if a model could not be reached."""
    from metanim.agents.registry import build_method, make_client, parse_spec
    from metanim.arena._players import needs_sim_server, sim_server_if_needed
    from metanim.games import make_game

    game = make_game(args.game)

    def split(model: str) -> tuple[str, str | None]:
        name, _, url = model.partition("@")
        return name.strip(), url.strip() or args.base_url

    opponent_model = parse_spec(args.opponent)[1] or ""
    needed = needs_sim_server(
        (args.agent, *split(args.model)), (args.opponent, *split(opponent_model))
    )
    with sim_server_if_needed(needed, seed=args.seed) as sim_url:

        def client(spec: str) -> Any:
            model, url = split(spec)
            if url is None and model.startswith("sim-"):
                url = sim_url
            return make_client(model if url is None else f"{model}@{url}")

        defaults = play_defaults(args)
        agent = LLMPolicy(
            build_method(args.agent, args.model, client_factory=client, defaults=defaults)
        )
        opponent = LLMPolicy(build_method(args.opponent, client_factory=client, defaults=defaults))
        try:
            record = play_game(
                game,
                agent,
                opponent,
                seed=args.seed,
                start=args.start,
                agent_first=not args.second,
            )
        except PlayInfrastructureError as exc:
            # Keep the transcript: the moves played so far, then the error.
            print(format_record(exc.record))
            print(f"metanim play: error: {exc}", file=sys.stderr)
            return 1
        finally:
            agent.close()
            opponent.close()
    print(format_record(record))
    return 0
