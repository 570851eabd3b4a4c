"""Bradley–Terry ratings anchored to perfect play (`metanim ratings`, the report's Ratings).

A rated player is one side of a run identity (method × model × parameters, with the
run's call options and prompt versions; docs/ratings.md). Every finished episode between
two players is one comparison: the first mover wins with probability

    logistic(θ_first − θ_second + h[setting, start]),

θ a player's strength and h the first seat's advantage in that game setting, apart for
starts that are N- and P-positions for the first mover (a covariate: a tournament gives
its agent the N-position whichever seat it takes, so the winning side goes with the seat
in one run and against it in the next, and matters as much as the player). The fit is
the posterior mode under a weak Gaussian prior, θ ~ N(0, σ²) and h ~ N(0, σ²) with
σ = `PRIOR_SIGMA` on the log-odds scale: the optimal player never loses from an
N-position, and against players that never beat it a plain maximum-likelihood fit sends
its θ to infinity. scipy's Newton-CG finds the mode (the objective is strictly convex
with the prior; gradient and Hessian are exact), for the point estimate and, `BATCH` at
a time in one call, for the bootstrap's replicates.

The log-odds are mapped linearly so that the optimal player rates 2000 and the uniformly
random player 1000: R = 1000 + 1000 (θ − θ_random) / (θ_optimal − θ_random). A
difference of 400 points is therefore not Elo's 10:1 odds; the odds a difference stands
for depend on the fitted gap between the anchors, which each table reports. ε-optimal
players (`epsilon:<p>`) are calibration points of known strength between the anchors.

Intervals: 95% percentile bootstrap over episodes, resampled with replacement within
each (run, setting), so every pairing keeps its number of episodes; each replicate is
refitted and mapped with its own anchors (the anchors' own interval is a point).

What counts: wins and losses, a forfeit as a loss (the status a run logs); episodes that
failed on infrastructure or a bug, episodes never run, and episodes ended by a move cap
(any end other than game over or a forfeit) are left out and counted. Tables: one per
game setting, and one pooled over every setting for the players who played them all
(one seat advantage per setting, one θ per player); the others appear only per setting.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from metanim.analysis.plots import rating_plot
from metanim.analysis.results import Results, read_results
from metanim.envs import is_solver_player
from metanim.records import (
    SIDES,
    WIDTH,
    distinguishing_labels,
    identity_hash,
    md,
    pct,
    solver_name,
    text_table,
)
from metanim.stats import PRIOR_SIGMA, fit_bradley_terry, item_accuracy

#: Bootstrap replicates behind each interval.
BOOTSTRAP = 1000
#: Bootstrap replicates fitted in one call.
BATCH = 100
LEVEL = 0.95
HIGH, LOW = 2000.0, 1000.0
#: The priors a table is refitted under where a player won (or lost) every game: there
#: the ratings rest on the prior, and these show how far.
SENSITIVITY_SIGMAS = (1.0, 4.0, 16.0)
OPTIMAL, RANDOM = "optimal", "random"
#: End reasons of a result; any other end (a move cap, a new kind of stop) is no result.
RESULT_ENDS = ("game_over", "agent_forfeit", "opponent_forfeit")
#: Identity fields that say what a run plays against or on, not who a player is.
MATCH_FIELDS = frozenset({"games", "seat", "start", "seed", "dataset"})
#: Identity fields of one side (its method, model, parameters and server).
SIDE_FIELDS = frozenset(
    f"{prefix}{name}" for _, prefix in SIDES for name in ("model", "params", "base_url")
) | {key for key, _ in SIDES}

Kind = Literal["anchor", "calibration", "player"]
#: A player's verdicts on critical states: per item, its verdicts and their repeats.
Verdicts = tuple[dict[str, list[bool]], dict[str, list[int]]]


class PlayerRating(BaseModel):
    """One player's row of a rating table."""

    player: str = Field(description="the player's label (method[params] · model)")
    key: str = Field(description="hash of the player's identity")
    kind: Kind = Field(description="anchor (optimal, random), calibration (epsilon), player")
    rating: float = Field(description="anchored rating (NaN without both anchors)")
    low: float
    high: float
    logit: float = Field(description="θ − θ_random in log-odds (θ − mean θ without random)")
    episodes: int
    wins: int
    accuracy: float = Field(math.nan, description="decision accuracy on critical states")
    accuracy_low: float = math.nan
    accuracy_high: float = math.nan
    accuracy_items: int = 0
    #: Where the table has perfect separation: the rating refitted under each prior σ of
    #: `SENSITIVITY_SIGMAS` (its interval is widened to hold them).
    by_sigma: dict[str, float] = Field(default_factory=dict)


