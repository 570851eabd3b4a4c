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
on-disk cache by later processes.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import njit, types

#: `succ(code, params, out) -> number of successors written to out`.
SUCCESSOR_SIG = types.int64(types.int64, types.int64[::1], types.int64[::1])
SuccessorType = types.FunctionType(SUCCESSOR_SIG)

_ENGINE_SIG = types.Tuple((types.int32[::1], types.uint8[::1]))(
    types.int64, SuccessorType, types.int64[::1], types.int64
)


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


@cache
def solve_dag():
    """The compiled engine: `solve_dag()(n_states, succ, params, max_succ) -> (grundy, misere_win)`."""
    return njit(_ENGINE_SIG, cache=True, nogil=True)(_solve_dag)


def kernel(pyfunc):
    """Compile a successor kernel with the engine's fixed signature (lazily, cached on disk)."""

    @cache
    def compiled():
        return njit(SUCCESSOR_SIG, cache=True, nogil=True)(pyfunc)

    compiled.py_func = pyfunc  # type: ignore[attr-defined]
    return compiled
