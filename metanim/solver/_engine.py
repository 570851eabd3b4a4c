"""The generic numba mex engine over an encoded state DAG.

A game supplies a successor kernel `succ(code, params, out) -> count` that writes
the codes of a state's successors into `out`. Codes are ordered so that every
successor has a smaller code, so one forward pass settles every state: the
normal-play Grundy value is the mex of the successors' values, and the misère
outcome is "the mover wins iff the state is terminal or some successor is lost
for its mover".

Numba only caches a kernel that takes another kernel as an argument when both
have explicit signatures (a first-class function type), so the signatures below
are fixed and the kernels are compiled on first use, then loaded from numba's
on-disk cache by later processes. numba itself is imported then, not before
(`metanim.util.jit`); `solve_dag(compiled=False)` runs the same engine in Python, for
tables small enough that compiling would cost more.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np


@cache
def _signatures() -> tuple[Any, Any]:
    """(successor signature, engine signature): `succ(code, params, out) -> number of
    successors written to out`, and the engine's over it."""
    from numba import types

    successor = types.int64(types.int64, types.int64[::1], types.int64[::1])
    engine = types.Tuple((types.int32[::1], types.uint8[::1]))(
        types.int64, types.FunctionType(successor), types.int64[::1], types.int64
    )
    return successor, engine


def _solve_dag(n_states, succ, params, max_succ):  # pragma: no cover - compiled by numba
    grundy = np.zeros(n_states, np.int32)
    mover_wins_misere = np.zeros(n_states, np.uint8)
    out = np.empty(max(max_succ, 1), np.int64)
    # seen[v] == stamp marks value v as present among the current state's successors;
    # a stamp per state avoids clearing the buffer.
    seen = np.zeros(max_succ + 2, np.int64)
    for code in range(n_states):
        count = succ(code, params, out)
        stamp = code + 1
        any_lost = False
        for i in range(count):
            child = out[i]
            value = grundy[child]
            if value <= count:
                seen[value] = stamp
            if mover_wins_misere[child] == 0:
                any_lost = True
        m = 0
        while seen[m] == stamp:
            m += 1
        grundy[code] = m
        mover_wins_misere[code] = 1 if (count == 0 or any_lost) else 0
    return grundy, mover_wins_misere


def solve_dag(compiled: bool = True) -> Any:
    """The engine: `solve_dag()(n_states, succ, params, max_succ) -> (grundy, misere_win)`,
    compiled (`succ` a compiled successor kernel), or run by Python (`compiled=False`,
    `succ` the kernel's `metanim.util.jit.interpreted` function)."""
    return _compiled_engine() if compiled else _solve_dag


@cache
def _compiled_engine() -> Any:
    from numba import njit

    return njit(_signatures()[1], cache=True, nogil=True)(_solve_dag)


def kernel(pyfunc: Any) -> Any:
    """A successor kernel: `kernel()` compiles it with the engine's fixed signature (once,
    cached on disk); `interpreted(kernel.py_func)` is the same function run by Python."""

    @cache
    def compiled() -> Any:
        from numba import njit

        return njit(_signatures()[0], cache=True, nogil=True)(pyfunc)

    compiled.py_func = pyfunc  # type: ignore[attr-defined]
    return compiled
