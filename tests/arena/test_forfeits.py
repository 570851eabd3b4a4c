"""Failing fast: five forfeits first stop a run with the cause and the flag that helps
(model decisions counted, not episodes); the same command with --keep-going resumes."""

from __future__ import annotations

import pytest

from metanim.arena import (
    run_evaluation,
    run_tournament,
)
from tests.arena.configs import evaluation as _evaluation
from tests.arena.configs import tournament as _tournament

pytestmark = pytest.mark.usefixtures("fresh_probes")


@pytest.mark.parametrize(
    ("fault", "words"),
    [("malformed", "most replies named no answer"), ("illegal", "not allowed")],
)
def test_five_forfeits_first_stop_the_run_with_the_cause_and_the_flag(tmp_path, fault, words):
    # Expected behaviour of a faulty model without --keep-going: the run stops.
    config = _evaluation(tmp_path, f"sim-faulty:{fault}=1")
    result = run_evaluation(config)
    assert result.stopped.startswith("stopped after 5 forfeits: ")
    assert words in result.stopped and "--structured-output json_schema" in result.stopped
    assert "--keep-going" in result.stopped and result.hint == result.stopped
    assert len(result.records) == 5 and not result.complete
    count, why = result.failures["not run"]
    assert count == 20 - 5 and why == result.stopped
    # The same command resumes: the five are kept; --keep-going (not part of the run's
    # identity) runs the rest into the same log, and the end says what helps.
    again = run_evaluation(config.model_copy(update={"keep_going": True}))
    assert again.log_path == result.log_path and again.played_now == 15
    assert again.complete and again.stopped is None
    assert again.hint.startswith("20 of 20 decisions gave no answer: ") and words in again.hint


def test_a_tournament_counts_model_decisions_not_episodes(tmp_path):
    # Each episode ends at the agent's first forfeit; the solver opponent makes no decision.
    config = _tournament(
        model="sim-faulty:malformed=1", episodes=8, concurrency=1, results_dir=str(tmp_path)
    )
    result = run_tournament(config)
    assert result.stopped.startswith("stopped after 5 forfeits")
    assert len(result.records) == 5 and result.failures["not run"][0] == 3
    kept = run_tournament(config.model_copy(update={"keep_going": True}))
    assert kept.complete and len(kept.records) == 8


def test_a_run_with_valid_answers_never_stops_for_forfeits(tmp_path):
    result = run_evaluation(_evaluation(tmp_path, "sim-optimal"))
    assert result.complete and result.stopped is None and result.hint is None


def test_the_remedy_names_the_dominant_cause_for_the_mode():
    from metanim.arena._forfeits import remedy

    off = _tournament(model="sim-optimal", structured_output="off", max_completion_tokens=64)
    on = off.model_copy(update={"structured_output": "json_schema"})
    cut = {"truncated": 5, "unparsable": 1, "illegal": 0}
    assert remedy(cut, off).startswith("most replies were cut at the 64-token completion cap")
    assert "--structured-output json_schema" in remedy(cut, off)
    assert "--reply-max-chars" in remedy(cut, on)
    assert "did not keep to the schema" in remedy({"illegal": 3}, on)
