"""inspect tasks of the generated families and of a disguised game, against the simulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import need

need("inspect_ai")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import get_model  # noqa: E402

from metanim.integrations.inspect_ai import game_task, octal, subtraction  # noqa: E402


@pytest.mark.slow
def test_family_and_disguised_tasks_are_solved_by_the_optimal_simulator(
    sim_server, tmp_path: Path
) -> None:
    # The simulated optimal player reads each prompt back (a disguised one too) and
    # answers the solver's move: every item graded correct means the prompt, the rule
    # stored in the record and the grader agree.
    # The model named with its server: inspect keeps one model per name and base URL, and
    # one read from OPENAI_BASE_URL could be an earlier test's server, closed since.
    model = get_model("openai/sim-optimal", base_url=sim_server.base_url, api_key="sim")
    tasks = [
        subtraction(limit_n=3),
        octal(variant="misere", limit_n=3),
        game_task("kayles", limit_n=3, disguise=True),
    ]
    logs = inspect_eval(tasks, model=model, log_dir=str(tmp_path), display="none")
    for log in logs:
        assert log.status == "success", log.error
        assert log.results.scores[0].metrics["accuracy"].value == 1.0
    assert [log.eval.task for log in logs][-1].endswith("kayles-disguised-normal")
