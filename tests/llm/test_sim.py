"""The simulated server's policies, read back through the real client and the games' parsers."""

from __future__ import annotations

import asyncio
import json

import openai
import pytest

from metanim.games import IllegalMoveError, MoveError, game_from_prompt, make_game
from metanim.llm import OpenAIChatClient, templates
from metanim.llm.sim import ModelSpecError, parse_model_spec, template_keys
from metanim.solver import winning_moves
from tests.replies import FORMAT, move, parsed

# One N-position (a winning move exists) per game.
CASES = [
    ("nim-31-k3", (31,)),
    ("fibonacci-20", (20, 19)),
    ("kayles-2rows", ("11111", "111111")),
    ("chomp-2x8", (8, 8)),
    ("corner-queen", (4, 16)),
]


def ask(server, model, content, **kwargs):
    c = OpenAIChatClient(model, base_url=server.base_url, api_key="sk-test", backoff_s=0.001)
    messages = content if isinstance(content, list) else [{"role": "user", "content": content}]
    return asyncio.run(c.chat(messages, **kwargs))


@pytest.mark.parametrize(("preset", "state"), CASES)
def test_optimal_plays_winning_moves_and_random_plays_legal_ones(sim_server, preset, state):
    game = make_game(preset)
    prompt = game.prompt(state) + FORMAT
    winning = set(winning_moves(game, state))
    assert winning
    best = ask(sim_server, "sim-optimal", prompt, n=8, seed=3, temperature=1.0)
    assert {move(game, state, t) for t in best.texts} <= winning
    rand = ask(sim_server, "sim-random", prompt, n=30, seed=3, temperature=1.0)
    moves = [move(game, state, t) for t in rand.texts]  # raises if any is illegal
    assert len(set(moves)) > 1


def test_biased_policy_picks_the_heuristic_move_with_probability_p(sim_server):
    game = make_game("nim-31-k5")
    state = (30,)  # 30 mod 6 = 0: a P-position, so "optimal" has no winning move
    prompt = game.prompt(state) + FORMAT
    always = ask(sim_server, "sim-biased:heuristic=min_take,p=1", prompt, n=10, seed=1)
    assert {move(game, state, t) for t in always.texts} == {game.parse_move("1", state)}
    mixed = ask(
        sim_server,
        "sim-biased:heuristic=max_take,p=0.5,otherwise=random",
        prompt,
        n=200,
        temperature=0.7,  # the reference temperature, where p holds as stated
    )
    share = sum(parsed(t)["action"] == 5 for t in mixed.texts) / 200
    # p + (1 - p) / 5 = 0.6 expected; the band is about 5 standard deviations wide.
    assert 0.42 < share < 0.78


def test_faulty_answers_are_unparsable_or_illegal_by_rate(sim_server):
    game = make_game("chomp-5x5")
    state = game.initial_state()
    prompt = game.prompt(state) + FORMAT
    for text in ask(sim_server, "sim-faulty:malformed=1", prompt, n=5, seed=2).texts:
        with pytest.raises((MoveError, ValueError, AssertionError)):
            move(game, state, text)
    for text in ask(sim_server, "sim-faulty:illegal=1", prompt, n=5, seed=2).texts:
        with pytest.raises(IllegalMoveError):
            move(game, state, text)
    log = sim_server.log[-1]
    assert log["faults"] == ["illegal"] * 5


def test_seeded_answers_are_reproducible_and_choices_differ(sim_server):
    prompt = make_game("corner-queen").prompt((4, 16)) + FORMAT
    a = ask(sim_server, "sim-random", prompt, n=6, seed=11, temperature=1.0)
    b = ask(sim_server, "sim-random", prompt, n=6, seed=11, temperature=1.0)
    c = ask(sim_server, "sim-random", prompt, n=6, seed=12, temperature=1.0)
    assert a.texts == b.texts and a.texts != c.texts and len(set(a.texts)) > 1
    assert a.usage == b.usage and a.usage.completion_tokens > 0


