"""The structured-output mode a run resolves (`auto` asks each server once): it is the
run's identity, header and report; simulated models take no schema, a server that does
not constrain output turns the run's mode off and says so, a mode asked by name is kept."""

from __future__ import annotations

import pytest

from metanim.arena import (
    resolve_structured_output,
    run_tournament,
)
from metanim.arena.tournament import Tournament
from tests.arena.configs import tournament as _tournament
from tests.loopback import RecordingServer, playing

pytestmark = pytest.mark.usefixtures("fresh_probes")


def test_the_mode_chosen_is_the_runs_identity_header_and_report(tmp_path):
    with RecordingServer(playing("llamacpp")) as llama, RecordingServer(playing()) as other:
        local = _tournament(model=f"m@{llama.url()}/v1", results_dir=str(tmp_path))
        job = Tournament(local)
        assert job.config.structured_output == "json_schema"
        assert "json_schema (auto: llama.cpp at" in job.structured
        # The identity holds the mode chosen: the same as asking for it by name, and
        # another log than off.
        asked = local.model_copy(update={"structured_output": "json_schema"})
        assert job.digest == local.config_hash() == asked.config_hash()
        assert job.digest != local.model_copy(update={"structured_output": "off"}).config_hash()
        # A simulated opponent takes no schema but does not veto one.
        with_sim = _tournament(
            model=f"m@{llama.url()}/v1", opponent="react", opponent_model="sim-random"
        )
        assert Tournament(with_sim).config.structured_output == "json_schema"
        # One server that does not constrain output makes the run's mode off, and says so.
        mixed = _tournament(
            model=f"m@{llama.url()}/v1", opponent="react", opponent_model=f"m@{other.url()}/v1"
        )
        resolved, note = resolve_structured_output(mixed, Tournament(mixed).sides)
        assert resolved.structured_output == "off"
        assert "--structured-output json_schema sends the schema to every server" in note
        # Asked by name: kept, never probed.
        before = len(other.requests)
        named = _tournament(model=f"m@{other.url()}/v1", structured_output="json_schema")
        assert Tournament(named).config.structured_output == "json_schema"
        assert len(other.requests) == before


def test_simulated_runs_resolve_auto_to_off_and_print_the_mode(tmp_path, capsys):
    config = _tournament(model="sim-optimal", results_dir=str(tmp_path))
    assert config.structured_output == "auto"
    assert (
        config.config_hash() == config.model_copy(update={"structured_output": "off"}).config_hash()
    )
    result = run_tournament(config, announce=print)
    header = capsys.readouterr().out
    assert "structured output off (auto: simulated models take no schema)" in header
    assert result.summary["config"]["structured_output"] == "off"
    assert "structured output `off`" in result.report
