"""Benchmark the numba solver against plain-Python references; writes docs/benchmarks.md.

Usage: python scripts/bench_solver.py [--quick] [--chomp14] [--chomp16] [--fast-paths]

`--fast-paths` runs only the issue-15 comparisons (Officers at 100,000 and the
Fibonacci table's peak memory at 10,000) against copies of the kernels they replaced,
and writes their own section.

Each workload times the numba kernel and a plain-Python memoized recurrence in the
same run (median of several runs). Where the reference cannot finish at the target
size, both run at a smaller size for the ratio and the numba time at the target size
is reported on its own row. Peak memory is the peak resident-set growth of a forked
child running the workload once (numba allocates outside Python's allocator).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import multiprocessing as mp
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _bench import machine, median_time, table, write_section

from metanim.games import Chomp, CornerQueen, FibonacciNim, Nim
from metanim.solver import (
    ReferenceSolver,
    _chomp16,
    _fast,
    _misere,
    _octal,
    kernels,
    optimal_move,
)
from metanim.solver._solvers import _chomp, _wythoff
from metanim.solver.reference import MultisetMisereSearch, kayles_run_moves


# ------------------------------------------------------------------ plain-Python references
def mex(values: set[int]) -> int:
    m = 0
    while m in values:
        m += 1
    return m


def ref_fibonacci(n: int) -> dict[tuple[int, int], int]:
    g: dict[tuple[int, int], int] = {}
    for r in range(n + 1):
        for k in range(r + 1):
            g[r, k] = mex({g[r - x, min(2 * x, r - x)] for x in range(1, k + 1)})
    return g


def ref_wythoff(size: int) -> dict[tuple[int, int], int]:
    g: dict[tuple[int, int], int] = {}
    for y in range(size):
        for x in range(size):
            opts = {g[x - d, y] for d in range(1, x + 1)}
            opts |= {g[x, y - d] for d in range(1, y + 1)}
            opts |= {g[x - d, y - d] for d in range(1, min(x, y) + 1)}
            g[x, y] = mex(opts)
    return g


def ref_octal(code: str, n_max: int) -> list[int]:
    digits = [0, *(int(ch) for ch in code.split(".")[1])]
    g = [0] * (n_max + 1)
    for n in range(1, n_max + 1):
        opts = set()
        for k in range(1, min(len(digits) - 1, n) + 1):
            d, rest = digits[k], n - k
            if rest == 0 and d & 1:
                opts.add(0)
            if rest > 0 and d & 2:
                opts.add(g[rest])
            if d & 4:
                opts.update(g[a] ^ g[rest - a] for a in range(1, rest // 2 + 1))
        g[n] = mex(opts)
    return g


def ref_chomp(rows: int, cols: int) -> dict[tuple[int, ...], int]:
    memo: dict[tuple[int, ...], int] = {}

    def grundy(shape: tuple[int, ...]) -> int:
        if shape not in memo:
            opts = {
                grundy(shape[:r] + tuple(min(x, c) for x in shape[r:]))
                for r, n in enumerate(shape)
                for c in range(n)
                if (r, c) != (0, 0)
            }
            memo[shape] = mex(opts)
        return memo[shape]

    def shapes(prefix: tuple[int, ...], cap: int) -> Any:
        if len(prefix) == rows:
            yield prefix
            return
        for v in range(cap + 1):
            yield from shapes((*prefix, v), v)

    for shape in shapes((), cols):
        grundy(shape)
    return memo


def ref_misere_kayles(n_max: int) -> list[bool]:
    search = MultisetMisereSearch(kayles_run_moves)
    return [search.mover_wins((n,)) for n in range(n_max + 1)]


# ------------------------------------------------------------------------ measurement
def _vm(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def _child(fn: Callable[[], Any], conn: Any) -> None:
    with contextlib.suppress(OSError):
        # Free chunks inherited from the parent are already resident and would hide
        # the workload's own allocations: give them back, then reset the peak RSS.
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        Path("/proc/self/clear_refs").write_text("5")
    base = _vm("VmRSS")
    fn()
    peak = _vm("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    conn.send(max(peak - base, 0))


def peak_memory(fn: Callable[[], Any]) -> int:
    """Peak RSS growth of one run of fn in a forked child (numba's arrays included)."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_child, args=(fn, child))
    proc.start()
    value = parent.recv()
    proc.join()
    return int(value)


def fmt_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def fmt_mem(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


ROWS: list[list[Any]] = []


def workload(
    name: str,
    states: int,
    fast: Callable[[], Any],
    ref: Callable[[], Any] | None,
    target: str,
    limit: float | None,
    repeats: int = 3,
    ref_repeats: int = 3,
) -> float:
    t_fast = median_time(fast, repeats=repeats, warmup=1 if repeats > 1 else 0)
    t_ref = median_time(ref, repeats=ref_repeats, warmup=0) if ref else None
    ratio = f"{t_ref / t_fast:,.0f}×" if t_ref else "—"
    met = "—" if limit is None else ("yes" if t_fast < limit else "**no**")
    ROWS.append(
        [
            name,
            f"{states:,}",
            fmt_time(t_fast),
            fmt_time(t_ref) if t_ref else "—",
            ratio,
            f"{states / t_fast:,.0f}",
            fmt_mem(peak_memory(fast)),
            target,
            met,
        ]
    )
    print(" | ".join(str(c) for c in ROWS[-1]), flush=True)
    return t_fast


CHOMP16_JSON = Path(__file__).resolve().parent / "chomp16.json"


def _chomp16_child(conn: Any) -> None:
    """One 16×16 outcome run in this (forked) process: time, peak RSS, cross-checks."""
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        Path("/proc/self/clear_refs").write_text("5")
    base = _vm("VmRSS")
    start = time.perf_counter()
    bits, stats, params = _chomp16.chomp_outcomes(16, 16)
    seconds = time.perf_counter() - start
    peak = _vm("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    full = [16] * 16
    # Every square board is N by the bite (1, 1): it leaves an L with equal arms,
    # which the second player mirrors. Here it must be the only winning bite.
    winning = [
        [r, c]
        for r in range(16)
        for c in range(16)
        if (r, c) != (0, 0)
        and _chomp16.is_p(bits, params, full[:r] + [min(x, c) for x in full[r:]])
    ]
    # Two rows (a >= 1, b) are P exactly when b = a - 1; an L (a, 1 × k) exactly when k = a - 1.
    two_rows = all(
        _chomp16.is_p(bits, params, [a, b]) == (b == a - 1)
        for a in range(1, 17)
        for b in range(a + 1)
    )
    ells = all(
        _chomp16.is_p(bits, params, [a] + [1] * k) == (k == a - 1)
        for a in range(1, 17)
        for k in range(16)
    )
    conn.send(
        {
            "seconds": seconds,
            "peak_rss": max(peak - base, 0),
            "shapes": int(kernels.chomp_states(16, 16)),
            "p_positions": int(stats[0]),
            "probes": int(stats[1]),
            "hint_hits": int(stats[2]),
            "full_board_winning_bites": winning,
            "two_row_rule": two_rows,
            "l_shape_rule": ells,
            "machine": machine(),
        }
    )


def chomp16() -> dict[str, Any]:
    """Run the 16×16 outcome table once in a forked child; store the result as JSON."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_chomp16_child, args=(child,))
    proc.start()
    result = parent.recv()
    proc.join()
    # Smaller boxes: the outcome kernel's P count equals the Grundy table's zeros.
    small = {}
    for size in range(1, 13):
        _, stats, params = _chomp16.chomp_outcomes(size, size)
        grundy, _ = _chomp(params, kernels.chomp_states(size, size))
        small[size] = int(stats[0])
        assert small[size] == int(np.count_nonzero(grundy == 0)), size
    result["p_positions_small_boxes"] = small
    CHOMP16_JSON.write_text(json.dumps(result, indent=1) + "\n")
    return result


def chomp16_row(result: dict[str, Any]) -> list[Any]:
    checks = (
        result["full_board_winning_bites"] == [[1, 1]]
        and result["two_row_rule"]
        and result["l_shape_rule"]
    )
    return [
        f"Chomp outcome (P/N), every shape in 16×16: {result['p_positions']:,} P-positions; "
        f"full board's only winning bite (1, 1): {'checked' if checks else '**FAILED**'} "
        f"(`--chomp16` run, kept in `scripts/chomp16.json`)",
        f"{result['shapes']:,}",
        fmt_time(result["seconds"]),
        "—",
        "—",
        f"{result['shapes'] / result['seconds']:,.0f}",
        fmt_mem(result["peak_rss"]),
        "< 10 min, < 24 GiB",
        "yes"
        if result["seconds"] < 600 and result["peak_rss"] < 24 * 2**30 and checks
        else "**no**",
    ]


def query_latency() -> list[list[Any]]:
    cases = [
        ("Fibonacci Nim n=20", FibonacciNim(20), (20, 19)),
        ("NIM heap 31", Nim(heaps=[31], max_take=None), (31,)),
        ("NIM 31-k3", Nim(heaps=[31], max_take=3), (31,)),
        ("Chomp 5×5", Chomp(5, 5), (5, 5, 5, 5, 5)),
        ("Corner Queen 20×20", CornerQueen(height=20, width=20), (4, 16)),
    ]
    rows = []
    for name, game, state in cases:
        rng = np.random.default_rng(0)
        optimal_move(game, state, rng)  # builds the table
        times = []
        for _ in range(3000):
            start = time.perf_counter()
            optimal_move(game, state, rng)
            times.append(time.perf_counter() - start)
        ref = ReferenceSolver(game)
        ref.winning_moves(state)  # warm memo: the reference's best case
        ref_times = []
        for _ in range(300):
            start = time.perf_counter()
            moves = ref.winning_moves(state) or game.legal_moves(state)
            moves[int(rng.integers(len(moves)))]
            ref_times.append(time.perf_counter() - start)
        t, tr = float(np.median(times)), float(np.median(ref_times))
        rows.append([name, fmt_time(t), fmt_time(tr), "yes" if t < 20e-6 else "**no**"])
        print(rows[-1], flush=True)
    return rows


COLD_SNIPPET = """
import time
t = time.perf_counter()
from metanim.games import make_game
from metanim.solver import outcome, octal_grundy
game = make_game("fibonacci", n=30)
outcome(game, (30, 29)); octal_grundy("0.77", 1000)
print(time.perf_counter() - t)
"""


def cache_startup() -> list[list[Any]]:
    """Time to first answer in a fresh process: empty numba cache, then warm."""
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(root)}
        out = []
        for label in ("cold (empty numba cache)", "warm (second process)"):
            result = subprocess.run(
                [sys.executable, "-c", COLD_SNIPPET], env=env, capture_output=True, text=True
            )
            out.append([label, fmt_time(float(result.stdout.strip().splitlines()[-1]))])
            print(out[-1], flush=True)
    return out


# ------------------------------------------- issue 15: the kernels the fast paths replaced
# Copies of the solver kernels as they were before issue 15 (commit 1e8bdcc; logic
# unchanged, comments trimmed), kept here so the ratios below stay measured against
# the same reference.
@njit(cache=True, nogil=True)
def _old_lowest_zero(mask):  # pragma: no cover - numba
    if mask == -1:
        return 64
    m = 0
    while (mask >> m) & 1:
        m += 1
    return m


@njit(cache=True, nogil=True)
def old_octal_extend(digits, g, start):  # pragma: no cover - numba
    """The pre-issue-15 octal kernel: 64-bit masks, then a byte flag per option."""
    end = len(g)
    if end == 0:
        return
    top = end - 1
    small = np.zeros(end, np.uint8)
    rev = np.zeros(end, np.uint8)
    rev32 = np.zeros(end, np.uint32)
    g32 = g.view(np.uint32)
    bound = 64
    for i in range(start):
        while g[i] >= bound:
            bound *= 2
        small[i] = min(g[i], 255)
        rev[top - i] = min(g[i], 255)
        rev32[top - i] = g[i]
    flags = np.zeros(bound + 1, np.uint8)
    t = len(digits) - 1
    for n in range(max(start, 1), end):
        big = bound > 64
        mask = np.int64(0)
        if big:
            flags[:] = 0
        for k in range(1, min(t, n) + 1):
            d = digits[k]
            rest = n - k
            if rest == 0:
                if d & 1:
                    mask |= 1
                    flags[0] = 1
                continue
            if d & 2:
                if big:
                    flags[g[rest]] = 1
                else:
                    mask |= np.int64(1) << small[rest]
            if d & 4 and rest >= 2:
                half = rest // 2
                lo = top - rest + 1
                if big:
                    left32 = g32[1 : half + 1]
                    right32 = rev32[lo : lo + half]
                    for i in range(half):
                        flags[left32[i] ^ right32[i]] = 1
                else:
                    left = small[1 : half + 1]
                    right = rev[lo : lo + half]
                    acc = np.int64(0)
                    for i in range(half):
                        acc |= np.int64(1) << (left[i] ^ right[i])
                    mask |= acc
        if big:
            m = 0
            while flags[m]:
                m += 1
        else:
            m = _old_lowest_zero(mask)
        g[n] = m
        small[n] = min(m, 255)
        rev[top - n] = min(m, 255)
        rev32[top - n] = m
        if m + 1 >= bound:
            while m + 1 >= bound:
                bound *= 2
            flags = np.zeros(bound + 1, np.uint8)


@njit(cache=True, nogil=True)
def old_fibonacci_tables(n):  # pragma: no cover - numba
    """The pre-issue-15 Fibonacci kernel: int16 values, uint8 misère flags, int32 scratch."""
    states = n * (n + 1) // 2 + n + 1
    grundy = np.zeros(states, np.int16)
    mover_wins = np.zeros(states, np.uint8)
    half = n // 2 + 1
    col_start = np.zeros(half + 1, np.int64)
    for j in range(half):
        col_start[j + 1] = col_start[j] + max(n - 2 * j, 0)
    even = np.zeros(col_start[half] + 1, np.int32)
    full = np.zeros(n + 1, np.int32)
    seen = np.zeros(n + 2, np.int64)
    for r in range(n + 1):
        base = r * (r + 1) // 2
        stamp = r + 1
        m = 0
        any_lost = False
        mover_wins[base] = 1
        for k in range(1, r + 1):
            left = r - k
            packed = full[left] if 2 * k >= left else even[col_start[k] + left - 2 * k - 1]
            seen[packed >> 1] = stamp
            while seen[m] == stamp:
                m += 1
            if packed & 1 == 0:
                any_lost = True
            grundy[base + k] = m
            w = 1 if any_lost else 0
            mover_wins[base + k] = w
            if k & 1 == 0 and k < r:
                j = k >> 1
                even[col_start[j] + r - k - 1] = (m << 1) | w
        full[r] = (grundy[base + r] << 1) | mover_wins[base + r]
    return grundy, mover_wins


def old_octal_values(code: str, n_max: int) -> np.ndarray:
    g = np.zeros(n_max + 1, np.int32)
    old_octal_extend(_octal.octal_digits(code), g, 0)
    return g


def fast_paths(quick: bool) -> None:
    """Officers and the Fibonacci table against the kernels they replaced, one run."""
    off_n, fib_n = (30_000, 3000) if quick else (100_000, 10_000)
    repeats = 3
    rows = []

    # Officers (0.6): alternate the two kernels so machine load hits both alike.
    old_octal_values("0.6", 3000), _octal.octal_values("0.6", 3000)  # compile / load
    t_old, t_new = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        ref = old_octal_values("0.6", off_n)
        t_old.append(time.perf_counter() - start)
        start = time.perf_counter()
        new = _octal.octal_values("0.6", off_n)
        t_new.append(time.perf_counter() - start)
    same = bool(np.array_equal(ref, new))
    to, tn = float(np.median(t_old)), float(np.median(t_new))
    ratio = to / tn
    rows.append(
        [
            f"Officers (octal 0.6) values 0..{off_n:,} (max value {int(new.max())})",
            fmt_time(to),
            fmt_time(tn),
            f"{ratio:.2f}× faster",
            "identical" if same else "**DIFFER**",
            "≥ 2× faster",
            "yes" if ratio >= 2 and same and not quick else ("—" if quick else "**no**"),
        ]
    )
    print(" | ".join(rows[-1]), flush=True)

    # Fibonacci table: peak RSS growth of one build each, in forked children.
    old_fibonacci_tables(10), _fast.fibonacci_tables(10)
    m_old = peak_memory(lambda: old_fibonacci_tables(fib_n))
    m_new = peak_memory(lambda: _fast.fibonacci_tables(fib_n))
    start = time.perf_counter()
    g_old, w_old = old_fibonacci_tables(fib_n)
    tf_old = time.perf_counter() - start
    start = time.perf_counter()
    g_new, first_win = _fast.fibonacci_tables(fib_n)
    tf_new = time.perf_counter() - start
    same = bool(np.array_equal(g_old, g_new)) and bool(
        np.array_equal(w_old, _fast.fibonacci_mover_wins(first_win))
    )
    del g_old, w_old, g_new
    limit = 120 * 2**20
    rows.append(
        [
            f"Fibonacci Nim table build, n={fib_n:,}: peak memory (time {fmt_time(tf_old)} → "
            f"{fmt_time(tf_new)})",
            fmt_mem(m_old),
            fmt_mem(m_new),
            f"{m_old / m_new:.2f}× smaller",
            "identical" if same else "**DIFFER**",
            "< 120 MiB",
            "yes" if m_new < limit and same and not quick else ("—" if quick else "**no**"),
        ]
    )
    print(" | ".join(rows[-1]), flush=True)

    mode = "quick (small sizes; targets not judged)" if quick else "full"
    markdown = "\n\n".join(
        [
            "## Solver fast paths",
            f"Machine: {machine()}. Mode: {mode}. Written by "
            "`scripts/bench_solver.py --fast-paths`.",
            "The reference is a plain kernel of the same table, in the script (the octal "
            "values with one byte flag per value past 63; the Fibonacci table with int16 "
            "values, uint8 misère flags and int32 scratch), run in the same process. "
            f"Officers times are medians of {repeats} alternating runs of each; peak memory "
            "is the resident-set growth of one build in a forked child. Every value of both "
            "is compared (the misère thresholds expanded to one flag per state). Other jobs "
            "shared the 2 cores, so times are noisy (alternating the kernels keeps the ratio "
            "fair; absolute times are not).",
            table(
                ["workload", "reference", "solver", "ratio", "answers", "target", "met"],
                rows,
            ),
        ]
    )
    write_section("solver-fast-paths", markdown)


# ---------------------------------------------------------------------------------- main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, a quick smoke run")
    parser.add_argument("--chomp14", action="store_true", help="also the 14x14 Chomp table")
    parser.add_argument(
        "--chomp16",
        action="store_true",
        help="also the 16x16 Chomp outcome table (minutes; else the stored run is reported)",
    )
    parser.add_argument(
        "--fast-paths",
        action="store_true",
        help="only the issue-15 comparisons against the replaced kernels (own section)",
    )
    args = parser.parse_args()
    quick = args.quick
    if args.fast_paths:
        fast_paths(quick)
        return

    fib_small, fib_full = (150, 2000) if quick else (400, 10_000)
    workload(
        f"Fibonacci Nim, all states, n={fib_small} (both)",
        kernels.fibonacci_states(fib_small),
        lambda: _fast.fibonacci_tables(fib_small),
        lambda: ref_fibonacci(fib_small),
        "",
        None,
    )
    workload(
        f"Fibonacci Nim, all states, n={fib_full:,}",
        kernels.fibonacci_states(fib_full),
        lambda: _fast.fibonacci_tables(fib_full),
        None,
        "< 1 s at 10,000",
        None if quick else 1.0,
    )

    wy_small, wy_full = (100, 1000) if quick else (200, 4000)
    workload(
        f"Corner Queen / Wythoff {wy_small}×{wy_small} (both)",
        wy_small**2,
        lambda: _wythoff(wy_small, wy_small),
        lambda: ref_wythoff(wy_small),
        "",
        None,
    )
    workload(
        f"Corner Queen / Wythoff {wy_full}×{wy_full}",
        wy_full**2,
        lambda: _wythoff(wy_full, wy_full),
        None,
        "< 2 s at 4000×4000",
        None if quick else 2.0,
    )

    oct_small, oct_full = (1000, 20_000) if quick else (3000, 100_000)
    for code in ("0.77", "0.137", "0.07", "0.6"):
        workload(
            f"octal {code} direct, n={oct_small:,} (both)",
            oct_small + 1,
            lambda code=code: _octal.octal_values(code, oct_small),
            lambda code=code: ref_octal(code, oct_small),
            "",
            None,
        )
        workload(
            f"octal {code} direct, n={oct_full:,}",
            oct_full + 1,
            lambda code=code: _octal.octal_values(code, oct_full),
            None,
            "< 2 s at 100,000",
            None if quick else 2.0,
            repeats=1 if code == "0.6" else 3,
        )
    for code in ("0.77", "0.137", "0.07"):

        def periodic(code: str = code) -> None:
            _octal._period_search.cache_clear()
            _octal.octal_grundy(code, 10_000_000)
            _octal.octal_table(code, 10_000_000)

        period = _octal.octal_period(code)
        workload(
            f"octal {code}: certify period {period}, G(10^7) and all values to 10^7",
            10_000_001,
            periodic,
            None,
            "< 1 s",
            1.0,
        )

    mk_small, mk_full = (22, 40) if quick else (32, 60)

    def misere(n: int) -> Callable[[], Any]:
        def run() -> None:
            _misere._tables.cache_clear()
            _misere.kayles_misere_outcomes(n)

        return run

    workload(
        f"misère Kayles, every row ≤ {mk_small} pins (both)",
        mk_small + 1,
        misere(mk_small),
        lambda: ref_misere_kayles(mk_small),
        "",
        None,
    )
    workload(
        f"misère Kayles, every row ≤ {mk_full} pins",
        mk_full + 1,
        misere(mk_full),
        (lambda: ref_misere_kayles(mk_full)) if not quick else None,
        "< 10 s at 60",
        None if quick else 10.0,
        ref_repeats=1,
    )

    def chomp(rows: int, cols: int) -> Callable[[], Any]:
        params = kernels.chomp_params(rows, cols)
        states = kernels.chomp_states(rows, cols)
        return lambda: _chomp(params, states)

    ch_small = 7 if quick else 8
    workload(
        f"Chomp Grundy, every shape in {ch_small}×{ch_small} (both)",
        kernels.chomp_states(ch_small, ch_small),
        chomp(ch_small, ch_small),
        lambda: ref_chomp(ch_small, ch_small),
        "",
        None,
    )
    ch_full = 10 if quick else 12
    workload(
        f"Chomp Grundy, every shape in {ch_full}×{ch_full}",
        kernels.chomp_states(ch_full, ch_full),
        chomp(ch_full, ch_full),
        None,
        "< 1.5 s at 12×12",
        None if quick else 1.5,
    )
    if args.chomp14:
        workload(
            "Chomp Grundy, every shape in 14×14",
            kernels.chomp_states(14, 14),
            chomp(14, 14),
            None,
            "< 30 s",
            30.0,
            repeats=1,
        )

    workload(
        f"Chomp outcome (P/N), every shape in {ch_full}×{ch_full}",
        kernels.chomp_states(ch_full, ch_full),
        lambda: _chomp16.chomp_outcomes(ch_full, ch_full),
        None,
        "",
        None,
    )
    if args.chomp16:
        ROWS.append(chomp16_row(chomp16()))
        print(" | ".join(str(c) for c in ROWS[-1]), flush=True)
    elif CHOMP16_JSON.exists():
        ROWS.append(chomp16_row(json.loads(CHOMP16_JSON.read_text())))

    latency = query_latency()
    startup = cache_startup()

    mode = "quick (small sizes; targets not judged)" if quick else "full"
    markdown = "\n\n".join(
        [
            "## Solver",
            f"Machine: {machine()}. Mode: {mode}. Written by `scripts/bench_solver.py`.",
            "Numba times are medians of 3 runs after a warm-up (1 run where noted by the "
            "workload); the plain-Python reference (a memoized recurrence over the same "
            "states) runs in the same process. Where the reference cannot finish at the "
            "target size, both run at the smaller size marked *(both)* for the ratio. "
            "Peak memory is the resident-set growth of one numba run in a forked child. "
            "Other engineers' jobs shared the 2 cores, so times are noisy.",
            table(
                [
                    "workload",
                    "states",
                    "numba",
                    "plain Python",
                    "ratio",
                    "states/s",
                    "peak memory",
                    "target",
                    "met",
                ],
                ROWS,
            ),
            "### Optimal-move query (public `optimal_move`, state validation included)",
            table(["game", "median", "reference (warm memo)", "< 20 µs"], latency),
            "### Time to first answer in a fresh process",
            table(["numba cache", "import + first table + query"], startup),
        ]
    )
    write_section("solver", markdown)


if __name__ == "__main__":
    main()
