"""Tournaments: E episodes per game setting, method against opponent, resumable.

Every finished episode is appended to a JSONL log the moment it ends (flushed and
fsynced), so a killed run loses at most the episodes in flight. Episode ids are
derived from the config hash, the setting and the index: rerunning the same command
skips the ids already logged as a win or a loss and reruns failed ones; the summary
keeps only the latest record of each id, so nothing is counted twice.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field, field_validator

from metanim.arena._budget import Spent
from metanim.arena._config import RunConfig
from metanim.arena._identity import config_identity, identity_hash
from metanim.arena._players import build_policy, sim_server_if_needed
from metanim.arena._policies import is_solver_spec
from metanim.arena._preflight import preflight_players, preflight_servers
from metanim.arena._run import (
    RunResult,
    client_pool,
    pct,
    qualified_model,
    refuse_unpriced,
    run_logged,
)
from metanim.arena._stats import wilson
from metanim.arena.episodes import EpisodeRecord, Seat, SideTotals, derive_seed, play_episode
from metanim.games import PRESETS, Game, InvalidStateError, make_game
from metanim.util import aio, fastjson

SeatPolicy = Literal["first", "second", "alternate", "random"]


class TournamentConfig(RunConfig):
    """A tournament: every field is a CLI flag of `metanim tournament` (`--field-name`)."""

    name: str = Field("tournament", description="run name, the stem of the result files")
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
    max_calls: int | None = Field(
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

    def config_hash(self) -> str:
        """Hash of the fields that define the episodes (`run_identity`; `episodes` and run-only settings are left out).

        The servers enter it normalized (`server_identity`): the same command against
        another server starts a new log, while a `sim-*` model on the in-process
        simulated server hashes the same on every run.
        """
        return identity_hash(config_identity(self.model_dump(mode="json")))

    @property
    def log_path(self) -> Path:
        return Path(self.results_dir) / f"{self.name}-{self.config_hash()}.jsonl"


def parse_setting(text: str) -> tuple[str, Game[Any, Any]]:
    """A game setting `PRESET` or `NAME[:JSON params]` to its canonical key and game."""
    from metanim.util.edge import strict_json

    name, sep, raw = text.strip().partition(":")
    # Whole numbers only: a game's sizes are never truncated from 12.5 to 12.
    params = strict_json(raw, f"game setting {text!r}") if sep else {}
    if not isinstance(params, dict):
        raise ValueError(f"game parameters must be a JSON object, got {raw!r}")
    game = make_game(name, **params)
    if name in PRESETS and not params:
        return name, game
    return f"{game.name}:{json.dumps(game.params, sort_keys=True, separators=(',', ':'))}", game


def setting_start(start: str | None, key: str, game: Game[Any, Any]) -> Any:
    """The start setting of one game setting: "random_n", "initial", "auto" or a state.

    One rule for presets and JSON settings alike (`metanim.envs.env.resolve_start`):
    by default "auto", the initial state when it is an N-position for the agent's
    first decision, else a random N-position. A JSON state is checked with the game's
    `validate_state`, so a bad one fails before any episode.
    """
    from metanim.envs.env import START_MODES, start_setting
    from metanim.util.edge import strict_json

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


def plan(config: TournamentConfig) -> list[PlannedEpisode]:
    """Every episode of the config, with its deterministic id, seed and seat."""
    out = []
    digest = config.config_hash()
    for text in config.games:
        key, _ = parse_setting(text)
        for index in range(config.episodes):
            episode_id = hashlib.sha256(f"{digest}|{key}|{index}".encode()).hexdigest()[:16]
            seed = derive_seed(config.seed, key, index)
            out.append(
                PlannedEpisode(episode_id, key, index, seed, _seat(config.seat, index, seed))
            )
    return out


def _seat(policy: SeatPolicy, index: int, seed: int) -> Seat:
    if policy in ("first", "second"):
        return policy  # type: ignore[return-value]
    if policy == "alternate":
        return "first" if index % 2 == 0 else "second"
    return "first" if np.random.default_rng(derive_seed(seed, "seat")).random() < 0.5 else "second"


def _add_usage(spent: Spent, record: dict[str, Any]) -> None:
    for side in ("agent_totals", "opponent_totals"):
        t = record[side]
        spent.add(t["calls"], t["prompt_tokens"] + t["completion_tokens"], t["cost_usd"])


@dataclass
class TournamentResult(RunResult):
    """What a run produced: the log path, the latest record per episode, and the summary."""

    config: TournamentConfig


def run_tournament(config: TournamentConfig) -> TournamentResult:
    """Run (or resume) a tournament; blocks until done. See `arun_tournament`."""
    return aio.run(arun_tournament(config))


async def arun_tournament(config: TournamentConfig) -> TournamentResult:
    """Play every planned episode not yet logged, then summarize the whole log.

    A simulated model with no server URL gets the simulated server in-process.
    """
    sides = ((config.method, config.model), (config.opponent, config.opponent_model))
    refuse_unpriced(config.max_cost_usd, [m for s, m in sides if not is_solver_spec(s)])
    players = [
        (config.method, config.model, config.base_url, config.params),
        (config.opponent, config.opponent_model, config.opponent_base_url, config.opponent_params),
    ]
    needed = preflight_players(players)  # a bad name or parameter stops here, offline
    # A bad start or an oversized setting stops here, before any server or plan.
    games = {key: game for key, game in (parse_setting(t) for t in config.games)}
    starts = {key: setting_start(config.start, key, game) for key, game in games.items()}
    solver_player = is_solver_spec(config.method) or is_solver_spec(config.opponent)
    for key, game in games.items():
        _check_size(
            key, game, starts[key], simulated=needed, solver=solver_player,
            fallback=config.on_failure,
        )  # fmt: skip
        _solve_start(key, game, starts[key])
    with sim_server_if_needed(needed, seed=config.seed, log_path=config.log_path) as sim_url:
        preflight_servers(players, sim_url)  # a dead server or a refused key stops here
        return await _run(config, sim_url, games, starts)


async def _run(
    config: TournamentConfig,
    sim_url: str | None,
    games: dict[str, Game[Any, Any]],
    starts: dict[str, Any],
) -> TournamentResult:
    planned = plan(config)
    clients = client_pool(config, sim_url)
    agent = build_policy(
        config.method, qualified_model(config.model, config.base_url), config.params, clients,
        record=config.record_decisions, defaults=config.method_defaults(),
    )  # fmt: skip
    opponent = build_policy(
        config.opponent, qualified_model(config.opponent_model, config.opponent_base_url),
        config.opponent_params, clients, record=config.record_decisions,
        defaults=config.method_defaults(),
    )  # fmt: skip

    async def one(item: PlannedEpisode) -> dict[str, Any]:
        record = await play_episode(
            games[item.setting], agent, opponent,
            seat=item.seat, start=starts[item.setting], seed=item.seed,
            episode_id=item.id, setting=item.setting, index=item.index,
        )  # fmt: skip
        return episode_line(record)

    def failed(item: PlannedEpisode, reason: str) -> dict[str, Any]:
        game = games[item.setting]
        return EpisodeRecord(
            id=item.id, setting=item.setting, index=item.index, seed=item.seed, seat=item.seat,
            agent=agent.name, opponent=opponent.name, game=game.name, game_params=game.params,
            start_state=None, start_outcome=None, status="error", end_reason="error",
            winner=None, plies=0, agent_totals=SideTotals(), opponent_totals=SideTotals(),
            error=reason,
        ).model_dump(mode="json")  # fmt: skip

    return await run_logged(
        config,
        planned,
        clients,
        one,
        finished=("win", "loss"),
        charge=_add_usage,
        summarize=summarize,
        render_report=render_report,
        unit="ep",
        result=TournamentResult,
        failed=failed,
        postfix=_postfix,
        tally=TournamentTally,
    )


def episode_line(record: EpisodeRecord) -> dict[str, Any]:
    """One log line: the episode's JSON form, each kept decision as its finished JSON text.

    A kept decision (a `Decision` model) goes to JSON bytes in one pydantic-core call and
    into the line as an `orjson.Fragment`, written as it is: as a tree of dicts it would
    be ~100 small objects per decision, built, kept while the line waits, and walked again.
    """
    line = record.model_dump(mode="json", exclude={"moves": {"__all__": {"decision"}}})
    for out, move in zip(line["moves"], record.moves, strict=True):
        # `decision` is the last field: appending it keeps the key order.
        out["decision"] = fastjson.fragment(move.decision)
    return line


def _solve_start(key: str, game: Game[Any, Any], start: Any) -> None:
    """Solve a setting's start once, before any episode.

    An oversized setting fails here with the solver's own `SizeLimitError`, and every
    later query is a lookup in the computed table (microseconds: `outcome` plus
    `winning_moves` measured at 4-80 us per move on the presets), so the per-move
    grading runs on the event loop without stalling it.
    """
    from metanim.solver import outcome

    state = start if not isinstance(start, str) else game.initial_state()
    if game.is_terminal(state):
        raise ValueError(f"the start {game.to_json(state)} of {key} is already over")
    found = outcome(game, state)
    if found == "P" and (start == "initial" or not isinstance(start, str)):
        warnings.warn(
            f"the start {game.to_json(state)} of {key} is a P-position: whoever moves first "
            "loses against best play (the default start 'auto' avoids this)",
            UserWarning,
            stacklevel=2,
        )


# The presets last at most 38 moves; a model playing 10,000 is already a costly test.
MAX_EPISODE_MOVES = 10_000


def _check_size(
    key: str, game: Game[Any, Any], start: Any, *, simulated: bool, solver: bool, fallback: str
) -> None:
    """Refuse, before any episode, a setting too large to play.

    An episode runs to the game's end (no move cap) and keeps a record per move, so a
    game that can last more than `MAX_EPISODE_MOVES` is refused; so is one
    with more than `MAX_LISTED_ACTIONS` actions where something must list its moves
    (the simulated model, a solver player, the random fallback). A real model may
    play a game of 10**20 actions with no more than its moves' text. A random start
    ("random_n", or "auto" for the seat the initial state does not suit) must be one
    the env's sampler can play out (`check_playout_length`).
    """
    from metanim.arena._preflight import check_listing
    from metanim.envs.env import check_playout_length
    from metanim.games import SizeLimitError

    try:
        longest = game.info.max_game_length
        if longest > MAX_EPISODE_MOVES:
            raise SizeLimitError(
                f"an episode is played to the end (no move cap), and {game!r} can last "
                f"{longest:,} moves (the limit is {MAX_EPISODE_MOVES:,})"
            )
        check_listing(game, simulated=simulated, solver=solver, fallback=fallback)
        if start in ("random_n", "auto"):
            check_playout_length(game)
    except ValueError as exc:  # SizeLimitError is one
        raise SizeLimitError(f"{key}: {exc}") from None


def _postfix(counts: Counter[str]) -> str:
    wins = counts["win"]
    finished = wins + counts["loss"]
    failed = sum(counts.values()) - finished
    return f"win {wins}/{finished}" + (f", failed {failed}" if failed else "")


# ----------------------------------------------------------------------- summary
def summarize(
    records: Iterable[dict[str, Any]],
    *,
    planned: list[PlannedEpisode] | None = None,
    stopped: str | None = None,
) -> dict[str, Any]:
    """Per setting and per seat (plus "all" seats): win rate with a 95% Wilson CI, counts.

    Failed and unplayed episodes stay visible: `infrastructure_errors`, `errors` and
    `not_run` are counted next to the win rate, whose denominator is wins + losses.
    """
    tally = TournamentTally()
    for r in records:
        tally.add(r)
    return tally.finish(planned=planned, stopped=stopped)


class TournamentTally:
    """`summarize` built one record at a time: sums per group, no record kept."""

    def __init__(self) -> None:
        self.groups: dict[tuple[str, str], _GroupTally] = {}
        self.logged = 0

    def add(self, r: dict[str, Any]) -> None:
        self.logged += 1
        for seat in (r["seat"], "all"):
            key = (r["setting"], seat)
            group = self.groups.get(key)
            if group is None:
                group = self.groups[key] = _GroupTally()
            group.add(r)

    def finish(
        self, *, planned: Sequence[PlannedEpisode] | None = None, stopped: str | None = None
    ) -> dict[str, Any]:
        planned_counts: dict[tuple[str, str], int] = {}
        for p in planned or []:
            for seat in (p.seat, "all"):
                planned_counts[(p.setting, seat)] = planned_counts.get((p.setting, seat), 0) + 1
                self.groups.setdefault((p.setting, seat), _GroupTally())
        rows = []
        for (setting, seat), group in sorted(
            self.groups.items(), key=lambda kv: (kv[0][0], kv[0][1] != "all", kv[0][1])
        ):
            row = group.summary()
            planned_n = planned_counts.get((setting, seat), group.episodes)
            row.update(
                setting=setting, seat=seat, planned=planned_n, not_run=planned_n - group.episodes
            )
            rows.append(row)
        return {"groups": rows, "stopped": stopped, "episodes_logged": self.logged}


_SIDE_SUMS = (
    "moves", "optimal_moves", "illegal", "unparsable", "truncated", "forfeits", "fallbacks",
    "calls", "prompt_tokens", "completion_tokens", "cost_usd",
)  # fmt: skip


class _GroupTally:
    """One group's running sums; `summary()` is what `_group_summary` reports."""

    def __init__(self) -> None:
        self.episodes = 0
        self.finished = 0
        self.wins = 0
        self.losses_by_forfeit = 0
        self.wins_by_forfeit = 0
        self.infrastructure_errors = 0
        self.errors = 0
        self.start_outcomes = {"N": 0, "P": 0}
        self.end_reasons: dict[str, int] = {}
        self.wall_s: Any = 0
        self.sides = {
            side: {**dict.fromkeys(_SIDE_SUMS, 0), "latency_s": 0, "decisions": 0}
            for side in ("agent", "opponent")
        }

    def add(self, r: dict[str, Any]) -> None:
        status = r["status"]
        self.episodes += 1
        if status in ("win", "loss"):
            self.finished += 1
            if status == "win":
                self.wins += 1
                self.wins_by_forfeit += r["end_reason"] == "opponent_forfeit"
            else:
                # A loss by forfeit (every answer stayed invalid: a format failure) is not
                # a loss by play; both are losses under on_failure=forfeit, shown apart.
                self.losses_by_forfeit += r["end_reason"] == "agent_forfeit"
        self.infrastructure_errors += status == "infrastructure_error"
        self.errors += status == "error"
        if r["start_outcome"] in self.start_outcomes:
            self.start_outcomes[r["start_outcome"]] += 1
        self.end_reasons[r["end_reason"]] = self.end_reasons.get(r["end_reason"], 0) + 1
        self.wall_s += r["wall_s"]
        for side, sums in self.sides.items():
            t = r[f"{side}_totals"]
            for name in _SIDE_SUMS:
                sums[name] += t.get(name, 0) if name == "truncated" else t[name]
            sums["latency_s"] += t["latency_s"]
            sums["decisions"] += sum(1 for m in r["moves"] if m["actor"] == side)

    def summary(self) -> dict[str, Any]:
        low, high = wilson(self.wins, self.finished)
        out: dict[str, Any] = {
            "episodes": self.episodes,
            "finished": self.finished,
            "wins": self.wins,
            "losses": self.finished - self.wins,
            "losses_by_forfeit": self.losses_by_forfeit,
            "wins_by_forfeit": self.wins_by_forfeit,
            "win_rate": self.wins / self.finished if self.finished else math.nan,
            "win_ci95": [low, high],
            "infrastructure_errors": self.infrastructure_errors,
            "errors": self.errors,
            "start_outcomes": dict(self.start_outcomes),
            "end_reasons": dict(self.end_reasons),
        }
        for side, t in self.sides.items():
            moves, decisions = t["moves"], t["decisions"]
            out[side] = {
                "moves": moves,
                "optimal_moves": t["optimal_moves"],
                "optimal_rate": t["optimal_moves"] / moves if moves else math.nan,
                "illegal": t["illegal"],
                "unparsable": t["unparsable"],
                "truncated": t["truncated"],
                "forfeits": t["forfeits"],
                "fallbacks": t["fallbacks"],
                "calls": t["calls"],
                "prompt_tokens": t["prompt_tokens"],
                "completion_tokens": t["completion_tokens"],
                "cost_usd": t["cost_usd"],
                "mean_decision_latency_s": t["latency_s"] / decisions if decisions else math.nan,
            }
        out["mean_episode_wall_s"] = self.wall_s / self.episodes if self.episodes else math.nan
        return out


