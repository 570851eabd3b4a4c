"""Question tasks: files and adapters, math-verify grading, the simulator's answer key,
`evaluate`/`report`/resume on questions, and seed 004's challenging subset.

Expected grades are mathematics (3/4 is 0.75, 2√3 is not 3), expected items are read
from the files with plain `json`, and the simulated answers are checked against the
simulator's own request log (what it meant to answer), never against the grader itself.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("math_verify")

from metanim.agents import QuestionTask, build_method, make_client
from metanim.agents.grading import equivalent, parse_math
from metanim.analysis.debate import OUTCOMES, outcome_breakdown
from metanim.analysis.report import render_report, trace_from_decision
from metanim.arena.challenging import ChallengingConfig, run_challenging
from metanim.arena.evaluate import EvaluationConfig, run_evaluation
from metanim.datasets.questions import (
    SAMPLES_DIR,
    Question,
    QuestionFileError,
    last_boxed,
    load_questions,
    resolve_path,
)
from metanim.games import UnparsableMoveError
from metanim.llm.sim import SimServer


def same(gold: object, answer: object) -> bool:
    return equivalent(parse_math(gold), parse_math(answer))


def grade(gold: object, value: object, **kw: object) -> tuple[str | None, str]:
    return QuestionTask(Question("q", "?", answer=gold, **kw)).grade(value)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- grading
# The issue's table: what "the last number in the string" got wrong. Each row: the reply,
# its true value, and a wrong value the old grader accepted.
ISSUE_TABLE = [
    (r"\frac{3}{4}", "0.75", "4"),
    (r"\boxed{\frac{3}{4}}", "0.75", "4"),
    (r"2\sqrt{3}", r"\sqrt{12}", "3"),
    (r"10^{3}", "1000", "3"),
    ("1.5e3", "1500", "3"),
]


@pytest.mark.parametrize(("reply", "value", "old_wrong"), ISSUE_TABLE)
def test_issue_grading_table(reply: str, value: str, old_wrong: str) -> None:
    assert grade(value, reply)[1] == "correct"
    assert grade(old_wrong, reply)[1] == "wrong"


def test_a_comma_pair_is_not_twelve() -> None:
    # "1,2" is two numbers (or 1.2 with a decimal comma); never 12, never just its last digit.
    assert grade("12", "1,2")[1] == "wrong"
    assert grade("2", "1,2")[1] == "wrong"
    assert grade(r"\{1, 2\}", "1,2")[1] == "correct"
    # A thousands separator is a number: 1,200 is 1200.
    assert grade("1200", "1,200")[1] == "correct"


def test_extracted_answer_is_recorded_as_written() -> None:
    assert grade("0.75", r"\boxed{\frac{3}{4}}") == (r"\frac{3}{4}", "correct")
    assert grade("1500", "1.5e3") == ("1500", "correct")
    assert grade("72", "So the answer is 72.") == ("72", "correct")


# Equivalent forms a MATH grader must accept (each pair the same object) ...
MATH_EQUIVALENT = [
    (r"\frac{1}{2}", "0.5"),
    (r"\frac{1}{2}", "1/2"),
    (r"\frac{1}{2}", r"\dfrac{1}{2}"),
    (r"\frac{1}{2}", r"\tfrac12"),
    (r"-\frac{1}{2}", r"\frac{-1}{2}"),
    (r"\frac{\pi}{2}", r"\pi/2"),
    (r"2\sqrt{3}", r"\sqrt{12}"),
    (r"5\sqrt{2}", r"\sqrt{50}"),
    ("x^2+2x+1", "(x+1)^2"),
    ("3", "3.0"),
    ("3", "x=3"),
    ("1000", "1,000"),
    ("5", r"\boxed{5}"),
    ("5", "$5$"),
    (r"\{-2, 2\}", r"\{2, -2\}"),
    ("(1,2)", r"\left(1, 2\right)"),
    ("9\\pi", "9 \\pi"),
]
# ... and forms it must tell apart.
MATH_DIFFERENT = [
    (r"\frac{3}{4}", r"\frac{4}{3}"),
    ("x^2+1", "(x+1)^2"),
    (r"\sqrt{2}", "1.41"),
    ("(1,2)", "[1,2]"),
    (r"\{1, 2\}", r"\{1, 3\}"),
    ("2", "-2"),
]


@pytest.mark.parametrize(("a", "b"), MATH_EQUIVALENT)
def test_math_grader_accepts_equivalent_forms(a: str, b: str) -> None:
    assert same(a, b) and same(b, a)


@pytest.mark.parametrize(("a", "b"), MATH_DIFFERENT)
def test_math_grader_tells_different_answers_apart(a: str, b: str) -> None:
    assert not same(a, b) and not same(b, a)


def test_unparsable_is_apart_from_wrong() -> None:
    assert grade("3", "I am not sure") == (None, "unparsable")
    assert grade("3", "") == (None, "unparsable")
    assert grade("3", True) == (None, "unparsable")
    with pytest.raises(UnparsableMoveError):
        parse_math(float("nan"))
    choices = ("Venus", "Mercury", "Earth", "Mars")
    assert grade("B", "B", choices=choices) == ("B", "correct")
    assert grade("B", "(b)", choices=choices) == ("B", "correct")
    assert grade("B", "Mercury", choices=choices) == ("B", "correct")  # the option's text
    assert grade("B", "C) Earth", choices=choices) == ("C", "wrong")
    assert grade("B", "E", choices=choices)[1] == "wrong"  # an answer, not one of the options
    assert grade("B", "no idea at all", choices=choices) == (None, "unparsable")


def test_equal_values_vote_together() -> None:
    task = QuestionTask(Question("q", "?", answer="0.75"))
    keys = {task.key(task.parse(v)) for v in (r"\frac{3}{4}", "0.75", 0.75, r"\boxed{3/4}")}
    assert len(keys) == 1
    assert task.key(task.parse("0.7")) not in keys


# ------------------------------------------------------------------ files, shapes
def write(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_adapters_read_every_common_shape(tmp_path: Path) -> None:
    rows = [
        {"question": "Ann has 2 boxes of 600.", "answer": "2 * 600 = 1200\n#### 1,200"},
        {
            "problem": "Rationalize.",
            "solution": r"So $x = \boxed{\frac{1}{\sqrt{2}}}$, not \boxed{0}... no: $\boxed{\frac{\sqrt{2}}{2}}$.",
            "level": "Level 4",
            "type": "Algebra",
            "unique_id": "test/algebra/1.json",
        },
        {"problem": "With an answer field.", "solution": r"\boxed{1}", "answer": "2"},
        {
            "id": "cs",
            "question": {
                "stem": "Where is milk kept?",
                "choices": [{"label": "A", "text": "oven"}, {"label": "B", "text": "fridge"}],
            },
            "answerKey": "B",
        },
        {
            "id": "arc",
            "question": "Which organ pumps blood?",
            "choices": {"text": ["lungs", "heart"], "label": ["1", "2"]},
            "answerKey": "2",
        },
        {"id": "mmlu", "question": "2+2?", "choices": ["3", "4", "5"], "answer": 1},
        {
            "id": "map",
            "question": "Pick.",
            "choices": {"B": "blue", "A": "amber"},
            "answer": "blue",
        },
        {"id": "low", "question": "Pick.", "choices": ["x", "y"], "answer": "a"},
        {"id": "n", "question": "6*7?", "answer": 42, "type": "numeric"},
    ]
    qs = load_questions(write(tmp_path / "mixed.jsonl", rows))
    gsm, math_, math_answer, cs, arc, mmlu, mapping, low, num = qs
    assert (gsm.id, gsm.answer, gsm.kind, gsm.meta["shape"]) == ("1", "1200", "numeric", "gsm8k")
    assert math_.answer == r"\frac{\sqrt{2}}{2}" and math_.kind == "math"
    assert math_.id == "test/algebra/1.json" and math_.meta["subject"] == "Algebra"
    assert math_answer.answer == "2"
    assert (cs.question, cs.choices, cs.labels, cs.answer) == (
        "Where is milk kept?",
        ("oven", "fridge"),
        ("A", "B"),
        "B",
    )
    assert arc.labels == ("1", "2") and arc.answer == "2"
    assert QuestionTask(arc).grade(2) == ("2", "correct")  # a numeric label as a JSON number
    assert mmlu.answer == "B" and mmlu.kind == "multiple_choice"
    assert mapping.labels == ("A", "B") and mapping.choices == ("amber", "blue")
    assert mapping.answer == "B" and low.answer == "A"  # by the option's text; a label's case
    assert num.kind == "numeric" and QuestionTask(num).grade("42.0")[1] == "correct"


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ({"text": "no question"}, "no 'question' field"),
        ({"question": "q", "choices": ["a", "b"], "answer": "C"}, "not one of the labels"),
        ({"question": "q", "choices": ["a"], "answer": 3}, "outside the 1 choices"),
        ({"problem": "p", "solution": "no box"}, "no \\\\boxed"),
        ({"question": "q", "answer": "1", "type": "essay"}, "type 'essay'"),
        ({"question": "q", "answer": "x\n#### "}, "####"),
    ],
)
def test_bad_rows_name_file_line_and_reason(tmp_path: Path, row: dict, reason: str) -> None:
    path = write(tmp_path / "bad.jsonl", [{"question": "fine", "answer": 1}, row])
    with pytest.raises(QuestionFileError, match=rf"bad.jsonl:2: .*{reason}"):
        load_questions(path)


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "dup.jsonl", [{"id": "a", "question": "x", "answer": 1}] * 2)
    with pytest.raises(QuestionFileError, match="already used on line 1"):
        load_questions(path)


def test_last_boxed_balances_braces() -> None:
    assert last_boxed(r"$\boxed{\frac{a}{b}}$ and \boxed{\{1, 2\}}") == r"\{1, 2\}"
    assert last_boxed(r"\boxed{\frac{1}{\sqrt{2}}}") == r"\frac{1}{\sqrt{2}}"
    assert last_boxed("nothing") is None
    assert last_boxed(r"\boxed{open") is None


# The sample files: each gold answer, graded against a form written here by hand.
SAMPLE_GOLD = {
    "math.jsonl": {
        "m1": "0.75", "m2": r"\sqrt{12}", "m3": "1000", "m4": "6", "m5": "5",
        "m6": "(x+1)^2", "m7": r"9\pi", "m8": r"\{2, -2\}", "m9": "0.125",
        "m10": r"\left(1, 2\right)", "m11": "6", "m12": "15",
    },
    "gsm8k.jsonl": {"1": "7", "2": "315", "3": "1200", "4": "19", "5": "150", "6": "23", "7": "32", "8": "12"},
    "math_solutions.jsonl": {
        "s1": "1.5", "s2": "5", "s3": r"\sqrt{50}", "s4": "15", "s5": "4", "s6": "0.75",
        "s7": "9", "s8": "0.5",
    },
}  # fmt: skip


def test_samples_load_and_their_gold_answers_are_right() -> None:
    shapes = {}
    for path in sorted(SAMPLES_DIR.glob("*.jsonl")):
        questions = load_questions(path)
        assert len(questions) >= 5
        shapes[path.name] = {q.meta.get("shape", "native") for q in questions}
        for q in questions:
            task = QuestionTask(q)
            if q.choices is not None:
                assert task.grade(q.answer) == (q.answer, "correct")
                continue
            assert task.grade(SAMPLE_GOLD[path.name][q.id])[1] == "correct", (path.name, q.id)
    assert shapes == {
        "arc.jsonl": {"choices"},
        "csqa.jsonl": {"choices"},
        "gsm8k.jsonl": {"gsm8k"},
        "math.jsonl": {"native"},
        "math_solutions.jsonl": {"math"},
        "mc.jsonl": {"native"},
    }


# ------------------------------------------------------------------- simulator
def ask(server: SimServer, model: str, task: QuestionTask, seed: int = 0):
    """One ReAct decision on the server; its client is closed in the same event loop."""

    async def go():
        client = make_client(f"{model}@{server.base_url}", api_key="sim", backoff_s=0.001)
        try:
            return await build_method("react", model, client_factory=lambda _: client).decide(
                task, seed=seed
            )
        finally:
            await client.aclose()

    return asyncio.run(go())


def test_simulator_answers_from_the_question_file_not_the_prompt(tmp_path: Path) -> None:
    path = write(
        tmp_path / "q.jsonl",
        [
            {"id": "f", "question": "What is 1/2 + 1/4?", "answer": r"\frac{3}{4}"},
            {"id": "s", "question": "Solve x^2 = 4 as a set.", "answer": r"\{-2, 2\}"},
            {
                "id": "c",
                "question": "Which is a fruit?",
                "choices": ["rock", "apple"],
                "answer": "B",
            },
        ],
    )
    tasks = [QuestionTask(q) for q in load_questions(path)]
    with SimServer(questions=[path]) as server:
        for task in tasks:
            d = ask(server, "sim-optimal", task)
            assert d.status == "ok" and task.is_correct(d.move), d.answer
        for task in tasks:  # a LaTeX or set answer never makes the simulator fail (HTTP 500)
            d = ask(server, "sim-random", task, seed=3)
            assert d.status == "ok"
        statuses = {r["status"] for r in server.log}
        prompts = " ".join(m["content"] for r in server.log for m in r["messages"])
    assert statuses == {200}
    for gold in (r"\frac{3}{4}", r"\{-2, 2\}"):
        assert gold not in prompts and json.dumps(gold) not in prompts
    with SimServer() as server:  # without the file the question is unknown: no answer
        d = ask(server, "sim-optimal", tasks[0])
        assert d.status == "forfeit" and all(s.error == "unparsable" for s in d.samples)


def test_every_method_answers_questions(tmp_path: Path) -> None:
    from metanim.agents.registry import METHODS

    files = [SAMPLES_DIR / "math.jsonl", SAMPLES_DIR / "mc.jsonl"]
    tasks = [QuestionTask(load_questions(f)[0]) for f in files]  # \\frac{3}{4}, and option B
    names = {}
    for name, (cls, fixed) in METHODS.items():  # one name per method (aliases skipped)
        names.setdefault((cls, tuple(sorted(fixed.items()))), name)

    async def run_all(url: str) -> dict[str, list[bool]]:
        clients = []

        def factory(model: str):
            clients.append(make_client(f"{model}@{url}", api_key="sim", backoff_s=0.001))
            return clients[-1]

        out = {}
        try:
            for name in names.values():
                spec = "cross:models=sim-optimal|sim-optimal" if name == "cross" else name
                method = build_method(spec, "sim-optimal", client_factory=factory)
                decisions = [await method.decide(t, seed=1) for t in tasks]
                out[name] = [t.is_correct(d.move) for t, d in zip(tasks, decisions, strict=True)]
        finally:
            for c in clients:
                await c.aclose()
        return out

    with SimServer(questions=files) as server:
        results = asyncio.run(run_all(server.base_url))
    assert len(results) >= 13 and all(ok == [True, True] for ok in results.values()), results


def test_answer_key_finds_the_asked_question_and_reads_latex_peers() -> None:
    from metanim.llm.sim.policies import answers_in, question_task
    from metanim.llm.sim.questions import AnswerKey

    short = Question("s", "What is 2+2?", answer="4")
    long = Question("l", "Ann asks: What is 2+2? Then she adds 1.", answer="5")
    frac = Question("f", "Half plus a quarter?", answer=r"\frac{3}{4}")
    key = AnswerKey([short, long, frac])
    assert key.find("#Question: Ann asks: What is 2+2? Then she adds 1.\n#Task").id == "l"
    assert key.find("#Question: What is   2+2?\n#Task").id == "s"  # spacing is normalized
    assert key.find("#Question: What is 3+3?") is None
    task = question_task(key.find("Half plus a quarter?"))
    assert task.correct == [r"\frac{3}{4}"] and r"\frac{3}{4}" in task.candidates
    peer = 'I agree.\n```json\n{"reasoning": "x", "action": "\\\\frac{3}{4}"}\n```'
    assert answers_in(peer, task) == [r"\frac{3}{4}"]


def test_simulated_accuracy_matches_the_policy_from_its_request_log(tmp_path: Path) -> None:
    dataset = SAMPLES_DIR / "math.jsonl"
    with SimServer(questions=[dataset]) as server:
        config = EvaluationConfig(
            dataset=[str(dataset)], method="standard", model="sim-biased:p=0.5",
            base_url=server.base_url, repeats=3, results_dir=str(tmp_path), progress=False,
        )  # fmt: skip
        result = run_evaluation(config)
        log = server.log
    # What the simulator meant: an answer equal to the gold one (its `task.answer`) or not.
    meant = [r["actions"][0] == r["task"]["answer"][0] for r in log if r["status"] == 200]
    lines = result.records
    assert len(lines) == len(meant) == 36
    assert sum(bool(r.correct) for r in lines) == sum(meant)
    assert 0.25 < sum(meant) / len(meant) < 0.75  # p = 0.5 wrong answers, seeded
    assert {r.verdict for r in lines} <= {"correct", "wrong"}
    assert all(r.extracted is not None for r in lines)


# ----------------------------------------------------- evaluate, resume, report
def reference_outcome(before: list[bool], after: list[bool]) -> str:
    """Seed 001's Table 5 categories, from the definitions in its §4.3."""
    gained = any(a and not b for b, a in zip(before, after, strict=True))
    lost = any(b and not a for b, a in zip(before, after, strict=True))
    if not any(before):
        return "error correction" if any(after) else "all wrong, stay wrong"
    if gained and lost:
        return "mixed correction + persuasion"
    if lost:
        return "negative persuasion"
    if all(before):
        return "all correct, stay correct"
    return "positive correction" if gained else "no change (mixed)"


