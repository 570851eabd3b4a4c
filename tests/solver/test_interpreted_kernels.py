"""A kernel run by Python (`metanim.util.jit.interpreted`, what small tables and a
process's first queries use) computes what its compiled version computes, table for
table; the solver's answers themselves are checked against brute force elsewhere."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from metanim.envs import _stream
from metanim.solver import _engine, _fast, _misere, _octal, kernels
from metanim.util.jit import Tiered, interpreted, run

pytestmark = pytest.mark.slow  # compiling the kernels takes seconds on a cold cache


def _both(kernel, *args):  # type: ignore[no-untyped-def]
    """(interpreted result, compiled result), each on its own copy of array arguments."""
    copies = [[a.copy() if isinstance(a, np.ndarray) else a for a in args] for _ in range(2)]
    return (run(kernel, *copies[0], compiled=False), copies[0]), (
        run(kernel, *copies[1], compiled=True),
        copies[1],
    )


def _equal(a, b) -> bool:  # type: ignore[no-untyped-def]
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return bool(a == b)


@pytest.mark.parametrize(
    ("kernel", "args"),
    [
        (_fast.fibonacci_tables, (23,)),
        (_fast.wythoff_square, (17,)),
        (_fast.wythoff_tables, (5, 19)),
        (_fast.chomp_packed, (kernels.chomp_params(3, 5), kernels.chomp_states(3, 5))),
        (_fast.chomp_packed_wide, (kernels.chomp_params(2, 7), kernels.chomp_states(2, 7))),
        (_octal.octal_extend, (_octal.octal_digits("0.77"), np.zeros(300, np.int32), 0)),
        (_octal.octal_extend, (_octal.octal_digits("0.137"), np.zeros(300, np.int32), 0)),
        (_octal.octal_extend, (_octal.octal_digits("0.6"), np.zeros(300, np.int32), 0)),
        (_misere._partition_counts, (14,)),
        (_stream._fill, (np.zeros(18, np.int64), 3, 2**31 + 7, 5, 1, 16)),
        (_stream._fill_episodes, (np.zeros(4 * 18, np.int64), 0, 9, 2**40, 4)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_a_kernel_run_by_python_computes_what_it_computes_compiled(kernel, args) -> None:  # type: ignore[no-untyped-def]
    (plain, plain_args), (compiled, compiled_args) = _both(kernel, *args)
    assert _equal(plain, compiled)
    assert _equal(plain_args, compiled_args)  # what it writes into its arguments too


def test_the_engine_and_the_misere_table_by_python_and_compiled() -> None:
    succ = kernels.subtraction_successors
    for k, size in ((0, 40), (3, 60)):
        params = np.array([k], np.int64)
        limit = size if k == 0 else k
        plain = _engine.solve_dag(compiled=False)(
            size + 1, interpreted(succ.py_func), params, limit
        )
        compiled = _engine.solve_dag()(size + 1, succ(), params, limit)
        assert _equal(plain, compiled)
    counts = _misere._partition_counts(14)
    offsets = np.zeros(16, np.int64)
    for s in range(15):
        offsets[s + 1] = offsets[s] + counts[s, s]
    (plain, _), (compiled, _) = _both(_misere.kayles_misere_table, 14, counts, offsets)
    assert _equal(plain, compiled)


def test_a_tiered_kernel_answers_alike_before_and_after_it_compiles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    params = kernels.chomp_params(4, 4)
    lost = np.zeros(kernels.chomp_states(4, 4), np.uint8)
    lost[::3] = 1
    shapes = [np.array(s, np.int64) for s in ([4, 4, 2, 1], [3, 3, 3, 0], [4, 1, 1, 1])]

    def answers(kernel) -> list[list[int]]:  # type: ignore[no-untyped-def]
        found = []
        for shape in shapes:
            out = np.zeros(16, np.int64)
            found.append(out[: kernel(params, shape, lost, out)].tolist())
        return found

    compiled = answers(_fast.chomp_losing_bites.compiled)
    # As in a process that has not loaded numba: three calls by Python, then compiled.
    monkeypatch.delitem(sys.modules, "numba")
    tiered = Tiered(_fast.chomp_losing_bites, 3)
    assert answers(tiered) == compiled and tiered._left == 0
    assert answers(tiered) == compiled and tiered._left == 0
    monkeypatch.undo()
    # In one that has, compiled from the first call.
    loaded = Tiered(_fast.chomp_losing_bites, 3)
    assert answers(loaded) == compiled and loaded._left == 3
