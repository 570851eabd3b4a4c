"""The name-effect runner: named and disguised twins of the same states, paired."""

from __future__ import annotations

from pathlib import Path

import pytest

from metanim.analysis.name_effect import (
    NAME_CUES,
    NameEffectOptions,
    pair_files,
    render_name_effect,
    run_name_effect,
)
from metanim.datasets import load_dataset
from metanim.games import GAMES, make_game
from metanim.records import read_records


def test_each_cue_is_in_the_named_prompt_only() -> None:
    assert set(NAME_CUES) == set(GAMES)
    for name, cue in NAME_CUES.items():
        for disguise, present in ((False, True), (True, False)):
            game = make_game(name, disguise=disguise)
            assert (cue in game.prompt(game.initial_state())) is present, (name, disguise)


def test_the_twins_hold_the_same_states_and_answers(tmp_path: Path) -> None:
    options = NameEffectOptions(out=tmp_path, n=6)
    named, disguised = (load_dataset(p) for p in pair_files(options, "kayles-20"))
    assert [r.state for r in named] == [r.state for r in disguised]
    assert [r.optimal_move for r in named] == [r.optimal_move for r in disguised]
    assert all(r.game_params.get("disguise") for r in disguised)
    assert not any("disguise" in r.game_params for r in named)
    assert all("Kayles" in r.prompt for r in named) and not any(
        "Kayles" in r.prompt for r in disguised
    )


@pytest.mark.slow
def test_the_cue_mechanism_gives_an_effect_and_its_absence_none(tmp_path: Path) -> None:
    games = ("fibonacci-20", 'subtraction:{"heaps":[12,15],"subtraction_set":[2,5,6]}')
    methods = ("react",)
    cued = run_name_effect(NameEffectOptions(out=tmp_path / "cued", games=games, methods=methods))
    plain = run_name_effect(
        NameEffectOptions(
            out=tmp_path / "plain", games=games, methods=methods,
            model="sim-biased:heuristic=max_take,p=0.7",
        )
    )  # fmt: skip
    for row in cued:
        # The named prompt cues recall (greedy 10% instead of 70%): a positive effect
        # whose interval excludes 0.
        assert row.difference > 0 and row.difference_ci[0] > 0, row
    for row in plain:
        # No cue: the two prompts are answered alike, item by item.
        assert row.difference == 0 and row.difference_ci[0] < 0 < row.difference_ci[1], row
    # The paired estimate is the mean over items of (named share - disguised share),
    # recomputed here from the logs.
    row = cued[0]
    logs = sorted((tmp_path / "cued" / "runs").glob("name-effect-fibonacci-20-*.jsonl"))
    shares: dict[str, dict[str, list[bool]]] = {}
    for log in logs:
        variant = "disguised" if "disguised" in log.name else "named"
        for r in read_records(log):
            if "record_id" in r:
                shares.setdefault(variant, {}).setdefault(r["record_id"], []).append(r["correct"])
    diffs = [
        sum(shares["named"][k]) / len(shares["named"][k])
        - sum(shares["disguised"][k]) / len(shares["disguised"][k])
        for k in shares["named"]
    ]
    assert row.difference == pytest.approx(sum(diffs) / len(diffs))
    text = render_name_effect(cued, simulated=True)
    assert "named − disguised" in text and "fibonacci-20" in text and "cue=Fibonacci" in text