class SeatAdvantage(BaseModel):
    """The first seat's advantage h in one setting and start outcome (log-odds)."""

    setting: str
    start: str = Field(description="the start's outcome for the first mover: N or P")
    logit: float
    low: float
    high: float


class RatingTable(BaseModel):
    """Ratings of the players of one game setting, or pooled over settings."""

    scope: str = Field(description="a game setting, or 'pooled'")
    settings: list[str]
    players: list[PlayerRating] = Field(default_factory=list)
    seat_advantage: list[SeatAdvantage] = Field(default_factory=list)
    episodes: int = 0
    excluded: dict[str, int] = Field(default_factory=dict)
    anchor_gap: float = Field(math.nan, description="θ_optimal − θ_random in log-odds")
    note: str = ""

    @property
    def anchored(self) -> bool:
        return not math.isnan(self.anchor_gap)


class Ratings(BaseModel):
    """Every rating table of some results folders, and how they were fitted."""

    tables: list[RatingTable] = Field(default_factory=list)
    players: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="label -> identity"
    )
    prior_sigma: float = PRIOR_SIGMA
    bootstrap: int = BOOTSTRAP
    seed: int = 0


# -------------------------------------------------------------------------- players
def player_identity(identity: Mapping[str, Any], method_key: str, prefix: str) -> dict[str, Any]:
    """One side of a run identity as a player: its method, model, parameters and server,
    with the run's call options and prompt versions (a solver player is its name alone)."""
    method = str(identity[method_key]).strip()
    if is_solver_player(method):
        return {"method": solver_name(method)}
    player = {
        "method": method,
        "model": identity.get(prefix + "model"),
        "params": identity.get(prefix + "params") or {},
        "base_url": identity.get(prefix + "base_url"),
    }
    shared = {k: v for k, v in identity.items() if k not in SIDE_FIELDS and k not in MATCH_FIELDS}
    return {**player, **shared}


def _kind(identity: Mapping[str, Any]) -> Kind:
    method = str(identity.get("method", ""))
    if method in (OPTIMAL, RANDOM):
        return "anchor"
    return "calibration" if method.startswith("epsilon:") else "player"


# ------------------------------------------------------------------------ episodes
@dataclass(frozen=True)
class _Episode:
    stratum: tuple[str, str]  # (run identity hash, setting): the bootstrap's resampling unit
    setting: str
    start: str  # the start's outcome for the first mover (N or P)
    first: str  # player keys
    second: str
    first_won: bool


@dataclass
class _Collected:
    episodes: list[_Episode]
    excluded: dict[str, Counter[str]]  # setting -> reason -> count
    identities: dict[str, dict[str, Any]]  # player key -> identity
    games_of_setting: dict[str, str]  # setting -> game key (for the accuracy column)
    accuracy: dict[tuple[str, str | None], Verdicts]  # (player, game or None: all) -> verdicts


def _sides(results: Results) -> dict[str, tuple[dict[str, Any], ...]]:
    """Each run's players: (agent, opponent) of a tournament, (player,) of an evaluation;
    () for a tournament log without its config (its lines name the players)."""
    out: dict[str, tuple[dict[str, Any], ...]] = {}
    for run, identity in results.identities.items():
        if "opponent" in identity:
            out[run] = tuple(player_identity(identity, m, prefix) for m, prefix in SIDES)
        elif "method" in identity and "games" not in identity:
            out[run] = (player_identity(identity, "method", ""),)
        else:
            out[run] = ()
    return out


