"""A model's first contact (issue 26): structured output `auto`, failing fast with a remedy,
schemas that admit their gold answers, every phase's truncation counted, a debate that
stops when nothing is left to debate, honest timing, chance baselines, one `forfeit`
verdict and strict JSON.

Servers are the simulated one (faulty models where a test needs failures) or a scripted
loopback server (`RecordingServer`) that plays llama.cpp, vLLM, SGLang or an unknown
server; the real-model versions of the first two are in test_local_model.py. Expected
values come from the rules written out here (Nim's legal moves and its optimal move, a
random player's win probability by a plain recursion, binomial tails summed by hand),
never from the code under test.
"""

from __future__ import annotations

import pytest

from metanim import cli
from metanim.llm import forget_probes


@pytest.fixture(autouse=True)
def _fresh_probes():
    # Each scripted server gets a new port, but a test must not see another's answer.
    forget_probes()
    yield
    forget_probes()


# ------------------------------------------------------------------ 1. auto


def test_every_command_that_calls_a_model_takes_the_flag():
    parser = cli.build_parser()
    for command in ("tournament", "evaluate", "challenging", "play", "demo"):
        sub = parser._subparsers._group_actions[0].choices[command]
        flags = {s for a in sub._actions for s in a.option_strings}
        assert "--structured-output" in flags, command
    demo = parser.parse_args(
        ["demo", "--structured-output", "off", "--max-calls", "9", "--keep-going",
         "--max-completion-tokens", "32", "--phase-max-tokens", "rewrite=48"]
    )  # fmt: skip
    assert (demo.structured_output, demo.max_calls, demo.keep_going) == ("off", 9, True)


# ------------------------------------------------------------------ 2. fail fast


def test_a_forfeit_run_exits_3_with_one_hint_line(tmp_path, capsys):
    code = cli.main(
        ["evaluate", "--dataset", "samples/mc.jsonl", "--method", "standard",
         "--model", "sim-faulty:malformed=1", "--repeats", "2", "--concurrency", "1",
         "--results-dir", str(tmp_path), "--no-progress"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 3
    hints = [line for line in err.splitlines() if line.startswith("hint: ")]
    assert len(hints) == 1 and hints[0].startswith("hint: stopped after 5 forfeits: ")


# ------------------------------------------------------------------ 3. schemas


# ------------------------------------------------------------------ 4. phases and debates


# ------------------------------------------------------------------ 5. timing


# ------------------------------------------------------------------ 6. chance


# ------------------------------------------------------------------ 7. verdicts, JSON
