"""Debate phases against a scripted `ChatModel` double: a free-text phase cut at the cap
is counted, a debate whose agents all failed round 0 stops, AceMAD's prompts show a
placeholder belief and its arguments get a cap that leaves room for three rounds."""

from __future__ import annotations

import asyncio
import re

import pytest

from metanim.agents import MAD, AceMAD
from metanim.games import make_game
from metanim.llm import Completion

pytestmark = pytest.mark.usefixtures("fresh_probes")


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
