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

import asyncio
import json
import math
import re
from fractions import Fraction
from functools import cache
from pathlib import Path

import jsonschema
import pytest
from test_llm_target import RecordingServer, reply

from metanim import cli
from metanim.agents import MAD, AceMAD, QuestionTask, load_questions, schemas
from metanim.agents.tasks import GameTask
from metanim.arena import (
    EvaluationConfig,
    TournamentConfig,
    resolve_structured_output,
    run_evaluation,
    run_tournament,
)
from metanim.arena.tournament import Tournament
from metanim.datasets import build, write_jsonl
from metanim.games import make_game
from metanim.llm import Completion, forget_probes, server_target, structured_output_for

SAMPLES = Path(__file__).resolve().parents[1] / "metanim" / "samples"
QUIET = {"progress": False}


@pytest.fixture(autouse=True)
def _fresh_probes():
    # Each scripted server gets a new port, but a test must not see another's answer.
    forget_probes()
    yield
    forget_probes()


def listing(owner: str | None) -> bytes:
    model = {"id": "m", "object": "model"} | ({"owned_by": owner} if owner else {})
    return json.dumps({"object": "list", "data": [model]}).encode()


def playing(owner: str | None = None, props: bool = False, delay: float = 0.0):
    """A scripted server's answers: a model listing with `owned_by`, llama.cpp's /props."""

    async def answer(seen):
        if delay:
            await asyncio.sleep(delay)
        if seen["path"].endswith("/models"):
            return 200, listing(owner)
        if seen["path"] == "/props" and props:
            return 200, json.dumps({"default_generation_settings": {}, "total_slots": 1}).encode()
        if seen["path"].endswith("/chat/completions"):
            return 200, reply('{"action": 1}')
        return 404, b'{"error": "not found"}'

    return answer


# ------------------------------------------------------------------ 1. auto
@pytest.mark.parametrize(
    ("owner", "props", "mode"),
    [
        ("llamacpp", False, "json_schema"),
        ("vllm", False, "json_schema"),
        ("sglang", False, "json_schema"),
        (None, True, "json_schema"),  # an older llama.cpp: no owned_by, but /props
        ("system", False, "off"),  # what the OpenAI API says of its models
        (None, False, "off"),
    ],
)
def test_auto_sends_schemas_only_to_servers_that_constrain_output(owner, props, mode):
    with RecordingServer(playing(owner, props)) as server:
        target = server_target("m", server.url() + "/v1", api_key="")
        choice = structured_output_for(target)
        again = structured_output_for(target)
        asked = len(server.requests)
    assert choice.mode == mode and again == choice
    assert asked <= 3  # once per server and process: the second answer is remembered
    if mode == "off":
        assert "does not say it constrains output" in choice.reason


def test_auto_is_off_when_the_probe_times_out_or_nothing_listens():
    with RecordingServer(playing("llamacpp", delay=1.0)) as server:
        slow = structured_output_for(
            server_target("m", server.url() + "/v1", api_key=""), timeout_s=0.1
        )
    assert slow.mode == "off" and "did not answer" in slow.reason
    from metanim.llm.local import free_port

    dead = structured_output_for(
        server_target("m", f"http://127.0.0.1:{free_port()}/v1", api_key="")
    )
    assert dead.mode == "off" and "did not answer" in dead.reason


def test_auto_never_probes_a_hosted_api(monkeypatch):
    def no_request(*args, **kwargs):
        raise AssertionError("a hosted API is never probed")

    monkeypatch.setattr("urllib.request.urlopen", no_request)
    openai = structured_output_for(server_target("gpt-4o", "https://api.openai.com/v1"))
    azure = structured_output_for(
        server_target(
            "azure:dep", "https://r.openai.azure.com", api_key="k", api_version="2024-10-21"
        )
    )
    assert openai.mode == azure.mode == "off"


def _tournament(**fields) -> TournamentConfig:
    base = dict(
        games=['nim:{"heaps":[7],"max_take":3}'], method="react", opponent="optimal",
        episodes=1, **QUIET,
    )  # fmt: skip
    return TournamentConfig(**{**base, **fields})


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
def _evaluation(tmp_path, model: str, **fields) -> EvaluationConfig:
    base = dict(
        dataset=["samples/mc.jsonl"], method="standard", model=model, repeats=2,
        concurrency=1, results_dir=str(tmp_path), **QUIET,
    )  # fmt: skip
    return EvaluationConfig(**{**base, **fields})


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


