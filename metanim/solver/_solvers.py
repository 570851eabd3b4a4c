"""Per-game solvers over numba tables, behind one `Solver` interface."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from bisect import bisect_left
from collections.abc import Callable
from functools import cache, reduce
from math import comb, isqrt
from operator import xor
from pathlib import Path
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
)
from metanim.games.kayles import run_spans, runs
from metanim.solver import _fast, _misere, _octal, closed_forms, kernels
from metanim.solver._engine import solve_dag
from metanim.solver.reference import MultisetMisereSearch, partitions_up_to
from metanim.util.jit import INTERPRET_WORK, Tiered, interpreted, run

#: Largest table (number of encoded states) the table methods will allocate.
MAX_TABLE_STATES = 60_000_000
#: Largest memory (bytes) a table kernel may allocate, counted from what it really
#: allocates (Wythoff's bitsets grow with the square of the board's long side).
MAX_TABLE_BYTES = 1 << 30
#: Most successor visits a NIM heap table may cost (unbounded takes: quadratic).
NIM_TABLE_WORK = 20_000_000
#: Most successor visits (shapes x cells) a Chomp table may cost: 13x13 (1.8e9) fits,
#: 14x14 (7.8e9) does not, so a query stays within seconds on shared cores.
CHOMP_TABLE_WORK = 2_000_000_000
#: Two-row (and one-row) extents switch to the proven closed form (normal play) past
#: this many successor visits: the table would only be a slower cross-check.
CHOMP_TWO_ROW_TABLE_WORK = 200_000_000
#: Most takes Fibonacci Nim's closed form scans for winning moves beyond the table.
FIBONACCI_SCAN_LIMIT = 200_000

#: Misère subtraction and octal sums are searched over multisets of heaps in Python
#: (misère play does not decompose): a position whose heaps leave at most this many
#: multisets below it (the product of (heap + 1) when no move splits a heap, the
#: partitions of the total below it when one can) is searched, a larger one refused.
OCTAL_MISERE_POSITIONS = 200_000
#: Heaps up to this size take their values from a table computed directly (no period
#: search); a larger heap reads its value through the certified period (`_octal`).
OCTAL_DIRECT_GROW = 4096
#: Most moves the misère search of one query may scan (a second guard, rarely reached).
OCTAL_MISERE_WORK = 20_000_000

#: How a query is answered (see `Solver.method`).
TABLE, CLOSED_FORM = "table", "closed-form"


def _check_size(n_states: int, what: str) -> None:
    if n_states > MAX_TABLE_STATES:
        raise SizeLimitError(
            f"{what} needs a table of {n_states:,} states; the limit is "
            f"{MAX_TABLE_STATES:,} (metanim.solver.MAX_TABLE_STATES)"
        )


def _check_bytes(n_bytes: int, what: str) -> None:
    if n_bytes > MAX_TABLE_BYTES:
        raise SizeLimitError(
            f"{what} needs {n_bytes / 2**20:,.0f} MiB of tables; the limit is "
            f"{MAX_TABLE_BYTES / 2**20:,.0f} MiB (metanim.solver.MAX_TABLE_BYTES)"
        )


def _cache_dir() -> Path | None:
    path = os.environ.get("METANIM_CACHE_DIR")
    return Path(path) if path else None


def _persisted(name: str, compute: Callable[[], tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    """Compute arrays once; with METANIM_CACHE_DIR set, keep them on disk across processes."""
    directory = _cache_dir()
    if directory is None:
        return compute()
    path = directory / f"{name}.npz"
    if path.exists():
        with np.load(path) as data:
            return tuple(data[f"a{i}"] for i in range(len(data.files)))
    arrays = compute()
    directory.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, **{f"a{i}": a for i, a in enumerate(arrays)})
    tmp.replace(path)  # atomic: a crash never leaves a half-written table
    return arrays


# ------------------------------------------------------------------------------ tables
@cache
def subtraction_table(max_take: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Grundy values and misère mover-wins of one NIM heap 0..size (max_take 0 = unbounded)."""
    _check_size(size + 1, f"a NIM heap of {size}")
    params = np.array([max_take], dtype=np.int64)
    limit = size if max_take == 0 else min(size, max_take)
    successors = kernels.subtraction_successors
    # A visit is a few list reads in Python (0.3 µs): up to 150,000 of them interpreted.
    if (size + 1) * limit > 3 * INTERPRET_WORK:
        engine, succ = solve_dag(), successors()
    else:
        engine, succ = solve_dag(compiled=False), interpreted(successors.py_func)
    return _persisted(f"nim-k{max_take}-{size}", lambda: engine(size + 1, succ, params, limit))  # type: ignore[return-value]


