"""Pure logic of the methods layer: parsing, re-asks, votes and tie-breaks, AceMAD maths.

The model is a scripted `ChatModel` test double (an external model's stand-in); the
real-HTTP protocol tests against the simulated server are in test_methods_sim.py.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable

import pytest

from metanim.agents import (
    AceMAD,
    DecisionInfrastructureError,
    Question,
    QuestionTask,
    ReAct,
    SelfConsistency,
    SelfRefine,
    aggregate,
    brier_score,
    extract_action,
    load_questions,
    parse_reply,
    parse_spec,
    update_weights,
)
from metanim.agents.tasks import GameTask
from metanim.games import UnparsableMoveError, make_game
from metanim.llm._types import CallOptions, Completion, InfrastructureError, Message

Script = Callable[[list[Message], float, int], str]


class Scripted:
    """A ChatModel double: `script(messages, temperature, call_number)` gives the reply."""

    def __init__(self, script: Script, model: str = "scripted") -> None:
        self.script, self._model, self.requests = script, model, []

    @property
    def model(self) -> str:
        return self._model

    async def chat(
        self, messages, *, temperature=0.0, n=1, seed=None, sample_index=0, options=None
    ):
        self.requests.append({"messages": messages, "temperature": temperature, "seed": seed})
        text = self.script(messages, temperature, len(self.requests) - 1)
        return Completion(model=self._model, texts=[text], request={"seed": seed})


def block(obj: object) -> str:
    return f"Some thinking.\n```json\n{json.dumps(obj)}\n```"


def run(coro):
    return asyncio.run(coro)


FIB = make_game("fibonacci-20")
CHOMP = make_game("chomp-2x8")


@pytest.mark.parametrize(
    ("text", "value", "stage"),
    [
        (block({"reasoning": "r", "action": 3}), 3, "strict"),
        ('I pick {"action": [0, 2]} in the end', [0, 2], "json_object"),
        ("{reasoning: take two, action: 2}", "2", "key"),
        ("  (1, 3) ", "(1, 3)", "bare"),
        ("17", "17", "bare"),
    ],
)
def test_extract_action_stages(text: str, value: object, stage: str) -> None:
    assert extract_action(text) == (value, stage)


def test_extract_action_unparsable() -> None:
    with pytest.raises(UnparsableMoveError):
        extract_action("I would take a few stones, probably.")


@pytest.mark.parametrize(
    "text",
    ["The reaction: 5 stones", "my_action = 4 maybe", "'reaction': 2 is odd", "Transaction=3"],
)
def test_key_stage_needs_action_as_a_whole_word(text: str) -> None:
    with pytest.raises(UnparsableMoveError):
        extract_action(text)
    assert extract_action(f"{text}; so, action: 7") == ("7", "key")
    assert extract_action(f"{text} 'action': 7") == ("7", "key")


def test_parse_reply_kinds() -> None:
    task = GameTask(CHOMP, CHOMP.initial_state())
    assert parse_reply(task, block({"action": [0, 3]})).answer == (0, 3)
    assert parse_reply(task, block({"action": [0, 0]})).error == "illegal"
    assert parse_reply(task, block({"action": "left"})).error == "unparsable"
    assert parse_reply(task, "no idea").error == "unparsable"


def test_reask_counts_and_distinct_feedback() -> None:
    replies = [
        "I'd take some.",  # unparsable
        block({"action": 25}),  # illegal (max 19)
        block({"action": 2}),
    ]
    client = Scripted(lambda m, t, i: replies[i])
    decision = run(ReAct(client, max_reasks=2).decide(FIB, FIB.initial_state(), seed=1))
    assert decision.status == "ok" and decision.move == 2
    assert (decision.unparsable, decision.illegal, decision.n_calls) == (1, 1, 3)
    first_feedback = client.requests[1]["messages"][-1]["content"]
    second_feedback = client.requests[2]["messages"][-1]["content"]
    assert "could not be read" in first_feedback and "not allowed" in second_feedback
    assert first_feedback != second_feedback
    assert [s.error for s in decision.samples] == ["unparsable", "illegal", None]


def test_forfeit_and_seeded_fallback() -> None:
    client = Scripted(lambda m, t, i: "nothing useful")
    forfeit = run(ReAct(client, max_reasks=1).decide(FIB, FIB.initial_state(), seed=3))
    assert forfeit.status == "forfeit" and forfeit.move is None
    assert forfeit.unparsable == 2 and forfeit.failed_agents == 1
    method = ReAct(client, max_reasks=0, on_failure="random")
    moves = {run(method.decide(FIB, FIB.initial_state(), seed=s)).move for s in range(12)}
    again = run(method.decide(FIB, FIB.initial_state(), seed=5))
    assert (
        again.status == "fallback"
        and again.move == run(method.decide(FIB, FIB.initial_state(), seed=5)).move
    )
    assert len(moves) > 1 and moves <= set(FIB.legal_moves(FIB.initial_state()))


def test_a_forfeit_never_lists_the_moves(monkeypatch) -> None:
    # A position with 10**20 moves: a forfeit must not enumerate them (only a fallback does).
    def refuse(self):
        raise AssertionError("listed every legal move for a forfeit")

    monkeypatch.setattr(GameTask, "legal_answers", refuse)
    game = make_game("nim", heaps=[10**20], max_take=None)
    method = ReAct(Scripted(lambda m, t, i: "no idea"), max_reasks=0)
    decision = run(method.decide(game, game.initial_state(), seed=0))
    assert decision.status == "forfeit" and decision.move is None


def test_self_refine_records_a_failed_final_step() -> None:
    # answer 2, feedback, refine 3, feedback, refine unreadable (no re-asks).
    replies = [block({"action": 2}), "fine", block({"action": 3}), "hmm", "no idea"]
    client = Scripted(lambda m, t, i: replies[i])
    d = run(SelfRefine(client, iterations=2, max_reasks=0).decide(FIB, FIB.initial_state(), seed=1))
    assert d.move == 3 and d.status == "ok" and d.n_calls == 5
    assert d.extra["fell_back_to_iteration"] == 1 and d.extra["invalid_steps"] == [2]
    assert d.unparsable == 1 and d.failed_agents == 1
    # Invalid first, valid last: the last answer is used, nothing to fall back from.
    replies = ["??", "fine", block({"action": 2}), "ok", block({"action": 3})]
    client = Scripted(lambda m, t, i: replies[i])
    d = run(SelfRefine(client, iterations=2, max_reasks=0).decide(FIB, FIB.initial_state(), seed=1))
    assert d.move == 3 and "fell_back_to_iteration" not in d.extra
    assert d.extra["invalid_steps"] == [0]


def test_tie_break_is_seeded_and_recorded() -> None:
    # Two samples disagree (1 vs 2): a tie that must go to the seeded rule, not to order.
    client = Scripted(lambda m, t, i: block({"action": 1 + i % 2}))
    chosen = set()
    for seed in range(16):
        client.requests.clear()
        d = run(SelfConsistency(client, n=2).decide(FIB, FIB.initial_state(), seed=seed))
        assert d.tie_breaks and d.tie_breaks[0].candidates == ["1", "2"]
        assert d.tie_breaks[0].chosen == d.answer_text
        chosen.add(d.move)
    assert chosen == {1, 2}


def test_brier_weights_aggregate_by_hand() -> None:
    assert brier_score({"A": 1.0}, [{"A": 1.0}, {"B": 1.0}]) == pytest.approx(0.5)
    assert brier_score({"A": 1.0}, [{"A": 1.0}]) == 1.0
    w = update_weights([1.0, 1.0, 1.0], [0.5, 0.5, 1.0], 2.0)
    e1, e2 = math.e, math.e**2
    assert w == pytest.approx([e1 / (2 * e1 + e2), e1 / (2 * e1 + e2), e2 / (2 * e1 + e2)])
    agg = aggregate(w, [{"A": 1.0}, {"A": 1.0}, {"B": 1.0}])
    assert agg["B"] > agg["A"]  # squared weights let the minority truth-holder win


def test_acemad_truth_holder_beats_majority() -> None:
    q = Question("q1", "Which?", ("alpha", "beta", "gamma"), "B")

    def script(messages: list[Message], temperature: float, i: int) -> str:
        skeptic = "skeptic" in messages[0]["content"]
        if messages[-1]["content"].startswith("Now commit"):
            if skeptic:
                return block({"belief": {"B": 1}, "prediction": {"A": 1}})
            return block({"belief": {"A": 1}, "prediction": {"A": 1}})
        return "B is right." if skeptic else "A is right."

    client = Scripted(script)
    method = AceMAD(client, agents=5, rounds=3)
    d = run(method.decide(QuestionTask(q), seed=0))
    log = d.extra["acemad"]
    assert list(log["roles"].values()) == ["crowd"] * 4 + ["truth_holder"]
    assert [r["temperature"] for r in client.requests[:1]] == [0.1]
    assert d.n_calls == 5 * 2 * 3
    assert d.rounds[-1] == {
        "agent_1": "A",
        "agent_2": "A",
        "agent_3": "A",
        "agent_4": "A",
        "agent_5": "B",
    }
    # Recompute every round from the recorded reports.
    weights = [1.0] * 5
    names = [f"agent_{i + 1}" for i in range(5)]
    for rnd in log["rounds"]:
        beliefs = [rnd["beliefs"][n] for n in names]
        scores = [
            brier_score(rnd["predictions"][n], [b for j, b in enumerate(beliefs) if j != i])
            for i, n in enumerate(names)
        ]
        assert [rnd["scores"][n] for n in names] == pytest.approx(scores, abs=0)
        weights = update_weights(weights, scores, 2.0)
        assert [rnd["weights"][n] for n in names] == pytest.approx(weights, abs=0)
    assert d.answer == "B"  # majority vote would say A


def test_infrastructure_error_is_never_a_move() -> None:
    def script(messages: list[Message], temperature: float, i: int) -> str:
        raise InfrastructureError("quota exhausted", kind="quota")

    with pytest.raises(DecisionInfrastructureError) as info:
        run(ReAct(Scripted(script)).decide(FIB, FIB.initial_state(), seed=0))
    assert info.value.decision.status == "infrastructure_error"
    assert info.value.decision.move is None and info.value.kind == "quota"


def test_question_parsing_and_loading(tmp_path) -> None:
    path = tmp_path / "qa.jsonl"
    rows = [
        {"id": "m1", "question": "2+2?", "choices": ["3", "4"], "answer": "B"},
        {"question": "6*7?", "answer": 42},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    mc, num = (QuestionTask(q) for q in load_questions(path))
    assert mc.parse('"B"') == "B" and mc.parse("(b)") == "B" and mc.is_correct("B")
    assert parse_reply(mc, block({"action": "C"})).error == "illegal"
    assert parse_reply(mc, block({"action": "maybe"})).error == "unparsable"
    assert num.is_correct(num.parse("the answer is 42.0")) and num.text(num.parse("42.0")) == "42"
    assert not num.is_correct(num.parse("4.2"))
    assert num.legal_answers() is None and num.item.id == "2"


def test_parse_spec() -> None:
    assert parse_spec("react:gpt-4o") == ("react", "gpt-4o", {})
    assert parse_spec("dreamad:agents=2,rounds=3") == ("dreamad", None, {"agents": 2, "rounds": 3})
    assert (
        parse_spec("react:sim-biased:p=0.8,heuristic=first")[1]
        == "sim-biased:p=0.8,heuristic=first"
    )
    with pytest.raises(ValueError, match="unknown method"):
        parse_spec("telepathy")


def test_build_method_names_an_unknown_parameter() -> None:
    from metanim.agents import build_method

    made: list[str] = []

    def factory(name: str) -> Scripted:
        made.append(name)
        return Scripted(lambda m, t, i: block({"action": 2}), model=name)

    with pytest.raises(
        ValueError,
        match=r"'bogus' for method 'mad'.*valid: agents, consensus_stop, max_chars, max_reasks",
    ):
        build_method("mad:bogus=1", "m", client_factory=factory)
    with pytest.raises(ValueError, match=r"'sim-biased:p'.*valid: .*rounds.*whole tail"):
        build_method("mad:agents=3,sim-biased:p=0.8", "m", client_factory=factory)
    with pytest.raises(ValueError, match=r"'agents' for method 'sc'.*valid: .*\bn\b"):
        build_method("sc:agents=3", "m", client_factory=factory)
    assert made == []  # refused before any client is made
    # Every valid parameter, base-class ones included, still builds.
    mad = build_method(
        "mad:agents=3,rounds=1,max_reasks=0,on_failure=random", "m", client_factory=factory
    )
    assert (mad.agents, mad.rounds, mad.max_reasks, mad.on_failure) == (3, 1, 0, "random")
    assert (
        build_method("dreamad_minus:elicit_temperature=0.2", "m", client_factory=factory).variant
        == "minus"
    )


def _elicitation_script(messages: list[Message], temperature: float, call: int) -> str:
    """Elicitation replies, then a rewrite that names no state (so its placement shows)."""
    text = str(messages[-1]["content"])
    if "game_definition" in text and "Problem description" in text:
        return block({"game_definition": "g", "winning_condition": "w", "move_constraints": "m"})
    if "state_evaluation" in text:
        return block({"state_evaluation": "s", "winning_strategy": "w", "endgame_tactics": "e"})
    if "optimized_prompt" in text:
        return block({"optimized_prompt": f"REFINED-{call}: take the smallest Zeckendorf part."})
    return block({"reasoning": "r", "action": 1})


@pytest.mark.parametrize(
    "spec",
    ["dreamad:agents=2,rounds=1", "dreamad_minus", "sc:n=2,elicit=true", "refine:elicit=true"],
)
def test_dreamad_decision_answers_the_refined_prompt_in_place_of_the_game_prompt(spec) -> None:
    from metanim.agents import build_method

    state = FIB.initial_state()
    game_prompt = FIB.prompt(state)
    for placement in ("replace", "system"):
        client = Scripted(_elicitation_script)
        method = build_method(
            f"{spec}{',' if ':' in spec else ':'}placement={placement}",
            "scripted",
            client_factory=lambda m, c=client: c,
        )
        decision = run(method.decide(FIB, state, seed=0))
        refined = decision.extra["elicitation"]["prompts"]
        answers = [c for c in decision.calls if c.phase in ("answer", "update", "refine")]
        assert answers and decision.params["placement"] == placement
        for call in answers:
            text = "\n".join(str(m["content"]) for m in call.messages)
            own = (
                refined[int(call.agent[-1]) - 1] if call.agent.startswith("agent_") else refined[0]
            )
            assert own in text
            if placement == "replace":
                # Seed 000 §4.2: the refined prompt is the prompt; the game text is not sent.
                assert game_prompt not in text and call.messages[0]["role"] == "user"
            else:
                assert call.messages[0]["role"] == "system" and own in call.messages[0]["content"]
                assert game_prompt in text
    with pytest.raises(ValueError, match="placement"):
        build_method(
            f"{spec}{',' if ':' in spec else ':'}placement=top",
            "m",
            client_factory=lambda m: client,
        )


def _acemad_script(messages: list[Message], temperature: float, i: int) -> str:
    """Crowd: A with confidence 0.7, predicts A; truth-holder: B with 0.9, predicts A."""
    skeptic = "skeptic" in messages[0]["content"]
    if messages[-1]["content"].startswith("Now commit"):
        if skeptic:
            return block({"belief": {"B": 0.9, "A": 0.1}, "prediction": {"A": 1}})
        return block({"belief": {"A": 0.7, "B": 0.3}, "prediction": {"A": 1}})
    return "B is right." if skeptic else "A is right."


@pytest.mark.parametrize("weighting", ["peer", "self", "uniform"])
def test_acemad_weighting_ablations(weighting) -> None:
    q = Question("q1", "Which?", ("alpha", "beta", "gamma"), "B")
    method = AceMAD(Scripted(_acemad_script), agents=5, rounds=2, weighting=weighting)
    d = run(method.decide(QuestionTask(q), seed=0))
    w = [r["weights"]["agent_5"] for r in d.extra["acemad"]["rounds"]]
    # By hand: crowd beliefs {A: .7, B: .3}, truth {A: .1, B: .9}; eta = 2.
    if weighting == "uniform":
        assert w == pytest.approx([0.2, 0.2])  # standard MAD: no agent gains
        assert d.answer_text == "A"  # A: 4·.7 + .1 = 2.9 against B: 4·.3 + .9 = 2.1
    elif weighting == "self":
        # Scores = own confidence: 0.9 for the truth-holder, 0.7 for each crowd agent.
        one = math.exp(2 * 0.9) / (math.exp(2 * 0.9) + 4 * math.exp(2 * 0.7))
        assert w[0] == pytest.approx(one)
    else:
        # Peer prediction {A: 1} against the crowd's mean {A: .7, B: .3}: S = 1 − .09 − .09
        # = 0.82; a crowd agent's peers average A = (3·.7 + .1)/4 = .55: S = 1 − 2·.45²
        # = 0.595.
        one = math.exp(2 * 0.82) / (math.exp(2 * 0.82) + 4 * math.exp(2 * 0.595))
        assert w[0] == pytest.approx(one, abs=1e-3)
    with pytest.raises(ValueError, match="weighting"):
        AceMAD(Scripted(_acemad_script), weighting="votes")


def test_per_agent_models_for_debates_and_acemad() -> None:
    from metanim.agents import MethodSpec, build_method

    made: list[str] = []

    def factory(model: str) -> Scripted:
        made.append(model)
        return Scripted(lambda m, t, i: block({"reasoning": "r", "action": 1}), model=model)

    ace = build_method(
        "acemad:agents=5,models=crowd|crowd|crowd|crowd|truth", client_factory=factory
    )
    assert ace.models == ["crowd"] * 4 + ["truth"]
    mad = build_method("mad:agents=3,models=x|y", client_factory=factory)
    assert mad.models == ["x", "y", "x"]  # cycled
    assert MethodSpec.parse("mad:models=a|b").models("ignored") == ["a", "b"]
    assert MethodSpec.parse("mad").models("m") == ["m"]
    with pytest.raises(ValueError, match="models"):
        build_method("react:models=a|b", "m", client_factory=factory)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "react:temperature=-0.5",
            r"temperature=-0.5 of 'react:temperature=-0.5'.*greater than or equal to 0",
        ),
        (
            "react:temperature=1e400",
            r"temperature=inf of 'react:temperature=1e400': give a finite number",
        ),
        (
            "mad:rounds=-1",
            r"rounds=-1 of 'mad:rounds=-1'.*greater than or equal to 0 \(expected int\)",
        ),
        ("mad:agents=0", r"agents=0 of 'mad:agents=0'.*greater than or equal to 1"),
        ("sc:n=0", r"n=0 of 'sc:n=0'.*greater than or equal to 1"),
        # A million samples would start a million calls at once: refused as a slip.
        ("sc:n=1000000", r"n=1000000 of 'sc:n=1000000'.*less than or equal to 100"),
        ("mad:rounds=101,agents=3", r"rounds=101 of 'mad:rounds=101,agents=3'.*less than"),
        ("self_refine:iterations=-2", r"iterations=-2 of 'self_refine:iterations=-2'"),
    ],
)
def test_method_parameters_keep_their_value_kinds(spec: str, message: str) -> None:
    """A value out of its kind is refused by the spec, before any client is made."""
    from metanim.agents import build_method

    made: list[str] = []

    def factory(name: str) -> Scripted:
        made.append(name)
        return Scripted(lambda m, t, i: block({"action": 2}), model=name)

    with pytest.raises(ValueError, match=message):
        build_method(spec, "m", client_factory=factory)
    assert made == []
    # The edge of each kind still builds: 0 rounds and iterations, temperature 0.
    build_method(spec.split(":")[0] + ":temperature=0", "m", client_factory=factory)


def test_every_decision_sends_and_records_the_phase_cap_and_the_current_options():
    # The capped options are made once per method and cap, and again when a caller
    # replaces the method's options between decisions.
    client = Scripted(lambda m, t, i: block({"reasoning": "one", "action": 1}))
    sent = []
    chat = client.chat

    async def recording(messages, **kwargs):
        sent.append(kwargs["options"])
        return await chat(messages, **kwargs)

    client.chat = recording
    method = ReAct(client, options={"top_p": 0.9}, phase_max_tokens={"answer": 100})
    first = run(method.decide(FIB, (5, 4), seed=1))
    second = run(method.decide(FIB, (6, 5), seed=2))
    method.options = CallOptions(top_p=0.5, stop=["END"])
    third = run(method.decide(FIB, (7, 6), seed=3))
    wanted = [(100, 0.9, None), (100, 0.9, None), (100, 0.5, ["END"])]
    assert [(o.max_tokens, o.top_p, o.stop) for o in sent] == wanted
    recorded = [d.calls[0].options for d in (first, second, third)]
    assert [(r["max_tokens"], r["top_p"], r["stop"]) for r in recorded] == wanted
    assert recorded[0] == recorded[1] and recorded[0] is not recorded[1]