def test_conforming_policy_follows_weights(sim_server):
    game = make_game("nim-31-k3")
    own = 'In NIM, I choose 1.\n```json\n{"reasoning": "r", "action": 1}\n```'
    peers = ['```json\n{"action": 2}\n```', "I take two. answer: 2"]
    content = templates.DEBATE_UPDATE.format(
        problem=game.prompt((31,)),
        own=own,
        peers="\n".join(
            templates.DEBATE_PEER.format(label=f"Agent {k + 2}", answer=text)
            for k, text in enumerate(peers)
        ),
        output_format=FORMAT,
    )

    def shares(spec):
        texts = ask(sim_server, spec, content, n=200, temperature=0.7).texts
        return sum(parsed(t)["action"] == 1 for t in texts) / 200

    assert shares("sim-conform:self=1,peer=0") == 1.0
    assert shares("sim-conform:self=0,peer=1") == 0.0
    # self=2 against two peer answers of weight 1 each: P(keep own) = 2 / 4.
    assert 0.35 < shares("sim-conform:self=2,peer=1") < 0.65


def test_non_move_prompts_get_the_keys_they_ask_for(sim_server):
    game = make_game("fibonacci-20")
    state = (20, 19)
    elicit = (
        game.prompt(state) + "\nDescribe the game. Reply as JSON: "
        '{"game definition": "...", "winning condition": "...", "move constraints": "..."}'
    )
    obj = parsed(ask(sim_server, "sim-optimal", elicit, seed=1).text)
    assert set(obj) == {"game definition", "winning condition", "move constraints"}
    assert all(isinstance(v, str) and v for v in obj.values())
    rewrite = game.prompt(state) + '\nRewrite the prompt. JSON: {"optimized prompt": "..."}'
    optimized = parsed(ask(sim_server, "sim-optimal", rewrite).text)["optimized prompt"]
    recovered, recovered_state = game_from_prompt(optimized)  # the debate plays from it
    assert recovered.name == game.name and recovered_state == state
    belief_prompt = (
        game.prompt(state) + '\nJSON: {"belief": {"<action>": <prob>}, "peer_prediction": '
        '{"<action>": <prob>}, "action": <value>}'
    )
    obj = parsed(ask(sim_server, "sim-optimal", belief_prompt).text)
    assert set(obj) == {"belief", "peer_prediction", "action"}
    assert sum(obj["belief"].values()) == pytest.approx(1.0, abs=1e-3)
    assert max(obj["belief"], key=obj["belief"].get) == json.dumps(obj["action"])
    assert game.parse_move(json.dumps(obj["action"]), state) in winning_moves(game, state)


def test_template_keys_reads_the_last_requested_object():
    text = (
        'Peer: {"action": 3, "reasoning": "x"}\nAnswer as {"belief": {"1": 0.5}, "final answer": 1}'
    )
    assert template_keys(text) == ["belief", "final answer"]
    assert template_keys("no json here") == []


def test_model_spec_grammar():
    spec = parse_model_spec("sim-biased:heuristic=min_take,p=0.25")
    assert spec.policy == "biased" and spec["p"] == 0.25 and spec["heuristic"] == "min_take"
    for bad in ("gpt-4o", "sim-unknown", "sim-biased:p=2", "sim-faulty:x=1", "sim-random:p"):
        with pytest.raises(ModelSpecError):
            parse_model_spec(bad)


def test_models_endpoint_through_the_sdk(sim_server):
    async def listing():
        async with openai.AsyncOpenAI(base_url=sim_server.base_url, api_key="sk-test") as sdk:
            return [m.id async for m in sdk.models.list()]

    assert "sim-optimal" in asyncio.run(listing())