def _without_versions(identity: Mapping[str, Any]) -> str:
    return identity_hash({k: v for k, v in identity.items() if k != "prompt_versions"})


def _prompt_resolver(sides: Iterable[dict[str, Any]]) -> Any:
    """A run that kept no decision record does not know its prompt versions: it joins the
    player of the same method, model and settings when the folders hold exactly one
    prompt version of that player, and stays apart when they hold several."""
    known: dict[str, set[str]] = defaultdict(set)
    for side in sides:
        if "prompt_versions" in side:
            known[_without_versions(side)].add(json.dumps(side["prompt_versions"], sort_keys=True))

    def resolve(side: dict[str, Any]) -> dict[str, Any]:
        versions = known.get(_without_versions(side), set())
        if "prompt_versions" in side or len(versions) != 1:
            return side
        return {**side, "prompt_versions": json.loads(next(iter(versions)))}

    return resolve


def _collect(results: Results) -> _Collected:
    episodes: list[_Episode] = []
    excluded: dict[str, Counter[str]] = defaultdict(Counter)
    identities: dict[str, dict[str, Any]] = {}
    games: dict[str, str] = {}
    sides = _sides(results)
    resolve = _prompt_resolver(side for run in sides.values() for side in run)

    def key_of(identity: dict[str, Any]) -> str:
        identity = resolve(identity)
        h = identity_hash(identity)
        identities.setdefault(h, identity)
        return h

    for (run, setting), group in sorted(results.episodes.items()):
        players = [key_of(side) for side in sides[run]]
        games.setdefault(setting, group.game)
        for (agent_name, opponent_name, seat, start, status, end), count in group.rated.items():
            if len(players) == 2:
                agent, opponent = players
            else:  # a log without its config: the names its lines carry
                agent = key_of({"method": agent_name})
                opponent = key_of({"method": opponent_name})
            if status not in ("win", "loss"):
                excluded[setting]["failed"] += count
                continue
            if end not in RESULT_ENDS:
                excluded[setting]["capped"] += count
                continue
            agent_first = seat == "first"
            first, second = (agent, opponent) if agent_first else (opponent, agent)
            first_won = (status == "win") == agent_first
            episode = _Episode((run, setting), setting, start, first, second, first_won)
            episodes.extend([episode] * count)
    accuracy = _accuracy(results, sides, resolve, identities)
    return _Collected(episodes, excluded, identities, games, accuracy)


def _accuracy(
    results: Results,
    sides: dict[str, tuple[dict[str, Any], ...]],
    resolve: Any,
    identities: dict[str, dict[str, Any]],
) -> dict[tuple[str, str | None], Verdicts]:
    """Verdicts per (player key, game key) and per (player key, None: every game)."""
    out: dict[tuple[str, str | None], Verdicts] = {}
    for (run, game, dataset), group in results.decisions.items():
        if len(sides[run]) != 1:
            continue
        player = identity_hash(resolve(sides[run][0]))
        if player not in identities:
            continue  # evaluated but never played: it has no rating to stand beside
        for scope in (game, None):
            verdicts, repeats = out.setdefault((player, scope), ({}, {}))
            for item_id, said in group.all.verdicts.items():
                item = f"{dataset}:{game}:{item_id}"
                verdicts.setdefault(item, []).extend(said)
                repeats.setdefault(item, []).extend(group.all.repeats[item_id])
    return out


