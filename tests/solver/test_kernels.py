"""The fast kernels against the simple ones and against plain-Python recurrences."""

from __future__ import annotations

import numpy as np
import pytest

from metanim.games import SizeLimitError
from metanim.solver import _chomp16, _fast, _misere, _octal, kernels
from metanim.solver._engine import solve_dag
from metanim.solver._solvers import _chomp, _wythoff
from metanim.solver.reference import MultisetMisereSearch, kayles_run_moves
from tests.oracles import octal_reference


def test_kayles_period_is_detected_and_certified() -> None:
    # Guy–Smith certification, from computed values: period 12 after the last
    # exception at 70 (Winning Ways, ch. 4).
    assert _octal.octal_period("0.77") == (71, 12)
    values = octal_reference("0.77", 400)
    assert [_octal.octal_grundy("0.77", n) for n in range(401)] == values
    assert _octal.octal_grundy("0.77", 10**7) == values[71 + (10**7 - 71) % 12]


@pytest.mark.parametrize("code", ["0.07", "0.137", "0.6", "0.77", "0.4", "0.15", "0.045"])
def test_octal_values_match_plain_recurrence(code: str) -> None:
    expected = octal_reference(code, 600)
    assert _octal.octal_values(code, 600).tolist() == expected
    assert _octal.octal_table(code, 600).tolist() == expected


def test_octal_wide_values_switch_to_flags() -> None:
    # 0.6 passes 63 early, exercising the wide path against the simple kernel.
    fast = _octal.octal_values("0.6", 3000)
    assert fast.max() > 64
    simple = kernels.octal_grundy_direct(kernels.parse_octal("0.6"), 3000)
    assert np.array_equal(fast, simple)