# ------------------------------------------------------- layouts, temperature, faults
def _layouts(method, model="sim-random"):
    """(phase, layout) of every call `method` makes, read from the simulator's log."""
    from metanim.agents import CrossModel, build_method
    from metanim.llm.sim import SimApp, SimChatModel

    app = SimApp(seed=0)
    if method == "cross":
        built = CrossModel([SimChatModel(model, app), SimChatModel("sim-optimal", app)])
    else:
        built = build_method(method, model, client_factory=lambda name: SimChatModel(name, app))
    game = make_game("fibonacci-20")
    asyncio.run(built.decide(game, (20, 19), seed=5))
    return {r["layout"] for r in app.log}


@pytest.mark.parametrize(
    ("method", "layouts"),
    [
        ("mad:agents=3,rounds=2,consensus_stop=false", {"single", "mad"}),
        ("anon_mad:agents=3,rounds=2,consensus_stop=false", {"single", "anonymous"}),
        ("mpd:rounds=2", {"mpd", "judge"}),
        ("acemad:agents=3,rounds=2", {"acemad_argue", "acemad_commit"}),
        ("refine", {"single", "history"}),
        ("dreamad:agents=2,rounds=1,consensus_stop=false", {"single", "mad"}),
        ("cross", {"single", "cross"}),
    ],
)
def test_the_simulator_recognises_every_method_layout(method, layouts):
    assert _layouts(method) == layouts


def test_layouts_separate_own_answer_peers_and_anonymous_opinions():
    from metanim.llm.templates import read_layout

    game = make_game("nim-31-k3")
    own, a, b = "answer: 1", "answer: 2\nsecond line", "- not a new item: answer: 3"
    vanilla = templates.DEBATE_UPDATE.format(
        problem=game.prompt((31,)),
        own=own,
        peers="\n".join(
            templates.DEBATE_PEER.format(label=templates.DEBATE_LABEL.format(index=k), answer=t)
            for k, t in ((2, a), (3, b))
        ),
        output_format=FORMAT,
    )
    seen = read_layout([{"role": "user", "content": vanilla}])
    assert (seen.kind, seen.own, seen.peers) == ("mad", [own], [a, b])
    anonymous = templates.ANONYMOUS_UPDATE.format(
        problem=game.prompt((31,)),
        peers="\n".join(
            templates.ANONYMOUS_PEER.format(index=k + 1, answer=t) for k, t in enumerate((b, own))
        ),
        output_format=FORMAT,
    )
    seen = read_layout([{"role": "user", "content": anonymous}])
    assert (seen.kind, seen.own, seen.opinions) == ("anonymous", [], [b, own])
    assert not seen.identity_visible


def test_temperature_rescales_preferences_around_the_reference():
    from metanim.llm.sim import at_temperature

    prefs = {"a": 0.8, "b": 0.2}
    assert at_temperature(prefs, 0.7) == pytest.approx(prefs)
    assert at_temperature(prefs, 0.35)["a"] == pytest.approx(0.64 / (0.64 + 0.04))
    assert at_temperature(prefs, 1.4)["a"] == pytest.approx(0.8**0.5 / (0.8**0.5 + 0.2**0.5))
    assert at_temperature(prefs, 0.0) == {"a": 1.0}
    assert at_temperature({"a": 0.5, "b": 0.5, "c": 0.0}, 0.0) == {"a": 0.5, "b": 0.5}


def _status(app, body):
    return asyncio.run(app.complete(json.dumps(body).encode()))[0]


def test_faults_come_from_seed_session_request_and_attempt():
    from metanim.llm.sim import SimApp

    game = make_game("nim-31-k3")
    body = {
        "model": "sim-faulty:http500=0.5",
        "messages": [{"role": "user", "content": game.prompt((31,)) + FORMAT}],
        "seed": 1,
    }

    def statuses(**kwargs):
        app = SimApp(**kwargs)
        return [_status(app, body) for _ in range(12)]

    first = statuses(seed=0)
    assert first == statuses(seed=0)  # reproducible
    assert len(set(first)) == 2  # attempts of one request differ: a retry can succeed
    assert statuses(seed=0, session=1) != first  # a resumed run draws afresh
    # Answer faults too: the same request, resent, is malformed on some attempts only.
    body["model"] = "sim-faulty:malformed=0.5"
    app = SimApp(seed=0)
    faults = [app.log[-1]["faults"][0] for _ in range(12) if _status(app, body) == 200]
    assert set(faults) == {None, "malformed"}


