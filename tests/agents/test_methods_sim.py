"""Each method's protocol, seen from the simulated server's request log over real HTTP.

Number of calls per decision, temperatures, who sees whose answer, anonymization, AceMAD's
weights and vote recomputed from the logged reports, and exact fault counting.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import gymnasium as gym
import pytest

from metanim.agents import (
    LLMPolicy,
    QuestionTask,
    aggregate,
    brier_score,
    build_method,
    load_questions,
    make_client,
    parse_reply,
    update_weights,
)
from metanim.agents.tasks import GameTask
from metanim.games import make_game
from metanim.games.reply import last_object_with
from metanim.llm.sim import SimServer

FIB = make_game("fibonacci-20")
START = FIB.initial_state()


@pytest.fixture(scope="module")
def server():
    with SimServer() as srv:
        yield srv


def decide(
    server: SimServer, spec: str, model: str = "sim-optimal", task: Any = None, seed: int = 0
):
    """Run one decision on a fresh log; returns (decision, log)."""
    server.reset_log()
    clients: list[Any] = []

    def factory(name: str):
        client = make_client(
            f"{name}@{server.base_url}", api_key="sim", max_retries=6, backoff_s=0.01
        )
        clients.append(client)
        return client

    async def go():
        method = build_method(spec, model, client_factory=factory)
        try:
            return await method.decide(task or GameTask(FIB, START), seed=seed)
        finally:
            for c in clients:
                await c.aclose()

    decision = asyncio.run(go())
    return decision, [r for r in server.log if r["status"] == 200]


def user_text(record: dict) -> str:
    return record["messages"][-1]["content"]


# Calls per decision when every agent plays optimally (so debates reach consensus at once).
CALLS = {
    "standard": 1,
    "react": 1,
    "cot": 1,
    "sc": 5,
    "refine": 7,  # answer + 3 x (feedback, refine)
    "mad": 2,  # consensus after round 0 stops the debate
    "anon_mad": 2,
    "dreamad": 6,  # reinterpret, strategy, 2 rewrites, 2 answers
    "dreamad_minus": 4,  # reinterpret, strategy, 1 rewrite, 1 answer
    "plus_mad": 5,  # one shared rewrite
    "mpd": 3,  # affirmative, negative, judge says "Yes" (adaptive break)
    "acemad": 30,  # 5 agents x (argue, commit) x 3 rounds
    "cross:models=sim-optimal|sim-optimal": 4,
}


@pytest.mark.parametrize("spec", list(CALLS))
def test_calls_per_decision_and_nothing_miscounted(server, spec: str) -> None:
    d, log = decide(server, spec)
    assert d.status == "ok" and d.move in [2]  # 20 stones: taking 2 is the only winning move
    assert d.n_calls == len(log) == CALLS[spec]
    assert [c.texts[0] for c in sorted(d.calls, key=lambda c: c.index)] == [
        r["answers"][0] for r in sorted(log, key=lambda r: r["time"])
    ] or sorted(c.texts[0] for c in d.calls) == sorted(r["answers"][0] for r in log)
    assert d.usage.total_tokens > 0 and d.unparsable == d.illegal == 0
    assert d.prompt_version and d.game_prompt_version
    json.loads(d.model_dump_json())  # the record is serializable


def test_self_consistency_samples_are_distinct_requests(server) -> None:
    d, log = decide(server, "sc:n=6", model="sim-random")
    assert len(log) == 6 and {r["temperature"] for r in log} == {0.7}
    assert len({r["seed"] for r in log}) == 6
    counted = {}
    for s in d.samples:
        counted[s.answer_text] = counted.get(s.answer_text, 0) + 1
    top = max(counted.values())
    assert counted[d.answer_text] == top


def test_mad_who_sees_whose_answer(server) -> None:
    d, log = decide(server, "mad:agents=3,rounds=2", model="sim-random", seed=4)
    assert len(log) == 9 and len(d.rounds) == 3  # round 0 + 2 update rounds
    first = [r for r in log if "answers of the other agents" not in user_text(r)]
    assert len(first) == 3 and all("Agent" not in user_text(r) for r in first)
    by_agent_round = {(c.agent, c.round): c for c in d.calls}
    for (agent, rnd), call in by_agent_round.items():
        if rnd == 0:
            continue
        text = call.messages[-1]["content"]
        own = by_agent_round[(agent, rnd - 1)].texts[0]
        assert f"Your previous answer was:\n- {own}" in text
        for other in ("agent_1", "agent_2", "agent_3"):
            if other != agent:
                label = f"Agent {other[-1]}: {by_agent_round[(other, rnd - 1)].texts[0]}"
                assert label in text
        assert f"Agent {agent[-1]}:" not in text


@pytest.mark.parametrize("spec", ["mad", "anon_mad", "dreamad", "plus_mad"])
def test_debate_rounds_count_updates_after_the_initial_answers(server, spec: str) -> None:
    """`rounds=3` (the default) is the seed's p⁽³⁾: initial answers + 3 update rounds."""
    full = []
    for seed in range(8):
        d, log = decide(server, f"{spec}:agents=3", model="sim-random", seed=seed)
        debate = [c for c in d.calls if c.phase in ("answer", "update")]
        assert d.n_calls == len(log)
        assert len(debate) == 3 * len(d.rounds) and len(d.rounds) <= 4
        assert {c.round for c in debate} == set(range(len(d.rounds)))
        if "stopped_early" not in d.extra:
            full.append(seed)
            assert len(d.rounds) == 4 and len(debate) == 12
    assert full  # some debates ran all 3 update rounds
    d, _log = decide(server, f"{spec}:agents=3,rounds=0", model="sim-random")
    assert len(d.rounds) == 1 and {c.phase for c in d.calls} <= {
        "answer",
        "reinterpret",
        "strategy",
        "rewrite",
    }


