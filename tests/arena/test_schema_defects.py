"""Under structured output a reply that breaks the schema its call sent is the server's
defect: counted per side in the records, carried into summary.json, shown by the run's
report and by `metanim report`, announced once; a legal move read by the tolerant parser
still stands. The server here keeps its own count of the replies it broke, and the
records must agree with it."""

from __future__ import annotations

import json
import threading

import pytest

from metanim.analysis import render_report
from metanim.arena import run_evaluation, run_tournament
from metanim.llm.sim.providers import ProviderServer, with_
from metanim.records import read_log
from tests.arena.configs import evaluation as _evaluation
from tests.arena.configs import tournament as _tournament
from tests.loopback import RecordingServer, listing, reply


class Breaking:
    """A server that answers the first legal move of each reply schema; every third reply
    breaks the schema (a Markdown code block around the object: the tolerant parser still
    reads the move), and it counts the replies it sent with a schema and those it broke."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sent = 0  # replies to requests that carried a schema
        self.broken = 0
        self.plain = 0  # replies to requests without one

    def __call__(self, seen):
        if seen["path"].endswith("/models"):
            return 200, listing(None)
        body = seen["body"]
        fmt = body.get("response_format")
        if fmt is None:
            with self.lock:
                self.plain += 1
            # No schema: the move is read from the prompt's Output Format, first legal one.
            return 200, reply('```json\n{"reasoning": "one", "action": 1}\n```')
        properties = fmt["json_schema"]["schema"]["properties"]
        obj = {"reasoning": "first"} if "reasoning" in properties else {}
        obj["action"] = properties["action"]["enum"][0]
        with self.lock:
            self.sent += 1
            broken = self.sent % 3 == 1
            self.broken += broken
        text = json.dumps(obj)
        return 200, reply(f"Here it is:\n```json\n{text}\n```" if broken else text)


def _sides(records, name):
    return sum(getattr(r.agent_totals, name) + getattr(r.opponent_totals, name) for r in records)


def test_schema_breaks_are_counted_as_the_servers_and_reported(tmp_path):
    server = Breaking()
    with RecordingServer(server) as s:
        config = _tournament(
            model=f"m@{s.url()}/v1",
            structured_output="json_schema",
            episodes=4,
            results_dir=str(tmp_path),
        )
        said: list[str] = []
        result = run_tournament(config, announce=said.append)
    assert server.broken >= 2 and server.sent > server.broken
    records = read_log(result.log_path)
    # The records' counts against the server's own, and against a count made here from
    # the transcripts: a reply that is not the bare JSON object broke the schema.
    assert _sides(records, "schema_violations") == server.broken
    assert _sides(records, "schema_replies") == server.sent
    texts = [
        s.text
        for r in records
        for m in r.moves
        if m.decision is not None
        for s in m.decision.samples
    ]
    assert len(texts) == server.sent
    assert sum(t.startswith("Here it is") for t in texts) == server.broken
    # The tolerant parser read each broken reply's legal move: it stands, no forfeit.
    assert _sides(records, "illegal") == _sides(records, "unparsable") == 0
    assert all(r.status in ("win", "loss") and r.end_reason == "game_over" for r in records)
    # summary.json per side, the run's report and `metanim report` agree.
    summary = json.loads(result.log_path.with_suffix(".summary.json").read_text())
    (row,) = [g for g in summary["groups"] if g["seat"] == "all"]
    assert row["agent"]["schema_violations"] == server.broken
    assert row["agent"]["schema_replies"] == server.sent
    assert row["opponent"]["schema_replies"] == 0  # the solver sends no schema
    line = f"the server broke the schema in {server.broken} of {server.sent} replies"
    assert f"**server defect:** {line}" in result.report
    assert f"| {server.broken}/{server.sent} |" in result.report
    folder = render_report(tmp_path, plots=False)
    assert line in folder.markdown and line in folder.terminal()
    # One warning line for the run, however many replies broke the schema.
    warnings = [w for w in said if w.startswith("warning: the server broke the schema")]
    assert len(warnings) == 1


def test_an_evaluation_counts_schema_breaks_per_game(tmp_path):
    server = Breaking()
    with RecordingServer(server) as s:
        config = _evaluation(tmp_path, f"m@{s.url()}/v1", structured_output="json_schema")
        result = run_evaluation(config)
    records = read_log(result.log_path)
    assert server.broken >= 1
    assert sum(r.schema_violations for r in records) == server.broken
    assert sum(r.schema_replies for r in records) == server.sent
    # Standard asks for the action alone: the reply schema has no reasoning key.
    assert all(
        set(c.options["schema"]["properties"]) == {"action"}
        for r in records
        for c in r.decision.calls
    )
    (row,) = result.summary["games"]
    assert (row["schema_violations"], row["schema_replies"]) == (server.broken, server.sent)
    line = f"the server broke the schema in {server.broken} of {server.sent} replies"
    assert line in result.report and f"| {server.broken}/{server.sent} |" in result.report
    assert line in render_report(tmp_path, plots=False).markdown


@pytest.mark.parametrize("keeps", [True, False])
def test_the_llamacpp_fake_counts_a_break_only_when_it_ignores_the_schema(keeps, tmp_path):
    # llama.cpp's fake honours response_format json_schema: the reply is the object
    # alone. Told to ignore it, it answers in the prompt's Output Format (a code block).
    with ProviderServer(with_("llamacpp", keeps_schema=keeps)) as server:
        config = _tournament(
            model=f"Qwen3-1.7B-Q4_K_M@{server.base_url}",
            structured_output="json_schema",
            episodes=2,
            results_dir=str(tmp_path),
        )
        result = run_tournament(config)
        sent = sum(
            c["body"].get("response_format", {}).get("type") == "json_schema"
            for c in server.handlers.completions
        )
    records = read_log(result.log_path)
    assert sent > 0 and _sides(records, "schema_replies") == sent
    assert _sides(records, "schema_violations") == (0 if keeps else sent)
    # Either way the moves were read and played: the defect changes no score.
    assert _sides(records, "illegal") == _sides(records, "unparsable") == 0
    assert ("broke the schema" in result.report) is not keeps


def test_a_run_without_structured_output_counts_no_schema_replies(tmp_path):
    server = Breaking()
    with RecordingServer(server) as s:
        config = _tournament(
            model=f"m@{s.url()}/v1", structured_output="off", results_dir=str(tmp_path)
        )
        said: list[str] = []
        result = run_tournament(config, announce=said.append)
    assert server.plain > 0 and server.sent == 0
    records = read_log(result.log_path)
    assert _sides(records, "schema_replies") == _sides(records, "schema_violations") == 0
    assert "broke the schema" not in result.report
    assert "broke the schema" not in render_report(tmp_path, plots=False).markdown
    assert not any("broke the schema" in w for w in said)
    (row,) = [g for g in result.summary["groups"] if g["seat"] == "all"]
    assert row["agent"]["schema_replies"] == 0


@pytest.mark.parametrize(
    ("text", "keeps"),
    [
        ('{"reasoning": "r", "action": 2}', True),
        ('  {"reasoning": "r", "action": 2}\n', True),
        ('```json\n{"reasoning": "r", "action": 2}\n```', False),  # a code block
        ('{"reasoning": "r", "action": 4}', False),  # not a legal move
        ('{"action": 2}', False),  # reasoning is required
        ('{"reasoning": "r", "action": 2, "note": "x"}', False),  # no other keys
        ('{"reasoning": "rrrrr", "action": 2}', False),  # over maxLength
        ("2", False),
    ],
)
def test_keeps_to_reads_the_reply_as_the_schema_says(text, keeps):
    from metanim.agents.schemas import keeps_to

    schema = {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string", "maxLength": 4},
            "action": {"enum": [1, 2, 3]},
        },
        "required": ["reasoning", "action"],
        "additionalProperties": False,
    }
    assert keeps_to(schema, text) is keeps