def test_cross_debate_on_questions_evaluate_resume_report(tmp_path: Path) -> None:
    dataset = SAMPLES_DIR / "math.jsonl"
    with SimServer(questions=[dataset]) as server:
        url = server.base_url
        cross = EvaluationConfig(
            dataset=[str(dataset)],
            method=f"cross:models=sim-biased:p=0.5@{url}|sim-biased:p=0.3@{url}",
            repeats=1, results_dir=str(tmp_path), progress=False,
        )  # fmt: skip
        first = run_evaluation(cross)
        log = server.log
        again = run_evaluation(cross)  # resume: nothing left to decide
        single = EvaluationConfig(
            dataset=[str(dataset)], method="standard", model="sim-biased:p=0.5",
            base_url=url, repeats=1, results_dir=str(tmp_path), progress=False,
        )  # fmt: skip
        run_evaluation(single)
    assert first.played_now == 12 and again.played_now == 0
    # Every agent's per-round verdict equals what the simulator meant (gold or not).
    meant: dict[tuple[str, str], list[bool]] = {}
    for r in log:
        if r["status"] == 200:
            question = next(m["content"] for m in r["messages"] if m["role"] == "user")
            meant.setdefault((question, r["model"]), []).append(
                r["actions"][0] == r["task"]["answer"][0]
            )
    lines = sorted(first.records, key=lambda r: r.record_id)
    questions = {q.id: q for q in load_questions(dataset)}
    for line in lines:
        assert line.kind == "question" and line.game == "math"
        assert line.verdict in ("correct", "wrong") and len(line.round_verdicts) == 2
        assert line.optimal_move == QuestionTask(questions[line.record_id]).gold_text
    # The round-0 (solve) calls show no solution yet; one per model and question.
    solved = [v for key, v in sorted(meant.items()) if "Your solution:" not in key[0]]
    assert len(solved) == 24 and all(len(v) == 1 for v in solved)
    graded0 = sorted([line.round_verdicts[0][a] for line in lines for a in ("model_1", "model_2")])
    assert sorted(v[0] for v in solved) == graded0
    # The outcome table (seed 001, Table 5) from the log, against the reference rule.
    traces = [trace_from_decision(line) for line in lines]
    expected = {name: 0 for name in OUTCOMES}
    for line in lines:
        rv = line.round_verdicts
        agents = list(rv[0])
        expected[reference_outcome([rv[0][a] for a in agents], [rv[-1][a] for a in agents])] += 1
    assert outcome_breakdown([t for t in traces if t is not None]) == expected
    # The folder report reads question runs: accuracy, McNemar, debate dynamics.
    report = render_report(tmp_path, plots=False)
    assert {a.game for a in report.accuracy} == {"math"} and len(report.accuracy) == 2
    assert len(report.paired) == 1 and report.paired[0].pairs == 12
    assert len(report.debate) == 1 and report.debate[0].debates == 12