def test_request_log_and_attempt_counts_are_bounded():
    from metanim.llm.sim import SimApp

    app = SimApp(seed=0, log_limit=5)
    game = make_game("nim-31-k3")
    for n in range(1, 13):
        content = game.prompt((n,)) + FORMAT
        _status(app, {"model": "sim-optimal", "messages": [{"role": "user", "content": content}]})
    assert [r["task"]["state"] for r in app.log] == [[n] for n in range(8, 13)]
    assert len(app._attempts) <= app._attempt_limit


def test_a_resumed_run_gets_a_new_simulator_session(tmp_path, monkeypatch):
    from types import SimpleNamespace

    import metanim.arena._run as run
    from metanim.llm.sim import SimServer

    sessions = []

    class Spy(SimServer):
        def __init__(self, *args, **kwargs):
            sessions.append(kwargs.get("session"))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr("metanim.llm.sim.SimServer", Spy)  # _run imports it where it starts one
    log = tmp_path / "run.jsonl"
    job = SimpleNamespace(log_path=log, config=SimpleNamespace(seed=3), questions=[])
    with run._sim_server(True, job):
        pass
    log.write_text('{"id": "a", "status": "infrastructure_error"}\n{"id": "b"}\n')
    with run._sim_server(True, job):
        pass
    assert sessions == [0, 2]


def test_dreamad_strategy_carries_the_cue_as_the_insight_and_temperature_say(sim_server):
    """DReaMAD's strategy request shows the game only in the agent's own words (no game
    prompt): the simulator still writes the strategy, and it carries the cue sentence
    with probability `insight` rescaled to the request's temperature (seed 000's
    elicitation at T = 0.1 against the rewrites at 0.7), or always where the request
    already names the cue."""
    from scipy.stats import binomtest

    from metanim.agents import prompts

    model = "sim-biased:p=0.7,cue=Grundy,cue_p=0,insight=0.45"
    request = prompts.DREAMAD_STRATEGY.format(
        game_definition="Fibonacci Nim. A single pile of stones.", winning_condition="take the last stone",
        move_constraints="at most twice the previous take", short_state="24 stones, take 1 to 6",
    )  # fmt: skip
    n = 300
    for temperature in (0.7, 0.35):
        a, b = 0.45 ** (0.7 / temperature), 0.55 ** (0.7 / temperature)
        expected = a / (a + b)  # the documented rescaling, P(carries the cue) at T
        hits = 0
        for seed in range(n):
            reply = ask(sim_server, model, request, seed=seed, temperature=temperature)
            obj = parsed(reply.text)
            assert set(obj) == {"state_evaluation", "winning_strategy", "endgame_tactics"}
            carried = ["Grundy" in v for v in obj.values()]
            assert len(set(carried)) == 1  # one reply: its fields carry it together
            hits += carried[0]
        assert binomtest(hits, n, expected).pvalue > 0.001, (temperature, hits)
    named = request.replace("A single pile of stones.", "Think in Grundy values.")
    for seed in range(20):
        assert "Grundy" in parsed(ask(sim_server, model, named, seed=seed).text)["winning_strategy"]


def test_a_host_that_is_no_address_is_named(tmp_path):
    from metanim.llm.sim import SimServer

    # .invalid is reserved never to resolve (RFC 6761, section 6.4).
    with pytest.raises(OSError, match=r"cannot serve at no-such-host\.invalid: not an address"):
        SimServer("no-such-host.invalid", 0).start()


def test_a_question_file_with_no_questions_is_refused(tmp_path):
    from metanim.datasets.questions import QuestionFileError
    from metanim.llm.sim import SimServer

    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(QuestionFileError, match=r"no questions in .*empty\.jsonl"):
        SimServer(questions=[tmp_path / "empty.jsonl"])
