"""MAD's consensus stop and sparse topology, per-agent temperatures, cross-model's played
answer, and the elicitation stage on Self-Refine/Self-Consistency, seen over real HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from metanim.agents import build_method, make_client
from metanim.agents.tasks import GameTask
from metanim.games import make_game
from metanim.llm.sim import SimServer

FIB = make_game("fibonacci-20")
START = FIB.initial_state()


@pytest.fixture(scope="module")
def server():
    with SimServer() as srv:
        yield srv


def decide(server: SimServer, spec: str, model: str = "sim-optimal", seed: int = 0):
    clients: list[Any] = []

    def factory(name: str):
        client = make_client(f"{name}@{server.base_url}", api_key="sim", max_retries=6)
        clients.append(client)
        return client

    async def go():
        method = build_method(spec, model, client_factory=factory)
        try:
            return await method.decide(GameTask(FIB, START), seed=seed)
        finally:
            for c in clients:
                await c.aclose()

    return asyncio.run(go())


def test_consensus_stop_off_runs_every_round(server) -> None:
    # Optimal agents agree at once: with the stop on, one round; off, all 3 + 1.
    on = decide(server, "mad:agents=2,rounds=3")
    off = decide(server, "mad:agents=2,rounds=3,consensus_stop=false")
    assert len(on.rounds) == 1 and on.extra["stopped_early"] == 1
    assert len(off.rounds) == 4 and "stopped_early" not in off.extra
    assert len(off.calls) == 8


def test_sparse_topology_shows_only_k_peers(server) -> None:
    d = decide(server, "mad:agents=4,rounds=1,peers=1,consensus_stop=false", model="sim-random")
    assert d.extra["peers"] == {
        "agent_1": ["agent_2"],
        "agent_2": ["agent_3"],
        "agent_3": ["agent_4"],
        "agent_4": ["agent_1"],
    }
    for call in (c for c in d.calls if c.round == 1):
        text = call.messages[-1]["content"]
        k = int(call.agent[-1])
        seen = {j for j in range(1, 5) if f"Agent {j}:" in text}
        assert seen == {k % 4 + 1}
    with pytest.raises(ValueError, match="peers must be between 1 and agents - 1"):
        decide(server, "mad:agents=3,peers=3")


def test_per_agent_temperatures(server) -> None:
    d = decide(server, "mad:agents=2,rounds=1,temperatures=0|0.7,consensus_stop=false")
    temps = {(c.agent, c.round): c.temperature for c in d.calls}
    assert temps == {("agent_1", 0): 0.0, ("agent_2", 0): 0.7, ("agent_1", 1): 0.0,
                     ("agent_2", 1): 0.7}  # fmt: skip
    x = decide(server, "cross:models=sim-optimal|sim-random,temperatures=0|0.7")
    assert {c.agent: c.temperature for c in x.calls} == {"model_1": 0.0, "model_2": 0.7}


def test_cross_model_plays_the_first_models_revised_answer(server) -> None:
    # model_1 optimal, model_2 random: the played answer is model_1's, never a coin flip.
    for seed in range(4):
        d = decide(server, "cross:models=sim-optimal|sim-random", seed=seed)
        assert d.answer_text == d.rounds[-1]["model_1"] and d.extra["played"] == "model_1"
        assert not d.tie_breaks
    second = decide(server, "cross:models=sim-optimal|sim-random,play=2", seed=1)
    assert second.answer_text == second.rounds[-1]["model_2"]


@pytest.mark.parametrize(
    ("spec", "answers"), [("sc:n=3,elicit=true", 3), ("refine:elicit=true", 7)]
)
def test_elicitation_composes_with_sc_and_refine(server, spec: str, answers: int) -> None:
    d = decide(server, spec)
    phases = [c.phase for c in d.calls]
    assert phases[:3] == ["reinterpret", "strategy", "rewrite"]
    assert len(d.calls) == 3 + answers
    refined = d.extra["elicitation"]["prompts"][0]
    for call in d.calls[3:]:
        # The refined prompt replaces the initial prompt (seed 000 §4.2).
        assert call.messages[0]["role"] == "user" and refined in call.messages[0]["content"]
    plain = decide(server, spec.split(",")[0] if "," in spec else spec.split(":")[0])
    assert "elicitation" not in plain.extra