def test_anonymized_mad_hides_identity_and_shuffles(server) -> None:
    orders = set()
    for seed in range(6):
        d, _log = decide(server, "anon_mad:agents=3,rounds=2", model="sim-random", seed=seed)
        prev = {c.agent: c.texts[0] for c in d.calls if c.round == 0}
        if len(set(prev.values())) < 3:  # equal answers cannot be told apart by position
            continue
        for call in (c for c in d.calls if c.round == 1):
            text = call.messages[-1]["content"]
            assert "Agent " not in text and "Your previous" not in text and "agent_" not in text
            positions = [text.index(prev[a]) for a in ("agent_1", "agent_2", "agent_3")]
            recorded = next(o["order"] for o in d.extra["orders"] if o["agent"] == call.agent)
            assert sorted(range(3), key=lambda k: positions[k]) == recorded
            orders.add(tuple(recorded))
    assert len(orders) > 1  # also: some debates had three distinct answers to check


def test_dreamad_temperatures_and_own_prompts(server) -> None:
    d, _log = decide(server, "dreamad:agents=3,rounds=1")
    by_phase: dict[str, list[float]] = {}
    for c in d.calls:
        by_phase.setdefault(c.phase, []).append(c.temperature)
    assert by_phase == {
        "reinterpret": [0.1],
        "strategy": [0.1],
        "rewrite": [0.7] * 3,
        "answer": [0.7] * 3,
    }
    rewrites = [c for c in d.calls if c.phase == "rewrite"]
    assert len({c.seed for c in rewrites}) == 3
    prompts = d.extra["elicitation"]["prompts"]
    for c in (c for c in d.calls if c.phase == "answer"):
        assert prompts[int(c.agent[-1]) - 1] in c.messages[0]["content"]
    plus, _ = decide(server, "plus_mad:agents=3,rounds=1")
    assert len([c for c in plus.calls if c.phase == "rewrite"]) == 1
    assert len(set(plus.extra["elicitation"]["prompts"])) == 1


