"""Closed-form paths against the table (or the plain-Python reference) in the same run.

Where both exist the closed form is a cross-check of the table; beyond the tables
it is the implementation. This measures a query on each path, and the queries
that used to stall or crash (issue #9) on the closed-form path.

    python scripts/bench_closed_forms.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import machine, median_time, table, write_section

from metanim.games import Chomp, CornerQueen, Kayles, Nim
from metanim.solver import closed_forms as cf
from metanim.solver import method, solver_for
from metanim.solver.reference import ReferenceSolver


def _us(seconds: float) -> str:
    return (
        f"{seconds * 1e6:,.1f} µs"
        if seconds < 1e-3
        else f"{seconds * 1e3:,.1f} ms"
        if seconds < 1
        else f"{seconds:,.2f} s"
    )


def main() -> None:
    rows = []

    # NIM: table vs closed form on the same query (heaps within the table).
    game = Nim([5000, 3000, 7], max_take=None)
    state = (4321, 2999, 5)
    solver = solver_for(game)
    solver.winning_moves(state)  # build the table once
    t_table = median_time(lambda: solver.winning_moves(state), repeats=20)
    t_cf = median_time(lambda: cf.nim_winning_moves(state, 0), repeats=20)
    assert solver.winning_moves(state) == cf.nim_winning_moves(state, 0)
    rows.append(
        [
            "NIM [4321, 2999, 5] winning moves",
            method(game, state),
            _us(t_table),
            _us(t_cf),
            f"{t_table / t_cf:,.0f}×",
        ]
    )

    # Wythoff: table lookup vs Beatty pairs on a 1000 x 1000 board.
    game = CornerQueen(1000, 1000, start=(0, 999))
    solver = solver_for(game)
    start = time.perf_counter()
    solver.winning_moves((0, 999))
    build = time.perf_counter() - start
    t_table = median_time(lambda: solver.winning_moves((0, 999)), repeats=20)
    x, y = game.wythoff((0, 999))
    t_cf = median_time(lambda: cf.wythoff_winning_targets(x, y), repeats=20)
    rows.append(
        [
            f"Corner Queen 1000×1000 winning moves (table built in {build:.2f} s)",
            "table",
            _us(t_table),
            _us(t_cf),
            f"{t_table / t_cf:,.0f}×",
        ]
    )

    # Two-row Chomp: 2 x 300 table (numba) vs closed form; the reference for scale.
    game = Chomp(2, 300)
    solver = solver_for(game)
    start = time.perf_counter()
    solver.winning_moves((300, 295))
    build = time.perf_counter() - start
    t_table = median_time(lambda: solver.winning_moves((300, 295)), repeats=20)
    t_cf = median_time(lambda: cf.chomp_two_row_winning_moves(300, 295), repeats=20)
    rows.append(
        [
            f"Chomp 2×300 (300, 295) winning moves (table built in {build:.2f} s)",
            "table",
            _us(t_table),
            _us(t_cf),
            f"{t_table / t_cf:,.0f}×",
        ]
    )
    small = Chomp(2, 60)
    t_ref = median_time(lambda: ReferenceSolver(small).winning_moves((60, 55)), repeats=3)
    rows.append(
        [
            "Chomp 2×60 (60, 55), plain-Python reference (fresh memo)",
            "reference",
            _us(t_ref),
            _us(median_time(lambda: cf.chomp_two_row_winning_moves(60, 55), repeats=20)),
            f"{t_ref / median_time(lambda: cf.chomp_two_row_winning_moves(60, 55), repeats=20):,.0f}×",
        ]
    )

    # Beyond the tables: the reproducers of issue #9, on the closed-form path only.
    beyond = [
        (
            "NIM [10⁷, 12345, 3] winning moves",
            Nim([10**7, 12345, 3], max_take=None),
            (10**7, 12345, 3),
        ),
        (
            "Corner Queen 2×10⁶ [0, 999999]",
            CornerQueen(2, 10**6, start=(0, 999_999)),
            (0, 999_999),
        ),
        ("Chomp 2×10⁶ (10⁶, 10⁶)", Chomp(2, 10**6), (10**6, 10**6)),
        ("Kayles one row of 10⁵ pins", Kayles([10**5]), ("1" * 10**5,)),
        ("Kayles one row of 10⁷ pins", Kayles([10**7]), ("1" * 10**7,)),
    ]
    for label, game, state in beyond:
        solver = solver_for(game)
        t = median_time(lambda s=solver, st=state: s.winning_moves(st), repeats=3)
        rows.append([label, method(game, state, "winning_moves"), "–", _us(t), "–"])

    markdown = (
        "## Closed forms vs tables (`scripts/bench_closed_forms.py`)\n\n"
        f"Machine: {machine()}.\n\n"
        "One query, median of repeated runs; `table` = the solver's table path (tables "
        "built before timing), `closed form` = `metanim.solver.closed_forms` on the same "
        "state. Below the line: queries beyond every table, answered by the closed form.\n\n"
        + table(
            ["query", "path the solver takes", "table / reference", "closed form", "ratio"], rows
        )
    )
    write_section("closed_forms", markdown)
    print(markdown)


if __name__ == "__main__":
    main()
