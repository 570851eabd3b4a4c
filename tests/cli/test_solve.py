"""`metanim solve`: Grundy value, outcome and winning moves in the game's words, positions
read as the paper writes them, and bad input refused on one line (exit code 2)."""

from __future__ import annotations

import pytest


def test_cli_solve_prints_grundy_outcome_and_moves(run_metanim) -> None:
    result = run_metanim("solve", "nim", "[3, 4, 5]")
    assert result.returncode == 0, result.stderr
    assert "grundy (normal play): 2" in result.stdout  # 3 ^ 4 ^ 5
    assert "outcome (normal play): N" in result.stdout
    assert "winning moves: [0, 2]" in result.stdout


def test_cli_solve_misere_and_bad_input(run_metanim) -> None:
    result = run_metanim("solve", "nim", "[1, 1]", "--misere")
    assert "outcome (misère play): N" in result.stdout
    bad = run_metanim("solve", "chomp", "[1, 3]")
    assert bad.returncode == 2 and "must not increase" in bad.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["solve", "nim", "abc"], "cannot read 'abc' as a NIM state"),
        (["solve", "chomp", "[[1,1],[1]]"], "as a Chomp state"),
        (["solve", "corner_queen", "[24, 16]"], "off the 20x20 board"),
        (["solve", "nim", "[3]", "-p", "heapz=[3]"], "unknown parameter(s) heapz for nim"),
        (["solve", "kayles", "1101"], "write them as JSON"),
    ],
)
def test_cli_solve_rejects_bad_input_with_one_line(
    args: list[str], message: str, run_metanim
) -> None:
    result = run_metanim(*args)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_cli_solve_reads_positions_as_the_paper_does(run_metanim) -> None:
    # [4, 16] on the paper's 20x20 board, not on a board fitted to the position.
    queen = run_metanim("solve", "corner_queen", "[4, 16]")
    assert (
        "winning moves: [4, 9] (move the queen to row 4, column 9), "
        "[18, 2] (move the queen to row 18, column 2)"
    ) in queen.stdout
    # A bare number is a Fibonacci pile at its start: 20 = 13 + 5 + 2, so take 2.
    fib = run_metanim("solve", "fibonacci", "20")
    assert "state: [20, 19]" in fib.stdout and "winning moves: 2" in fib.stdout


def test_solve_reads_a_bare_fibonacci_pile(run_metanim) -> None:
    result = run_metanim("solve", "fibonacci", "20")
    assert result.returncode == 0, result.stderr
    assert "winning moves" in result.stdout