@pytest.mark.parametrize("level", [0, 3])
def test_mpd_order_level_and_judge(server, level: int) -> None:
    # Debaters play randomly, so the judge often has no clear winner and the debate goes on.
    d, _log = decide(server, f"mpd:level={level},rounds=3", model="sim-random", seed=2)
    phases = [(c.agent, c.round) for c in d.calls]
    assert phases[:3] == [("affirmative", 1), ("negative", 1), ("judge", 1)]
    aff, neg = d.calls[0], d.calls[1]
    assert aff.texts[0] in neg.messages[-1]["content"]  # the negative speaks after
    from metanim.agents.prompts import TIT_FOR_TAT

    assert all(
        TIT_FOR_TAT[level] in c.messages[0]["content"] for c in d.calls if c.agent != "judge"
    )
    assert all(c.temperature == 0.0 for c in d.calls if c.agent == "judge")
    verdicts = d.extra["judge"]["verdicts"]
    if d.extra["judge"]["adaptive_break"] is None:
        assert d.calls[-1].phase == "extract" and len(d.rounds) == 3
    else:
        assert verdicts[-1]["finished"] and len(d.rounds) == d.extra["judge"]["adaptive_break"]


def test_mpd_without_adaptive_break_runs_every_round_then_extracts(server) -> None:
    # An optimal judge breaks after round 1 (both sides answer optimally); with the break
    # off, its only call is the extraction after the last round.
    d, _log = decide(server, "mpd:rounds=3,adaptive_break=false", model="sim-optimal")
    phases = [(c.agent, c.phase, c.round) for c in d.calls]
    debate = [(side, "argue", r) for r in (1, 2, 3) for side in ("affirmative", "negative")]
    assert phases == [*debate, ("judge", "extract", 3)]
    assert d.extra["judge"] == {"verdicts": [], "adaptive_break": None}
    assert d.params["adaptive_break"] is False
    on, _log = decide(server, "mpd:rounds=3", model="sim-optimal")
    assert on.extra["judge"]["adaptive_break"] == 1 and len(on.calls) == 3
    with pytest.raises(ValueError, match="adaptive_break must be true or false"):
        build_method("mpd:adaptive_break=1", "sim-optimal")


def test_acemad_weights_and_vote_recomputed_from_log(server) -> None:
    d, log = decide(server, "acemad:agents=5,rounds=3", model="sim-random", seed=7)
    temps = [c.temperature for c in d.calls if c.phase == "argue" and c.round == 1]
    assert sorted(temps) == [0.1, 0.1, 0.1, 0.1, 0.6]
    task = GameTask(FIB, START)
    weights = [1.0] * 5
    names = [f"agent_{i + 1}" for i in range(5)]
    for rnd in range(1, 4):
        reports = {}
        for c in d.calls:
            if c.phase == "commit" and c.round == rnd:
                obj = last_object_with(c.texts[0], "belief", "prediction")
                norm = {}
                for key in ("belief", "prediction"):
                    dist = {task.text(task.parse(k)): float(v) for k, v in obj[key].items()}
                    total = sum(dist.values())
                    norm[key] = {k: v / total for k, v in dist.items()}
                reports[c.agent] = norm
        beliefs = [reports[n]["belief"] for n in names]
        scores = [
            brier_score(reports[n]["prediction"], [b for j, b in enumerate(beliefs) if j != i])
            for i, n in enumerate(names)
        ]
        weights = update_weights(weights, scores, 2.0)
        logged = d.extra["acemad"]["rounds"][rnd - 1]
        assert [logged["weights"][n] for n in names] == weights
    final = aggregate(weights, beliefs)
    top = max(final.values())
    assert final[d.answer_text] == top
    # Every call of the decision reached the server and vice versa.
    assert sorted(c.texts[0] for c in d.calls) == sorted(r["answers"][0] for r in log)


