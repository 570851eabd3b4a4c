"""Critical-state datasets: every record re-solved, sizes, determinism, file round trips."""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metanim.datasets import (
    DEFAULT_SPECS,
    PAPER_SPECS,
    DatasetError,
    DatasetRecord,
    build,
    build_default,
    build_paper,
    check_record,
    load_dataset,
    make_record,
    records_frame,
    verify_record,
    write_jsonl,
)
from metanim.games import make_game
from metanim.solver import ReferenceSolver

TABLE5 = {"nim": 20, "fibonacci": 11, "chomp": 20, "kayles": 18, "corner_queen": 20}


@pytest.fixture(scope="module")
def default_build() -> dict[str, list[DatasetRecord]]:
    return build_default(seed=0)


@pytest.fixture(scope="module")
def paper_build() -> dict[str, list[DatasetRecord]]:
    return build_paper(seed=0)


def test_paper_build_reproduces_table5_sizes(paper_build):
    assert set(paper_build) == {f"{g}-{v}" for g in TABLE5 for v in ("normal", "misere")}
    for name, records in paper_build.items():
        game, variant = name.rsplit("-", 1)
        assert len(records) == TABLE5[game]
        assert {r.variant for r in records} == {variant}
        assert len({r.id for r in records}) == len(records)
        assert len({json.dumps(r.state) for r in records}) == len(records) or game == "chomp"


def test_every_paper_record_is_independently_verified(paper_build):
    for name, records in paper_build.items():
        for record in records if not name.startswith("chomp") else records[:6]:
            result = check_record(record)
            if name.startswith("chomp"):  # 19x19 late-game shapes may exceed the reference
                assert result.status != "failed", (record.id, result.detail)
            else:
                assert result.status == "verified", (record.id, result.detail)
            assert record.content_hash == record.compute_hash()


def test_paper_records_agree_with_the_plain_python_reference(paper_build):
    """Independent brute force: exactly one legal move leaves a lost position."""
    for name in ("nim-normal", "nim-misere", "fibonacci-misere", "kayles-normal"):
        for record in paper_build[name][:8]:
            game = record.make_game()
            state = record.game_state()
            ref = ReferenceSolver(game)
            winning = [
                m for m in game.legal_moves(state) if not ref.mover_wins(game.child(state, m))
            ]
            assert [game.move_text(m) for m in winning] == [record.optimal_move]


def test_chomp_paper_spans_square_boards(paper_build):
    boards = Counter(r.game_params["rows"] for r in paper_build["chomp-normal"])
    assert set(boards) == set(range(2, 20))
    assert all(r.game_params["rows"] == r.game_params["cols"] for r in paper_build["chomp-normal"])


def test_strata_are_balanced_where_the_game_allows(paper_build):
    counts = Counter(r.features.stratum for r in paper_build["kayles-normal"])
    assert counts == {"easy": 6, "medium": 6, "hard": 6}
    for record in paper_build["nim-normal"]:
        assert record.features.size_left == record.state[0]
        assert record.features.grundy == record.grundy


def test_build_is_deterministic_and_seed_sensitive():
    a = build("kayles", 30, seed=7, params={"rows": [12]})
    b = build("kayles", 30, seed=7, params={"rows": [12]})
    c = build("kayles", 30, seed=8, params={"rows": [12]})
    assert [r.content_hash for r in a] == [r.content_hash for r in b]
    assert [r.content_hash for r in a] != [r.content_hash for r in c]


def test_too_small_a_game_raises():
    # One NIM heap of 6 with takes 1-3 has only 5 N-positions.
    with pytest.raises(ValueError, match="critical states"):
        build("nim", 6, seed=0, params={"heaps": [6], "max_take": 3})


