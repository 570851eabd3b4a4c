"""Tournaments: E episodes per game setting, method against opponent, resumable.

Every finished episode is appended to a JSONL log the moment it ends (flushed and
fsynced), so a killed run loses at most the episodes in flight. Episode ids are
derived from the config hash, the setting and the index: rerunning the same command
skips the ids already logged as a win or a loss and reruns failed ones; the summary
keeps only the latest record of each id, so nothing is counted twice. `metanim play`
plays episode 0 of the same plan, move by move.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import Field, field_validator

from metanim.arena._config import RunConfig
from metanim.arena._players import ClientPool, Policy, build_player, describe, parse_sides
from metanim.arena._preflight import check_listing, prepare_run
from metanim.arena._run import Run, RunResult
from metanim.arena.episodes import play_episode
from metanim.envs import START_MODES, check_playout_length, start_setting
from metanim.games import Game, InvalidStateError, SizeLimitError
from metanim.games.settings import parse_setting
from metanim.records import (
    EpisodeRecord,
    MoveRecord,
    Seat,
    SideTotals,
    TournamentTally,
)
from metanim.solver import outcome
from metanim.util import FileName, PositiveInt, aio, derive_seed, strict_json

SeatPolicy = Literal["first", "second", "alternate", "random"]


class TournamentConfig(RunConfig):
    """A tournament: every field is a CLI flag of `metanim tournament` (`--field-name`)."""

    name: FileName = Field("tournament", description="run name, the stem of the result files")
    games: list[str] = Field(
        default_factory=lambda: ["fibonacci-20"],
        description='game settings: a preset (fibonacci-20, nim-31-k3, ...) or NAME:JSON, e.g. nim:{"heaps":[12],"max_take":3}',
    )
    method: str = Field(
        "dreamad",
        description="the agent's method spec (react, dreamad, mad:agents=3, ...) or optimal/random",
    )
    model: str = Field("sim-biased:heuristic=max_take,p=0.3", description="the agent's model")
    base_url: str | None = Field(
        None,
        description="the agent's server (default: the simulated server for sim-* models, else OPENAI_BASE_URL)",
    )
    params: dict[str, Any] = Field(
        default_factory=dict, description="the agent's method parameters"
    )
    opponent: str = Field(
        "react", description="the opponent's method spec, or optimal/random/epsilon:<p>"
    )
    opponent_model: str = Field(
        "sim-biased:heuristic=max_take,p=0.6", description="the opponent's model"
    )
    opponent_base_url: str | None = Field(None, description="the opponent's server")
    opponent_params: dict[str, Any] = Field(
        default_factory=dict, description="the opponent's method parameters"
    )
    episodes: int = Field(
        50, ge=1, le=1_000_000, description="episodes per game setting (at most 1,000,000)"
    )
    seat: SeatPolicy = Field(
        "first", description="the agent's seat: first, second, alternate or random"
    )
    start: str | None = Field(
        None,
        description="start states: auto (the initial state when it is an N-position, else a "
        "random N-position), random_n, initial, or a state as JSON, e.g. [5,4] (default: "
        "auto for every setting, preset or JSON alike; a P-position start warns)",
    )
    seed: int = Field(0, description="base seed: the same seed gives the same episodes")
    concurrency: int = Field(8, ge=1, description="episodes played at once")
    max_retries: int = Field(
        4, ge=0, description="retries of a failed call before it is an infrastructure error"
    )
    max_calls: PositiveInt | None = Field(
        None, description="budget: stop starting episodes after this many model calls"
    )
    record_decisions: bool = Field(
        True, description="keep every decision's full record (messages, samples) in the log"
    )
    rerun_failed: bool = Field(
        True, description="on resume, rerun episodes that ended in an infrastructure error"
    )

    @field_validator("start", mode="before")
    @classmethod
    def _state_as_json(cls, value: Any) -> Any:
        # A config file may give the state itself; the flag gives its JSON text.
        return json.dumps(value) if isinstance(value, list) else value


def setting_start(start: str | None, key: str, game: Game[Any, Any]) -> Any:
    """The start setting of one game setting: "random_n", "initial", "auto" or a state.

    One rule for presets and JSON settings alike (`metanim.envs.env.resolve_start`):
    by default "auto", the initial state when it is an N-position for the agent's
    first decision, else a random N-position. A JSON state is checked with the game's
    `validate_state`, so a bad one fails before any episode.
    """
    value: Any = start
    if isinstance(start, str) and start not in START_MODES:
        try:
            # Whole numbers only: "[30.7]" is refused, never played from 30.
            value = strict_json(start, "start")
        except ValueError as exc:
            if "whole number" in str(exc):
                raise
            raise ValueError(
                f"start must be auto, random_n, initial or a state as JSON (e.g. [5,4]), "
                f"got {start!r}"
            ) from None
    try:
        return start_setting(game, value, preset=True)
    except InvalidStateError as exc:
        raise InvalidStateError(f"start {start} is not a state of {key}: {exc}") from None


@dataclass(frozen=True)
class PlannedEpisode:
    id: str
    setting: str
    index: int
    seed: int
    seat: Seat


def _seat(policy: SeatPolicy, index: int, seed: int) -> Seat:
    if policy in ("first", "second"):
        return policy  # type: ignore[return-value]
    if policy == "alternate":
        return "first" if index % 2 == 0 else "second"
    return "first" if np.random.default_rng(derive_seed(seed, "seat")).random() < 0.5 else "second"


class Tournament:
    """A tournament as a run's job: its settings, starts and players read once, checked
    before anything starts, and its episodes planned with deterministic ids and seeds."""

    unit = "episodes"
    finished = ("win", "loss")

    def __init__(self, config: TournamentConfig) -> None:
        self.questions: list[str] = []
        # A bad name or parameter stops here, offline.
        self.sides = parse_sides(config)
        # The mode chosen, not "auto", is the run's: in its identity, header and report.
        config, self.structured = prepare_run(config, self.sides)
        self.config = config
        self.digest, self.log_path, as_spelled = config.log_choice(self.sides)
        # A bad start or an oversized setting stops here, before any server or plan. A
        # log keyed by the config as spelled knows its settings as spelled too.
        self.games = dict(parse_setting(text, as_spelled=as_spelled) for text in config.games)
        self.starts = {key: setting_start(config.start, key, g) for key, g in self.games.items()}
        simulated = any(m.needs_sim_server for side in self.sides for m in side.models())
        solver = any(side.model is None for side in self.sides)
        for key, game in self.games.items():
            _check_size(
                key, game, self.starts[key], simulated=simulated, solver=solver,
                fallback=config.on_failure, listed=config.list_moves,
            )  # fmt: skip
            _solve_start(key, game, self.starts[key])
        self.players: list[Policy] = []
        self.planned = self._plan()
        self.tally = TournamentTally((p.setting, p.seat) for p in self.planned)

    def _plan(self) -> list[PlannedEpisode]:
        """Every episode of the config, with its deterministic id, seed and seat."""
        out = []
        for key in self.games:
            for index in range(self.config.episodes):
                episode_id = hashlib.sha256(f"{self.digest}|{key}|{index}".encode()).hexdigest()
                seed = derive_seed(self.config.seed, key, index)
                seat = _seat(self.config.seat, index, seed)
                out.append(PlannedEpisode(episode_id[:16], key, index, seed, seat))
        return out

    def start(self, clients: ClientPool) -> str:
        """Build both players on `clients`; returns the run header."""
        defaults = self.config.method_defaults()
        self.call_options = defaults["options"]
        self.players = [
            build_player(
                side,
                clients,
                defaults=defaults,
                record=self.config.record_decisions,
                list_moves=self.config.list_moves,
            )
            for side in self.sides
        ]
        fields = TournamentConfig.model_fields
        agent, opponent = (
            describe(side, clients, default=getattr(self.config, f) == fields[f].default)
            for side, f in zip(self.sides, ("model", "opponent_model"), strict=True)
        )
        return f"agent: {agent}; opponent: {opponent}; structured output {self.structured}"

    async def play(
        self, item: PlannedEpisode, on_move: Callable[[MoveRecord], None] | None = None
    ) -> EpisodeRecord:
        """Play one planned episode between the built players."""
        return await play_episode(
            self.games[item.setting], *self.players,
            seat=item.seat, start=self.starts[item.setting], seed=item.seed,
            episode_id=item.id, setting=item.setting, index=item.index, on_move=on_move,
        )  # fmt: skip

    async def work(self, item: PlannedEpisode) -> EpisodeRecord:
        return await self.play(item)

    def failed(self, item: PlannedEpisode, reason: str) -> EpisodeRecord:
        game = self.games[item.setting]
        return EpisodeRecord(
            id=item.id, setting=item.setting, index=item.index, seed=item.seed, seat=item.seat,
            agent=self.sides[0].name, opponent=self.sides[1].name, game=game.name,
            game_params=game.params, start_state=None, start_outcome=None, status="error",
            end_reason="error", winner=None, plies=0, agent_totals=SideTotals(),
            opponent_totals=SideTotals(), error=reason,
        )  # fmt: skip

    def spent(self, record: EpisodeRecord) -> tuple[int, int, float]:
        sides = (record.agent_totals, record.opponent_totals)
        return (
            sum(t.calls for t in sides),
            sum(t.prompt_tokens + t.completion_tokens for t in sides),
            sum(t.cost_usd for t in sides),
        )

    def decisions(self, record: EpisodeRecord) -> list[MoveRecord]:
        # A solver player's moves are no model's decisions.
        models = {"agent": self.sides[0].model, "opponent": self.sides[1].model}
        return [
            m
            for m in record.moves
            if models[m.actor] is not None and m.status in ("ok", "fallback", "forfeit")
        ]

    def progress(self, counts: Counter[str]) -> str:
        wins = counts["win"]
        finished = wins + counts["loss"]
        failed = sum(counts.values()) - finished
        return f"win {wins}/{finished}" + (f", failed {failed}" if failed else "")


@dataclass
class TournamentResult(RunResult):
    """What a run produced: the log path, the latest record per episode, and the summary."""

    config: TournamentConfig


def run_tournament(
    config: TournamentConfig, announce: Callable[[str], None] | None = None
) -> TournamentResult:
    """Run (or resume) a tournament; blocks until done. See `arun_tournament`."""
    return aio.run(arun_tournament(config, announce))


async def arun_tournament(
    config: TournamentConfig, announce: Callable[[str], None] | None = None
) -> TournamentResult:
    """Play every planned episode not yet logged, then summarize the whole log.

    A simulated model with no server URL gets the simulated server in-process.
    `announce` is called once with the run header (who plays, on which server) when the
    servers are known.
    """
    result = await Run(Tournament(config), announce).execute()
    return TournamentResult(**vars(result))


def _solve_start(key: str, game: Game[Any, Any], start: Any) -> None:
    """Solve a setting's start once, before any episode; refuse a terminal one.

    An oversized setting fails here with the solver's own `SizeLimitError`, and every
    later query is a lookup in the computed table, so the per-move grading runs on the
    event loop without stalling it.
    """
    state = start if not isinstance(start, str) else game.initial_state()
    if game.is_terminal(state):
        raise ValueError(f"the start {game.to_json(state)} of {key} is terminal: nothing to play")
    # An unwinnable start is said once, seat-aware, when its first episode starts (the
    # env's `resolve_start`); the run still plays it (a P-position start is a setting).
    outcome(game, state)


# The presets last at most 38 moves; a model playing 10,000 is already a costly test.
MAX_EPISODE_MOVES = 10_000


def _check_size(
    key: str,
    game: Game[Any, Any],
    start: Any,
    *,
    simulated: bool,
    solver: bool,
    fallback: str,
    listed: bool = False,
) -> None:
    """Refuse, before any episode, a setting too large to play.

    An episode runs to the game's end (no move cap) and keeps a record per move, so a
    game that can last more than `MAX_EPISODE_MOVES` is refused; so is one
    with more than `MAX_LISTED_ACTIONS` actions where something must list its moves
    (the simulated model, a solver player, the random fallback, a prompt that lists
    the legal moves). A real model may
    play a game of 10**20 actions with no more than its moves' text. A random start
    ("random_n", or "auto" for the seat the initial state does not suit) must be one
    the env's sampler can play out (`check_playout_length`).
    """
    try:
        longest = game.info.max_game_length
        if longest > MAX_EPISODE_MOVES:
            raise SizeLimitError(
                f"an episode is played to the end (no move cap), and {game!r} can last "
                f"{longest:,} moves (the limit is {MAX_EPISODE_MOVES:,})"
            )
        check_listing(game, simulated=simulated, solver=solver, fallback=fallback, listed=listed)
        if start in ("random_n", "auto"):
            check_playout_length(game)
    except ValueError as exc:  # SizeLimitError is one
        raise SizeLimitError(f"{key}: {exc}") from None