# -------------------------------------------------------------------------- tables
def rate_results(
    results: Results,
    *,
    prior_sigma: float = PRIOR_SIGMA,
    bootstrap: int = BOOTSTRAP,
    seed: int = 0,
) -> Ratings:
    """Rating tables (pooled first, then each setting) of the episodes in `results`."""
    if not (math.isfinite(prior_sigma) and prior_sigma > 0):
        raise ValueError(f"the prior's sigma must be a finite number above 0, got {prior_sigma}")
    if bootstrap < 1:
        raise ValueError(f"bootstrap needs at least one replicate, got {bootstrap}")
    data = _collect(results)
    labels = distinguishing_labels(data.identities)
    accuracy = data.accuracy
    ratings = Ratings(prior_sigma=prior_sigma, bootstrap=bootstrap, seed=seed)
    ratings.players = {labels[k]: data.identities[k] for k in sorted(labels, key=labels.get)}
    settings = sorted({e.setting for e in data.episodes} | set(data.excluded))
    per_setting = {s: [e for e in data.episodes if e.setting == s] for s in settings}
    tables = []
    if len(settings) > 1:
        everywhere = set.intersection(
            *({p for e in per_setting[s] for p in (e.first, e.second)} for s in settings)
        )
        pooled = [e for e in data.episodes if e.first in everywhere and e.second in everywhere]
        if len(everywhere) > 1 and pooled:
            excluded = sum((data.excluded[s] for s in settings), Counter())
            tables.append(("pooled", settings, pooled, excluded, None))
    tables += [
        (s, [s], per_setting[s], data.excluded[s], data.games_of_setting.get(s)) for s in settings
    ]
    rng = np.random.default_rng(seed)
    fitted = []
    for scope, scope_settings, episodes, excluded, game in tables:
        # The comparison graph first: groups of players that never met share no scale,
        # so each is fitted and shown apart (the anchors' group first).
        groups = _groups(episodes, data.identities)
        for number, group in enumerate(groups, start=1):
            name = scope if len(groups) == 1 else f"{scope} · group {number} of {len(groups)}"
            table = _table(
                name, scope_settings, group, dict(excluded) if number == 1 else {}, labels,
                data.identities, prior_sigma=prior_sigma, bootstrap=bootstrap, rng=rng,
            )  # fmt: skip
            if len(groups) > 1:
                apart = (
                    f"{len(groups)} groups of players never met (directly or through others): "
                    "each is fitted and shown apart, never on one scale; the log-odds are "
                    "within this group only"
                )
                table.note = f"{apart}; {table.note}" if table.note else apart
            shared = _shared_seeds(group, results.identities, labels)
            if shared:
                table.note = f"{table.note}; {shared}" if table.note else shared
            fitted.append((table, game))
    for table, game in fitted:
        for row in table.players:
            verdicts, repeats = accuracy.get((row.key, game), ({}, {}))
            if verdicts:
                acc = item_accuracy(verdicts, repeats)
                row.accuracy, row.accuracy_low, row.accuracy_high = acc.mean, acc.low, acc.high
                row.accuracy_items = acc.items
        ratings.tables.append(table)
    return ratings


def rate(
    folders: Iterable[str | Path],
    *,
    prior_sigma: float = PRIOR_SIGMA,
    bootstrap: int = BOOTSTRAP,
    seed: int = 0,
) -> Ratings:
    """Read the logs under `folders` and rate their players (`rate_results`)."""
    return rate_results(
        read_results(folders), prior_sigma=prior_sigma, bootstrap=bootstrap, seed=seed
    )


def _components(players: Sequence[str], episodes: Sequence[_Episode]) -> dict[str, str]:
    """Each player's connected component (a representative), by who played whom."""
    parent = {p: p for p in players}

    def find(p: str) -> str:
        while parent[p] != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    for e in episodes:
        parent[find(e.first)] = find(e.second)
    return {p: find(p) for p in players}


def _groups(
    episodes: Sequence[_Episode], identities: Mapping[str, dict[str, Any]]
) -> list[list[_Episode]]:
    """The episodes of each connected group of players, the anchors' group first, then
    the larger ones."""
    if not episodes:
        return [list(episodes)]
    players = sorted({p for e in episodes for p in (e.first, e.second)})
    component = _components(players, episodes)
    by: dict[str, list[_Episode]] = defaultdict(list)
    for e in episodes:
        by[component[e.first]].append(e)
    anchors = {component[p] for p in players if identities[p].get("method") in (OPTIMAL, RANDOM)}
    return sorted(by.values(), key=lambda g: (component[g[0].first] not in anchors, -len(g)))