def test_evaluate_cli_finds_samples_and_refuses_unanswered_questions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from metanim.cli import main

    monkeypatch.chdir(tmp_path)
    config = EvaluationConfig(dataset=["samples/csqa.jsonl"])
    assert config.dataset == [str(SAMPLES_DIR / "csqa.jsonl")]
    assert resolve_path("samples/nope.jsonl") == Path("samples/nope.jsonl")
    write(tmp_path / "open.jsonl", [{"id": "x", "question": "Why?"}])
    code = main(["evaluate", "--dataset", "open.jsonl", "--model", "sim-optimal", "--no-progress"])
    assert code == 2
    assert "question x has no answer" in capsys.readouterr().err


# --------------------------------------------------------------- challenging
def test_challenging_subset_keeps_items_the_baseline_fails(tmp_path: Path) -> None:
    source = SAMPLES_DIR / "mc.jsonl"
    rows = [json.loads(line) for line in source.read_text().splitlines()]
    # This model always answers the first option: right on exactly the items whose answer is A.
    expected = [r["id"] for r in rows if r["answer"] != "A"]
    config = ChallengingConfig(
        dataset=[str(source)], model="sim-biased:heuristic=first,p=1",
        results_dir=str(tmp_path), progress=False,
    )  # fmt: skip
    assert (config.repeats, config.temperature, config.below) == (5, 0.7, 0.4)
    result = run_challenging(config)
    assert result.kept[str(source)] == expected
    subset = result.written[str(source)].read_text().splitlines()
    assert [json.loads(line) for line in subset] == [r for r in rows if r["id"] in expected]
    items = json.loads(result.written[str(source)].with_suffix(".items.json").read_text())
    assert all(v["graded"] == 5 for v in items["items"].values())
    assert result.evaluation.records[0].decision.params["temperature"] == 0.7
    # The subset is a question file of the same shape; a rerun resumes the same log.
    assert [q.id for q in load_questions(result.written[str(source)])] == expected
    assert run_challenging(config).evaluation.played_now == 0
    # An oracle fails nothing.
    optimal = ChallengingConfig(
        dataset=[str(source)], model="sim-optimal", repeats=2, results_dir=str(tmp_path / "o"),
        progress=False,
    )  # fmt: skip
    assert run_challenging(optimal).kept[str(source)] == []


DOC = Path(__file__).resolve().parents[2] / "docs" / "questions.md"


@pytest.mark.parametrize("index", range(2))
def test_doc_examples_run(index: int) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert len(blocks) == 2
    namespace: dict[str, object] = {}
    exec(compile(blocks[index], f"docs/questions.md[python block {index}]", "exec"), namespace)
    assert len(namespace) > 1
