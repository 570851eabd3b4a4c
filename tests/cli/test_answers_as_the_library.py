"""Every CLI entry point answers what the library answers.

Each case runs one command line (`metanim solve`, text and `--json`, or `metanim dataset
build`) and computes the same thing through the Python API: `make_game(name, **the
parameters the user gave, or the documented rule that fits a size to the state)` and
`metanim.solver.grundy / outcome / winning_moves`. The game (rules, variant, sizes),
outcome, Grundy value and winning moves must agree, and a refusal on one side is a
refusal on the other with the same message. The fitting rule is written out here from
docs/solver.md, not imported. Commands run in-process through `metanim.cli.main`;
tests/e2e/test_command_line.py checks that real processes print the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metanim.cli import main
from metanim.datasets import load_dataset
from metanim.games import PRESETS, Game, MetaNimError, SizeLimitError, make_game
from metanim.solver import grundy, outcome, winning_moves

#: Compared pairs, by entry point: printed after the module's tests (`pytest -s`).
PAIRS: dict[str, int] = {"solve --json": 0, "solve (text)": 0, "dataset build": 0}


@pytest.fixture(scope="module", autouse=True)
def _report_pairs():
    yield
    print(f"\nCLI/API pairs compared: {PAIRS}, {sum(PAIRS.values())} in all")


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def documented_fit(name: str, state: Any, given: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """docs/solver.md, "Sizes from the state", written out again."""
    if name in PRESETS:
        return state, given
    fitted: dict[str, Any]
    if name in ("nim", "subtraction"):
        heaps = [state] if isinstance(state, int) else list(state)
        fitted = {"heaps": [max(h, 1) for h in heaps]}
        if name == "nim":
            fitted["max_take"] = None
    elif name == "fibonacci":
        if isinstance(state, int):
            state = [state, state - 1]
        r, k = state
        fitted = {"n": max(r if k < r else r + 1, 2)}
    elif name in ("kayles", "octal"):
        rows = [state] if isinstance(state, str) else state
        fitted = {"rows": [len(row) for row in rows]}
    elif name == "chomp":
        fitted = {"rows": len(state), "cols": max(*state, 2)}
    else:
        width = given.get("width", 20)
        fitted = {"height": given.get("height", 20), "width": width, "start": [0, width - 1]}
    return state, {**fitted, **given}


def api_answer(name: str, state: Any, given: dict[str, Any]) -> dict[str, Any]:
    """What the library says: the game, or the refusal, and each query or its refusal."""
    try:
        state, params = documented_fit(name, state, given)
        game = make_game(name, **params)
        state = game.validate_state(state)
        result = {"game": game, "outcome": outcome(game, state)}
    except SizeLimitError as exc:  # the solver's refusal: the same words from the CLI
        return {"error": one_line(exc)}
    except (MetaNimError, ValueError) as exc:  # a bad state: the CLI may say it its own way
        return {"error": one_line(exc), "bad_input": True}
    for query, ask in (("grundy", grundy), ("winning_moves", winning_moves)):
        try:
            result[query] = ask(game, state)
        except MetaNimError as exc:
            result[query] = ("unavailable", str(exc))
    result["state"] = state
    return result


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def solve_argv(name: str, state: Any, given: dict[str, Any], misere_flag: bool) -> list[str]:
    argv = ["solve", name, json.dumps(state)]
    argv += [x for key, value in given.items() for x in ("-p", f"{key}={json.dumps(value)}")]
    return argv + (["--misere"] if misere_flag else [])


def assert_solve_agrees(
    name: str, state: Any, given: dict[str, Any], capsys, *, misere_flag: bool = False
) -> None:
    """`metanim solve` (JSON and text) against the API for one state."""
    api_params = {**given, **({"misere": True} if misere_flag else {})}
    want = api_answer(name, state, api_params)
    argv = solve_argv(name, state, given, misere_flag)
    code, out, err = run([*argv, "--json"], capsys)
    PAIRS["solve --json"] += 1
    if "error" in want:
        lines = err.splitlines()
        assert code == 2 and len(lines) == 1 and lines[0].startswith("metanim solve: error: ")
        if not want.get("bad_input"):
            assert lines[0] == f"metanim solve: error: {want['error']}", (argv, err)
        assert (code, err) == run(argv, capsys)[::2]
        PAIRS["solve (text)"] += 1
        return
    assert code == 0, (argv, err)
    got = json.loads(out)
    game: Game[Any, Any] = want["game"]
    assert (got["game"], got["params"], got["variant"]) == (
        game.name,
        json.loads(json.dumps(game.params)),
        game.info.variant,
    ), argv
    assert got["state"] == game.to_json(want["state"])
    assert got["outcome"] == want["outcome"], argv
    for query in ("grundy", "winning_moves"):
        value = want[query]
        if isinstance(value, tuple) and value[:1] == ("unavailable",):
            assert got[query] is None and got["unavailable"][query] == value[1], argv
        elif query == "grundy":
            assert got["grundy"] == value, argv
        else:
            assert got["winning_moves"] == [json.loads(game.move_text(m)) for m in value], argv
            assert got["winning_actions"] == [game.action_id(m) for m in value]
    # The text form says the same, moves in the game's words.
    code, text, _ = run(argv, capsys)
    PAIRS["solve (text)"] += 1
    assert code == 0
    play = "misère" if game.misere else "normal"
    assert f"game: {game!r}\n" in text
    assert f"outcome ({play} play): {want['outcome']}" in text
    moves = want["winning_moves"]
    if isinstance(moves, list):
        words = ", ".join(f"{game.move_text(m)} ({game.move_words(m)})" for m in moves)
        assert f"winning moves: {words or 'none'}\n" in text, (argv, text)


# --------------------------------------------------------------------------- states


def playout_states(game: Game[Any, Any], seed: int, count: int = 4) -> list[Any]:
    """The start, positions along a seeded random playout, and its terminal position."""
    rng = np.random.default_rng(seed)
    state = game.initial_state()
    path = [state]
    while not game.is_terminal(state):
        moves = game.legal_moves(state)
        state = game.apply(state, moves[int(rng.integers(len(moves)))])
        path.append(state)
    picks = np.linspace(0, len(path) - 1, count).round().astype(int)
    return [game.to_json(path[i]) for i in sorted(set(picks))]


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_solve_answers_what_the_api_answers_for_every_preset(preset: str, capsys) -> None:
    game = make_game(preset)
    for state in playout_states(game, seed=len(preset)):
        assert_solve_agrees(preset, state, {}, capsys)
    # A flag that agrees with the preset is accepted; one that contradicts it is refused.
    misere = game.misere
    state = game.to_json(game.initial_state())
    assert_solve_agrees(preset, state, {"misere": misere}, capsys)
    if misere:
        assert_solve_agrees(preset, state, {}, capsys, misere_flag=True)
    refused = [solve_argv(preset, state, {"misere": not misere}, False)]
    if not misere:
        refused.append(solve_argv(preset, state, {}, True))
    for key, value in PRESETS[preset][1].items():
        if key == "misere":
            continue
        assert_solve_agrees(preset, state, {key: value}, capsys)
        other = [v + 1 for v in value] if isinstance(value, list) else value + 1
        refused.append(solve_argv(preset, state, {key: other}, False))
    for argv in refused:
        code, _, err = run(argv, capsys)
        assert code == 2 and "contradicts it" in err and len(err.splitlines()) == 1, argv


#: (game, state, the parameters the user gives): every size class of every game: tables,
#: the table's edges, closed forms beyond them, refusals, terminal positions.
BASE_CASES: list[tuple[str, Any, dict[str, Any]]] = [
    ("nim", [3, 4, 5], {}),
    ("nim", [5, 6, 7], {}),
    ("nim", [1, 1], {}),
    ("nim", [0, 0], {}),
    ("nim", 31, {"max_take": 3}),
    ("nim", [499, 499], {"max_take": 400}),
    ("nim", [300, 300], {"max_take": 250}),
    ("nim", [20, 25, 30], {"max_take": 4}),
    ("nim", [10_000_000, 12_345, 3], {}),
    ("nim", [10**30, 7], {"max_take": 6}),
    ("nim", [6, 6], {"heaps": [10, 10], "max_take": 2}),
    ("fibonacci", 20, {}),
    ("fibonacci", [5, 4], {}),
    ("fibonacci", [7, 7], {}),
    ("fibonacci", [0, 0], {}),
    ("fibonacci", 10_952, {}),
    ("fibonacci", 10_953, {}),
    ("fibonacci", [832_040, 832_039], {}),
    ("fibonacci", [19_999, 300], {}),
    ("fibonacci", [10, 3], {"n": 40}),
    ("kayles", ["1111011"], {}),
    ("kayles", ["11111", "111111"], {}),
    ("kayles", ["000"], {}),
    ("kayles", ["1" * 40], {}),
    ("kayles", ["1" * 66], {}),
    ("kayles", ["1" * 80], {}),
    ("kayles", ["1" * 1000], {}),
    ("kayles", ["1101", "0111"], {"rows": [6, 6]}),
    ("chomp", [3, 2], {}),
    ("chomp", [5, 5, 5, 5, 5], {}),
    ("chomp", [1], {}),
    ("chomp", [300, 295], {}),
    ("chomp", [40, 30, 20], {}),
    ("chomp", [3000, 2000, 1000], {}),
    ("chomp", [4, 4, 2], {"rows": 8, "cols": 8}),
    ("corner_queen", [4, 16], {}),
    ("corner_queen", [19, 0], {}),
    ("corner_queen", [0, 19], {}),
    ("corner_queen", [3, 5], {"height": 8, "width": 12}),
    ("corner_queen", [0, 999_999], {"height": 10**6, "width": 10**6}),
    ("corner_queen", [24, 16], {}),
    ("subtraction", [10, 7], {"subtraction_set": [1, 3, 4]}),
    ("subtraction", 25, {}),
    ("subtraction", [0, 1], {"subtraction_set": [2, 5]}),
    ("octal", ["1111111111"], {"code": "0.07"}),
    ("octal", ["1101110111", "111"], {"code": "0.137"}),
    ("octal", ["1" * 60], {"code": "0.07"}),
    ("octal", ["1" * 5000], {}),
]


# Misère play of every size class in --full; the misère presets above stay in the fast tier.
@pytest.mark.parametrize(
    "misere", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["normal", "misere"]
)
@pytest.mark.parametrize(("name", "state", "given"), BASE_CASES, ids=range(len(BASE_CASES)))
def test_solve_answers_what_the_api_answers_for_every_game(
    name: str, state: Any, given: dict[str, Any], misere: bool, capsys
) -> None:
    assert_solve_agrees(name, state, given, capsys, misere_flag=misere)
    if misere:  # the same as a parameter
        assert_solve_agrees(name, state, {**given, "misere": True}, capsys)


# ---------------------------------------------------------------------- dataset build


def check_build(
    tmp_path: Path, name: str, given: dict[str, Any], variant: str | None, capsys, n: int = 4
) -> None:
    """`metanim dataset build --game NAME` against the API, record by record."""
    out = tmp_path / f"{name}-{variant}-{len(list(tmp_path.iterdir()))}"
    argv = ["dataset", "build", "--game", name, "-n", str(n), "--out", str(out), "--no-progress"]
    argv += [x for key, value in given.items() for x in ("-p", f"{key}={json.dumps(value)}")]
    argv += ["--variant", variant] if variant else []
    api_params = {**given, **({"misere": variant == "misere"} if variant else {})}
    try:
        want = make_game(name, **api_params)
    except ValueError as exc:
        code, _, err = run(argv, capsys)
        assert code == 2 and one_line(exc) in err, argv
        return
    code, _, err = run(argv, capsys)
    assert code == 0, (argv, err)
    (path,) = out.glob("*.jsonl")
    stem = name.removesuffix("-misere") if name in PRESETS else name
    shown = "-disguised" if want.disguise else ""  # docs/envs.md, "The disguised variant"
    assert path.name == f"{stem}{shown}-{want.info.variant}.jsonl"
    records = load_dataset(path)
    assert len(records) == n
    for record in records:
        PAIRS["dataset build"] += 1
        assert record.make_game() == want, (argv, record.game_params)
        assert record.variant == want.info.variant
        state = record.game_state()
        moves = winning_moves(want, state)
        assert outcome(want, state) == "N"
        assert [want.move_text(m) for m in moves] == [record.optimal_move], record.id
        assert record.grundy == grundy(want, state)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_dataset_build_builds_what_the_api_builds_for_every_preset(
    preset: str, tmp_path: Path, capsys
) -> None:
    check_build(tmp_path, preset, {}, None, capsys)
    own = "misere" if PRESETS[preset][1].get("misere") else "normal"
    check_build(tmp_path, preset, {}, own, capsys, n=2)  # the preset's own rule, given
    other = "normal" if own == "misere" else "misere"
    argv = ["dataset", "build", "--game", preset, "--variant", other, "--out", str(tmp_path / "x")]
    code, _, err = run(argv, capsys)
    assert code == 2 and "contradicts it" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "x").exists()  # refused before anything was built


BUILD_CASES: list[tuple[str, dict[str, Any]]] = [
    ("nim", {}),
    ("nim", {"heaps": [7, 11, 13], "max_take": None}),
    ("nim", {"heaps": [20, 25, 30], "max_take": 4}),
    ("fibonacci", {}),
    ("fibonacci", {"n": 100}),
    ("kayles", {}),
    ("kayles", {"rows": [40]}),
    ("kayles", {"rows": [9, 12]}),
    ("chomp", {}),
    ("chomp", {"rows": 6, "cols": 6}),
    ("corner_queen", {}),
    ("corner_queen", {"height": 50, "width": 50}),
    ("subtraction", {"heaps": [9, 11], "subtraction_set": [1, 4, 5]}),
    ("octal", {"rows": [12], "code": "0.07"}),
    ("nim", {"disguise": True}),
]


@pytest.mark.parametrize("variant", [None, "normal", "misere"])
@pytest.mark.parametrize(("name", "given"), BUILD_CASES, ids=range(len(BUILD_CASES)))
def test_dataset_build_builds_what_the_api_builds_for_every_game(
    name: str, given: dict[str, Any], variant: str | None, tmp_path: Path, capsys
) -> None:
    check_build(tmp_path, name, given, variant, capsys)
    if variant == "misere":  # the same as a parameter, and refused when they disagree
        check_build(tmp_path, name, {**given, "misere": True}, None, capsys, n=2)
        argv = ["dataset", "build", "--game", name, "-p", "misere=true", "--variant", "normal"]
        code, _, err = run([*argv, "--out", str(tmp_path / "x")], capsys)
        assert code == 2 and "contradicts" in err


# ------------------------------------------------------------------ issue 24 items 1, 3


def test_a_misere_preset_answers_and_builds_misere_play(tmp_path: Path, capsys) -> None:
    # Item 1: the CLI passed misere=False and overrode the preset. Misère NIM with max
    # take 3 at 5 stones is lost for the mover (5 mod 4 == 1: leave 1 and the mover
    # must take it), whereas normal play wins by taking 1.
    code, out, _ = run(["solve", "nim-31-k3-misere", "[5]"], capsys)
    assert code == 0
    assert "misere=True" in out and "outcome (misère play): P" in out
    assert "winning moves: none" in out
    for preset in ("corner-queen-misere", "kayles-2rows-misere", "nim-31-k3-misere"):
        argv = ["dataset", "build", "--game", preset, "-n", "6", "--out", str(tmp_path / preset)]
        assert run(argv, capsys)[0] == 0
        (path,) = (tmp_path / preset).glob("*.jsonl")
        assert path.name == f"{preset}.jsonl"
        records = load_dataset(path)
        assert {r.variant for r in records} == {"misere"}
        assert all(r.make_game().misere for r in records)


def test_a_fibonacci_pile_is_a_game_of_its_own_size(capsys) -> None:
    # Item 3: 10952 stones were solved as a game of 10953, one past the table.
    code, out, _ = run(["solve", "fibonacci", "10952"], capsys)
    assert code == 0 and "FibonacciNim(n=10952" in out
    assert "grundy (normal play): 33 (by table)" in out
    code, out, _ = run(["solve", "fibonacci", "10952", "--misere", "--json"], capsys)
    got = json.loads(out)
    assert code == 0 and (got["outcome"], got["winning_moves"]) == ("N", [5, 10951])
    assert got["grundy"] == 33 and got["params"] == {"n": 10952, "misere": True}