def test_officers_match_plain_mex() -> None:
    """Officers (0.6): take one token, leaving one heap or two non-empty heaps.

    An independent mex over every option, written here from the rules, to n = 2,000
    (the values pass 63 at 1,945, so both paths of the kernel are covered)."""
    n_max = 2000
    g = [0] * (n_max + 1)
    for n in range(2, n_max + 1):
        rest = n - 1
        options = {g[rest]} | {g[a] ^ g[rest - a] for a in range(1, rest // 2 + 1)}
        g[n] = min(set(range(len(options) + 1)) - options)
    fast = _octal.octal_values("0.6", n_max)
    assert max(g) >= 64
    assert fast.tolist() == g
    # Small heaps from the literature (Winning Ways ch. 4; OEIS A046695).
    assert g[:14] == [0, 0, 1, 2, 0, 1, 2, 3, 1, 2, 3, 4, 0, 3]


@pytest.mark.parametrize("code", ["0.07", "0.137", "0.6", "0.77", "0.4", "0.15", "0.045", "0.333"])
@pytest.mark.parametrize(("small_bound", "cap"), [(1, 1 << 16), (2, 16), (1, 4)])
@pytest.mark.parametrize("start", [0, 300])
def test_octal_block_scan_path_and_handoff(
    code: str, small_bound: int, cap: int, start: int
) -> None:
    # Forces the block-scan path from tiny values on (every code, every digit kind)
    # and the hand-off to the byte-flag kernel once values reach `cap`, resuming
    # from a partly filled table too.
    expected = octal_reference(code, 600)
    g = np.zeros(601, np.int32)
    g[:start] = expected[:start]
    digits = _octal.octal_digits(code)
    n = _octal._extend_fast(digits, g, start, small_bound, cap)
    if n < len(g):
        assert g[:n].max() >= cap // 2
        _octal._extend_flags(digits, g, n)
    assert g.tolist() == expected


def test_dawson_periods() -> None:
    assert _octal.octal_period("0.07")[1] == 34  # type: ignore[index]
    assert _octal.octal_period("0.137")[1] == 34  # type: ignore[index]


def test_misere_kayles_rows_match_search() -> None:
    search = MultisetMisereSearch(kayles_run_moves)
    fast = _misere.kayles_misere_outcomes(24)
    assert [bool(x) for x in fast] == [search.mover_wins((n,)) for n in range(25)]
    for runs in [(3, 4), (1, 1, 1), (5, 2, 2), (7, 1), (2, 2), (9, 3, 1, 1)]:
        assert _misere.kayles_misere_mover_wins(runs, 24) == search.mover_wins(runs)


@pytest.mark.parametrize("rows", range(1, 6))
@pytest.mark.parametrize("cols", range(1, 6))
def test_chomp_fast_matches_engine(rows: int, cols: int) -> None:
    params = kernels.chomp_params(rows, cols)
    states = kernels.chomp_states(rows, cols)
    grundy, wins = _chomp(params, states)
    g2, w2 = solve_dag()(states, kernels.chomp_successors(), params, rows * cols)
    assert np.array_equal(grundy, g2)
    assert np.array_equal(wins, w2)


def test_chomp_outcomes_match_grundy_tables() -> None:
    # Every box up to 8×8: P (bit set) exactly where the Grundy value is 0.
    for rows in range(1, 9):
        for cols in range(1, 9):
            states = kernels.chomp_states(rows, cols)
            bits, stats, params = _chomp16.chomp_outcomes(rows, cols)
            p = np.unpackbits(bits, bitorder="little")[:states].astype(bool)
            grundy, _ = _chomp(params, states)
            assert np.array_equal(p, grundy == 0), (rows, cols)
            assert stats[0] == np.count_nonzero(p)
    bits, _, params = _chomp16.chomp_outcomes(8, 8)
    assert _chomp16.is_p(bits, params, [8, 1, 1, 1, 1, 1, 1, 1])  # the square's (1, 1) bite
    assert not _chomp16.is_p(bits, params, [8] * 8)


def test_chomp_outcomes_size_limit() -> None:
    with pytest.raises(SizeLimitError, match="CHOMP_OUTCOME_LIMIT"):
        _chomp16.chomp_outcomes(17, 4)


@pytest.mark.parametrize("size", [(30, 30), (7, 19), (19, 7), (3, 30)])
def test_wythoff_fast_matches_engine(size: tuple[int, int]) -> None:
    width, height = size
    grundy, wins = _wythoff(width, height)
    params = np.array([width], dtype=np.int64)
    g2, w2 = solve_dag()(width * height, kernels.wythoff_successors(), params, 3 * max(size))
    assert np.array_equal(grundy, g2)
    assert np.array_equal(wins, w2)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 60])
def test_fibonacci_fast_matches_engine(n: int) -> None:
    grundy, first_win = _fast.fibonacci_tables(n)
    states = kernels.fibonacci_states(n)
    params = np.zeros(1, dtype=np.int64)
    g2, w2 = solve_dag()(states, kernels.fibonacci_successors(), params, max(n, 1))
    assert np.array_equal(grundy, g2)
    assert np.array_equal(_fast.fibonacci_mover_wins(first_win), w2)


@pytest.mark.parametrize("misere", [False, True])
def test_fibonacci_large_table_queries_match_reference(
    misere: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tables above _LIST_STATES answer from the Grundy array and the misère
    # thresholds directly; force that path on a small game and check every state.
    from metanim.games import FibonacciNim
    from metanim.solver import _solvers
    from metanim.solver.reference import ReferenceSolver

    monkeypatch.setattr(_solvers, "_LIST_STATES", 0)
    game = FibonacciNim(30, misere=misere)
    solver = _solvers.FibonacciSolver(game)
    ref = ReferenceSolver(game)
    for r in range(30):
        for k in range(r + 1 if r else 1):
            assert solver.winning_moves((r, k)) == ref.winning_moves((r, k)), (r, k)
            assert solver.outcome((r, k)) == ref.outcome((r, k)), (r, k)
    assert solver._lost is None
