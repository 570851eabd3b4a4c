"""`metanim play`: one game of a tournament's plan, move by move, graded by the solver.

`play` plays episode 0 of the plan `metanim tournament` makes from the same config (the
same setting, start, seat, seeds and players, through the same episode loop), without
a log: the same seed gives the same moves in both commands.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from metanim.arena._forfeits import ForfeitWatch
from metanim.arena._players import parse_sides
from metanim.arena._preflight import resolve_structured_output
from metanim.arena._run import serve
from metanim.arena.tournament import Tournament, TournamentConfig
from metanim.envs import is_solver_player
from metanim.games import Game
from metanim.records import EpisodeRecord, MoveRecord
from metanim.util import aio


def play_game(
    config: TournamentConfig,
    *,
    on_move: Callable[[MoveRecord], None] | None = None,
    announce: Callable[[str], None] | None = None,
) -> EpisodeRecord:
    """Play episode 0 of `config`'s first setting; see `aplay_game`."""
    return aio.run(aplay_game(config, on_move=on_move, announce=announce))


async def aplay_game(
    config: TournamentConfig,
    *,
    on_move: Callable[[MoveRecord], None] | None = None,
    announce: Callable[[str], None] | None = None,
) -> EpisodeRecord:
    """Play episode 0 of `config`'s first setting, calling `on_move` with each move as it
    is made and `announce` with the header once the players' servers are known.

    An unreachable model ends the episode as an infrastructure error (its record says
    so); nothing is written.
    """
    job = Tournament(config.model_copy(update={"episodes": 1, "games": config.games[:1]}))
    with serve(job) as clients:
        try:
            header = job.start(clients)
            if announce is not None:
                announce(header)
            # A move that never came (its model could not be reached) is recorded, and
            # said by the episode's end, but is no move of the transcript.
            shown = None if on_move is None else _played(on_move)
            return await job.play(job.planned[0], shown)
        finally:
            await clients.aclose()


def _played(on_move: Callable[[MoveRecord], None]) -> Callable[[MoveRecord], None]:
    def call(move: MoveRecord) -> None:
        if move.status != "infrastructure_error":
            on_move(move)

    return call


def format_move(game: Game[Any, Any], move: MoveRecord) -> str:
    """One move of a transcript: the position, the answer, its grade and its cost."""
    if move.status == "forfeit":
        grade = "forfeit"
    elif move.position == "P":
        grade = "any (P-position)"
    else:
        grade = "optimal" if move.optimal else "mistake"
    if move.status == "fallback":
        grade += ", fallback"
    return (
        f"{move.ply + 1:3d}. {move.actor:8s} at {game.describe(game.validate_state(move.state))}\n"
        f"     -> {move.move or '(none)'}  [{move.position}-position: {grade}]"
        f"  calls={move.calls} tokens={move.prompt_tokens + move.completion_tokens}"
        f" unparsable={move.unparsable} illegal={move.illegal} status={move.status}"
    )


def format_end(game: Game[Any, Any], record: EpisodeRecord) -> str:
    """The last line of a transcript: who won and why, or why the game did not finish."""
    if record.status == "infrastructure_error":
        last = record.moves[-1]
        # The server may have answered (a quota refusal, an unreadable body, a context
        # overflow): the line says a call failed, and the error says how.
        return f"interrupted: {last.actor}'s model call failed at move {last.ply + 1}"
    if record.status == "error":
        return f"error: {(record.error or '').splitlines()[0]}"
    if record.end_reason in ("agent_forfeit", "opponent_forfeit"):
        loser = record.end_reason.removesuffix("_forfeit")
        reason = f"{loser} forfeited (no valid move after re-asks)"
    else:
        reason = (
            "opponent took the last move" if game.mover_wins_at_terminal else "took the last move"
        )
    return f"winner: {record.winner} ({reason})"


def play_hint(config: TournamentConfig, record: EpisodeRecord) -> str | None:
    """What helps when most of the game's model decisions gave no answer (else None): the
    dominant reply failure and the flag for it, as a run's report says it."""
    models = {
        actor
        for actor, method in (("agent", config.method), ("opponent", config.opponent))
        if not is_solver_player(method)
    }
    watch = ForfeitWatch(resolve_structured_output(config, parse_sides(config))[0])
    watch.count(m for m in record.moves if m.actor in models and m.status != "infrastructure_error")
    return watch.hint()
