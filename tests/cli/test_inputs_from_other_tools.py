"""Inputs written by other tools: a byte-order mark, repeated ids, an endpoint URL where a
base URL belongs, a server's usage counts, a state typed by hand, digits of other scripts.
Each is read, or refused in one line that names it and the fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from metanim.datasets import build, write_jsonl
from metanim.llm.target import split_base_urls
from tests.loopback import RecordingServer, listing, reply

BOM = "\ufeff"
SAMPLES = Path(__file__).resolve().parents[2] / "metanim" / "samples"


def _dataset(folder: Path, name: str = "d.jsonl", n: int = 3) -> tuple[Path, list[str]]:
    """A small Nim dataset file and its lines."""
    path = write_jsonl(build("nim", n, seed=0), folder / name)
    return path, path.read_text().splitlines()


def test_a_dataset_with_a_byte_order_mark_is_read(tmp_path, run_metanim) -> None:
    path, lines = _dataset(tmp_path)
    path.write_text(BOM + "\n".join(lines) + "\n", encoding="utf-8")
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    result = run_metanim("dataset", "show", "--verify", str(path))
    assert result.returncode == 0, result.stderr
    assert f"{len(lines)} records" in result.stdout


def test_a_question_file_with_a_byte_order_mark_is_read(tmp_path, run_metanim) -> None:
    rows = [json.loads(x) for x in (SAMPLES / "mc.jsonl").read_text().splitlines()]
    path = tmp_path / "q.jsonl"
    path.write_text(BOM + "\n".join(json.dumps(r) for r in rows[:2]) + "\n", encoding="utf-8")
    result = run_metanim(
        "evaluate", "--dataset", str(path), "--method", "standard", "--model", "sim-optimal",
        "--repeats", "1", "--results-dir", str(tmp_path / "results"), "--no-progress",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "decisions: 2 run now, 2 planned" in result.stdout


def test_repeated_dataset_ids_are_refused_by_name(tmp_path, run_metanim) -> None:
    path, lines = _dataset(tmp_path)
    path.write_text("\n".join([*lines, lines[0]]) + "\n")  # the first record again
    first = json.loads(lines[0])["id"]
    for args in (["dataset", "show", "--verify", str(path)],
                 ["evaluate", "--dataset", str(path), "--model", "sim-optimal", "--no-progress",
                  "--results-dir", str(tmp_path / "results")]):  # fmt: skip
        result = run_metanim(*args)
        assert result.returncode == 2, result.stderr
        assert f"{path}:{len(lines) + 1}: id {first!r} is already used on line 1" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "results").exists()  # nothing graded


def test_an_endpoint_url_is_called_at_its_base_url_with_one_warning(
    tmp_path, run_metanim, sim_server, monkeypatch
) -> None:
    # The form lm-evaluation-harness takes as base_url: .../v1/chat/completions.
    endpoint = f"{sim_server.base_url}/chat/completions"
    sim_server.reset_log()
    result = run_metanim(
        "tournament", "--game", 'nim:{"heaps":[7],"max_take":3}', "--method", "react",
        "--opponent", "optimal", "--model", "sim-optimal", "--base-url", endpoint,
        "--episodes", "1", "--results-dir", str(tmp_path), "--no-progress",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    warned = [line for line in result.stderr.splitlines() if "warning:" in line]
    assert len(warned) == 1 and f"calling the base URL '{sim_server.base_url}'" in warned[0]
    assert sim_server.log  # the calls reached the server's own endpoint
    # OPENAI_BASE_URL, read by every client that names no server, the same way.
    monkeypatch.setenv("OPENAI_BASE_URL", endpoint + "/")
    with pytest.warns(UserWarning, match="OPENAI_BASE_URL .* is the endpoint's URL"):
        assert split_base_urls(None) == [sim_server.base_url]


def _against(chat_body: bytes, run_metanim, tmp_path, *flags: str):
    """A Standard tournament on Nim 7 (take 1-3) of model `m` on a loopback server that
    lists models and answers every chat call with `chat_body`."""

    def answer(seen):
        return 200, listing(None) if seen["path"].endswith("/models") else chat_body

    with RecordingServer(answer) as server:
        return run_metanim(
            "tournament", "--game", 'nim:{"heaps":[7],"max_take":3}', "--method", "standard",
            "--opponent", "optimal", "--model", "m", "--base-url", server.url() + "/v1",
            "--results-dir", str(tmp_path), "--no-progress", *flags,
        )  # fmt: skip


@pytest.mark.parametrize(
    ("usage", "named"),
    [({"prompt_tokens": -16_000_000, "completion_tokens": -80}, "prompt_tokens=-16000000"),
     ({"prompt_tokens": 5, "completion_tokens": 10**12}, "completion_tokens=1000000000000"),
     ({"prompt_tokens": 5, "completion_tokens": 2.5}, "completion_tokens=2.5")],
)  # fmt: skip
def test_impossible_usage_counts_are_a_server_fault_named(tmp_path, run_metanim, usage, named):
    body = json.dumps(json.loads(reply("I take 1 stone.")) | {"usage": usage}).encode()
    result = _against(body, run_metanim, tmp_path, "--episodes", "1", "--max-retries", "0")
    assert result.returncode == 3, result.stderr
    assert "infrastructure_error (bad_response)" in result.stderr
    assert f"the server reported usage {named}" in result.stderr
    summary = json.loads(next(tmp_path.glob("*.summary.json")).read_text())
    agent = summary["groups"][0]["agent"]  # nothing of the impossible counts summed
    assert agent["prompt_tokens"] == agent["completion_tokens"] == 0


#: A malformed state per game (none of them a state of any game).
MALFORMED = [
    ("chomp", "[[1,1],[1,1,1]]"), ("chomp", "5"), ("fibonacci", "[1,2,3]"),
    ("fibonacci", "[[1]]"), ("corner_queen", "[1]"), ("corner_queen", "5"), ("nim", '{"a":1}'),
]  # fmt: skip


@pytest.mark.parametrize(("game", "state"), MALFORMED)
def test_a_malformed_state_is_answered_with_the_format_and_an_example(
    run_metanim, game, state
) -> None:
    result = run_metanim("solve", game, state)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    # The game's words, not Python's (int(), unpack, iterable, len()).
    assert not re.search(r"int\(\)|unpack|iterable|len\(\)|object of type", result.stderr)
    example = re.search(r"such as (\[.*?\])", result.stderr)
    assert example, result.stderr
    # The example given is a state of the game: it solves.
    solved = run_metanim("solve", game, example.group(1))
    assert solved.returncode == 0, solved.stderr


@pytest.mark.parametrize("digit", ["\u0661", "\uff11"])  # Arabic-Indic 1, full-width 1
def test_replies_in_digits_of_another_script_are_named_in_the_hint(
    tmp_path, run_metanim, digit
) -> None:
    body = reply(f'```json\n{{"action": "{digit}"}}\n```')
    result = _against(body, run_metanim, tmp_path, "--episodes", "6", "--concurrency", "1")
    assert result.returncode == 3
    hint = next(line for line in result.stderr.splitlines() if line.startswith("hint: "))
    assert f"digits of another script (such as {digit!r})" in hint
    assert "ASCII digits 0-9" in hint
