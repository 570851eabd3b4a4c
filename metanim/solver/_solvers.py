"""Per-game solvers over numba tables, behind one `Solver` interface."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from functools import cache, reduce
from math import comb
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
    SizeLimitError,
)
from metanim.games.kayles import runs
from metanim.solver import _fast, _misere, _octal, kernels
from metanim.solver._engine import solve_dag

#: Largest table (number of encoded states) the table methods will allocate.
MAX_TABLE_STATES = 60_000_000


def _check_size(n_states: int, what: str) -> None:
    if n_states > MAX_TABLE_STATES:
        raise SizeLimitError(
            f"{what} needs a table of {n_states:,} states; the limit is "
            f"{MAX_TABLE_STATES:,} (metanim.solver.MAX_TABLE_STATES)"
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
    return _persisted(
        f"nim-k{max_take}-{size}",
        lambda: solve_dag()(size + 1, kernels.subtraction_successors(), params, limit),
    )  # type: ignore[return-value]


@cache
def fibonacci_table(n: int) -> tuple[np.ndarray, np.ndarray]:
    states = kernels.fibonacci_states(n)
    _check_size(states, f"Fibonacci Nim with {n} stones")
    if n >= 32767:  # the kernel stores values (at most the max take) as int16
        raise SizeLimitError(f"Fibonacci Nim tables hold at most 32,766 stones, got {n}")
    return _persisted(f"fibonacci-{n}", lambda: _fast.fibonacci_tables(n))  # type: ignore[return-value]


@cache
def wythoff_table(width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """Tables indexed by y * width + x for 0 <= x < width, 0 <= y < height."""
    _check_size(width * height, f"a {height}x{width} Corner Queen board")
    return _persisted(f"wythoff-{width}x{height}", lambda: _wythoff(width, height))  # type: ignore[return-value]


def _wythoff(width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    size = max(width, height)
    if size * size > 2 * width * height:  # a thin board: the symmetric square would waste work
        return _fast.wythoff_tables(width, height)
    grundy, wins = _fast.wythoff_square(size)
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
    params = kernels.chomp_params(rows, cols)
    grundy, misere = _persisted(f"chomp-{rows}x{cols}", lambda: _chomp(params, states))
    return grundy, misere, params


def _chomp(params: np.ndarray, states: int) -> tuple[np.ndarray, np.ndarray]:
    rows, cols = int(params[0]), int(params[1])
    if rows * cols > 256:  # a value may not fit the packed byte: the generic engine
        return solve_dag()(states, kernels.chomp_successors(), params, rows * cols)
    packed = _fast.chomp_packed(params, states)
    grundy = (packed & 255).astype(np.uint8)  # mex <= number of bites <= 255
    mover_wins = (1 - (packed >> 8)).astype(np.uint8)
    return grundy, mover_wins


@cache
def _chomp_lost(rows: int, cols: int, misere: bool) -> np.ndarray:
    grundy, wins, _ = chomp_table(rows, cols)
    return ((wins == 0) if misere else (grundy == 0)).view(np.uint8)


@cache
def octal_table(code: str, size: int) -> np.ndarray:
    """Grundy values of single heaps 0..size (by the certified period when there is one)."""
    return _octal.octal_table(code, size)


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
    """Exact answers for one game configuration. States must be valid (see `validate`)."""

    def __init__(self, game: Game[Any, Any]) -> None:
        self.game = game

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
        return [m for m in game.legal_moves(state) if not self.mover_wins(game._apply(state, m))]

    def optimal_move(self, state: Any, rng: np.random.Generator) -> Any:
        """A uniformly random winning move; in a P-position a uniformly random legal move."""
        moves = self.winning_moves(state) or self.game.legal_moves(state)
        if not moves:
            raise ValueError("the game is over: there is no move to make")
        return moves[int(rng.integers(len(moves)))]


class _MisereSearch:
    """Memoized misère outcome over canonical multisets of components.

    Misère play does not decompose into a XOR, so the whole position is searched;
    `component_moves(c)` lists the tuples of components a move on `c` leaves.
    """

    def __init__(self, component_moves: Callable[[int], list[tuple[int, ...]]]) -> None:
        self._moves = cache(component_moves)
        self._memo: dict[tuple[int, ...], bool] = {}

    def mover_wins(self, key: tuple[int, ...]) -> bool:
        key = tuple(sorted(c for c in key if c))
        if key in self._memo:
            return self._memo[key]
        # Iterative DFS so deep positions cannot overflow the Python stack.
        stack: list[tuple[tuple[int, ...], list[tuple[int, ...]] | None]] = [(key, None)]
        while stack:
            node, children = stack[-1]
            if node in self._memo:
                stack.pop()
                continue
            if children is None:
                children = self._children(node)
                stack[-1] = (node, children)
                if not children:
                    self._memo[node] = True  # no move: the mover has won (misère)
                    stack.pop()
                    continue
            pending = [c for c in children if c not in self._memo]
            if any(not self._memo[c] for c in children if c in self._memo):
                self._memo[node] = True
                stack.pop()
            elif pending:
                stack.append((pending[0], None))
            else:
                self._memo[node] = False
                stack.pop()
        return self._memo[key]

    def _children(self, key: tuple[int, ...]) -> list[tuple[int, ...]]:
        out = set()
        for i, comp in enumerate(key):
            if i and key[i - 1] == comp:
                continue  # equal components give equal children
            rest = key[:i] + key[i + 1 :]
            for parts in self._moves(comp):
                out.add(tuple(sorted(c for c in (*rest, *parts) if c)))
        return sorted(out)


class NimSolver(Solver):
    game: Nim

    def __init__(self, game: Nim) -> None:
        super().__init__(game)
        self._k = game.max_take or 0
        self._grundy_table, self._misere_table = subtraction_table(self._k, game.capacity)
        self._values = self._grundy_table.tolist()
        self._search = _MisereSearch(self._heap_moves)

    def winning_moves(self, state: tuple[int, ...]) -> list[tuple[int, int]]:
        if self.game.misere:
            return super().winning_moves(state)
        values = self._values
        total = 0
        for h in state:
            total ^= values[h]
        if total == 0:
            return []
        moves = []
        limit = self._k
        for i, h in enumerate(state):
            target = values[h] ^ total
            lowest = 0 if limit == 0 else max(0, h - limit)
            for rest in range(h - 1, lowest - 1, -1):  # takes in increasing order
                if values[rest] == target:
                    moves.append((i, h - rest))
        return moves

    def _heap_moves(self, h: int) -> list[tuple[int, ...]]:
        return [(h - x,) for x in range(1, self.game.take_limit(h) + 1)]

    def grundy(self, state: tuple[int, ...]) -> int:
        return reduce(xor, (int(self._grundy_table[h]) for h in state), 0)

    def _misere_mover_wins(self, state: tuple[int, ...]) -> bool:
        heaps = [h for h in state if h]
        if len(heaps) <= 1:
            return bool(self._misere_table[heaps[0] if heaps else 0])
        if self._k == 0:
            # Bouton's misère rule: play as in normal Nim unless every heap is 0 or 1.
            if max(heaps) == 1:
                return len(heaps) % 2 == 0
            return self.grundy(state) != 0
        return self._search.mover_wins(tuple(heaps))


class FibonacciSolver(Solver):
    game: FibonacciNim

    def __init__(self, game: FibonacciNim) -> None:
        super().__init__(game)
        self._grundy_table, self._misere_table = fibonacci_table(game.n)
        self._lost = _lost_lookup(self._grundy_table, self._misere_table, game.misere)

    def winning_moves(self, state: tuple[int, int]) -> list[int]:
        remaining, max_take = state
        lost = self._lost
        moves = []
        for x in range(1, max_take + 1):
            left = remaining - x
            if lost[left * (left + 1) // 2 + min(2 * x, left)]:
                moves.append(x)
        return moves

    def grundy(self, state: tuple[int, int]) -> int:
        return int(self._grundy_table[kernels.fibonacci_code(*state)])

    def _misere_mover_wins(self, state: tuple[int, int]) -> bool:
        return bool(self._misere_table[kernels.fibonacci_code(*state)])


class KaylesSolver(Solver):
    """Rows split into runs; normal play is the XOR of octal-game values of the runs."""

    game: Kayles
    OCTAL = "0.77"

    def __init__(self, game: Kayles) -> None:
        super().__init__(game)
        self._values = octal_table(self.OCTAL, max(game.width, 1))

    @staticmethod
    def _run_moves(n: int) -> list[tuple[int, ...]]:
        return [(a, n - k - a) for k in (1, 2) if k <= n for a in range(0, (n - k) // 2 + 1)]

    def grundy(self, state: tuple[str, ...]) -> int:
        return reduce(xor, (int(self._values[n]) for row in state for n in runs(row)), 0)

    def _misere_mover_wins(self, state: tuple[str, ...]) -> bool:
        parts = [n for row in state for n in runs(row)]
        # Every position of this game has sum + runs - 1 <= pins + rows - 1; within the
        # numba table's reach use it, else the plain-Python search.
        bound = min(sum(self.game.rows) + len(self.game.rows) - 1, _misere.KAYLES_MISERE_LIMIT)
        found = _misere.kayles_misere_mover_wins(parts, bound)
        if found is None:
            # A whole-position search beyond the table is exponential (80 pins: a minute),
            # so refuse rather than stall a tournament.
            raise SizeLimitError(
                f"misère Kayles is solved for positions with pins + runs - 1 <= "
                f"{_misere.KAYLES_MISERE_LIMIT} (metanim.solver._misere.KAYLES_MISERE_LIMIT); "
                f"this one needs {sum(parts) + len(parts) - 1}"
            )
        return found


class ChompSolver(Solver):
    """Solves each shape on its own extent (rows in use x length of row 0), not the board's."""

    game: Chomp

    def _lookup(self, state: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, int]:
        used = sum(1 for x in state if x)
        grundy, misere, params = chomp_table(used, state[0])
        rank = kernels.chomp_rank(params, np.asarray(state[:used], dtype=np.int64))
        return grundy, misere, int(rank)

    def winning_moves(self, state: tuple[int, ...]) -> list[tuple[int, int]]:
        used = sum(1 for x in state if x)
        if used == 0:
            return []
        _, _, params = chomp_table(used, state[0])
        lost = _chomp_lost(used, state[0], self.game.misere)
        out = np.empty(used * state[0], dtype=np.int64)
        lengths = np.array(state[:used], dtype=np.int64)
        count = _fast.chomp_losing_bites(params, lengths, lost, out)
        return [(int(e) >> 8, int(e) & 255) for e in out[:count]]

    def grundy(self, state: tuple[int, ...]) -> int:
        grundy, _, rank = self._lookup(state)
        return int(grundy[rank])

    def _misere_mover_wins(self, state: tuple[int, ...]) -> bool:
        _, misere, rank = self._lookup(state)
        return bool(misere[rank])

    @staticmethod
    def table_states(state: tuple[int, ...]) -> int:
        used = sum(1 for x in state if x)
        return comb(used + state[0], used)


