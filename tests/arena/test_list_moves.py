"""`--list-moves`: game prompts that end with the legal moves are another run.

Without the option a run keeps the hash the code before the option gave it (pinned
below, as that code computed them); with it the identity differs in the option and the
game prompt version alone. A tournament and an evaluation on the simulated server with
`--list-moves` send prompts that list the legal moves (read from their transcripts) and
produce their results.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from metanim.arena import TournamentConfig
from metanim.arena.evaluate import EvaluationConfig
from metanim.cli import build_parser, main
from metanim.games import LEGAL_MOVES_HEADING, PROMPT_VERSION, make_game
from metanim.records import (
    DecisionRecord,
    EpisodeRecord,
    config_identity,
    identity_hash,
    log_identity,
    read_log,
)

TOURNAMENT = {"method": "react", "model": "sim-optimal", "games": ["nim-31-k3"]}
EVALUATION = {"dataset": ["/nonexistent/nim.jsonl"], "method": "react", "model": "sim-optimal"}
#: The hashes `config_hash()` gave these configs before `list_moves` existed (computed by
#: the code of the commit before it, run from an exported copy of its tree).
BEFORE = [
    (TournamentConfig, {}, "9dc71dfe4755"),
    (TournamentConfig, TOURNAMENT, "2fd524ce9866"),
    (EvaluationConfig, EVALUATION, "60373bee33ad"),
]


@pytest.mark.parametrize(("cls", "fields", "digest"), BEFORE)
def test_a_run_without_the_list_keeps_its_hash(cls: Any, fields: dict, digest: str) -> None:
    assert cls(structured_output="off", **fields).config_hash() == digest
    assert cls(structured_output="off", list_moves=False, **fields).config_hash() == digest


@pytest.mark.parametrize(("cls", "fields", "digest"), BEFORE)
def test_a_run_with_the_list_is_another_identity(cls: Any, fields: dict, digest: str) -> None:
    on = cls(structured_output="off", list_moves=True, **fields)
    assert on.config_hash() != digest
    plain = config_identity(cls(structured_output="off", **fields).model_dump(mode="json"))
    listed = config_identity(on.model_dump(mode="json"))
    # The option and the game prompt's version differ; nothing else does.
    assert listed.pop("list_moves") is True and "list_moves" not in plain
    versions = listed.pop("prompt_versions"), plain.pop("prompt_versions")
    assert listed == plain
    assert versions[1]["game"] == PROMPT_VERSION != versions[0]["game"]
    assert versions[0]["game"].startswith(PROMPT_VERSION)
    assert {k: v for k, v in versions[0].items() if k != "game"} == {
        k: v for k, v in versions[1].items() if k != "game"
    }


def test_every_command_that_prompts_with_game_states_takes_the_flag() -> None:
    parser = build_parser()
    for command in ("tournament", "evaluate", "challenging", "play", "demo"):
        sub = parser._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
        flags = {s for a in sub._actions for s in a.option_strings}
        assert {"--list-moves", "--no-list-moves"} <= flags, command
    play = ["play", "--game", "nim-31-k3", "--agent", "react"]
    assert parser.parse_args([*play, "--list-moves"]).list_moves is True
    assert parser.parse_args(["demo", "--list-moves"]).list_moves is True


def _prompts(decision: Any) -> list[str]:
    """The user messages of a kept decision's calls that hold a game prompt."""
    return [
        m["content"]
        for call in decision.calls
        for m in call.messages
        if m["role"] == "user" and "#Game Role" in m["content"]
    ]


def _check_listed(text: str, game_name: str, params: dict, state: Any) -> None:
    """The prompt ends its game part with the legal moves of `state`, counted apart."""
    game = make_game(game_name, **params)
    state = game.validate_state(state)
    (line,) = [x for x in text.splitlines() if x.startswith(LEGAL_MOVES_HEADING)]
    shown = line.removeprefix(LEGAL_MOVES_HEADING).strip()
    assert shown == ", ".join(game.move_text(m) for m in game.legal_moves(state))


def test_a_tournament_with_the_list_sends_it(tmp_path: Path, capsys) -> None:
    args = [
        "tournament", "--games", "nim-31-k3", "--method", "react", "--model", "sim-optimal",
        "--episodes", "2", "--results-dir", str(tmp_path), "--no-progress", "--list-moves",
    ]  # fmt: skip
    assert main(args) == 0
    capsys.readouterr()
    (log,) = tmp_path.glob("*.jsonl")
    episodes = [r for r in read_log(log) if isinstance(r, EpisodeRecord)]
    assert len(episodes) == 2 and all(e.status in ("win", "loss") for e in episodes)
    checked = 0
    for episode in episodes:
        for move in episode.moves:
            if move.actor != "agent":
                continue
            assert move.decision.game_prompt_version == PROMPT_VERSION + "+listed-moves"
            for text in _prompts(move.decision):
                _check_listed(text, "nim", episode.game_params, move.state)
                checked += 1
    assert checked >= 2
    # The report knows the log as the run did: its config and its decisions' versions.
    config = json.loads(log.with_suffix(".config.json").read_text())
    assert log.stem.endswith(identity_hash(log_identity(config, log, "episodes")))


def test_an_evaluation_with_the_list_sends_it(tmp_path: Path, capsys) -> None:
    from metanim.datasets import build, write_jsonl

    dataset = tmp_path / "ds.jsonl"
    write_jsonl(build("fibonacci", 3, seed=0, params={"n": 20}), dataset)
    common = [
        "evaluate", "--dataset", str(dataset), "--method", "react", "--model", "sim-optimal",
        "--repeats", "1", "--no-progress",
    ]  # fmt: skip
    assert main([*common, "--results-dir", str(tmp_path / "on"), "--list-moves"]) == 0
    assert main([*common, "--results-dir", str(tmp_path / "off")]) == 0
    capsys.readouterr()
    (on,), (off,) = (tmp_path / "on").glob("*.jsonl"), (tmp_path / "off").glob("*.jsonl")
    assert on.name != off.name  # two identities, two logs
    listed = [r for r in read_log(on) if isinstance(r, DecisionRecord)]
    plain = [r for r in read_log(off) if isinstance(r, DecisionRecord)]
    assert len(listed) == len(plain) == 3 and all(r.verdict for r in listed)
    for record in listed:
        task = record.decision.task
        (text,) = _prompts(record.decision)
        _check_listed(text, task["game"], task["params"], task["state"])
    for record in plain:
        assert all(LEGAL_MOVES_HEADING not in t for t in _prompts(record.decision))
        assert record.decision.game_prompt_version == PROMPT_VERSION
