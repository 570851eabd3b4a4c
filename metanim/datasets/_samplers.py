"""Seeded candidate samplers and difficulty measures, one per game.

A sampler draws *valid, reachable* states of one game configuration from a numpy
Generator in batches (vectorized draws, then Python tuples); the builder keeps the
critical ones. Samplers never call the solver, so the builder can reject a state
whose difficulty stratum is already full before paying for a solve.
"""

from __future__ import annotations

from collections.abc import Callable
from math import comb
from typing import Any

import numpy as np

from metanim.games import (
    Chomp,
    CornerQueen,
    FibonacciNim,
    Game,
    Kayles,
    Nim,
    Octal,
    SizeLimitError,
    Subtraction,
    check_listable,
)

Sampler = Callable[[np.random.Generator, int], list[Any]]

#: Default largest Chomp table a sampled shape may need (shapes in use x row-0 length).
CHOMP_MAX_EXTENT_STATES = 250_000


def sampler_for(game: Game[Any, Any], **options: Any) -> Sampler:
    """The candidate sampler of a game configuration."""
    check_listable(game, "a dataset record")
    if isinstance(game, Nim):
        return _nim_sampler(game)
    if isinstance(game, FibonacciNim):
        return _fibonacci_sampler(game)
    if isinstance(game, Kayles):
        return _kayles_sampler(game)
    if isinstance(game, Chomp):
        return _chomp_sampler(game, options.get("max_extent_states", CHOMP_MAX_EXTENT_STATES))
    if isinstance(game, CornerQueen):
        return _queen_sampler(game)
    if isinstance(game, Subtraction | Octal):
        return _playout_sampler(game)
    raise TypeError(f"no dataset sampler for {type(game).__name__}")


def size_left(game: Game[Any, Any], state: Any) -> int:
    """Stones, standing pins, squares, or the queen's row + column distance to the corner."""
    if isinstance(game, Nim | Subtraction):
        return int(sum(state))
    if isinstance(game, FibonacciNim):
        return int(state[0])
    if isinstance(game, Kayles | Octal):
        return sum(row.count("1") for row in state)
    if isinstance(game, Chomp):
        return int(sum(state))
    if isinstance(game, CornerQueen):
        x, y = game.wythoff(state)
        return x + y
    raise TypeError(f"no difficulty measure for {type(game).__name__}")


def fullness(game: Game[Any, Any], state: Any) -> float:
    """`size_left` as a share of the start position's (1.0 = the full board or pile)."""
    return size_left(game, state) / max(_start_size(game), 1)


def _start_size(game: Game[Any, Any]) -> int:
    # Per game object: the builder asks once per drawn state.
    cached = _START_SIZES.get(id(game))
    if cached is None or cached[0] is not game:
        if len(_START_SIZES) > 1024:
            _START_SIZES.clear()
        cached = _START_SIZES[id(game)] = (game, size_left(game, game.initial_state()))
    return cached[1]


_START_SIZES: dict[int, tuple[Game[Any, Any], int]] = {}


def n_legal_moves(game: Game[Any, Any], state: Any) -> int:
    """The number of legal moves (`Game.num_legal_moves`: counted, not listed)."""
    return game.num_legal_moves(state)


#: Difficulty tiers, from the features a reader faces (see docs/datasets.md):
#: "easy": at most EASY_MOVES legal moves, or at most EASY_DEPTH moves left to play;
#: "hard": at least HARD_MOVES legal moves and at least HARD_FULLNESS of the start
#: position left (many plausible answers, far from the end); "medium" otherwise.
EASY_MOVES, EASY_DEPTH, HARD_MOVES, HARD_FULLNESS = 4, 4, 16, 0.4


def difficulty_of(game: Game[Any, Any], state: Any) -> str:
    """ "easy", "medium" or "hard" by legal-move count, distance to the end and fullness."""
    moves = n_legal_moves(game, state)
    if moves <= EASY_MOVES or depth(game, state) <= EASY_DEPTH:
        return "easy"
    if moves >= HARD_MOVES and fullness(game, state) >= HARD_FULLNESS:
        return "hard"
    return "medium"


def depth(game: Game[Any, Any], state: Any) -> int:
    """Most moves the game can still last from `state` (every move removes at least one
    stone/pin/square or moves the queen at least one step; the poison square stays)."""
    if isinstance(game, Chomp):
        return size_left(game, state) - 1
    return size_left(game, state)


# ------------------------------------------------------------------------- samplers
_EXACT_FLOAT = 2**53  # the largest heap a float64 fraction of its cap draws exactly


