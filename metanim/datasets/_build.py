"""Building critical-state datasets: sample, keep critical states, dedupe, stratify."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from metanim.datasets._samplers import (
    depth,
    difficulty_of,
    fullness,
    n_legal_moves,
    sampler_for,
    size_left,
)
from metanim.datasets._schema import DIFFICULTIES, STRATA, DatasetRecord, Features, Stratum
from metanim.games import PRESETS, PROMPT_VERSION, Game, check_preset_params, make_game
from metanim.games.reply import REPLY_FORMAT_VERSION, with_format
from metanim.solver import solver_for

#: Called with the number of records selected so far (for progress bars).
Progress = Callable[[int], None]

_BATCH = 512


#: The default mix of difficulty tiers: mostly positions with many plausible moves.
DEFAULT_MIX = {"easy": 0.2, "medium": 0.4, "hard": 0.4}


def play_rule(game: str, params: dict[str, Any] | None, variant: str | None) -> str:
    """The variant ("normal" or "misere") a build of `game` with `params` plays.

    What the user gave wins, and only that: `variant`, else `params["misere"]`, else the
    preset's own play rule (`kayles-20-misere` is misère), else normal play. A value that
    contradicts another, or the preset, raises `ValueError`.
    """
    params = dict(params or {})
    if variant is not None:
        if variant not in ("normal", "misere"):
            raise ValueError(f"variant is 'normal' or 'misere', got {variant!r}")
        if params.get("misere", variant == "misere") != (variant == "misere"):
            raise ValueError(
                f"variant {variant!r} contradicts the game parameter misere={params['misere']}"
            )
        params["misere"] = variant == "misere"
    check_preset_params(game, params)
    preset = PRESETS[game][1] if game in PRESETS else {}
    return "misere" if params.get("misere", preset.get("misere", False)) else "normal"


class DatasetSpec(BaseModel):
    """One dataset file: one or more game configurations, a play rule and a size."""

    model_config = ConfigDict(frozen=True)

    game: str = Field(description="game or preset name, e.g. nim, chomp, kayles-20")
    params: dict[str, Any] = Field(default_factory=dict, description="game constructor arguments")
    n: int = Field(ge=1, description="number of records")
    variant: str = Field(
        default="normal",
        pattern="^(normal|misere)$",
        description="play rule; when not given, the preset's own (X-misere presets are "
        "misère) or params['misere'], else normal",
    )
    square_boards: list[int] | None = Field(
        default=None,
        description="Chomp only: spread the records over these square board sizes",
    )
    configs: list[dict[str, Any]] | None = Field(
        default=None,
        description="several configurations (constructor arguments) sharing the records "
        "evenly, the later (larger) ones getting the remainder",
    )
    strata: Literal["difficulty", "depth"] = Field(
        default="difficulty",
        description="sample by difficulty tier (with `mix`) or by the paper's depth terciles",
    )
    mix: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_MIX),
        description="shares per difficulty tier (easy/medium/hard)",
    )
    min_legal_moves: int = Field(
        default=2, ge=1, description="drop positions with fewer legal moves (2: no forced move)"
    )

    @model_validator(mode="before")
    @classmethod
    def _own_play_rule(cls, data: Any) -> Any:
        # A variant nobody gave never overrides a preset's play rule (issue 24).
        if isinstance(data, dict) and isinstance(data.get("game"), str):
            params = data.get("params") or {}
            if data.get("variant") in (None, "normal", "misere") and isinstance(params, dict):
                data = {**data, "variant": play_rule(data["game"], params, data.get("variant"))}
        return data

    @property
    def name(self) -> str:
        """The file stem: `<game>-<variant>`, a misère preset named once (`kayles-20-misere`),
        `<game>-disguised-<variant>` for the disguised prompt variant."""
        base = self.game.removesuffix("-misere") if self.game in PRESETS else self.game
        # The disguised prompt variant is its own file beside the named one.
        shown = "-disguised" if self.params.get("disguise") is True else ""
        return f"{base}{shown}-{self.variant}"


#: The seed paper's Table 5 (NIM 20, Fibonacci 11, Chomp 20 over square boards
#: 2x2..19x19, Kayles 18) plus Corner Queen 20; each in normal and misère play.
#: NIM is one heap of 31 with takes 1-3 ("action space 1-3"); Fibonacci starts at 31
#: stones, so the first move may take up to 30 ("dynamic, max 30"); Kayles is one row
#: of 20 pins; Corner Queen is the simulator's 20x20 board. Kept as the paper build
#: (`build_paper`, `metanim dataset build --preset paper`) so Table 1 stays comparable.
PAPER_SPECS: tuple[DatasetSpec, ...] = tuple(
    DatasetSpec(**spec, variant=variant, strata="depth", min_legal_moves=1)
    for variant in ("normal", "misere")
    for spec in (
        {"game": "nim", "params": {"heaps": [31], "max_take": 3}, "n": 20},
        {"game": "fibonacci", "params": {"n": 31}, "n": 11},
        {"game": "chomp", "n": 20, "square_boards": list(range(2, 20))},
        {"game": "kayles", "params": {"rows": [20]}, "n": 18},
        {"game": "corner_queen", "params": {"height": 20, "width": 20}, "n": 20},
    )
)

#: The default build: positions that need reasoning rather than one trick. No forced
#: moves (at least 2 legal moves), tiers by `DEFAULT_MIX`, and several configurations
#: per game: NIM with several heaps and other max takes; Fibonacci at 31 and 100
#: stones; full and near-full Chomp boards 4x4..10x10; Kayles rows of 20 to 60 pins
#: and two rows; Corner Queen on 20x20 and 50x50 boards.
DEFAULT_SPECS: tuple[DatasetSpec, ...] = tuple(
    DatasetSpec(**spec, variant=variant)
    for variant in ("normal", "misere")
    for spec in (
        {
            "game": "nim",
            "n": 40,
            "configs": [
                {"heaps": [31], "max_take": 5},
                {"heaps": [7, 11, 13], "max_take": None},
                {"heaps": [20, 25, 30], "max_take": 4},
                {"heaps": [12, 17, 23, 31], "max_take": None},
            ],
        },
        {"game": "fibonacci", "n": 20, "configs": [{"n": 31}, {"n": 100}]},
        {
            "game": "chomp",
            "n": 40,
            "configs": [{"rows": s, "cols": s} for s in (4, 6, 8, 10)],
        },
        {
            "game": "kayles",
            "n": 40,
            "configs": [{"rows": [20]}, {"rows": [40]}, {"rows": [60]}, {"rows": [9, 12]}],
        },
        {
            "game": "corner_queen",
            "n": 40,
            "configs": [{"height": 20, "width": 20}, {"height": 50, "width": 50}],
        },
    )
)


#: The generated families (a rule as data) and the disguised variant of every game:
#: subtraction sets and octal codes over several sizes and sums; each of the seven games
#: shown disguised at its default size. Each in normal and misère play.
GENERATED_SPECS: tuple[DatasetSpec, ...] = tuple(
    DatasetSpec(**spec, variant=variant)
    for variant in ("normal", "misere")
    for spec in (
        {
            "game": "subtraction",
            "n": 40,
            "configs": [
                {"heaps": [20], "subtraction_set": [1, 3, 4]},
                {"heaps": [12, 15], "subtraction_set": [2, 5, 6]},
                {"heaps": [9, 11, 14], "subtraction_set": [1, 4, 5]},
            ],
        },
        {
            "game": "octal",
            "n": 40,
            "configs": [
                {"rows": [20], "code": "0.07"},
                {"rows": [14], "code": "0.137"},
                {"rows": [8, 10], "code": "0.6"},
            ],
        },
        {"game": "nim", "n": 20, "params": {"heaps": [31], "max_take": 3, "disguise": True}},
        {"game": "fibonacci", "n": 20, "params": {"n": 31, "disguise": True}},
        {"game": "kayles", "n": 20, "params": {"rows": [20], "disguise": True}},
        {"game": "chomp", "n": 20, "params": {"rows": 6, "cols": 6, "disguise": True}},
        {"game": "corner_queen", "n": 20, "params": {"disguise": True}},
        {
            "game": "subtraction",
            "n": 20,
            "params": {"heaps": [12, 15], "subtraction_set": [2, 5, 6], "disguise": True},
        },
        {"game": "octal", "n": 20, "params": {"rows": [20], "code": "0.07", "disguise": True}},
    )
)


def stratum_of(depth_value: int, max_depth: int) -> Stratum:
    """Terciles of depth / max_depth: a state that can last longer is harder to read."""
    frac = depth_value / max(max_depth, 1)
    if frac <= 1 / 3:
        return "easy"
    return "medium" if frac <= 2 / 3 else "hard"


def _rng(seed: int, game: Game[Any, Any]) -> np.random.Generator:
    # One independent stream per (seed, configuration): adding a game to a build
    # never changes the records of another.
    tag = zlib.crc32(json.dumps([game.name, game.params], sort_keys=True).encode())
    return np.random.default_rng([seed, tag])


def _quotas(n: int, tiers: tuple[str, ...], shares: dict[str, float]) -> dict[str, int]:
    """n split by `shares` (largest remainders first; ties to the later, harder tiers)."""
    total = sum(shares.get(t, 0.0) for t in tiers) or 1.0
    exact = {t: n * shares.get(t, 0.0) / total for t in tiers}
    quota = {t: int(exact[t]) for t in tiers}
    order = sorted(tiers, key=lambda t: (exact[t] - quota[t], tiers.index(t)), reverse=True)
    for t in order[: n - sum(quota.values())]:
        quota[t] += 1
    return quota


def critical_states(
    game: Game[Any, Any],
    n: int,
    seed: int,
    *,
    max_extent_states: int | None = None,
    progress: Progress | None = None,
    solver: Any = None,
    strict: bool = True,
    mix: dict[str, float] | None = None,
    min_legal_moves: int = 1,
    need_grundy: bool = False,
) -> list[tuple[Any, Any]]:
    """`n` distinct critical states of `game` with their unique winning move, stratified.

    Without `mix` (the paper-faithful build) each depth stratum gets n/3 records where
    the game has enough (the rest go to the first strata). With `mix` (shares per
    difficulty tier, e.g. {"easy": 0.2, "medium": 0.4, "hard": 0.4}) the strata are
    the difficulty tiers of `difficulty_of`, and a tier short of states is filled from
    the harder tiers first. States with fewer than `min_legal_moves` legal moves are
    never drawn. Deterministic given `seed`. If the sampler finds fewer than `n`
    critical states, raises ValueError, or with `strict=False` returns those it found.
    With `need_grundy` (records carry each state's Grundy value) the solver is asked of
    each state as it is picked whether it can give one, so a game past its tables is
    refused (`SizeLimitError`) at its first such state, not after the whole sampling.
    """
    options = {} if max_extent_states is None else {"max_extent_states": max_extent_states}
    sample = sampler_for(game, **options)
    solver = solver or solver_for(game)
    rng = _rng(seed, game)
    max_depth = game.info.max_game_length
    if mix is None:
        tiers: tuple[str, ...] = STRATA
        quota = {s: n // 3 + (1 if i < n % 3 else 0) for i, s in enumerate(STRATA)}
        fill_order: tuple[str, ...] = STRATA

        def label(state: Any) -> str:
            return stratum_of(depth(game, state), max_depth)
    else:
        tiers = DIFFICULTIES
        quota = _quotas(n, tiers, mix)
        fill_order = tuple(reversed(DIFFICULTIES))

        def label(state: Any) -> str:
            return difficulty_of(game, state)

    chosen: dict[str, list[tuple[Any, Any]]] = {s: [] for s in tiers}
    spare: dict[str, list[tuple[Any, Any]]] = {s: [] for s in tiers}
    seen: set[Any] = set()
    known: dict[Any, int] = {}
    # Stop once every quota is met, or once there are enough states overall and the
    # missing strata have not grown for a long while (the game may have none there).
    patience = max(5_000, 20 * n)
    idle = stale = drawn = 0
    max_draws = 200 * n + 200_000
    total = 0
    while drawn < max_draws:
        progress_made = False
        batch = sample(rng, _BATCH)
        drawn += len(batch)
        for state in batch:
            if state in seen:
                stale += 1
                continue
            seen.add(state)
            stale = 0
            if min_legal_moves > 1 and n_legal_moves(game, state) < min_legal_moves:
                continue  # one legal move: the "unique optimal move" would be trivial
            stratum = label(state)
            full = len(chosen[stratum]) >= quota[stratum]
            if full and len(spare[stratum]) >= n:
                continue
            # States with equal keys (Kayles runs or NIM heaps in another order) are
            # isomorphic, so they have the same number of winning moves: solve each
            # key once. This is most of the build's speed on Kayles and NIM.
            key = game.state_key(state)
            if known.get(key, 1) != 1:
                continue
            moves = solver.winning_moves(state)
            known[key] = len(moves)
            if len(moves) != 1:
                continue
            if full:
                spare[stratum].append((state, moves[0]))
            else:
                if need_grundy:  # cheap: which path would answer; raises naming the limit
                    solver.method(state, "grundy")
                chosen[stratum].append((state, moves[0]))
                progress_made = True
                total += 1
                if progress is not None:
                    progress(1)
        idle = 0 if progress_made else idle + _BATCH
        have = total + sum(len(v) for v in spare.values())
        if total >= n:
            break
        if stale >= patience or (have >= n and idle >= patience):
            break
    picked = [item for s in tiers for item in chosen[s]]
    for s in fill_order:
        need = n - len(picked)
        if need <= 0:
            break
        if need_grundy:
            for state, _ in spare[s][:need]:
                solver.method(state, "grundy")
        picked += spare[s][:need]
        if progress is not None:
            progress(min(need, len(spare[s])))
    if len(picked) < n and strict:
        raise ValueError(
            f"{game!r} has only {len(picked)} distinct critical states that the sampler "
            f"found, fewer than the {n} asked for; use a larger configuration"
        )
    order = rng.permutation(len(picked))
    return [picked[i] for i in order]


#: The Output Format style of a row's `input`: ReAct, the seed papers' reference method.
INPUT_STYLE = "react"
#: What `input_version` names: the game prompt and the ReAct reply format versions.
INPUT_VERSION = f"{PROMPT_VERSION}+{INPUT_STYLE}@{REPLY_FORMAT_VERSION}"


def harness_fields(game: Game[Any, Any], state: Any, move: Any) -> dict[str, Any]:
    """`input`, `input_version`, `target` and `messages` of a record (one definition, so
    building and verifying a record agree)."""
    text = with_format(game.prompt(state), INPUT_STYLE, game.action_schema(state))
    target = game.move_text(move)
    reference = json.dumps(
        {
            "reasoning": f"{target} is the only move that leaves the opponent in a losing position.",
            "action": json.loads(target),  # the canonical text is a JSON number or list
        }
    )
    return {
        "input": text,
        "input_version": INPUT_VERSION,
        "target": target,
        "messages": [
            {"role": "user", "content": text},
            {"role": "assistant", "content": f"```json\n{reference}\n```"},
        ],
    }


def make_record(
    game: Game[Any, Any], state: Any, move: Any, *, index: int, seed: int, grundy: int
) -> DatasetRecord:
    """The dataset record of one critical state and its unique winning move."""
    legal = game.legal_moves(state)
    variant = game.info.variant
    record = DatasetRecord(
        **harness_fields(game, state, move),
        id=f"{game.name}-{variant}-{index:06d}",
        game=game.name,
        variant=variant,
        game_params=game.params,
        state=game.to_json(state),
        prompt=game.prompt(state),
        prompt_version=PROMPT_VERSION,
        legal_moves=[game.move_text(m) for m in legal],
        optimal_move=game.move_text(move),
        optimal_action=game.action_id(move),
        grundy=grundy,
        features=Features(
            n_legal_moves=len(legal),
            size_left=size_left(game, state),
            depth=depth(game, state),
            max_depth=game.info.max_game_length,
            grundy=grundy,
            stratum=stratum_of(depth(game, state), game.info.max_game_length),
            fullness=round(fullness(game, state), 4),
        ),
        difficulty=difficulty_of(game, state),
        seed=seed,
    )
    return record.with_hash()


def build(
    game: str | Game[Any, Any] | DatasetSpec,
    n: int | None = None,
    seed: int = 0,
    *,
    variant: str | None = None,
    params: dict[str, Any] | None = None,
    square_boards: list[int] | None = None,
    max_extent_states: int | None = None,
    progress: Progress | None = None,
    strata: str | None = None,
    mix: dict[str, float] | None = None,
    min_legal_moves: int | None = None,
) -> list[DatasetRecord]:
    """Build `n` critical-state records of one game and variant, deterministic in `seed`.

    `game` is a name or preset ("nim", "kayles-20"), a `Game`, or a `DatasetSpec`.
    With `square_boards` (Chomp) or a spec's `configs`, the records are spread over
    those configurations, the larger ones getting the remainder. `mix` and
    `min_legal_moves` are as in `critical_states`; by default (and in a spec's
    defaults) records are drawn by difficulty tier with `DEFAULT_MIX` and forced moves
    are left out. `strata="depth"` gives the paper's depth terciles.
    """
    configs: list[dict[str, Any]] | None = None
    if isinstance(game, DatasetSpec):
        spec = game
        n = spec.n if n is None else n
        variant = play_rule(spec.game, spec.params, variant or spec.variant)
        params = {**spec.params, **(params or {})}
        square_boards = square_boards or spec.square_boards
        configs = spec.configs
        strata = strata or spec.strata
        mix = spec.mix if mix is None else mix
        min_legal_moves = spec.min_legal_moves if min_legal_moves is None else min_legal_moves
        game = spec.game
    if n is None or n < 1:
        raise ValueError("n must be a positive number of records")
    if strata not in (None, "difficulty", "depth"):
        raise ValueError(f"strata is 'difficulty' or 'depth', got {strata!r}")
    options = {
        "mix": None if strata == "depth" else (mix or DEFAULT_MIX),
        "min_legal_moves": 2 if min_legal_moves is None else min_legal_moves,
    }
    if isinstance(game, str):
        variant = play_rule(game, params, variant)
    if square_boards:
        configs = [{"rows": size, "cols": size} for size in sorted(square_boards)]
        game = "chomp"
    misere = (variant or "normal") == "misere"
    if configs:
        name = game if isinstance(game, str) else game.name
        games = [make_game(name, **{**(params or {}), **c, "misere": misere}) for c in configs]
        return _build_configs(games, n, seed, max_extent_states, progress, options)
    if isinstance(game, str):
        game = make_game(game, **{**(params or {}), "misere": misere})
    elif variant is not None and game.info.variant != variant:
        game = type(game)(**{**game.params, "misere": variant == "misere"})
    solver = solver_for(game)
    picked = critical_states(
        game,
        n,
        seed,
        max_extent_states=max_extent_states,
        progress=progress,
        solver=solver,
        need_grundy=True,
        **options,  # type: ignore[arg-type]
    )
    return [
        make_record(game, state, move, index=i, seed=seed, grundy=solver.grundy(state))
        for i, (state, move) in enumerate(picked)
    ]


def _build_configs(
    games: list[Game[Any, Any]],
    n: int,
    seed: int,
    max_extent_states: int | None,
    progress: Progress | None,
    options: dict[str, Any],
) -> list[DatasetRecord]:
    per = [n // len(games)] * len(games)
    for i in range(n % len(games)):
        per[-1 - i] += 1  # the remainder goes to the largest (hardest) configurations
    records: list[DatasetRecord] = []
    carry = 0
    for game, count in zip(games, per, strict=True):
        want = count + carry
        if want == 0:
            continue
        solver = solver_for(game)
        # A small configuration may have too few critical states (misère 2x2 Chomp has
        # none): its share moves on to the next one.
        picked = critical_states(
            game,
            want,
            seed,
            max_extent_states=max_extent_states,
            progress=progress,
            strict=False,
            solver=solver,
            need_grundy=True,
            **options,
        )
        carry = want - len(picked)
        for state, move in picked:
            records.append(
                make_record(
                    game, state, move, index=len(records), seed=seed, grundy=solver.grundy(state)
                )
            )
    if carry:
        names = ", ".join(repr(g) for g in games)
        raise ValueError(f"the configurations {names} hold fewer than {n} critical states")
    return records


def build_default(
    seed: int = 0, *, progress: Progress | None = None
) -> dict[str, list[DatasetRecord]]:
    """The default build: `DEFAULT_SPECS` (difficulty mix, no forced moves), by file name."""
    return {spec.name: build(spec, seed=seed, progress=progress) for spec in DEFAULT_SPECS}


def build_paper(
    seed: int = 0, *, progress: Progress | None = None
) -> dict[str, list[DatasetRecord]]:
    """The paper-faithful build: `PAPER_SPECS` (Table 5 sizes plus Corner Queen)."""
    return {spec.name: build(spec, seed=seed, progress=progress) for spec in PAPER_SPECS}


#: Named builds for `metanim dataset build --preset NAME`.
BUILD_PRESETS: dict[str, tuple[DatasetSpec, ...]] = {
    "default": DEFAULT_SPECS,
    "paper": PAPER_SPECS,
    "generated": GENERATED_SPECS,
}
