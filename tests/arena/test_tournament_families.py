"""Tournaments on drawn rules and disguised games: illegal and unparsable rates per setting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metanim.arena import TournamentConfig, run_tournament
from metanim.llm.sim import SimServer
from metanim.records import read_records
from metanim.solver import sample_game

FAULTY = "sim-faulty:malformed=0.3,illegal=0.3"


@pytest.mark.slow
def test_rates_per_setting_are_the_logged_replies_over_calls(tmp_path: Path) -> None:
    drawn = sample_game("octal", seed=7, difficulty=1)
    settings = [
        f"octal:{json.dumps(drawn.params, separators=(',', ':'))}",
        'subtraction:{"heaps":[13],"subtraction_set":[1,3,4],"disguise":true}',
    ]
    with SimServer(seed=0) as server:
        config = TournamentConfig(
            games=settings,
            method="react",
            model=FAULTY,
            base_url=server.base_url,
            params={"max_reasks": 2},
            opponent="optimal",
            episodes=4,
            keep_going=True,
            results_dir=str(tmp_path),
            progress=False,
        )
        result = run_tournament(config)
    rows = {g["setting"]: g for g in result.summary["groups"] if g["seat"] == "all"}
    assert len(rows) == 2
    # The drawn rule is the setting's key and part of every episode's record.
    assert any(drawn.code in key for key in rows)
    lines = read_records(result.log_path)
    for setting, row in rows.items():
        mine = [r for r in lines if r["setting"] == setting]
        calls = sum(r["agent_totals"]["calls"] for r in mine)
        illegal = sum(r["agent_totals"]["illegal"] for r in mine)
        unparsable = sum(r["agent_totals"]["unparsable"] for r in mine)
        assert calls > 0 and illegal + unparsable > 0
        assert row["agent"]["illegal_rate"] == illegal / calls
        assert row["agent"]["unparsable_rate"] == unparsable / calls
    assert "agent illegal/unparsable % of replies" in result.report
