"""Harness-ready dataset rows (input/target/messages) and the Hugging Face dataset card."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from metanim.datasets import DatasetRecord, build, dataset_card, load_dataset, write_jsonl
from metanim.games import PROMPT_VERSION, make_game

SPECS = [
    ("nim", {"heaps": [3, 4, 5], "max_take": None}, "normal"),
    ("kayles", {"rows": [9]}, "misere"),
    ("corner_queen", {"height": 8, "width": 12}, "normal"),
    ("chomp", {"rows": 3, "cols": 4}, "normal"),
    ("fibonacci", {"n": 20}, "misere"),
]


@pytest.fixture(scope="module")
def files() -> dict[str, list[DatasetRecord]]:
    return {f"{g}-{v}": build(g, 4, seed=1, variant=v, params=p) for g, p, v in SPECS}


def test_input_is_the_prompt_with_the_react_output_format(files) -> None:
    for records in files.values():
        for r in records:
            assert r.input.startswith(r.prompt + "\n#Output Format:")
            # ReAct: reasoning, then the action (Table 8), the JSON in a fenced block.
            assert '"reasoning": string' in r.input and '"action":' in r.input
            assert r.input.rstrip().endswith("```")
            assert r.input_version.startswith(PROMPT_VERSION) and "react" in r.input_version
            assert r.target == r.optimal_move
            assert [m["role"] for m in r.messages] == ["user", "assistant"]
            assert r.messages[0]["content"] == r.input


def test_the_reference_reply_parses_to_the_target(files) -> None:
    for records in files.values():
        for r in records:
            game, state = r.make_game(), r.game_state()
            move = game.parse_move(r.messages[1]["content"], state)
            assert game.action_id(move) == r.optimal_action


def test_harness_fields_are_hashed_and_verified(tmp_path: Path, files) -> None:
    records = files["nim-normal"]
    path = write_jsonl(records, tmp_path / "nim.jsonl")
    assert load_dataset(path, verify=True) == records
    line = json.loads(path.read_text().splitlines()[0])
    line["target"] = "[0, 1]"
    path.write_text(json.dumps(line) + "\n")
    with pytest.raises(ValueError, match="hash"):
        load_dataset(path)


def test_card_header_lists_every_field_config_and_size(files) -> None:
    card = dataset_card(files, seed=1)
    header, body = card.split("\n---\n", 1)
    assert header.startswith("---\n")
    yaml = pytest.importorskip("yaml")
    meta = yaml.safe_load(header.removeprefix("---\n"))
    fields = json.loads(write_row(files)).keys()
    sizes = {name: len(records) for name, records in files.items()}
    sizes["all"] = sum(sizes.values())
    for info in meta["dataset_info"]:
        # every column of the file, in the file's order, nothing else
        assert [f["name"] for f in info["features"]] == list(fields)
        assert info["splits"][0]["num_examples"] == sizes[info["config_name"]]
    assert [c["config_name"] for c in meta["configs"]] == ["all", *files]
    # One default config, the one over every file.
    assert [c["config_name"] for c in meta["configs"] if c.get("default")] == ["all"]
    assert meta["configs"][0]["data_files"][0]["path"] == [f"{name}.jsonl" for name in files]
    for name, records in files.items():
        assert f'path: "{name}.jsonl"' in header
        assert f"| {name} | {len(records)} |" in body
    assert "exactly one move wins" in body and "Uniqueness guarantee" in body


def write_row(files) -> str:
    return next(iter(files.values()))[0].to_json_line()


@pytest.mark.slow
def test_huggingface_datasets_loads_the_build_with_the_card_features(tmp_path: Path, files) -> None:
    hf = pytest.importorskip("datasets")
    yaml = pytest.importorskip("yaml")
    for name, records in files.items():
        write_jsonl(records, tmp_path / f"{name}.jsonl")
    (tmp_path / "README.md").write_text(dataset_card(files, seed=1))
    header = yaml.safe_load((tmp_path / "README.md").read_text().split("---")[1])
    for info in header["dataset_info"]:
        name = info["config_name"]
        if name == "all":
            continue
        declared = hf.Features._from_yaml_list(info["features"])
        # The types `datasets` infers from the file alone, independently of the card;
        # the Arrow schemas compare field order too (Features, a dict, would not).
        inferred = hf.Dataset.from_json(
            str(tmp_path / f"{name}.jsonl"), cache_dir=str(tmp_path / "c")
        ).features
        assert declared.arrow_schema == inferred.arrow_schema
        loaded = hf.load_dataset(str(tmp_path), name, split="test", cache_dir=str(tmp_path / "hf"))
        assert loaded.features.arrow_schema == inferred.arrow_schema
        assert loaded.num_rows == len(files[name])
        assert loaded[0]["target"] == files[name][0].target
    # No config name: the default config, every file.
    everything = hf.load_dataset(str(tmp_path), split="test", cache_dir=str(tmp_path / "hf"))
    assert everything.num_rows == sum(len(records) for records in files.values())
    assert sorted(everything["id"]) == sorted(r.id for rs in files.values() for r in rs)


def test_cli_build_writes_the_card(tmp_path: Path, run_metanim) -> None:
    out = run_metanim(
        "dataset", "build", "--game", "nim", "-n", "3", "-p", "heaps=[5,6]",
        "-p", "max_take=null", "--out", str(tmp_path),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr  # the command line ran with check=True
    assert "dataset card" in out.stdout
    card = (tmp_path / "README.md").read_text()
    assert 'config_name: "nim-normal"' in card and "| nim-normal | 3 |" in card
    assert make_game("nim", heaps=[5, 6], max_take=None)  # the card's configuration exists


def test_input_is_what_the_react_method_sends(files) -> None:
    from metanim.agents import GameTask, prompts

    for records in files.values():
        r = records[0]
        task = GameTask(r.make_game(), r.game_state())
        assert r.input == prompts.with_format(task.prompt(), "react", task.action_schema())


def test_push_to_hub_refuses_a_folder_without_a_card(tmp_path: Path) -> None:
    from metanim.datasets import push_to_hub

    pytest.importorskip("huggingface_hub")
    with pytest.raises(FileNotFoundError, match=r"README\.md"):
        push_to_hub(tmp_path, "someone/metanim")  # fails before any network call


def test_files_built_before_the_harness_fields_still_load(tmp_path: Path, files) -> None:
    from metanim.datasets._schema import HARNESS_FIELDS

    record = files["kayles-misere"][0]
    old = record.model_copy(update=dict.fromkeys(HARNESS_FIELDS, "")).model_copy(
        update={"messages": []}
    )
    line = json.loads(old.to_json_line())
    for name in HARNESS_FIELDS:  # the old layout has no such keys at all
        del line[name]
    # The hash the old code wrote: sha256 of the canonical JSON of the other fields.
    body = {k: v for k, v in line.items() if k != "content_hash"}
    line["content_hash"] = hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(line) + "\n")
    (loaded,) = load_dataset(path, verify=True)
    assert (loaded.id, loaded.input, loaded.messages) == (record.id, "", [])
