"""Datasets at sizes past what a record can hold: heaps sampled to 2**53 and refused
beyond, a game past the Grundy tables refused before sampling."""

from __future__ import annotations

import pytest

from metanim.games import SizeLimitError, make_game
from tests.oracles import take_k_winning


def test_datasets_sample_heaps_to_2_53_and_refuse_beyond() -> None:
    from metanim.datasets import critical_states

    top = 2**53
    game = make_game("nim", heaps=[top, 5], max_take=3)
    pairs = critical_states(game, 9, seed=0, strict=False)
    assert pairs
    for state, move in pairs:
        assert take_k_winning(state, 3) == {move}  # critical: exactly this winning move
    with pytest.raises(SizeLimitError, match=r"2\*\*53"):
        critical_states(make_game("nim", heaps=[top + 1], max_take=3), 3, seed=0)
    with pytest.raises(SizeLimitError, match="a dataset record lists every move"):
        critical_states(make_game("fibonacci", n=10**20), 3, seed=0)


def test_a_dataset_past_the_grundy_tables_is_refused_at_the_first_critical_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Records carry Grundy values, which Fibonacci Nim has only from its table (10,952
    stones at most). The build must say so before sampling: it used to scan hundreds of
    states (2-60 s) and fail at the end."""
    from metanim.datasets import build
    from metanim.solver import _solvers

    calls = 0
    scan = _solvers.FibonacciSolver.winning_moves

    def counted(self, state):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        return scan(self, state)

    monkeypatch.setattr(_solvers.FibonacciSolver, "winning_moves", counted)
    with pytest.raises(SizeLimitError, match="piles up to 10,952 stones"):
        build("fibonacci", 5, params={"n": 30_000})
    # Seed 0 picks its first state after 15 scans (other seeds take up to ~200); the
    # whole sampling scanned 682.
    assert 0 < calls <= 60