def _nim_sampler(game: Nim) -> Sampler:
    if max(game.heaps, default=0) > _EXACT_FLOAT:
        raise SizeLimitError(
            f"the NIM dataset sampler draws heaps up to 2**53 = {_EXACT_FLOAT:,}, "
            f"got a heap of {max(game.heaps):,}"
        )
    caps = np.asarray(game.heaps, dtype=np.int64)

    def sample(rng: np.random.Generator, size: int) -> list[Any]:
        # A per-draw fill level spreads the total over its whole range, so every
        # difficulty stratum gets candidates (independent uniform heaps would pile
        # up around half the total).
        fill = rng.random((size, 1))
        heaps = np.floor(rng.random((size, len(caps))) * fill * (caps + 1)).astype(np.int64)
        return [tuple(int(h) for h in row) for row in np.minimum(heaps, caps)]

    return sample


def _fibonacci_sampler(game: FibonacciNim) -> Sampler:
    n = game.n

    def sample(rng: np.random.Generator, size: int) -> list[Any]:
        # Reachable states only: after removing s = n - r stones with last take x, the
        # max take is min(2x, r), and x is either the whole first move (x = s) or at
        # most 2/3 of s (a move x needs a previous move y >= x/2 with x + y <= s).
        remaining = rng.integers(1, n, size=size)
        taken = n - remaining
        last = np.floor(rng.random(size) * taken).astype(np.int64) + 1
        out: list[Any] = []
        for r, s, x in zip(remaining.tolist(), taken.tolist(), last.tolist(), strict=True):
            if x == s or 3 * x <= 2 * s:
                out.append((r, min(2 * x, r)))
        if rng.random() < 0.02:
            out.append(game.initial_state())
        return out

    return sample


def _kayles_sampler(game: Kayles) -> Sampler:
    widths = game.rows

    def sample(rng: np.random.Generator, size: int) -> list[Any]:
        # Every pin pattern is reachable (knock pins down one at a time); a per-draw
        # standing probability spreads the pin count across the strata.
        p = rng.random((size, 1))
        bits = rng.random((size, sum(widths))) < p
        out = []
        for row in bits:
            text = "".join("1" if b else "0" for b in row)
            rows, start = [], 0
            for w in widths:
                rows.append(text[start : start + w])
                start += w
            out.append(tuple(rows))
        return out

    return sample


def _chomp_sampler(game: Chomp, max_extent_states: int) -> Sampler:
    rows, cols = game.rows, game.cols
    # The solver tabulates a shape on its own extent (rows in use x row-0 length), so
    # only extents with a table of at most `max_extent_states` shapes are drawn; on a
    # big square board these are the late-game shapes.
    extents = [
        (r, c)
        for r in range(1, rows + 1)
        for c in range(1, cols + 1)
        if comb(r + c, r) <= max_extent_states and r * c >= 2
    ]
    full_ok = comb(rows + cols, rows) <= max_extent_states
    first = [True]

    def sample(rng: np.random.Generator, size: int) -> list[Any]:
        picks = rng.integers(0, len(extents), size=size)
        out: list[Any] = []
        for k in picks.tolist():
            r, c = extents[k]
            below = np.sort(rng.integers(1, c + 1, size=r - 1))[::-1]
            shape = (c, *(int(x) for x in below), *([0] * (rows - r)))
            out.append(shape)
        if full_ok:
            if first[0] or rng.random() < 0.05:
                # The full board (square: its winning bite is (1, 1)), always in the
                # first batch so that a quota cannot crowd it out.
                first[0] = False
                out.insert(0, game.initial_state())
            # Near-full boards: one to three bites off the full board, the positions a
            # game actually opens with (drawn uniformly they would almost never occur).
            for _ in range(size // 4):
                shape = list(game.initial_state())
                for _ in range(int(rng.integers(1, 4))):
                    r, c = int(rng.integers(0, rows)), int(rng.integers(0, cols))
                    if (r, c) != (0, 0) and c < shape[r]:
                        shape[r:] = [min(x, c) for x in shape[r:]]
                out.append(tuple(shape))
        return out

    return sample


def _playout_sampler(game: Game[Any, Any]) -> Sampler:
    """Reachable states of a generated family by seeded random playouts from the start.

    A rule given as data can leave most heap sizes or pin patterns unreachable (S =
    {3} reaches only heaps that are the start less a multiple of 3; Dawson's Kayles
    never leaves one pin knocked down alone), so a state is drawn by playing a random
    number of uniformly random legal moves, never by drawing a pattern.
    """
    longest = game.info.max_game_length

    def sample(rng: np.random.Generator, size: int) -> list[Any]:
        out = []
        for steps in rng.integers(0, longest + 1, size=size).tolist():
            state = game.initial_state()
            for _ in range(steps):
                count = game.num_legal_moves(state)
                if count == 0:
                    break
                state = game.child(state, game.legal_move_at(state, int(rng.integers(count))))
            out.append(state)
        return out

    return sample


def _queen_sampler(game: CornerQueen) -> Sampler:
    h, w = game.height, game.width

    def sample(rng: np.random.Generator, size: int) -> list[Any]:
        cells = rng.integers(0, h * w, size=size)
        return [divmod(int(c), w) for c in cells if divmod(int(c), w) != game.target]

    return sample