@cache
def fibonacci_table(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(int16 Grundy values by triangular code, misère threshold per row): see `_fast`."""
    states = kernels.fibonacci_states(n)
    _check_size(states, f"Fibonacci Nim with {n} stones")
    if n >= 32767:  # the kernel stores values (at most the max take) as int16
        raise SizeLimitError(f"Fibonacci Nim tables hold at most 32,766 stones, got {n}")
    # "v2": the misère table became one threshold per row; never read an old file.
    # The kernel's rows are NumPy slices: a state costs Python about 0.5 µs.
    compiled = states > INTERPRET_WORK
    return _persisted(
        f"fibonacci-v2-{n}", lambda: run(_fast.fibonacci_tables, n, compiled=compiled)
    )  # type: ignore[return-value]


def wythoff_table_bytes(width: int, height: int) -> int:
    """Bytes the Wythoff kernel `_wythoff` picks for this board really allocates."""
    size = max(width, height)
    if size * size > 2 * width * height:  # wythoff_tables: a bitset per column and diagonal
        words = (width + height + min(width, height) + 1) // 64 + 2
        return (2 * width + height) * words * 8 + 16 * (2 * width + height) + 5 * width * height
    words = (3 * size + 1) // 64 + 2  # wythoff_square, then a cropped copy
    return 2 * size * words * 8 + 32 * size + 5 * size * size + 5 * width * height


def wythoff_table_fits(width: int, height: int) -> bool:
    return (
        width * height <= MAX_TABLE_STATES and wythoff_table_bytes(width, height) <= MAX_TABLE_BYTES
    )


@cache
def wythoff_table(width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """Tables indexed by y * width + x for 0 <= x < width, 0 <= y < height."""
    _check_size(width * height, f"a {height}x{width} Corner Queen board")
    _check_bytes(wythoff_table_bytes(width, height), f"a {height}x{width} Corner Queen board")
    return _persisted(f"wythoff-{width}x{height}", lambda: _wythoff(width, height))  # type: ignore[return-value]


#: Cells a Wythoff table may have and still be built by Python (about 2.5 µs each there:
#: bitset words per column and diagonal).
_WYTHOFF_INTERPRET_CELLS = INTERPRET_WORK // 5


def _wythoff(width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    size = max(width, height)
    if size * size > 2 * width * height:  # a thin board: the symmetric square would waste work
        compiled = width * height > _WYTHOFF_INTERPRET_CELLS
        return run(_fast.wythoff_tables, width, height, compiled=compiled)  # type: ignore[no-any-return]
    compiled = size * size > _WYTHOFF_INTERPRET_CELLS
    grundy, wins = run(_fast.wythoff_square, size, compiled=compiled)
    if width == height:
        return grundy, wins
    crop = (slice(0, height), slice(0, width))
    return (
        np.ascontiguousarray(grundy.reshape(size, size)[crop]).ravel(),
        np.ascontiguousarray(wins.reshape(size, size)[crop]).ravel(),
    )


@cache
def chomp_table(rows: int, cols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Grundy values and misère outcomes of every shape inside a rows x cols box."""
    states = kernels.chomp_states(rows, cols)
    _check_size(states, f"Chomp on a {rows}x{cols} extent")
    work = chomp_table_work(rows, cols)
    if work > CHOMP_TABLE_WORK:
        raise SizeLimitError(
            f"Chomp on a {rows}x{cols} extent needs {work:,} successor visits; the limit is "
            f"{CHOMP_TABLE_WORK:,} (metanim.solver.CHOMP_TABLE_WORK)"
        )
    params = kernels.chomp_params(rows, cols)
    grundy, misere = _persisted(f"chomp-{rows}x{cols}", lambda: _chomp(params, states))
    _CHOMP_BUILT.add((rows, cols))
    _chomp_extent.cache_clear()  # a new table may hold shapes better
    return grundy, misere, params


#: The extents (rows, cols) whose Chomp tables this process holds: a shape inside a
#: held extent is looked up there rather than in a new table of its own extent.
_CHOMP_BUILT: set[tuple[int, int]] = set()
#: `ChompSolver.prepare` builds the whole board's table up to this many successor
#: visits (12 x 12: 3.9e8, about a second).
CHOMP_PREPARE_WORK = 1_000_000_000


@cache
def _chomp_extent(used: int, width: int) -> tuple[int, int]:
    """The extent to look a shape up in: the smallest held table that holds it, else
    the shape's own (rows in use x length of row 0)."""
    covering = [(r, c) for r, c in _CHOMP_BUILT if r >= used and c >= width]
    if not covering:
        return used, width
    return min(covering, key=lambda extent: kernels.chomp_states(*extent))


def _chomp(params: np.ndarray, states: int) -> tuple[np.ndarray, np.ndarray]:
    rows, cols = int(params[0]), int(params[1])
    compiled = states * rows * cols > INTERPRET_WORK
    if rows * cols > 256:  # a value may not fit the packed byte: 32-bit entries
        packed32 = run(_fast.chomp_packed_wide, params, states, compiled=compiled)
        grundy32 = (packed32 & 0x7FFFFFFF).astype(np.int32)
        return grundy32, (1 - (packed32 >> 31)).astype(np.uint8)
    packed = run(_fast.chomp_packed, params, states, compiled=compiled)
    grundy = (packed & 255).astype(np.uint8)  # mex <= number of bites <= 255
    mover_wins = (1 - (packed >> 8)).astype(np.uint8)
    return grundy, mover_wins


def chomp_table_work(rows: int, cols: int) -> int:
    """Successor visits a Chomp table costs: shapes x cells."""
    return kernels.chomp_states(rows, cols) * rows * cols


@cache
def _chomp_lost(rows: int, cols: int, misere: bool) -> np.ndarray:
    grundy, wins, _ = chomp_table(rows, cols)
    return ((wins == 0) if misere else (grundy == 0)).view(np.uint8)


@cache
def octal_table(code: str, size: int) -> np.ndarray:
    """Grundy values of single heaps 0..size (by the certified period when there is one)."""
    return _octal.octal_table(code, size)


#: The per-query Chomp kernels, run by Python for the first calls of a process (a small
#: board's env asks once per shape it meets), compiled after.
_chomp_rank = Tiered(kernels.chomp_rank, 2_000)
_chomp_losing_bites = Tiered(_fast.chomp_losing_bites, 2_000)

#: Tables up to this many states are also kept as Python lists for the move queries:
#: indexing a list costs a fraction of indexing a numpy array from Python.
_LIST_STATES = 1_000_000


def _lost_lookup(grundy: np.ndarray, mover_wins: np.ndarray, misere: bool) -> Any:
    """1 where the player to move loses under the play rule, as a list when small."""
    lost = (mover_wins == 0) if misere else (grundy == 0)
    lost = lost.view(np.uint8)
    return lost.tolist() if len(lost) <= _LIST_STATES else lost


# ------------------------------------------------------------------------------ solvers
class Solver(ABC):
    """Exact answers for one game configuration. States must be valid (see `validate`).

    Every query first picks its path with `method` (a table or a proven closed
    form), which raises `SizeLimitError` naming the limit before
    anything is allocated when no path can answer.
    """

    #: Whether answers are worth keeping by state. False where every query is a closed
    #: form over the state's few numbers: asking again costs less than a lookup in a
    #: memo of many states, which is memory no cache holds (`metanim.envs._solve`).
    memoize: bool = True

    def __init__(self, game: Game[Any, Any]) -> None:
        self.game = game

    def method(self, state: Any, query: str = "outcome") -> str:
        """How `query` ("grundy", "outcome" or "winning_moves") is answered for `state`:
        "table" or "closed-form"; raises `SizeLimitError` when neither can."""
        return TABLE

    def prepare(self) -> None:
        """Build, now, the tables that queries over the whole game would build one by one
        (Chomp: one table per new extent), where that is cheap enough; a no-op elsewhere.
        An env calls it once, so its first steps cost what later ones do."""
        return None

    @abstractmethod
    def grundy(self, state: Any) -> int:
        """Normal-play Grundy value (the Sprague–Grundy number), whatever the play rule."""

    def mover_wins(self, state: Any) -> bool:
        """Whether the player to move wins with best play under the game's play rule."""
        if self.game.misere:
            return self._misere_mover_wins(state)
        return self.grundy(state) != 0

    @abstractmethod
    def _misere_mover_wins(self, state: Any) -> bool: ...

    def outcome(self, state: Any) -> str:
        return "N" if self.mover_wins(state) else "P"

    def winning_moves(self, state: Any) -> list[Any]:
        """Every move to a position that is lost for the opponent (empty in a P-position)."""
        game = self.game
        return [m for m in game.legal_moves(state) if not self.mover_wins(game.child(state, m))]

    def optimal_move(self, state: Any, rng: np.random.Generator) -> Any:
        """A uniformly random winning move; in a P-position a uniformly random legal move."""
        moves = self.winning_moves(state) or self.game.legal_moves(state)
        if not moves:
            raise ValueError("the game is over: there is no move to make")
        return moves[int(rng.integers(len(moves)))]


def _no_path(what: str, why: str) -> SizeLimitError:
    return SizeLimitError(f"{what}: {why}")


class NimSolver(Solver):
    """A heap table where it is cheap; Bouton's closed forms at any size beyond it."""

    game: Nim

    def __init__(self, game: Nim) -> None:
        super().__init__(game)
        self._k = game.max_take or 0
        cap = game.capacity
        work = cap * (cap + 1) // 2 if self._k == 0 else cap * min(self._k, cap)
        self.has_table = cap + 1 <= MAX_TABLE_STATES and work <= NIM_TABLE_WORK
        self.memoize = self.has_table  # Bouton's forms: a few xors per heap
        self._values: list[int] | None = None
        self._misere_values: list[int] | None = None
        # The table indexed by value: the heaps of value v are `_heaps[_first[v]:_first[v+1]]`,
        # in increasing order, so a winning move's rest is a search, not a scan of every take.
        self._heaps: list[int] = []
        self._first: list[int] = []

    def _tables(self) -> tuple[list[int], list[int]]:
        if self._values is None:
            grundy, misere = subtraction_table(self._k, self.game.capacity)
            self._values, self._misere_values = grundy.tolist(), misere.tolist()
            self._heaps = np.argsort(grundy, kind="stable").tolist()
            self._first = np.searchsorted(
                grundy[self._heaps], np.arange(int(grundy.max()) + 2)
            ).tolist()
        return self._values, self._misere_values  # type: ignore[return-value]

    def method(self, state: tuple[int, ...], query: str = "outcome") -> str:
        if query == "grundy" or not self.game.misere:
            return TABLE if self.has_table else CLOSED_FORM
        # Misère: one heap from its table; several heaps by Bouton's misère rule on the
        # residues h mod (k+1), proven for every max take (`closed_forms.nim_misere_lost`).
        nonzero = sum(1 for h in state if h)
        return TABLE if self.has_table and nonzero <= 1 else CLOSED_FORM

    def winning_moves(self, state: tuple[int, ...]) -> list[tuple[int, int]]:
        path = self.method(state, "winning_moves")
        if self.game.misere:
            if path == CLOSED_FORM:
                return closed_forms.nim_misere_winning_moves(state, self._k)
            return super().winning_moves(state)
        if path == CLOSED_FORM:
            return closed_forms.nim_winning_moves(state, self._k)
        values, _ = self._tables()
        total = 0
        for h in state:
            total ^= values[h]
        if total == 0:
            return []
        moves = []
        limit, heaps, first = self._k, self._heaps, self._first
        for i, h in enumerate(state):
            target = values[h] ^ total
            if target + 1 >= len(first):
                continue  # no heap of the table has that value
            lowest = 0 if limit == 0 else max(0, h - limit)
            # The rests in [lowest, h - 1] of value `target`, largest first: takes increasing.
            lo = bisect_left(heaps, lowest, first[target], first[target + 1])
            hi = bisect_left(heaps, h, lo, first[target + 1])
            moves += [(i, h - rest) for rest in reversed(heaps[lo:hi])]
        return moves

    def grundy(self, state: tuple[int, ...]) -> int:
        if self.method(state, "grundy") == CLOSED_FORM:
            return closed_forms.nim_grundy(state, self._k)
        values, _ = self._tables()
        return reduce(xor, (values[h] for h in state), 0)

    def _misere_mover_wins(self, state: tuple[int, ...]) -> bool:
        if self.method(state, "outcome") == TABLE:
            return bool(self._tables()[1][max(state)])
        return not closed_forms.nim_misere_lost(state, self._k)


class FibonacciSolver(Solver):
    """The (remaining, max take) table; beyond it, Zeckendorf's rule for normal play."""

    game: FibonacciNim

    def __init__(self, game: FibonacciNim) -> None:
        super().__init__(game)
        self.has_table = kernels.fibonacci_states(game.n) <= MAX_TABLE_STATES
        self._lost: Any = None

    def _tables(self) -> tuple[np.ndarray, np.ndarray]:
        grundy, first_win = fibonacci_table(self.game.n)
        if self._lost is None and len(grundy) <= _LIST_STATES:
            # Small tables: a flat list makes the optimal-move query a few list reads.
            misere = self.game.misere
            wins = _fast.fibonacci_mover_wins(first_win) if misere else grundy
            self._lost = _lost_lookup(grundy, wins, misere)
        return grundy, first_win

    def _lost_children(self, remaining: int, max_take: int) -> np.ndarray:
        """For takes 1..max_take, whether the child (r - x, min(2x, r - x)) is lost."""
        grundy, first_win = self._tables()
        take = np.arange(1, max_take + 1, dtype=np.int64)
        left = remaining - take
        child = np.minimum(2 * take, left)
        if self.game.misere:  # (left, c) is won exactly when c == 0 or c >= first_win[left]
            return (child > 0) & (child < first_win[left])
        return grundy[left * (left + 1) // 2 + child] == 0

    def method(self, state: tuple[int, int], query: str = "outcome") -> str:
        if self.has_table:
            return TABLE
        limit = (
            f"the Fibonacci Nim table holds at most {MAX_TABLE_STATES:,} states "
            f"(metanim.solver.MAX_TABLE_STATES: piles up to {fibonacci_table_limit():,} stones)"
        )
        what = f"Fibonacci Nim with {self.game.n} stones"
        if query == "grundy":
            raise _no_path(what, f"Grundy values have no closed form and {limit}")
        if self.game.misere:
            raise _no_path(what, f"misère play has no proven closed form and {limit}")
        if query == "winning_moves" and state[1] > FIBONACCI_SCAN_LIMIT and self.mover_wins(state):
            raise _no_path(
                what,
                f"{limit}; beyond it the closed form checks each take, at most "
                f"{FIBONACCI_SCAN_LIMIT:,} (metanim.solver.FIBONACCI_SCAN_LIMIT), "
                f"and this state allows {state[1]:,}",
            )
        return CLOSED_FORM

    def winning_moves(self, state: tuple[int, int]) -> list[int]:
        remaining, max_take = state
        if self.method(state, "winning_moves") == CLOSED_FORM:
            if not self.mover_wins(state):
                return []  # a P-position has no winning move, however many takes it allows
            # A take x wins iff it empties the pile or the child (r - x, 2x) is P.
            return [
                x
                for x in range(1, max_take + 1)
                if x == remaining or zeckendorf_smallest(remaining - x) > 2 * x
            ]
        self._tables()
        lost = self._lost
        if lost is None:  # a large table: no per-state flag array, one vectorized pass
            return [int(x) + 1 for x in np.flatnonzero(self._lost_children(remaining, max_take))]
        moves = []
        for x in range(1, max_take + 1):
            left = remaining - x
            if lost[left * (left + 1) // 2 + min(2 * x, left)]:
                moves.append(x)
        return moves

    def grundy(self, state: tuple[int, int]) -> int:
        self.method(state, "grundy")
        return int(self._tables()[0][self.game.state_index(state)])

    def mover_wins(self, state: tuple[int, int]) -> bool:
        if self.method(state, "outcome") == CLOSED_FORM:
            return state[0] > 0 and zeckendorf_smallest(state[0]) <= state[1]
        return super().mover_wins(state)

    def _misere_mover_wins(self, state: tuple[int, int]) -> bool:
        remaining, max_take = state
        return max_take == 0 or max_take >= int(self._tables()[1][remaining])


def fibonacci_table_limit() -> int:
    """The largest pile whose Fibonacci Nim table fits `MAX_TABLE_STATES`."""
    n = isqrt(2 * MAX_TABLE_STATES)
    while kernels.fibonacci_states(n) > MAX_TABLE_STATES:
        n -= 1
    return n


def zeckendorf_smallest(n: int) -> int:
    """The smallest part of n's Zeckendorf representation (n >= 1)."""
    fibs = [1, 2]
    while fibs[-1] <= n:
        fibs.append(fibs[-1] + fibs[-2])
    part = n
    for f in reversed(fibs):
        if f <= n:
            n -= f
            part = f
    return part


class KaylesSolver(Solver):
    """Rows split into runs; normal play is the XOR of octal-game values of the runs."""

    game: Kayles
    OCTAL = "0.77"
    #: Runs scored per numpy chunk in `winning_moves` (bounds its memory).
    CHUNK = 1 << 20

    def __init__(self, game: Kayles) -> None:
        super().__init__(game)
        # Values computed directly up to the certified period's search size; any longer
        # run is read through the period (Guy–Smith), so nothing grows with the row.
        self._base, self._n0, self._p = _octal._period_search(self.OCTAL)
        # Plain ints of the directly computed values: read per run on every query.
        self._base_list: list[int] = self._base.tolist()
        # (run length, target value) -> sorted (offset, take) of the moves inside such a
        # run that leave the value `target`; positions differ, run lengths recur.
        self._hits: dict[tuple[int, int], list[tuple[int, int]]] = {}

    def _value(self, n: int) -> int:
        base = self._base_list
        if n < len(base):
            return base[n]
        return base[self._n0 + (n - self._n0) % self._p]

    def _values(self, ns: np.ndarray) -> np.ndarray:
        base = self._base
        inside = ns < len(base)
        folded = np.where(inside, ns, self._n0 + (ns - self._n0) % self._p)
        return base[folded]

    def method(self, state: tuple[str, ...], query: str = "outcome") -> str:
        if query == "grundy" or not self.game.misere:
            longest = max((n for row in state for _, n in run_spans(row)), default=0)
            return TABLE if longest < len(self._base) else CLOSED_FORM
        parts = [n for row in state for _, n in run_spans(row)]
        need = sum(parts) + len(parts) - 1
        if need > _misere.KAYLES_MISERE_LIMIT:
            raise SizeLimitError(_misere.kayles_misere_refusal(need))
        return TABLE

    def grundy(self, state: tuple[str, ...]) -> int:
        total = 0
        for row in state:
            for _, n in run_spans(row):
                total ^= self._value(n)
        return total

    def winning_moves(self, state: tuple[str, ...]) -> list[tuple[int, int, int]]:
        if self.game.misere:
            self.method(state, "winning_moves")
            return super().winning_moves(state)
        # The runs (row, first pin, length, value) in one pass over each row's parts (an
        # env's optimal opponent asks on most steps).
        base = self._base_list
        spans = []
        total = 0
        for r, row in enumerate(state):
            i = 0
            for part in row.split("0"):
                if part:
                    n = len(part)
                    value = base[n] if n < len(base) else self._value(n)
                    total ^= value
                    spans.append((r, i, n, value))
                    i += n + 1
                else:
                    i += 1
        if total == 0:
            return []
        found: list[tuple[int, int, int]] = []
        # Rows in order, runs left to right, hits sorted within a run: action-id order.
        hits = self._hits
        for r, start, n, value in spans:
            hit = hits.get((n, value ^ total))
            if hit is None:
                hit = self._run_hits(n, value ^ total)
            if hit:
                found += [(r, start + a, take) for a, take in hit]
        return found

    def _run_hits(self, n: int, target: int) -> list[tuple[int, int]]:
        """(offset, take) of each move in a run of `n` pins leaving runs of XOR `target`.

        Sorted by offset, then take. Memoized for runs inside the directly computed
        table; longer runs are scored in numpy chunks (bounded memory), unmemoized.
        """
        key = (n, target)
        found = self._hits.get(key)
        if found is not None:
            return found
        hits: list[tuple[int, int]] = []
        if n < len(self._base_list):
            v = self._base_list
            # Knocking pins a.. (take of them) leaves runs a and n - take - a.
            hits = [
                (a, take)
                for a in range(n)
                for take in (1, 2)
                if a + take <= n and v[a] ^ v[n - take - a] == target
            ]
            self._hits[key] = hits
            return hits
        for take in (1, 2):
            rest = n - take
            for lo in range(0, rest + 1, self.CHUNK):
                a = np.arange(lo, min(rest + 1, lo + self.CHUNK), dtype=np.int64)
                hits += [
                    (int(x), take) for x in a[(self._values(a) ^ self._values(rest - a)) == target]
                ]
        hits.sort()
        return hits

    def _misere_mover_wins(self, state: tuple[str, ...]) -> bool:
        self.method(state, "outcome")
        parts = [n for row in state for _, n in run_spans(row)]
        # Every position of this game has sum + runs - 1 <= pins + rows - 1.
        bound = min(sum(self.game.rows) + len(self.game.rows) - 1, _misere.KAYLES_MISERE_LIMIT)
        bound = max(bound, sum(parts) + len(parts) - 1)
        found = _misere.kayles_misere_mover_wins(parts, bound)
        assert found is not None  # method() checked the bound
        return found


def _lengths(state: tuple[int, ...], rows: int) -> np.ndarray:
    """A shape's row lengths as `rows` int64 entries (zeros past its last row)."""
    if len(state) == rows:
        return np.array(state, dtype=np.int64)
    out = np.zeros(rows, dtype=np.int64)
    used = min(rows, len(state))
    out[:used] = state[:used]
    return out


def _rows_used(state: tuple[int, ...]) -> int:
    """The rows of a Chomp shape that hold squares."""
    return len(state) - state.count(0)


class ChompSolver(Solver):
    """Solves each shape on its own extent (rows in use x length of row 0), not the board's;
    two-row shapes beyond the table by the closed form (normal play)."""

    game: Chomp

    def __init__(self, game: Chomp) -> None:
        super().__init__(game)
        # (params, lost bytes) of the whole board's table once `prepare` holds it: a
        # move query of any shape reads it directly (an env asks on most steps).
        self._board: tuple[np.ndarray, np.ndarray] | None = None

    def method(self, state: tuple[int, ...], query: str = "outcome") -> str:
        used = _rows_used(state)
        if used == 0:
            return TABLE
        return _chomp_method(used, state[0], self.game.misere, query)

    def prepare(self) -> None:
        rows, cols = self.game.rows, self.game.cols
        work = chomp_table_work(rows, cols)
        if work <= CHOMP_PREPARE_WORK and kernels.chomp_states(rows, cols) <= MAX_TABLE_STATES:
            _, _, params = chomp_table(rows, cols)
            self._board = params, _chomp_lost(rows, cols, self.game.misere)
            # One query loads the compiled lookup kernels (numba's cache) now too.
            self.winning_moves(self.game.initial_state())

    def _lookup(self, state: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, int]:
        used = _rows_used(state)
        grundy, misere, params = chomp_table(*_chomp_extent(used, state[0]))
        rank = _chomp_rank(params, _lengths(state, int(params[0])))
        return grundy, misere, int(rank)

    def winning_moves(self, state: tuple[int, ...]) -> list[tuple[int, int]]:
        cols = self.game.cols
        if self._board is not None:  # every shape of the board is in its table
            params, lost = self._board
            out = np.empty(len(state) * cols, dtype=np.int64)
            count = _chomp_losing_bites(params, np.array(state, dtype=np.int64), lost, out)
            return [divmod(e, cols) for e in out[:count].tolist()]
        used = _rows_used(state)
        if used == 0:
            return []
        if self.method(state, "winning_moves") == CLOSED_FORM:
            return closed_forms.chomp_two_row_winning_moves(state[0], state[1] if used > 1 else 0)
        rows, cols = _chomp_extent(used, state[0])
        _, _, params = chomp_table(rows, cols)
        lost = _chomp_lost(rows, cols, self.game.misere)
        out = np.empty(rows * cols, dtype=np.int64)
        count = _chomp_losing_bites(params, _lengths(state, rows), lost, out)
        # Bites come back as r * cols + c with the extent's own width (no fixed field).
        return [divmod(e, cols) for e in out[:count].tolist()]

    def grundy(self, state: tuple[int, ...]) -> int:
        self.method(state, "grundy")
        grundy, _, rank = self._lookup(state)
        return int(grundy[rank])

    def mover_wins(self, state: tuple[int, ...]) -> bool:
        if self.method(state, "outcome") == CLOSED_FORM:
            used = _rows_used(state)
            return not closed_forms.chomp_two_row_is_p(state[0], state[1] if used > 1 else 0)
        return super().mover_wins(state)

    def _misere_mover_wins(self, state: tuple[int, ...]) -> bool:
        _, misere, rank = self._lookup(state)
        return bool(misere[rank])


@cache
def _chomp_method(used: int, width: int, misere: bool, query: str) -> str:
    """`ChompSolver.method` for a shape of `used` rows and `width` squares in row 0 (the
    answer depends on nothing else; a refusal raises, and is not cached)."""
    states = comb(used + width, used)
    work = chomp_table_work(used, width)
    closed = used <= 2 and not misere and query != "grundy"
    if closed and work > CHOMP_TWO_ROW_TABLE_WORK:
        return CLOSED_FORM
    if states <= MAX_TABLE_STATES and work <= CHOMP_TABLE_WORK:
        return TABLE
    limit = (
        f"its {used}x{width} extent needs a table of {states:,} shapes; the limit is "
        f"{MAX_TABLE_STATES:,} (metanim.solver.MAX_TABLE_STATES)"
        if states > MAX_TABLE_STATES
        else f"its {used}x{width} extent needs {work:,} successor visits; the limit "
        f"is {CHOMP_TABLE_WORK:,} (metanim.solver.CHOMP_TABLE_WORK)"
    )
    if query == "grundy":
        raise _no_path("Chomp Grundy value", f"no closed form, and {limit}")
    if used <= 2 and not misere:
        return CLOSED_FORM
    raise _no_path("Chomp", f"{limit}; a closed form exists only for two rows in normal play")


class CornerQueenSolver(Solver):
    """The board's table where it fits in memory; Beatty pairs (Wythoff) beyond it."""

    game: CornerQueen

    def __init__(self, game: CornerQueen) -> None:
        super().__init__(game)
        self.has_table = wythoff_table_fits(game.width, game.height)
        self.memoize = self.has_table  # Wythoff's pairs: a few float products
        self._lost: Any = None

    def _tables(self) -> tuple[np.ndarray, np.ndarray]:
        grundy, misere = wythoff_table(self.game.width, self.game.height)
        if self._lost is None:
            self._lost = _lost_lookup(grundy, misere, self.game.misere)
        return grundy, misere

    def method(self, state: tuple[int, int], query: str = "outcome") -> str:
        if self.has_table:
            return TABLE
        if query == "grundy":
            game = self.game
            cells = game.width * game.height
            need = (
                f"the table needs {cells:,} states; the limit is {MAX_TABLE_STATES:,} "
                "(metanim.solver.MAX_TABLE_STATES)"
                if cells > MAX_TABLE_STATES
                else f"the table needs {wythoff_table_bytes(game.width, game.height) / 2**20:,.0f}"
                f" MiB; the limit is {MAX_TABLE_BYTES / 2**20:,.0f} MiB "
                "(metanim.solver.MAX_TABLE_BYTES)"
            )
            raise _no_path(
                f"Corner Queen Grundy value on a {game.height}x{game.width} board",
                f"no closed form, and {need}",
            )
        return CLOSED_FORM

    def winning_moves(self, state: tuple[int, int]) -> list[tuple[int, int]]:
        row, col = state
        height = self.game.height
        if self.method(state, "winning_moves") == CLOSED_FORM:
            x, y = self.game.wythoff(state)
            targets = closed_forms.wythoff_winning_targets(x, y, misere=self.game.misere)
            return sorted(((height - 1 - ty, tx) for tx, ty in targets), key=self.game.action_id)
        # Moves in the order of legal_moves (by action id, row-major); code = y * width + x
        # with x = col, y = height - 1 - row.
        self._tables()
        width, lost = self.game.width, self._lost
        base = (height - 1 - row) * width
        moves = [(row, c) for c in range(col) if lost[base + c]]
        for r in range(row + 1, height):
            base -= width
            d = r - row
            if d <= col and lost[base + col - d]:
                moves.append((r, col - d))
            if lost[base + col]:
                moves.append((r, col))
        return moves

    def _code(self, state: tuple[int, int]) -> int:
        return self.game.state_index(state)  # y * width + x: the table's index

    def mover_wins(self, state: tuple[int, int]) -> bool:
        if self.method(state, "outcome") == CLOSED_FORM:
            x, y = self.game.wythoff(state)
            return not closed_forms.wythoff_is_p(x, y, misere=self.game.misere)
        return super().mover_wins(state)

    def grundy(self, state: tuple[int, int]) -> int:
        self.method(state, "grundy")
        return int(self._tables()[0][self._code(state)])

    def _misere_mover_wins(self, state: tuple[int, int]) -> bool:
        return bool(self._tables()[1][self._code(state)])


def octal_heap_moves(digits: tuple[int, ...], n: int) -> list[tuple[int, ...]]:
    """The heaps each move of the octal game `digits` leaves in one heap of `n`."""
    out: list[tuple[int, ...]] = []
    for k in range(1, min(len(digits) - 1, n) + 1):
        d, rest = digits[k], n - k
        if rest == 0:
            if d & 1:
                out.append(())
            continue
        if d & 2:
            out.append((rest,))
        if d & 4:
            out += [(a, rest - a) for a in range(1, rest // 2 + 1)]
    return out


@cache
def _octal_direct(code: str, size: int) -> list[int]:
    """Values of heaps 0..size - 1 of the octal game `code`, computed directly."""
    return _octal.octal_values(code, size - 1).tolist()


class OctalSumSolver(Solver):
    """The generated families: each heap (Subtraction) or group of pins (Octal) is a heap
    of the octal game `game.code` (a subtraction set S is the code with d_s = 3).

    Normal play XORs the heap values, computed directly up to `OCTAL_DIRECT_GROW` and
    read through the certified period beyond it (Guy–Smith, "closed-form"). Misère play searches the
    multisets of heaps (`MultisetMisereSearch`) while `OCTAL_MISERE_POSITIONS` allows.
    """

    game: Subtraction | Octal

    def __init__(self, game: Subtraction | Octal) -> None:
        super().__init__(game)
        code = game.code
        self._code = code
        # Values computed directly, grown as heaps need them: a code without a known
        # period (0.007) never pays for the period search unless a heap passes
        # OCTAL_DIRECT_GROW.
        self._base_list: list[int] = _octal_direct(code, 32)
        self._digits = tuple(int(d) for d in _octal.octal_digits(code))
        self._splits = any(d & 4 for d in self._digits)
        self._search: MultisetMisereSearch | None = None

    def components(self, state: Any) -> list[int]:
        """The non-empty heaps of a position (a Subtraction state's heaps, an Octal
        state's groups of standing pins)."""
        if isinstance(self.game, Subtraction):
            return [h for h in state if h]
        return [n for row in state for n in runs(row)]

    def _value(self, n: int) -> int:
        base = self._base_list
        if n < len(base):
            return base[n]
        if n <= OCTAL_DIRECT_GROW:
            size = 32
            while size <= n:
                size *= 2
            self._base_list = base = _octal_direct(self._code, min(size, OCTAL_DIRECT_GROW + 1))
            return base[n]
        return _octal.octal_grundy(self._code, n)

    def method(self, state: Any, query: str = "outcome") -> str:
        parts = self.components(state)
        if query == "grundy" or not self.game.misere:
            longest = max(parts, default=0)
            if longest <= OCTAL_DIRECT_GROW:
                return TABLE
            if _octal.octal_period(self._code) is None and longest > _octal.OCTAL_DIRECT_LIMIT:
                raise _no_path(
                    f"the octal game {self._code}",
                    f"no period certified below {_octal.OCTAL_PERIOD_SEARCH:,} and a heap of "
                    f"{longest:,} is past OCTAL_DIRECT_LIMIT ({_octal.OCTAL_DIRECT_LIMIT:,})",
                )
            return CLOSED_FORM
        if self._splits:
            positions = partitions_up_to(sum(parts))
            why = f"the partitions of {sum(parts)} (its heaps' total)"
        else:
            positions = reduce(lambda a, h: a * (h + 1), parts, 1)
            why = "the product of (heap + 1) over its heaps"
        if positions > OCTAL_MISERE_POSITIONS:
            raise _no_path(
                f"misère {self.game.title} {self._code}",
                f"the search over multisets of heaps may visit {positions:,} positions "
                f"({why}); the limit is {OCTAL_MISERE_POSITIONS:,} "
                "(metanim.solver.OCTAL_MISERE_POSITIONS); misère play has no XOR rule",
            )
        return TABLE

    def grundy(self, state: Any) -> int:
        self.method(state, "grundy")
        return reduce(xor, (self._value(n) for n in self.components(state)), 0)

    def _misere_mover_wins(self, state: Any) -> bool:
        self.method(state, "outcome")
        if self._search is None:
            digits = self._digits
            self._search = MultisetMisereSearch(
                lambda n: octal_heap_moves(digits, n), max_work=OCTAL_MISERE_WORK
            )
        self._search.work = 0
        return self._search.mover_wins(self.components(state))

    def winning_moves(self, state: Any) -> list[Any]:
        self.method(state, "winning_moves")
        return super().winning_moves(state)


SOLVERS: dict[type[Game[Any, Any]], type[Solver]] = {
    Nim: NimSolver,
    FibonacciNim: FibonacciSolver,
    Kayles: KaylesSolver,
    Chomp: ChompSolver,
    CornerQueen: CornerQueenSolver,
    Subtraction: OctalSumSolver,
    Octal: OctalSumSolver,
}


#: Solvers by game object identity: hashing a game (its parameters as JSON) costs
#: more than a whole table query, so repeated queries on one game skip it.
_BY_IDENTITY: dict[int, tuple[Game[Any, Any], Solver]] = {}


def solver_for(game: Game[Any, Any]) -> Solver:
    """The (cached) solver of a game configuration."""
    entry = _BY_IDENTITY.get(id(game))
    if entry is not None and entry[0] is game:
        return entry[1]
    solver = _solver_for_config(game)
    if len(_BY_IDENTITY) >= 4096:
        _BY_IDENTITY.clear()
    _BY_IDENTITY[id(game)] = (game, solver)  # holding the game keeps its id unique
    return solver


@cache
def _solver_for_config(game: Game[Any, Any]) -> Solver:
    for cls, solver_cls in SOLVERS.items():
        if isinstance(game, cls):
            return solver_cls(game)
    raise TypeError(f"no solver for {type(game).__name__}")
