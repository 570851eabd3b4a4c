"""Critical-state datasets of the generated families and of disguised games."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metanim.datasets import build, load_dataset, write_jsonl
from metanim.datasets._build import GENERATED_SPECS, DatasetSpec
from metanim.datasets._verify import check_record
from metanim.games import make_game

CASES = [
    ("subtraction", {"heaps": [12, 15], "subtraction_set": [2, 5, 6]}, "normal"),
    ("subtraction", {"heaps": [14], "subtraction_set": [1, 3, 4]}, "misere"),
    ("octal", {"rows": [14], "code": "0.07"}, "normal"),
    ("octal", {"rows": [6, 8], "code": "0.137"}, "misere"),
    ("kayles", {"rows": [12], "disguise": True}, "normal"),
    ("octal", {"rows": [12], "code": "0.6", "disguise": True}, "misere"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "params", "variant"), CASES)
def test_records_store_the_rule_and_verify_independently(
    name: str, params: dict, variant: str, tmp_path: Path
) -> None:
    records = build(name, params=params, n=6, seed=3, variant=variant)
    assert len(records) == 6
    path = tmp_path / "d.jsonl"
    write_jsonl(records, path)
    for record in load_dataset(path):
        assert record.game == name and record.variant == variant
        for key, value in params.items():
            assert record.game_params[key] == value  # the rule travels in every record
        result = check_record(record)
        assert result.status == "verified", result
        if name != "kayles":  # the families have no closed form in the verifier
            assert result.method == "reference solver", result
        if params.get("disguise"):  # the word test of every text is tests/games/test_disguise.py
            assert name.lower() not in record.prompt.lower() and "pin" not in record.prompt
        # A record naming another legal move as the only winner fails the check.
        others = [m for m in record.legal_moves if m != record.optimal_move]
        game = make_game(name, **record.game_params)
        tampered = record.model_copy(
            update={
                "optimal_move": others[0],
                "optimal_action": game.action_id(
                    game.legal_moves(game.validate_state(record.state))[
                        record.legal_moves.index(others[0])
                    ]
                ),
            }
        )
        assert check_record(tampered).status == "failed"


def test_the_generated_build_names_disguised_files_apart() -> None:
    names = [spec.name for spec in GENERATED_SPECS]
    assert len(set(names)) == len(names)
    assert "kayles-disguised-misere" in names and "octal-normal" in names
    spec = DatasetSpec(game="nim", params={"disguise": True}, n=1)
    assert spec.name == "nim-disguised-normal"
    assert json.loads(json.dumps(spec.params)) == {"disguise": True}
