"""Building critical-state datasets: sample, keep critical states, dedupe, stratify."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from metanim.datasets._samplers import depth, sampler_for, size_left
from metanim.datasets._schema import STRATA, DatasetRecord, Features, Stratum
from metanim.games import PROMPT_VERSION, Game, make_game
from metanim.games.reply import REPLY_FORMAT_VERSION, with_format
from metanim.solver import solver_for

#: Called with the number of records selected so far (for progress bars).
Progress = Callable[[int], None]

_BATCH = 512


class DatasetSpec(BaseModel):
    """One dataset file: a game configuration, a play rule and a size."""

    model_config = ConfigDict(frozen=True)

    game: str = Field(description="game or preset name, e.g. nim, chomp, kayles-20")
    params: dict[str, Any] = Field(default_factory=dict, description="game constructor arguments")
    n: int = Field(ge=1, description="number of records")
    variant: str = Field(default="normal", pattern="^(normal|misere)$")
    square_boards: list[int] | None = Field(
        default=None,
        description="Chomp only: spread the records over these square board sizes",
    )

    @property
    def name(self) -> str:
        return f"{self.game}-{self.variant}"


#: The seed paper's Table 5 (NIM 20, Fibonacci 11, Chomp 20 over square boards
#: 2x2..19x19, Kayles 18) plus Corner Queen 20; each in normal and misère play.
#: NIM is one heap of 31 with takes 1-3 ("action space 1-3"); Fibonacci starts at 31
#: stones, so the first move may take up to 30 ("dynamic, max 30"); Kayles is one row
#: of 20 pins; Corner Queen is the simulator's 20x20 board.
DEFAULT_SPECS: tuple[DatasetSpec, ...] = tuple(
    DatasetSpec(**spec, variant=variant)
    for variant in ("normal", "misere")
    for spec in (
        {"game": "nim", "params": {"heaps": [31], "max_take": 3}, "n": 20},
        {"game": "fibonacci", "params": {"n": 31}, "n": 11},
        {"game": "chomp", "n": 20, "square_boards": list(range(2, 20))},
        {"game": "kayles", "params": {"rows": [20]}, "n": 18},
        {"game": "corner_queen", "params": {"height": 20, "width": 20}, "n": 20},
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


def critical_states(
    game: Game[Any, Any],
    n: int,
    seed: int,
    *,
    max_extent_states: int | None = None,
    progress: Progress | None = None,
    solver: Any = None,
    strict: bool = True,
) -> list[tuple[Any, Any]]:
    """`n` distinct critical states of `game` with their unique winning move, stratified.

    Each difficulty stratum gets n/3 records where the game has enough (the rest go
    to the first strata); strata short of states are filled from the others.
    Deterministic given `seed`. If the sampler finds fewer than `n` critical states,
    raises ValueError, or with `strict=False` returns those it found.
    """
    options = {} if max_extent_states is None else {"max_extent_states": max_extent_states}
    sample = sampler_for(game, **options)
    solver = solver or solver_for(game)
    rng = _rng(seed, game)
    max_depth = game.info.max_game_length
    quota = {s: n // 3 + (1 if i < n % 3 else 0) for i, s in enumerate(STRATA)}
    chosen: dict[str, list[tuple[Any, Any]]] = {s: [] for s in STRATA}
    spare: dict[str, list[tuple[Any, Any]]] = {s: [] for s in STRATA}
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
            stratum = stratum_of(depth(game, state), max_depth)
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
    picked = [item for s in STRATA for item in chosen[s]]
    for s in STRATA:
        need = n - len(picked)
        if need <= 0:
            break
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
        ),
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
) -> list[DatasetRecord]:
    """Build `n` critical-state records of one game and variant, deterministic in `seed`.

    `game` is a name or preset ("nim", "kayles-20"), a `Game`, or a `DatasetSpec`.
    With `square_boards` (Chomp) the records are spread over those square boards,
    the larger boards getting the remainder.
    """
    if isinstance(game, DatasetSpec):
        spec = game
        n = spec.n if n is None else n
        variant = variant or spec.variant
        params = {**spec.params, **(params or {})}
        square_boards = square_boards or spec.square_boards
        game = spec.game
    if n is None or n < 1:
        raise ValueError("n must be a positive number of records")
    if square_boards:
        return _build_squares(
            square_boards, n, seed, variant or "normal", max_extent_states, progress
        )
    if isinstance(game, str):
        misere = (variant or "normal") == "misere"
        game = make_game(game, **{**(params or {}), "misere": misere})
    elif variant is not None and game.info.variant != variant:
        game = type(game)(**{**game.params, "misere": variant == "misere"})
    solver = solver_for(game)
    picked = critical_states(
        game, n, seed, max_extent_states=max_extent_states, progress=progress, solver=solver
    )
    return [
        make_record(game, state, move, index=i, seed=seed, grundy=solver.grundy(state))
        for i, (state, move) in enumerate(picked)
    ]


def _build_squares(
    sizes: list[int],
    n: int,
    seed: int,
    variant: str,
    max_extent_states: int | None,
    progress: Progress | None,
) -> list[DatasetRecord]:
    sizes = sorted(sizes)
    per = [n // len(sizes)] * len(sizes)
    for i in range(n % len(sizes)):
        per[-1 - i] += 1  # the remainder goes to the largest (hardest) boards
    records: list[DatasetRecord] = []
    carry = 0
    for size, count in zip(sizes, per, strict=True):
        want = count + carry
        if want == 0:
            continue
        game = make_game("chomp", rows=size, cols=size, misere=variant == "misere")
        solver = solver_for(game)
        # A small board may have too few critical states (misère 2x2 has none): its
        # share moves on to the next larger board.
        picked = critical_states(
            game, want, seed, max_extent_states=max_extent_states, progress=progress, strict=False
        )
        carry = want - len(picked)
        for state, move in picked:
            records.append(
                make_record(
                    game, state, move, index=len(records), seed=seed, grundy=solver.grundy(state)
                )
            )
    if carry:
        raise ValueError(f"the square boards {sizes} hold fewer than {n} critical states")
    return records


def build_default(
    seed: int = 0, *, progress: Progress | None = None
) -> dict[str, list[DatasetRecord]]:
    """The default build: `DEFAULT_SPECS` (Table 5 sizes plus Corner Queen), by file name."""
    return {spec.name: build(spec, seed=seed, progress=progress) for spec in DEFAULT_SPECS}