def _shared_seeds(
    episodes: Sequence[_Episode],
    runs: Mapping[str, dict[str, Any]],
    labels: Mapping[str, str],
) -> str:
    """The runs that share a seed and a player, said: their draws are not independent.

    A run's decisions take their random numbers from its seed, the episode and the ply,
    so two runs of one seed replay the same draws wherever a player reaches the same
    position in the same episode and ply (common random numbers): the player's results
    in them are correlated, and intervals that resample each run apart are too narrow.
    """
    players_of: dict[str, set[str]] = defaultdict(set)
    for e in episodes:
        players_of[e.stratum[0]] |= {e.first, e.second}
    by_seed: dict[Any, list[str]] = defaultdict(list)
    for run in players_of:
        by_seed[(runs.get(run) or {}).get("seed")].append(run)
    shared = []
    for seed, same in sorted(by_seed.items(), key=lambda kv: str(kv[0])):
        if seed is None or len(same) < 2:
            continue
        counts = Counter(p for run in same for p in players_of[run])
        repeated = sorted(labels[p] for p, n in counts.items() if n > 1)
        if repeated:
            shared.append(f"{len(same)} runs of seed {seed} (with {', '.join(repeated)})")
    if not shared:
        return ""
    return (
        "runs share a seed: " + "; ".join(shared) + ": a decision's random numbers come "
        "from the run's seed, the episode and the ply, so these runs replay the same draws "
        "wherever a player reaches the same position, its results in them are correlated, "
        "and the intervals (resampled run by run) are too narrow; give each run its own "
        "--seed"
    )


def _separated(episodes: Sequence[_Episode], labels: Mapping[str, str]) -> list[str]:
    """Players that won every game or lost every game against others (perfect
    separation: the likelihood alone would send their strength to ±infinity)."""
    record: dict[str, list[bool]] = defaultdict(list)
    for e in episodes:
        if e.first != e.second:
            record[e.first].append(e.first_won)
            record[e.second].append(not e.first_won)
    return [
        f"{labels[p]} {'won' if all(r) else 'lost'} all {len(r)}"
        for p, r in sorted(record.items(), key=lambda kv: labels[kv[0]])
        if all(r) or not any(r)
    ]


def _one_sided_pairings(episodes: Sequence[_Episode]) -> int:
    """Pairings in which the same player started on the winning side (an N-position at
    its first decision) in every episode."""
    winners: dict[frozenset[str], set[str]] = defaultdict(set)
    for e in episodes:
        if e.first != e.second and e.start in ("N", "P"):
            winners[frozenset((e.first, e.second))].add(e.first if e.start == "N" else e.second)
    return sum(len(sides) == 1 for sides in winners.values())