def test_faults_counted_exactly(server) -> None:
    totals = {"unparsable": 0, "illegal": 0}
    for seed in range(20):
        d, log = decide(
            server, "react:max_reasks=3", model="sim-faulty:malformed=0.4,illegal=0.3", seed=seed
        )
        faults = [r["faults"][0] for r in log]
        assert d.unparsable == faults.count("malformed")
        assert d.illegal == faults.count("illegal")
        assert d.n_calls == len(log)
        for record, fault in zip(log[1:], faults[:-1], strict=True):
            feedback = user_text(record)
            expected = "could not be read" if fault == "malformed" else "is not allowed"
            assert expected in feedback
        totals["unparsable"] += d.unparsable
        totals["illegal"] += d.illegal
    assert totals["unparsable"] > 0 and totals["illegal"] > 0


def test_http_errors_are_retried_not_counted(server) -> None:
    d, _ = decide(server, "react", model="sim-optimal:burst429=2")
    assert d.status == "ok" and d.n_calls == 1 and d.unparsable == d.illegal == 0


def test_question_tasks(tmp_path) -> None:
    # The simulator knows the answers from the question file, never from the prompt.
    path = tmp_path / "q.jsonl"
    rows = [
        {"id": "q", "question": "Pick one.", "choices": ["w", "x", "y", "z"], "answer": "C"},
        {"id": "n", "question": "What is 6*7?", "answer": 42, "type": "numeric"},
        {"id": "f", "question": "What is 1/2 + 1/4?", "answer": "\\frac{3}{4}"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    mc, num, frac = (QuestionTask(q) for q in load_questions(path))
    with SimServer(questions=[path]) as srv:
        d, _log = decide(srv, "mad:agents=3", task=mc)
        assert d.answer == "C" and mc.is_correct(d.move)
        d, _ = decide(srv, "sc:n=3", task=num)
        assert d.answer == "42" and num.is_correct(d.move)
        d, _ = decide(srv, "acemad:agents=3,rounds=1", task=mc)
        assert d.answer == "C"
        d, _ = decide(srv, "cross:models=sim-optimal|sim-optimal", task=frac)
        assert frac.is_correct(d.move) and d.rounds[-1] == {
            "model_1": "\\frac{3}{4}",
            "model_2": "\\frac{3}{4}",
        }


def test_llm_policy_as_env_opponent_and_agent(server) -> None:
    import metanim.envs  # noqa: F401 - registers the envs

    factory = lambda name: make_client(f"{name}@{server.base_url}", api_key="sim")  # noqa: E731
    opponent = LLMPolicy(build_method("react:sim-optimal", client_factory=factory))
    agent = LLMPolicy(build_method("cot:sim-optimal", client_factory=factory))
    env_id = next(k for k in gym.registry if "Fibonacci" in k or "fibonacci" in k)
    env = gym.make(env_id, opponent=opponent)
    # A fixed N-position start, so the opponent surely moves (a sampled one may end at once).
    env.reset(seed=3, options={"state": [20, 19]})
    done, steps = False, 0
    game = env.unwrapped.game
    while not done:
        state = env.unwrapped._state
        decision = agent.act(game, state, seed=steps)
        _obs, reward, done, _, _info = env.step(game.action_id(decision.move))
        steps += 1
    assert reward == 1.0  # optimal play from an N-position wins
    assert opponent.decisions and all(d.status == "ok" for d in opponent.decisions)
    assert len(agent.decisions) == steps
    opponent.close()
    agent.close()
    assert parse_reply(GameTask(FIB, START), "2").answer == 2


def test_failed_call_lets_its_siblings_settle_and_records_them(server) -> None:
    """One call of a round fails: the others finish and all answered calls are recorded."""
    from metanim.agents import DecisionInfrastructureError

    raised = 0
    for seed in range(6):
        server.reset_log()

        async def go(seed: int = seed):
            client = make_client(
                f"sim-faulty:http500=0.3@{server.base_url}", api_key="sim", max_retries=0
            )
            method = build_method("sc:n=8", "unused", client_factory=lambda _name: client)
            try:
                return await method.decide(GameTask(FIB, START), seed=seed)
            finally:
                await client.aclose()

        try:
            d = asyncio.run(go())
        except DecisionInfrastructureError as exc:
            raised += 1
            d = exc.decision
            assert d.status == "infrastructure_error"
        log = server.log
        answered = [r for r in log if r["status"] == 200]
        assert len(log) == 8  # every sample was sent once, none left running
        assert d.n_calls == len(answered)
        assert sorted(c.texts[0] for c in d.calls) == sorted(r["answers"][0] for r in answered)
        assert d.usage.total_tokens == sum(c.usage.total_tokens for c in d.calls) > 0
        assert sorted(c.seed for c in d.calls) == sorted(r["seed"] for r in answered)
    assert raised > 0


# ---------------------------------------------------------------- metanim play
def _play(argv: list[str]) -> int:
    import argparse

    from metanim.cli._arena import play, play_arguments

    parser = argparse.ArgumentParser()
    play_arguments(parser)
    args = parser.parse_args(argv)
    args.argv = argv
    return play(args)


def test_play_starts_the_simulator_for_sim_models(monkeypatch, capsys) -> None:
    # Nothing listens here: only the in-process simulator can answer.
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    argv = ["--game", "fibonacci-20", "--agent", "react", "--model", "sim-optimal"]
    assert _play([*argv, "--opponent", "react:sim-random"]) == 0
    out = capsys.readouterr().out
    assert "winner: agent" in out and "1. agent" in out


def test_play_keeps_the_transcript_on_an_infrastructure_error(capsys) -> None:
    argv = ["--game", "fibonacci-20", "--agent", "react", "--model", "sim-faulty:quota=1.0"]
    assert _play([*argv, "--opponent", "react:sim-optimal", "--second"]) == 3
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert any("1. opponent" in line for line in lines)  # the move played before the error
    assert not any("2. agent" in line for line in lines)
    # The server answered (a quota refusal): the line names no unreachable model.
    assert "interrupted: agent's model call failed at move 2" in captured.out
    assert "could not be reached" not in captured.out
    assert "quota" in captured.err


def test_play_refuses_a_terminal_start(capsys) -> None:
    from metanim.arena import TournamentConfig, play_game

    argv = ["--game", "fibonacci-20", "--agent", "react", "--model", "sim-optimal"]
    with pytest.raises(ValueError, match="terminal: nothing to play"):
        _play([*argv, "--start", "[0, 0]"])
    assert capsys.readouterr().out == ""
    config = TournamentConfig(games=["fibonacci-20"], method="react", start="[0, 0]")
    with pytest.raises(ValueError, match="terminal"):
        play_game(config)


def test_llm_policy_lists_the_legal_moves_when_asked(server) -> None:
    from metanim.games import LEGAL_MOVES_HEADING, PROMPT_VERSION

    factory = lambda name: make_client(f"{name}@{server.base_url}", api_key="sim")  # noqa: E731
    state = (5, 3)  # 5 stones, at most 3 this turn: 1, 2 and 3 are the legal takes
    for list_moves, shown in ((True, f"\n{LEGAL_MOVES_HEADING} 1, 2, 3"), (False, None)):
        policy = LLMPolicy(
            build_method("react:sim-optimal", client_factory=factory), list_moves=list_moves
        )
        decision = policy.act(FIB, state, seed=0)
        policy.close()
        (prompt,) = [
            m["content"] for c in decision.calls for m in c.messages if m["role"] == "user"
        ]
        assert decision.status == "ok" and FIB.is_legal(state, decision.move)
        if shown is None:
            assert LEGAL_MOVES_HEADING not in prompt
            assert decision.game_prompt_version == PROMPT_VERSION
        else:
            assert shown + "\n" in prompt
            assert decision.game_prompt_version == PROMPT_VERSION + "+listed-moves"