@settings(max_examples=15, deadline=None)
@given(
    game=st.sampled_from(
        [
            ("nim", {"heaps": [7, 9, 5], "max_take": None}),
            ("nim", {"heaps": [12, 10], "max_take": 3}),
            ("kayles", {"rows": [6, 7]}),
            ("fibonacci", {"n": 40}),
            ("chomp", {"rows": 4, "cols": 5}),
            ("corner_queen", {"height": 9, "width": 12, "start": [0, 11]}),
        ]
    ),
    misere=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_built_records_are_critical_by_brute_force(game, misere, seed):
    name, params = game
    records = build(name, 5, seed=seed, params=params, variant="misere" if misere else "normal")
    for record in records:
        g = make_game(name, **params, misere=misere)
        state = g.validate_state(record.state)
        ref = ReferenceSolver(g)
        winning = [m for m in g.legal_moves(state) if not ref.mover_wins(g.child(state, m))]
        assert len(winning) == 1
        assert g.move_text(winning[0]) == record.optimal_move
        assert g.action_id(winning[0]) == record.optimal_action
        assert record.grundy == ref.grundy(state)
        assert record.prompt == g.prompt(state)


def test_jsonl_round_trip_and_tamper_detection(tmp_path, default_build):
    path = write_jsonl(default_build["corner_queen-normal"], tmp_path / "cq.jsonl")
    loaded = load_dataset(path, verify=True)
    assert loaded == default_build["corner_queen-normal"]
    assert not list(tmp_path.glob(".*.tmp"))  # the temp file was renamed away
    lines = path.read_text().splitlines()
    row = json.loads(lines[0])
    assert isinstance(row["state"], str) and isinstance(row["game_params"], str)
    row["optimal_move"] = "[0, 0]"
    (tmp_path / "bad.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(DatasetError, match="content hash"):
        load_dataset(tmp_path / "bad.jsonl")


def test_verify_catches_a_wrong_move_with_a_fresh_hash(default_build):
    record = default_build["nim-normal"][0]
    index = next(i for i, m in enumerate(record.legal_moves) if m != record.optimal_move)
    game = record.make_game()
    action = game.action_id(game.legal_moves(record.game_state())[index])
    forged = record.model_copy(
        update={"optimal_move": record.legal_moves[index], "optimal_action": action}
    ).with_hash()
    assert "finds winning moves" in (verify_record(forged) or "")
    assert check_record(forged).status == "failed"


def test_loads_with_pandas(tmp_path, default_build):
    records = [
        r for name in ("nim-normal", "kayles-misere", "chomp-normal") for r in default_build[name]
    ]
    path = write_jsonl(records, tmp_path / "mixed.jsonl")
    frame = records_frame(path)
    assert len(frame) == len(records)
    assert list(frame["id"]) == [r.id for r in records]
    assert [json.loads(s) for s in frame["state"]] == [r.state for r in records]
    assert frame["features"].iloc[0]["stratum"] in {"easy", "medium", "hard"}


@pytest.mark.slow
def test_loads_with_huggingface_datasets(tmp_path, default_build):
    hf = pytest.importorskip("datasets")
    records = [r for records in default_build.values() for r in records]
    path = write_jsonl(records, tmp_path / "all.jsonl")
    ds = hf.load_dataset(
        "json", data_files=str(path), split="train", cache_dir=str(tmp_path / "hf")
    )
    assert ds.num_rows == len(records)
    assert [json.loads(s) for s in ds["state"]] == [r.state for r in records]
    assert ds[0]["features"]["n_legal_moves"] == records[0].features.n_legal_moves


def test_default_specs_name_every_file():
    assert len({s.name for s in DEFAULT_SPECS}) == len(DEFAULT_SPECS) == 10
    assert {s.name for s in PAPER_SPECS} == {s.name for s in DEFAULT_SPECS}


# ------------------------------------------------------------ difficulty and verification


def test_default_build_measures_reasoning_not_one_trick(default_build):
    for name, records in default_build.items():
        tiers = Counter(r.difficulty for r in records)
        assert all(r.features.n_legal_moves >= 2 for r in records), name  # no forced move
        assert tiers["medium"] + tiers["hard"] >= 0.6 * len(records), (name, tiers)
        # Difficulty is recomputed from the record's own features, not trusted.
        for r in records:
            f = r.features
            easy = f.n_legal_moves <= 4 or f.depth <= 4
            hard = not easy and f.n_legal_moves >= 16 and (f.fullness or 0) >= 0.4
            assert r.difficulty == ("easy" if easy else "hard" if hard else "medium"), r.id
    nim = default_build["nim-normal"]
    assert {len(r.state) for r in nim} >= {1, 3, 4}
    assert {r.game_params["max_take"] for r in nim} >= {None, 4, 5}
    # Not all "take n mod (k+1)": many NIM records have several heaps.
    assert sum(len(r.state) > 1 for r in nim) >= len(nim) // 2
    chomp = default_build["chomp-normal"]
    full = {r.game_params["rows"] for r in chomp if r.features.fullness == 1.0}
    assert full == {4, 6, 8, 10}  # the full boards, whose only winning bite is (1, 1)
    assert all(r.optimal_move == "[1, 1]" for r in chomp if r.features.fullness == 1.0)
    assert max(r.game_params["rows"][0] for r in default_build["kayles-normal"]) >= 60


def test_default_records_are_independently_verified(default_build):
    names = ("nim-normal", "nim-misere", "fibonacci-normal", "kayles-normal", "kayles-misere")
    for name in names:
        for record in default_build[name]:
            assert check_record(record).status == "verified", record.id
    methods = Counter(check_record(r).method for r in default_build["kayles-misere"])
    assert methods == {"multiset-of-runs search": 40}


def test_a_tampered_misere_kayles_record_fails_verification(default_build):
    # Issue 24 item 5: misère Kayles records with more than 26 standing pins fell in "not
    # independently verified", so one naming a losing move passed `show --verify`. The
    # search over multisets of runs checks each one; other legal moves are caught.
    long = [r for r in default_build["kayles-misere"] if r.state[0].count("1") > 26]
    assert len(long) >= 3
    for record in long[:3]:
        game = record.make_game()
        state = record.game_state()
        for move in game.legal_moves(state)[::7]:
            if game.move_text(move) == record.optimal_move:
                continue
            forged = record.model_copy(
                update={
                    "optimal_move": game.move_text(move),
                    "optimal_action": game.action_id(move),
                }
            ).with_hash()
            result = check_record(forged)
            assert result.status == "failed", (record.id, move, result.detail)
            assert "multiset-of-runs search finds winning moves" in (result.detail or "")


def _two_row_record(state: tuple[int, int], move: tuple[int, int]) -> DatasetRecord:
    from metanim.solver import grundy

    game = make_game("chomp", rows=2, cols=300)
    value = grundy(game, state)  # the builder's value: the check recomputes it by its oracle
    return make_record(game, state, move, index=0, seed=0, grundy=value)


def test_verify_is_independent_of_the_solver():
    """Reproducer: 2x300 Chomp records with a wrong move (the r*256 bug wrote [1, 40] for
    (300, 295)) passed --verify, which re-ran the same solver."""
    good = _two_row_record((300, 295), (0, 296))
    result = check_record(good)
    assert (result.status, result.method) == ("verified", "closed form (two-row Chomp)")
    bad = _two_row_record((300, 295), (1, 40))
    result = check_record(bad)
    assert result.status == "failed" and "[0, 296]" in (result.detail or "")


def test_a_record_no_oracle_covers_is_not_called_verified():
    from metanim.datasets._verify import REFERENCE_WORK
    from metanim.solver import winning_moves

    # A full misère row of 60 pins: the search stops at its work bound, and says so.
    game = make_game("kayles", rows=[60], misere=True)
    state = ("1" * 60,)
    record = make_record(game, state, winning_moves(game, state)[0], index=0, seed=0, grundy=0)
    result = check_record(record)
    assert result.status == "unverified"
    assert f"scanned more than {REFERENCE_WORK:,} moves" in (result.detail or "")
    assert (verify_record(record) or "").startswith("not independently verified")


@pytest.mark.slow
def test_thousand_two_row_chomp_records_verify_by_the_closed_form(tmp_path):
    """Done-when: 1,000 Chomp records on 2x300 boards verify against the 2-row closed form."""
    records = build("chomp", 1000, seed=7, params={"rows": 2, "cols": 300})
    path = write_jsonl(records, tmp_path / "c.jsonl")
    results = [check_record(r) for r in load_dataset(path, verify=True)]
    assert Counter((v.status, v.method) for v in results) == {
        ("verified", "closed form (two-row Chomp)"): 1000
    }


def test_show_verify_counts_what_no_oracle_covers(tmp_path, capsys):
    from metanim.cli import main
    from metanim.solver import winning_moves

    chomp = make_game("chomp", rows=10, cols=10, misere=True)  # beyond the reference
    state = chomp.initial_state()
    records = [
        _two_row_record((300, 295), (0, 296)),
        make_record(chomp, state, winning_moves(chomp, state)[0], index=1, seed=0, grundy=0),
    ]
    path = write_jsonl(records, tmp_path / "mixed.jsonl")
    # Issue 24 item 5: a record no oracle covers fails --verify unless it is allowed.
    assert main(["dataset", "show", str(path), "--verify", "--head", "0"]) == 2
    out, err = capsys.readouterr()
    assert "optimal move independently verified: 1 of 2 (1 by closed form (two-row Chomp))" in out
    assert "grundy confirmed by an oracle: 1 of 2" in out
    assert "not independently verified: 1" in out
    assert "1 of 2 records are not independently verified (first: chomp-misere-000001)" in err
    assert "--allow-unverified" in err
    argv = ["dataset", "show", str(path), "--verify", "--allow-unverified", "--head", "0"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "not independently verified: 1" in out
    assert main(["dataset", "show", str(path), "--allow-unverified", "--head", "0"]) == 2


def _grundy_by_rules(game, state, memo) -> int:
    """The normal-play Grundy value by mex over the children, from the game's moves: a
    plain recursion written here, apart from every oracle and solver under test."""
    key = game.state_key(state)
    if key not in memo:
        seen = {_grundy_by_rules(game, game.child(state, m), memo) for m in game.legal_moves(state)}
        memo[key] = next(v for v in range(len(seen) + 1) if v not in seen)
    return memo[key]


def test_a_wrong_grundy_fails_where_the_verifier_had_no_grundy_oracle(default_build):
    """Issue 38 item 9: a wrong `grundy` passed --verify in Corner Queen, normal Fibonacci,
    misère Kayles and two-row Chomp records, which had no Grundy oracle; every default
    record's value is now confirmed, and every tampered one fails."""
    import sys

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
    cases = {
        "corner_queen-normal": lambda r: True,
        "fibonacci-normal": lambda r: True,
        "kayles-misere": lambda r: sum(row.count("1") for row in r.state) <= 14,
        "chomp-normal": lambda r: sum(1 for x in r.state if x) <= 2,
    }
    tampered = 0
    for name, small in cases.items():
        records = [r for r in default_build[name] if small(r)][:4]
        assert records, name
        for record in records:
            game = record.make_game()
            truth = _grundy_by_rules(game, record.game_state(), {})
            assert record.grundy == truth, record.id  # the build is right
            result = check_record(record)
            assert result.status == "verified" and "grundy" in result.confirmed, record.id
            for wrong in {truth + 1, abs(truth - 1)} - {truth}:
                if wrong == 0 and not game.misere:
                    continue  # caught before: "grundy is 0 at an N-position"
                forged = record.model_copy(update={"grundy": wrong}).with_hash()
                result = check_record(forged)
                assert result.status == "failed", (record.id, wrong)
                assert f"grundy is {wrong}" in (result.detail or "")
                tampered += 1
    assert tampered >= 12


def test_show_verify_says_per_record_which_fields_were_confirmed(tmp_path, capsys):
    """A field no oracle checks is never called verified: a normal Fibonacci position too
    large for the reference solver has its optimal move checked by the Zeckendorf form
    and its Grundy value by nothing."""
    from metanim.cli import main
    from metanim.solver import grundy, winning_moves

    game = make_game("fibonacci", n=1000)
    state = next(
        (r, k) for r in range(900, 1000) for k in range(1, 40)
        if len(winning_moves(game, (r, k))) == 1
    )  # fmt: skip
    big = make_record(game, state, winning_moves(game, state)[0], index=0, seed=0,
                      grundy=grundy(game, state))  # fmt: skip
    small = _two_row_record((300, 295), (0, 296))
    path = write_jsonl([small, big], tmp_path / "two.jsonl")
    assert main(["dataset", "show", str(path), "--verify", "--head", "0"]) == 0
    out = capsys.readouterr().out
    lines = {line.split(":")[0].strip(): line for line in out.splitlines() if line.startswith("  ")}
    confirmed = lines[small.id].split("confirmed ")[1].split(";")[0].split(", ")
    assert {"legal_moves", "optimal_move", "grundy", "features.grundy"} <= set(confirmed)
    confirmed = lines[big.id].split("confirmed ")[1].split(";")[0].split(", ")
    assert "optimal_move" in confirmed and "grundy" not in confirmed
    unchecked = lines[big.id].split("not checked: ")[1]
    assert unchecked.startswith("grundy (no oracle has its value here")
    assert "difficulty" in unchecked and "features.depth" in unchecked
    assert "grundy confirmed by an oracle: 1 of 2" in out


def test_the_paper_build_card_says_what_the_build_is(paper_build):
    # Issue 24 item 8: the paper build keeps forced moves, labels every NIM record easy
    # and draws small late-game Chomp shapes; its card says so, with the counts. They
    # are counted again here from the rules (legal moves) and the states (fullness).
    import statistics

    from metanim.datasets import dataset_card

    records = [r for rs in paper_build.values() for r in rs]
    forced = sum(1 for r in records if len(r.make_game().legal_moves(r.game_state())) == 1)
    nim = [r for r in records if r.game == "nim"]
    chomp = [r for r in records if r.game == "chomp"]
    full = statistics.median(
        sum(r.game_state()) / (r.game_params["rows"] * r.game_params["cols"]) for r in chomp
    )
    assert (forced, len(records)) == (7, 178)  # the counts issue 24 reports for seed 0
    assert {r.difficulty for r in nim} == {"easy"} and len(nim) == 40
    assert not any(r.difficulty == "hard" for r in chomp) and full < 0.15
    card = dataset_card(paper_build, seed=0, preset="paper")
    assert f"**{forced} of {len(records)}** records have a single legal" in card
    assert f"**{len(nim)} of {len(nim)}** NIM records are labelled `easy`" in card
    assert f"median fullness **{full:.2f}**" in card
    assert f"and **0** of {len(chomp)} are labelled `hard`" in card
    assert "## The paper build" not in dataset_card(paper_build, seed=0)


def test_the_difficulty_table_in_the_docs_is_the_default_build(default_build) -> None:
    """docs/datasets.md's mix table, read back and recomputed from the build (true medians)."""
    import re
    import statistics
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "datasets.md").read_text(encoding="utf-8")
    row = re.compile(
        r"^\| ([a-z_]+-(?:normal|misere)) \| (\d+) \| (\d+) / (\d+) / (\d+) \| "
        r"(\d+)–(\d+) \(median ([\d.]+)\) \| (\d+) \| (\d+) \|$",
        re.M,
    )
    rows = {m[1]: m.groups()[1:] for m in row.finditer(doc)}
    assert set(rows) == set(default_build)
    for name, records in default_build.items():
        tiers = [sum(r.difficulty == t for r in records) for t in ("easy", "medium", "hard")]
        moves = [len(r.legal_moves) for r in records]
        want = (
            len(records), *tiers, min(moves), max(moves), statistics.median(moves),
            len({r.grundy for r in records}),
            sum((r.features.fullness or 0) == 1.0 for r in records),
        )  # fmt: skip
        got = rows[name]
        assert [int(x) for x in got[:6]] == list(want[:6]), name
        assert float(got[6]) == want[6], name
        assert [int(x) for x in got[7:]] == list(want[7:]), name


def test_a_folder_is_refused_naming_its_files(tmp_path, default_build):
    write_jsonl(default_build["nim-normal"], tmp_path / "data" / "nim-normal.jsonl")
    with pytest.raises(DatasetError, match=r"data is a folder: .* give one of its files "
                       r"\(nim-normal.jsonl\)"):  # fmt: skip
        load_dataset(tmp_path / "data")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match=r"empty is a folder: .*\(it holds none\)"):
        load_dataset(tmp_path / "empty")


def test_a_line_past_the_cap_is_refused_not_held(tmp_path, monkeypatch, default_build):
    import metanim.datasets._io as io

    first = default_build["nim-normal"][0].to_json_line()
    monkeypatch.setattr(io, "MAX_LINE_CHARS", len(first) + 1)  # the newline fits
    path = tmp_path / "d.jsonl"
    path.write_text(first + "\n" + "\0" * (3 * len(first)))  # a stream with no newline
    with pytest.raises(DatasetError, match=rf"d.jsonl:2: a line longer than {len(first) + 1:,}"):
        load_dataset(path)
    path.write_text(first + "\n")
    assert load_dataset(path) == default_build["nim-normal"][:1]


def test_a_folder_that_cannot_be_written_is_named_not_the_temp_file(
    tmp_path, monkeypatch, default_build
):
    import errno
    import tempfile

    def read_only(prefix: str, suffix: str, dir: str) -> tuple[int, str]:
        # What mkstemp raises on a read-only mount: the temp file's own name.
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), f"{dir}/{prefix}abc123{suffix}")

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    with pytest.raises(OSError) as info:
        write_jsonl(default_build["nim-normal"], tmp_path / "rom" / "nim-normal.jsonl")
    assert info.value.filename == str(tmp_path / "rom")
    assert info.value.strerror == os.strerror(errno.EROFS) and ".tmp" not in str(info.value)