# ------------------------------------------------------------------ 3. schemas
def _gold_values(path: Path) -> list[tuple[QuestionTask, object]]:
    out = []
    for question in load_questions(path):
        task = QuestionTask(question)
        out.append((task, question.answer))
    return out


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.jsonl")), ids=lambda p: p.name)
def test_every_reply_schema_admits_every_gold_answer_of_the_samples(path):
    tasks = _gold_values(path)
    assert tasks
    for task, gold in tasks:
        # jsonschema is the checker: the action schema alone and inside each method's reply.
        jsonschema.validate(gold, task.action_json_schema())
        for reasoning in (True, False):
            reply_schema = schemas.action_reply(task, reasoning=reasoning)
            value = {"reasoning": "because", "action": gold} if reasoning else {"action": gold}
            jsonschema.validate(value, reply_schema)
        # ... and the gold answer, sent as the schema allows, is graded right.
        assert task.grade(gold)[1] == "correct", (task.item.id, gold)


# ------------------------------------------------------------------ 4. phases and debates
class Scripted:
    """A `ChatModel` double whose replies and finish reasons a script gives."""

    def __init__(self, script) -> None:
        self.script, self.requests = script, []

    @property
    def model(self) -> str:
        return "scripted"

    async def chat(self, messages, *, temperature=0.0, n=1, seed=None, sample_index=0,
                   max_tokens=None, options=None):  # fmt: skip
        self.requests.append(messages)
        text, finish = self.script(messages)
        return Completion(model="scripted", texts=[text], finish_reasons=[finish])


NIM = make_game("nim", heaps=[7], max_take=3)


def test_a_free_text_phase_cut_at_the_cap_is_counted():
    def script(messages):
        last = messages[-1]["content"]
        if "Write plain text, no JSON" in last:  # AceMAD's argue phase
            return "a long argument that the cap cuts", "length"
        return '{"belief": {"3": 1.0}, "prediction": {"3": 1.0}}', "stop"

    method = AceMAD(Scripted(script), agents=2, rounds=2)
    decision = asyncio.run(method.decide(NIM, (7,), seed=1))
    assert decision.status == "ok"
    argues = sum(c.phase == "argue" for c in decision.calls)
    assert argues == 4 and decision.truncated == argues
    assert decision.truncated_phases == {"argue": argues}


def test_a_debate_whose_agents_all_failed_round_0_stops():
    client = Scripted(lambda messages: ("I do not know.", "stop"))
    method = MAD(client, agents=2, rounds=3, max_reasks=2)
    decision = asyncio.run(method.decide(NIM, (7,), seed=1))
    # Round 0 with its re-asks, and no update rounds of nothing (24 calls without the stop).
    assert decision.status == "forfeit" and len(decision.calls) == 2 * 3
    assert "nothing to debate" in decision.extra["stopped"]


def test_acemad_shows_a_placeholder_not_a_number_as_its_example_belief():
    client = Scripted(lambda m: ('{"belief": {"3": 1.0}, "prediction": {"3": 1.0}}', "stop"))
    asyncio.run(AceMAD(client, agents=2, rounds=1).decide(NIM, (7,), seed=1))
    commits = [m[-1]["content"] for m in client.requests if "commit privately" in m[-1]["content"]]
    assert commits
    for text in commits:
        example = text[text.index("```json") :]
        assert re.search(r"\d", example) is None, example  # no number to copy
        assert '"<move>": <probability>' in example


# ------------------------------------------------------------------ 5. timing
def test_timing_columns_are_run_wall_time_per_decision_and_per_call_waits(tmp_path):
    config = _evaluation(tmp_path, "sim-optimal:latency=0.01", concurrency=4)
    result = run_evaluation(config)
    (row,) = result.summary["games"]
    timing = result.summary["timing"]
    assert timing["decisions"] == row["graded"] == 20
    assert timing["s_per_decision"] == pytest.approx(timing["wall_s"] / 20)
    # Per call, from the calls the decision records hold (not from the counters).
    calls = [c for r in result.records for c in r["decision"]["calls"]]
    assert row["latency_per_call_s"] == pytest.approx(
        sum(c["latency_s"] for c in calls) / len(calls)
    )
    assert row["queue_per_call_s"] == pytest.approx(sum(c["queue_s"] for c in calls) / len(calls))
    assert "s/decision" in result.report and "latency s/call" in result.report