def _table(
    scope: str,
    settings: list[str],
    episodes: list[_Episode],
    excluded: dict[str, int],
    labels: dict[str, str],
    identities: dict[str, dict[str, Any]],
    *,
    prior_sigma: float,
    bootstrap: int,
    rng: np.random.Generator,
) -> RatingTable:
    table = RatingTable(scope=scope, settings=settings, episodes=len(episodes), excluded=excluded)
    if not episodes:
        table.note = "no finished episode to rate"
        return table
    players = sorted({p for e in episodes for p in (e.first, e.second)}, key=labels.get)
    index = {p: k for k, p in enumerate(players)}
    # One seat advantage per (setting, start outcome) that occurs.
    advantages = sorted({(e.setting, e.start) for e in episodes})
    setting_index = {a: k for k, a in enumerate(advantages)}
    # Cells: one per (first, second, setting); the bootstrap draws counts per (stratum, cell, result).
    cell_of: dict[tuple[int, int, int], int] = {}
    draws: dict[tuple[tuple[str, str], int, bool], int] = Counter()
    for e in episodes:
        cell = cell_of.setdefault(
            (index[e.first], index[e.second], setting_index[(e.setting, e.start)]), len(cell_of)
        )
        draws[(e.stratum, cell, e.first_won)] += 1
    cells = np.array(list(cell_of), dtype=np.int64).reshape(-1, 3)
    first, second, setting = cells[:, 0], cells[:, 1], cells[:, 2]
    keys = list(draws)
    counts = np.array([draws[k] for k in keys], dtype=np.float64)
    draw_cell = np.array([k[1] for k in keys], dtype=np.int64)
    draw_win = np.array([k[2] for k in keys], dtype=np.float64)
    strata: dict[tuple[str, str], list[int]] = defaultdict(list)
    for j, k in enumerate(keys):
        strata[k[0]].append(j)

    def fit(
        c: np.ndarray, start: np.ndarray | None = None, sigma: float = prior_sigma
    ) -> np.ndarray:
        # Counts per (stratum, cell, result), one row per data set, summed into cells.
        to_cells = np.zeros((len(counts), len(cells)))
        to_cells[np.arange(len(counts)), draw_cell] = 1.0
        wins, games = (c * draw_win) @ to_cells, c @ to_cells
        return fit_bradley_terry(
            first, second, setting, wins, games, players=len(players), settings=len(advantages),
            prior_sigma=sigma, start=start,
        )  # fmt: skip

    x = fit(counts)
    resampled = np.zeros((bootstrap, len(counts)))
    for members in strata.values():
        n = counts[members]
        resampled[:, members] = rng.multinomial(int(n.sum()), n / n.sum(), size=bootstrap)
    # In batches: the fit's line search sums a batch's objective, so a smaller batch keeps
    # the precision of each replicate's mode.
    replicates = np.concatenate(
        [fit(resampled[k : k + BATCH], start=x) for k in range(0, bootstrap, BATCH)]
    )
    theta, boot_theta = x[: len(players)], replicates[:, : len(players)]
    tail = 100 * (1 - LEVEL) / 2
    for (s, start), k in setting_index.items():
        h = replicates[:, len(players) + k]
        low, high = np.percentile(h, [tail, 100 - tail])
        table.seat_advantage.append(
            SeatAdvantage(
                setting=s, start=start, logit=float(x[len(players) + k]), low=low, high=high
            )
        )
    by_method = {str(identities[p].get("method")): p for p in players}
    component = _components(players, episodes)
    anchors = [by_method.get(OPTIMAL), by_method.get(RANDOM)]
    rated: set[str] = set()
    mapped = np.full_like(boot_theta, math.nan)
    if None in anchors:
        missing = " and ".join(
            a for a, p in zip((OPTIMAL, RANDOM), anchors, strict=True) if p is None
        )
        table.note = f"no rating scale: the {missing} player played no finished episode here"
    elif component[anchors[0]] != component[anchors[1]]:
        table.note = "no rating scale: the optimal and the random player are not linked by games"
    else:
        top, bottom = index[anchors[0]], index[anchors[1]]
        table.anchor_gap = float(theta[top] - theta[bottom])
        if table.anchor_gap <= 0:
            table.note = "no rating scale: the random player rates above the optimal one"
            table.anchor_gap = math.nan
        else:
            rated = {p for p in players if component[p] == component[anchors[0]]}
            gaps = boot_theta[:, top] - boot_theta[:, bottom]
            with np.errstate(divide="ignore", invalid="ignore"):
                mapped = LOW + (HIGH - LOW) * (boot_theta - boot_theta[:, [bottom]]) / gaps[:, None]
            mapped[gaps <= 0] = math.nan  # a replicate whose anchors swap has no scale
            if len(rated) < len(players):
                table.note = "players not linked by games to the anchors have no rating"
    one_sided = _one_sided_pairings(episodes)
    if one_sided:
        total = len({frozenset((e.first, e.second)) for e in episodes if e.first != e.second})
        warning = (
            f"in {one_sided} of {total} pairings the same player always had the winning start: "
            "there the seat advantage and the players' strengths are told apart only through "
            "cycles of games, and the intervals are wide (play each pairing with both players "
            "on the winning side: start=initial with alternating seats, or both ways round)"
        )
        table.note = f"{table.note}; {warning}" if table.note else warning
    reference = theta[index[anchors[1]]] if anchors[1] is not None else float(np.mean(theta))
    for p in players:
        k = index[p]
        rating = low = high = math.nan
        if p in rated:
            rating = LOW + (HIGH - LOW) * (theta[k] - theta[index[anchors[1]]]) / table.anchor_gap
            low, high = (float(v) for v in np.nanpercentile(mapped[:, k], [tail, 100 - tail]))
        mine = [e for e in episodes if p in (e.first, e.second) and e.first != e.second]
        table.players.append(
            PlayerRating(
                player=labels[p], key=p, kind=_kind(identities[p]), rating=rating, low=low,
                high=high, logit=float(theta[k] - reference), episodes=len(mine),
                wins=sum(e.first_won == (e.first == p) for e in mine),
            )
        )  # fmt: skip
    separated = _separated(episodes, labels)
    if separated:
        what = (
            f"perfect separation ({'; '.join(separated)}): the data alone put no bound on "
            "these strengths, so the ratings rest on the prior's σ"
        )
        if rated:
            _prior_sensitivity(table, players, index, anchors, fit(counts), fit, counts)
            what += (
                "; refitted at σ = "
                + ", ".join(f"{v:g}" for v in SENSITIVITY_SIGMAS)
                + " each rating moves as its 'σ' column shows, and its interval is widened "
                "to hold those values"
            )
        table.note = f"{table.note}; {what}" if table.note else what
    table.players.sort(key=lambda r: (-(r.rating if r.rating == r.rating else -math.inf), -r.logit))
    return table