class CornerQueenSolver(Solver):
    game: CornerQueen

    def __init__(self, game: CornerQueen) -> None:
        super().__init__(game)
        self._grundy_table, self._misere_table = wythoff_table(game.width, game.height)
        self._lost = _lost_lookup(self._grundy_table, self._misere_table, game.misere)

    def winning_moves(self, state: tuple[int, int]) -> list[tuple[int, int]]:
        # Moves in the order of legal_moves (by action id, row-major); code = y * width + x
        # with x = col, y = height - 1 - row.
        row, col = state
        width, lost = self.game.width, self._lost
        base = (self.game.height - 1 - row) * width
        moves = [(row, c) for c in range(col) if lost[base + c]]
        for r in range(row + 1, self.game.height):
            base -= width
            d = r - row
            if d <= col and lost[base + col - d]:
                moves.append((r, col - d))
            if lost[base + col]:
                moves.append((r, col))
        return moves

    def _code(self, state: tuple[int, int]) -> int:
        x, y = self.game.wythoff(state)
        return y * self.game.width + x

    def grundy(self, state: tuple[int, int]) -> int:
        return int(self._grundy_table[self._code(state)])

    def _misere_mover_wins(self, state: tuple[int, int]) -> bool:
        return bool(self._misere_table[self._code(state)])


SOLVERS: dict[type[Game[Any, Any]], type[Solver]] = {
    Nim: NimSolver,
    FibonacciNim: FibonacciSolver,
    Kayles: KaylesSolver,
    Chomp: ChompSolver,
    CornerQueen: CornerQueenSolver,
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