# ------------------------------------------------------------------ 6. chance
def _binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), summed term by term."""
    return sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))


def test_accuracy_chance_rows_on_critical_nim_states(tmp_path):
    heap, k = 15, 3
    records = build("nim", 8, seed=3, params={"heaps": [heap], "max_take": k})
    path = write_jsonl(records, tmp_path / "nim.jsonl")
    result = run_evaluation(
        EvaluationConfig(dataset=[str(path)], method="standard", model="sim-optimal",
                         repeats=1, results_dir=str(tmp_path), **QUIET)
    )  # fmt: skip
    (row,) = result.summary["games"]
    # Nim, one heap h, takes 1..k: min(h, k) legal moves, listed from "take 1"; the one
    # winning move takes h mod (k + 1).
    heaps = [r.state[0] for r in records]
    uniform = sum(Fraction(1, min(h, k)) for h in heaps) / len(heaps)
    first = Fraction(sum(h % (k + 1) == 1 for h in heaps), len(heaps))
    assert row["chance_accuracy"] == pytest.approx(float(uniform), abs=1e-12)
    assert row["first_answer_accuracy"] == pytest.approx(float(first), abs=1e-12)
    assert row["correct"] == len(heaps)  # the optimal model answers every item
    expected = _binomial_tail(len(heaps), len(heaps), float(uniform))
    assert row["chance_p_value"] == pytest.approx(expected, rel=1e-9)
    assert row["above_chance"] is True


def test_multiple_choice_chance_rows_and_a_random_model_flagged(tmp_path):
    rows = [json.loads(line) for line in (SAMPLES / "mc.jsonl").read_text().splitlines()]
    options = [len(r["choices"]) for r in rows]
    first_label = [
        (sorted(r["choices"]) if isinstance(r["choices"], dict) else ["A"])[0] for r in rows
    ]
    result = run_evaluation(_evaluation(tmp_path, "sim-random", repeats=1))
    (row,) = result.summary["games"]
    assert row["chance_accuracy"] == pytest.approx(sum(1 / n for n in options) / len(rows))
    right_first = sum(r["answer"] == f for r, f in zip(rows, first_label, strict=True))
    assert row["first_answer_accuracy"] == pytest.approx(right_first / len(rows))
    expected = _binomial_tail(row["correct"], len(rows), row["chance_accuracy"])
    assert row["chance_p_value"] == pytest.approx(expected, rel=1e-9)
    assert row["above_chance"] is False and "⚠ not above chance" in result.report


def _random_vs_solver(heap: int, k: int, misere: bool, epsilon: float) -> Fraction:
    """The uniform-random player's chance to win Nim (one heap, takes 1..k) moving first
    against a player that takes a winning move (uniform among them; any move when none
    wins) and plays uniformly at random with probability `epsilon`. Exact, from the rules."""
    eps = Fraction(epsilon).limit_denominator(1000)

    def moves(h):
        return range(1, min(h, k) + 1)

    @cache
    def mover_wins(h):  # the solver's own table: does the player to move win?
        if h == 0:
            return misere  # at the end, the player to move wins only in misère play
        return any(not mover_wins(h - t) for t in moves(h))

    @cache
    def value(h, random_to_move):
        if h == 0:
            return Fraction(int(random_to_move == misere))
        if random_to_move:
            return sum(value(h - t, False) for t in moves(h)) / len(moves(h))
        uniform = sum(value(h - t, True) for t in moves(h)) / len(moves(h))
        best = [t for t in moves(h) if not mover_wins(h - t)] or list(moves(h))
        optimal = sum(value(h - t, True) for t in best) / len(best)
        return eps * uniform + (1 - eps) * optimal

    return value(heap, True)


@pytest.mark.parametrize(
    ("misere", "opponent", "epsilon"),
    [(False, "optimal", 0.0), (True, "optimal", 0.0), (False, "epsilon:0.5", 0.5),
     (False, "random", 1.0)],
)  # fmt: skip
def test_win_rate_chance_is_the_random_players_exact_win_probability(
    tmp_path, misere, opponent, epsilon
):
    heap, k = 10, 3
    config = TournamentConfig(
        games=[f'nim:{{"heaps":[{heap}],"max_take":{k},"misere":{json.dumps(misere)}}}'],
        method="random", opponent=opponent, episodes=30, start=f"[{heap}]",
        results_dir=str(tmp_path), **QUIET,
    )  # fmt: skip
    result = run_tournament(config)
    group = next(g for g in result.summary["groups"] if g["seat"] == "all")
    exact = _random_vs_solver(heap, k, misere, epsilon)
    assert group["chance_win_rate"] == pytest.approx(float(exact), abs=1e-12)
    # The random agent is chance itself: its distinct games' wins tested against it.
    assert group["distinct_episodes"] <= group["finished"]


def test_no_chance_row_against_a_model_opponent(tmp_path):
    result = run_tournament(
        _tournament(model="sim-optimal", opponent="react", opponent_model="sim-random",
                    episodes=2, results_dir=str(tmp_path))
    )  # fmt: skip
    for group in result.summary["groups"]:
        assert group["chance_win_rate"] is None and group["chance_p_value"] is None


def test_identical_episodes_are_said_and_counted_once(tmp_path):
    # Both sides always take the most they may: every episode from [9] is one game.
    config = _tournament(
        games=['nim:{"heaps":[9],"max_take":3}'], model="sim-biased:heuristic=max_take,p=1",
        opponent="react", opponent_model="sim-biased:heuristic=max_take,p=1",
        episodes=4, start="[9]", results_dir=str(tmp_path),
    )  # fmt: skip
    result = run_tournament(config)
    group = next(g for g in result.summary["groups"] if g["seat"] == "all")
    assert group["finished"] == 4 and group["distinct_episodes"] == 1
    assert "the 4 finished episodes are 1 distinct game" in result.report


# ------------------------------------------------------------------ 7. verdicts, JSON
def test_a_decision_without_an_answer_has_the_verdict_forfeit(tmp_path):
    for fault in ("malformed", "illegal"):
        result = run_evaluation(_evaluation(tmp_path / fault, f"sim-faulty:{fault}=1",
                                            repeats=1, keep_going=True))  # fmt: skip
        assert {r["verdict"] for r in result.records} == {"forfeit"}
        (row,) = result.summary["games"]
        assert row["verdict_forfeit"] == row["graded"] == 10


def _strict(text: str):
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_summaries_are_strict_json(tmp_path):
    # Every decision an infrastructure error: no rate has a denominator.
    config = _evaluation(tmp_path, "sim-faulty:http500=1", repeats=1, max_retries=0)
    result = run_evaluation(config)
    (row,) = result.summary["games"]
    assert math.isnan(row["accuracy_mean"])  # in memory, NaN
    written = _strict(result.log_path.with_suffix(".summary.json").read_text())
    assert written["games"][0]["accuracy_mean"] is None
    tournament = run_tournament(
        _tournament(model="sim-faulty:http500=1", max_retries=0, results_dir=str(tmp_path))
    )
    _strict(tournament.log_path.with_suffix(".summary.json").read_text())


def test_a_game_task_schema_admits_its_optimal_move():
    # Games too: every critical state's optimal move is in its reply schema's enum.
    for record in build("nim", 5, seed=0, params={"heaps": [12], "max_take": 4}):
        task = GameTask(record.make_game(), record.game_state())
        move = task.parse(record.optimal_move)
        allowed = task.action_json_schema()["enum"]
        assert sum(task.parse(value) == move for value in allowed) == 1


def test_acemad_arguments_get_a_cap_that_leaves_room_for_three_rounds():
    client = Scripted(lambda m: ('{"belief": {"3": 1.0}, "prediction": {"3": 1.0}}', "stop"))
    seen = []
    chat = client.chat

    async def recording(messages, **kwargs):
        seen.append((messages[-1]["content"], kwargs["options"].max_tokens))
        return await chat(messages, **kwargs)

    client.chat = recording
    asyncio.run(AceMAD(client, agents=5, rounds=3).decide(NIM, (7,), seed=1))
    argue = {cap for text, cap in seen if "Write plain text, no JSON" in text}
    commit = {cap for text, cap in seen if "commit privately" in text}
    # Round 3 shows the 10 arguments of rounds 1-2: they must fit a 4096-token context
    # with the prompt, which the run's 512-token cap would not.
    (cap,) = argue
    assert 10 * cap + 600 < 4096 and commit == {512}


def test_a_refused_request_blames_the_schema_only_when_the_error_is_about_it():
    # llama.cpp's context-size error is no schema's fault, schema or not; an error about
    # response_format is, when the request carried one.
    from metanim.llm import CallOptions, InfrastructureError, OpenAIChatClient

    too_long = b'{"error": {"message": "request (4225 tokens) exceeds the available context"}}'
    bad_format = b'{"error": {"message": "Invalid schema for response_format: reply"}}'
    on = CallOptions(structured_output="json_schema")
    schema = on.with_(schema={"type": "object"})
    messages = [{"role": "user", "content": "hi"}]
    cases = ((too_long, on, False), (too_long, schema, False), (bad_format, schema, True))
    for body, options, blamed in cases:
        with RecordingServer(lambda seen, body=body: (400, body)) as server:
            client = OpenAIChatClient(
                "m", base_url=server.url() + "/v1", api_key="", max_retries=0, check_server=False
            )
            with pytest.raises(InfrastructureError) as caught:
                asyncio.run(client.chat(messages, options=options))
        assert ("carried a reply schema" in str(caught.value)) is blamed