def _prior_sensitivity(
    table: RatingTable, players: list[str], index: dict[str, int], anchors: list[Any],
    x: np.ndarray, fit: Any, counts: np.ndarray,
) -> None:  # fmt: skip
    """Each rated player's rating refitted under every prior of `SENSITIVITY_SIGMAS`, and
    its interval widened to hold them."""
    top, bottom = index[anchors[0]], index[anchors[1]]
    rows = {r.key: r for r in table.players}
    for sigma in SENSITIVITY_SIGMAS:
        theta = fit(counts, start=x, sigma=sigma)[: len(players)]
        gap = theta[top] - theta[bottom]
        for p in players:
            row = rows[p]
            if row.rating != row.rating or gap <= 0:
                continue
            value = LOW + (HIGH - LOW) * (theta[index[p]] - theta[bottom]) / gap
            row.by_sigma[f"{sigma:g}"] = float(value)
    for row in rows.values():
        if row.by_sigma and row.kind != "anchor":
            row.low = min(row.low, *row.by_sigma.values())
            row.high = max(row.high, *row.by_sigma.values())


# ------------------------------------------------------------------------- output
RATINGS_NOTE = (
    "Bradley–Terry over finished episodes (forfeits are losses; infrastructure failures, "
    "errors, unrun and move-capped episodes are left out), the first seat's advantage a "
    "covariate per setting and start (an N- or a P-position for the first mover), a Gaussian prior of σ = {sigma:g} on the log-odds; mapped "
    "linearly so that the optimal player rates 2000 and the uniformly random player 1000 "
    "(400 points are not 10:1 odds here: the log-odds of a rating difference d are "
    "d / 1000 × the anchors' gap). 95% bootstrap intervals over episodes ({bootstrap:,} "
    "replicates, resampled within each run and setting). Kind: anchor, calibration "
    "(ε-optimal, known strength) or player. Accuracy: decision accuracy on critical states "
    "(the player's evaluation runs in the same folders, 95% CI over items)."
)


def _num(x: float) -> str:
    return "–" if x != x else f"{x:.0f}"


def _interval(r: PlayerRating) -> str:
    """A rating's 95% interval; an anchor's rating is fixed, and an interval of no width
    (every replicate the same: too few episodes) is never printed as one."""
    if r.kind == "anchor" and r.rating == r.rating:
        return "fixed (anchor)"
    if r.low != r.low or r.high != r.high:
        return "–"
    if r.high - r.low < 0.5:
        return "too little data"
    return f"[{_num(r.low)}, {_num(r.high)}]"


def _sigma_text(r: PlayerRating) -> str:
    return " / ".join(_num(v) for v in r.by_sigma.values()) if r.by_sigma else "–"


def _accuracy_text(r: PlayerRating) -> str:
    if not r.accuracy_items:
        return "–"
    return f"{pct(r.accuracy)} [{pct(r.accuracy_low)}, {pct(r.accuracy_high)}] ({r.accuracy_items} items)"


