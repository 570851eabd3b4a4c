"""The state index of every game (`num_states`, `state_index`, `state_from_index`,
`observation_index`), checked against states found by brute force from the rules."""

from __future__ import annotations

import itertools
from math import comb
from typing import Any

import numpy as np
import pytest

from metanim.games import (
    Chomp,
    CornerQueen,
    FibonacciNim,
    Game,
    InvalidStateError,
    Kayles,
    Nim,
    Octal,
    SizeLimitError,
    Subtraction,
)
from metanim.solver.check import reachable_states

GAMES = [
    Nim([5], max_take=3),
    Nim([3, 4, 2], max_take=None),
    Nim([3, 3], max_take=2, misere=True),
    Subtraction([7, 5], [1, 3]),
    FibonacciNim(13),
    FibonacciNim(9, misere=True),
    Kayles([7]),
    Kayles([3, 4], misere=True),
    Octal([6], "0.07"),
    Octal([3, 5], "0.137"),
    Chomp(3, 4),
    Chomp(2, 5, misere=True),
    Chomp(4, 2),
    CornerQueen(6, 7, start=(0, 6)),
    CornerQueen(5, 3, start=(1, 1), misere=True),
]


def reachable(game: Game[Any, Any]) -> list[Any]:
    """Every state reachable from the initial state (breadth first over the rules)."""
    states = reachable_states(game, max_states=100_000)
    assert len(states) < 100_000  # every one, not a cut
    return states


def candidates(game: Game[Any, Any]) -> list[Any]:
    """A box of values holding every valid state of `game` (and invalid ones too)."""
    if isinstance(game, Nim | Subtraction):
        return list(itertools.product(range(game.capacity + 1), repeat=len(game.heaps)))
    if isinstance(game, FibonacciNim):
        return list(itertools.product(range(game.n + 1), repeat=2))
    if isinstance(game, Kayles | Octal):
        rows = [["".join(p) for p in itertools.product("01", repeat=n)] for n in game.rows]
        return list(itertools.product(*rows))
    if isinstance(game, Chomp):
        return list(itertools.product(range(game.cols + 1), repeat=game.rows))
    assert isinstance(game, CornerQueen)
    return list(itertools.product(range(game.height), range(game.width)))


def valid(game: Game[Any, Any], value: Any) -> bool:
    try:
        game.validate_state(value)
    except InvalidStateError:
        return False
    return True


@pytest.mark.parametrize("game", GAMES, ids=repr)
def test_reachable_states_have_distinct_indices_in_range_that_decode_back(game) -> None:
    states = reachable(game)
    assert len(states) > 5
    indices = [game.state_index(s) for s in states]
    assert all(type(i) is int for i in indices)
    assert len(set(indices)) == len(states)
    assert all(0 <= i < game.num_states for i in indices)
    assert all(game.state_from_index(i) == s for i, s in zip(indices, states, strict=True))
    # The vectorised reading of the raw observations gives the same indices, one
    # observation at a time or all stacked.
    stacked = np.stack([game.observation(s) for s in states])
    assert game.observation_index(stacked).tolist() == indices
    assert int(game.observation_index(game.observation(states[-1]))) == indices[-1]


@pytest.mark.parametrize("game", GAMES, ids=repr)
def test_every_valid_state_is_covered_and_every_other_index_is_refused(game) -> None:
    states = [s for s in candidates(game) if valid(game, s)]
    indices = {game.state_index(s) for s in states}
    assert len(indices) == len(states) and indices <= set(range(game.num_states))
    decoded = set()
    for i in range(game.num_states):
        try:
            state = game.state_from_index(i)
        except InvalidStateError:
            continue
        assert game.state_index(state) == i
        decoded.add(i)
    assert decoded == indices
    for bad in (-1, game.num_states, 1.0, True):
        with pytest.raises(InvalidStateError, match="state index"):
            game.state_from_index(bad)


def test_the_counts_follow_the_closed_forms() -> None:
    # Boards where every valid state is reachable: the index space is exactly theirs,
    # less Chomp's empty board (index 0) and Fibonacci's gaps.
    assert Nim([4, 4, 4], max_take=None).num_states == 5**3
    assert len(reachable(Nim([4, 4, 4], max_take=None))) == 5**3
    assert Kayles([3, 4]).num_states == len(reachable(Kayles([3, 4]))) == 2**7
    assert CornerQueen(5, 6, start=(0, 5)).num_states == len(
        reachable(CornerQueen(5, 6, start=(0, 5)))
    )
    chomp = Chomp(4, 5)
    assert chomp.num_states == comb(9, 4) == len(reachable(chomp)) + 1
    assert chomp.state_index(chomp.initial_state()) == chomp.num_states - 1
    with pytest.raises(InvalidStateError):
        chomp.state_from_index(0)  # the empty board: no state
    fib = FibonacciNim(10)
    # (0, 0), then r states (max take 1..r) per pile r < n, and n - 1 for the full pile.
    assert len([s for s in candidates(fib) if valid(fib, s)]) == 1 + sum(range(1, 10)) + 9
    assert fib.num_states == 10 * 11 // 2 + 9 + 1


@pytest.mark.parametrize(
    "game",
    [Nim([10**6] * 4, max_take=None), Kayles([40, 30]), Chomp(40, 40), FibonacciNim(10**10)],
    ids=repr,
)
def test_indices_past_int64_are_exact_ints_and_the_numpy_path_refuses(game) -> None:
    assert game.num_states > np.iinfo(np.int64).max
    start = game.initial_state()
    index = game.state_index(start)
    assert game.state_from_index(index) == start
    if not isinstance(game, FibonacciNim):  # its start leaves out the top index (n, n)
        assert index == game.num_states - 1
    with pytest.raises(SizeLimitError, match="int64"):
        game.observation_index(game.observation(start))


def test_a_misplaced_observation_shape_is_refused() -> None:
    with pytest.raises(ValueError, match="shape"):
        Chomp(3, 4).observation_index(np.zeros((2, 4, 3), np.int64))
