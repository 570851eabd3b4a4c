"""Per-game numba kernels: successor enumeration over encoded states, and recurrences.

Each successor kernel follows `_engine.SUCCESSOR_SIG` and orders codes so that a
successor's code is smaller than its parent's, which the generic engine needs. The
Fibonacci and Chomp codes (`fibonacci_code`, `chomp_rank`) are those games'
`state_index`, defined with the games and re-exported here.
"""

from __future__ import annotations

import numpy as np

# The state codes are the games' state indices (`Game.state_index`): one encoding,
# defined where the rules are, read here by the successor kernels.
from metanim.games.chomp import (
    chomp_params,
    chomp_rank,
    chomp_states,
    chomp_term,
    chomp_unrank,
)
from metanim.games.fibonacci import fibonacci_code, fibonacci_states
from metanim.solver._engine import kernel
from metanim.util.jit import njit

__all__ = [
    "chomp_params",
    "chomp_rank",
    "chomp_states",
    "chomp_successors",
    "chomp_term",
    "chomp_unrank",
    "fibonacci_code",
    "fibonacci_states",
    "fibonacci_successors",
    "octal_grundy_direct",
    "parse_octal",
    "subtraction_successors",
    "wythoff_successors",
]


# --------------------------------------------------------------------------- NIM heap
@kernel
def subtraction_successors(code, params, out):  # pragma: no cover - numba
    """One NIM heap of `code` items; params[0] = max take (0 = unbounded)."""
    limit = code if params[0] == 0 else min(code, params[0])
    for x in range(1, limit + 1):
        out[x - 1] = code - x
    return limit


# ---------------------------------------------------------------------- Fibonacci Nim
@kernel
def fibonacci_successors(code, params, out):  # pragma: no cover - numba
    # Invert the triangular code: remaining is the largest r with r(r+1)/2 <= code.
    r = int((np.sqrt(8.0 * code + 1.0) - 1.0) / 2.0)
    while r * (r + 1) // 2 > code:
        r -= 1
    while (r + 1) * (r + 2) // 2 <= code:
        r += 1
    k = code - r * (r + 1) // 2
    for x in range(1, k + 1):
        left = r - x
        out[x - 1] = left * (left + 1) // 2 + min(2 * x, left)
    return k


# ---------------------------------------------------------------- Wythoff / Corner Queen
@kernel
def wythoff_successors(code, params, out):  # pragma: no cover - numba
    """(x, y) encoded as y * width + x; moves reduce x, y, or both by the same amount."""
    width = params[0]
    y, x = divmod(code, width)
    n = 0
    for d in range(1, x + 1):
        out[n] = code - d
        n += 1
    for d in range(1, y + 1):
        out[n] = code - d * width
        n += 1
    for d in range(1, min(x, y) + 1):
        out[n] = code - d * width - d
        n += 1
    return n


# ----------------------------------------------------------------------------- Chomp
@kernel
def chomp_successors(code, params, out):  # pragma: no cover - numba
    rows = params[0]
    lengths = np.empty(rows, np.int64)
    chomp_unrank(params, code, lengths)
    n = 0
    prefix = 0
    for r in range(rows):
        for c in range(lengths[r]):
            if r == 0 and c == 0:
                continue
            rank = prefix
            for i in range(r, rows):
                rank += chomp_term(params, i, min(lengths[i], c))
            out[n] = rank
            n += 1
        prefix += chomp_term(params, r, lengths[r])
    return n


# ---------------------------------------------------------------------- octal games
def parse_octal(code: str) -> np.ndarray:
    """Digits d_1..d_t of an octal game code such as "0.77" (Kayles) or "0.137"."""
    text = code.strip()
    if text.startswith("0."):
        text = text[2:]
    elif text.startswith("."):
        text = text[1:]
    if not text or any(ch not in "01234567" for ch in text):
        raise ValueError(f"an octal game code looks like '0.77' (digits 0-7), got {code!r}")
    return np.array([0, *(int(ch) for ch in text)], dtype=np.int64)


@njit(cache=True, nogil=True)
def octal_grundy_direct(digits, n_max):  # pragma: no cover - numba
    """Grundy values of single heaps 0..n_max of the octal game with `digits`.

    Digit d_k: bit 1 = may remove k tokens taking the whole heap; bit 2 = removing k
    leaves one heap; bit 4 = removing k leaves two non-empty heaps.
    """
    g = np.zeros(n_max + 1, np.int32)
    seen = np.zeros(4 * n_max + 8, np.int64)  # an XOR of values <= n stays below 4n
    for n in range(1, n_max + 1):
        stamp = n
        for k in range(1, len(digits)):
            d = digits[k]
            if k > n:
                break
            rest = n - k
            if rest == 0:
                if d & 1:
                    seen[0] = stamp
                continue
            if d & 2:
                seen[g[rest]] = stamp
            if d & 4:
                for a in range(1, rest // 2 + 1):
                    seen[g[a] ^ g[rest - a]] = stamp
        m = 0
        while seen[m] == stamp:
            m += 1
        g[n] = m
    return g