def table_facts(t: RatingTable) -> str:
    excluded = ", ".join(f"{n} {why}" for why, n in sorted(t.excluded.items()) if n) or "none"
    seats = "; ".join(
        f"{s.setting} from {s.start} starts {s.logit:+.2f} "
        + (
            f"[{s.low:+.2f}, {s.high:+.2f}]"
            if s.high - s.low >= 0.005
            else "(too little data for an interval)"
        )
        for s in t.seat_advantage
    )
    gap = "" if not t.anchored else f"; anchors' gap {t.anchor_gap:.2f} log-odds"
    return f"{t.episodes} episodes rated (left out: {excluded}); first-seat advantage (log-odds): {seats}{gap}"


def ratings_markdown(ratings: Ratings) -> list[str]:
    """The report's Ratings section (one table per scope)."""
    if not ratings.tables:
        return []
    lines = [
        "## Ratings (anchored: optimal 2000, random 1000)",
        "",
        RATINGS_NOTE.format(sigma=ratings.prior_sigma, bootstrap=ratings.bootstrap),
        "",
    ]
    for t in ratings.tables:
        title = "pooled over " + ", ".join(t.settings) if t.scope == "pooled" else t.scope
        lines += [f"### {md(title)}", "", table_facts(t) + ".", ""]
        if t.note:
            lines += [f"Note: {t.note}.", ""]
        if not t.players:
            continue
        sigmas = any(r.by_sigma for r in t.players)
        sigma_head = (
            " rating at σ = " + " / ".join(f"{v:g}" for v in SENSITIVITY_SIGMAS) + " |"
            if sigmas
            else ""
        )
        lines += [
            "| player | kind | rating | 95% CI | log-odds vs random | episodes | wins | "
            f"accuracy on critical states |{sigma_head}",
            "|---|---|---|---|---|---|---|---|" + ("---|" if sigmas else ""),
        ]
        lines += [
            f"| {md(r.player)} | {r.kind} | {_num(r.rating)} | {_interval(r)} "
            f"| {r.logit:+.2f} | {r.episodes} | {r.wins} | {_accuracy_text(r)} |"
            + (f" {_sigma_text(r)} |" if sigmas else "")
            for r in t.players
        ]
        lines.append("")
    return lines


def ratings_terminal(ratings: Ratings) -> str:
    """Plain-text rating tables for the terminal."""
    if not ratings.tables:
        return "no finished tournament episodes to rate"
    out = _wrapped(
        f"Ratings: Bradley–Terry, prior σ = {ratings.prior_sigma:g} log-odds, optimal = 2000, "
        f"random = 1000; 95% bootstrap CI ({ratings.bootstrap:,} replicates)"
    )
    for t in ratings.tables:
        title = "pooled over " + ", ".join(t.settings) if t.scope == "pooled" else t.scope
        out += ["", *_wrapped(f"{title}: {table_facts(t)}")]
        if t.note:
            out += _wrapped(f"note: {t.note}")
        out += text_table(
            ["player", "kind", "rating", "95% CI", "log-odds", "episodes", "wins", "accuracy"],
            [
                [
                    r.player, r.kind, _num(r.rating), _interval(r),
                    f"{r.logit:+.2f}", r.episodes, r.wins, _accuracy_text(r),
                ]
                for r in t.players
            ],
            width=WIDTH,
        )  # fmt: skip
    return "\n".join(out)


def _wrapped(text: str) -> list[str]:
    """A line of prose as terminal lines of at most `WIDTH` characters."""
    return textwrap.wrap(text, WIDTH, subsequent_indent="  ", break_long_words=False) or [""]


def ratings_plot(table: RatingTable, path: str | Path) -> Path:
    """`plots.rating_plot` of one table: each player's rating and 95% CI, anchors marked."""
    title = "pooled over " + ", ".join(table.settings) if table.scope == "pooled" else table.scope
    rows = [(r.player, r.kind, r.rating, r.low, r.high) for r in table.players]
    return rating_plot(rows, path, title=f"Ratings: {title}")