def _group_summary(group: list[dict[str, Any]]) -> dict[str, Any]:
    tally = _GroupTally()
    for r in group:
        tally.add(r)
    return tally.summary()


def _count(values: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def _title(kind: str, name: str) -> str:
    """`# Tournament` for the default name, else `# Tournament: name` (no "Tournament tournament")."""
    return f"# {kind}" if name in ("", kind.lower()) else f"# {kind}: {name}"


def _player_label(method: str, model: str) -> str:
    """`method` on `model`, or the solver policy alone (it calls no model)."""
    return f"`{method}`" if is_solver_spec(method) else f"`{method}` on `{model}`"


def render_report(summary: dict[str, Any]) -> str:
    """A Markdown report of a tournament summary."""
    cfg = summary.get("config", {})
    lines = [_title("Tournament", cfg.get("name", "")), ""]
    if cfg:
        lines += [
            f"- agent: {_player_label(cfg['method'], cfg['model'])}; "
            f"opponent: {_player_label(cfg['opponent'], cfg['opponent_model'])}",
            f"- {cfg['episodes']} episode{'s' if cfg['episodes'] != 1 else ''} per setting, "
            f"seat policy `{cfg['seat']}`, start "
            f"`{cfg['start'] or 'auto'}`, seed {cfg['seed']}; log `{summary.get('log', '')}`",
            f"- invalid replies: up to {cfg.get('max_reasks', 2)} re-asks, then "
            f"on_failure=`{cfg.get('on_failure', 'forfeit')}`; structured output "
            f"`{cfg.get('structured_output', 'off')}`; completion cap "
            f"{cfg.get('max_completion_tokens', 'none')} tokens",
        ]
    if summary.get("stopped"):
        lines.append(f"- **stopped early:** {summary['stopped']}")
    lines += [
        "",
        "Win rate over finished episodes (wins + losses) with a 95% Wilson CI. Infrastructure "
        "errors and unplayed episodes are never a loss; they are counted apart. Start: how many "
        "episodes began at an N- or P-position for the first mover. Optimal: moves graded by the "
        "solver. Losses by play and by forfeit (no valid answer after every re-ask: a format "
        "failure) are shown apart, and so are wins by the opponent's forfeit; the win rate "
        "counts them under the run's on_failure policy, named above.",
        "",
        "| setting | seat | finished/planned | win rate [95% CI] | losses play/forfeit "
        "| wins by opp. forfeit | start N/P | infra err | errors | not run "
        "| agent illegal/unparsable/truncated/forfeit/fallback | agent optimal | opp. optimal "
        "| opp. forfeits | calls | tokens | cost $ | s/decision |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for g in summary["groups"]:
        a, o = g["agent"], g["opponent"]
        low, high = g["win_ci95"]
        lines.append(
            f"| {g['setting']} | {g['seat']} | {g['finished']}/{g['planned']} "
            f"| {pct(g['win_rate'])} [{pct(low)}, {pct(high)}] "
            f"| {g['losses'] - g['losses_by_forfeit']}/{g['losses_by_forfeit']} "
            f"| {g['wins_by_forfeit']} "
            f"| {g['start_outcomes']['N']}/{g['start_outcomes']['P']} "
            f"| {g['infrastructure_errors']} | {g['errors']} | {g['not_run']} "
            f"| {a['illegal']}/{a['unparsable']}/{a['truncated']}/{a['forfeits']}/{a['fallbacks']} "
            f"| {pct(a['optimal_rate'])} | {pct(o['optimal_rate'])} | {o['forfeits']} "
            f"| {a['calls'] + o['calls']} "
            f"| {a['prompt_tokens'] + a['completion_tokens'] + o['prompt_tokens'] + o['completion_tokens']} "
            f"| {a['cost_usd'] + o['cost_usd']:.4f} | {a['mean_decision_latency_s']:.3f} |"
        )
    return "\n".join(lines) + "\n"
