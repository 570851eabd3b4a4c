"""A call's options: the method's own, with the phase's completion cap, in every decision
(the capped options are made once per method and cap), and the method's options as they
are when the decision runs, where a caller replaces them between decisions."""

from __future__ import annotations

import asyncio

from metanim.agents import ReAct
from metanim.games import make_game
from metanim.llm import CallOptions, Completion

NIM = make_game("nim", heaps=[7], max_take=3)


class Recording:
    """A `ChatModel` double answering move 1, keeping the options of each call."""

    def __init__(self) -> None:
        self.options: list[CallOptions] = []

    @property
    def model(self) -> str:
        return "recording"

    async def chat(self, messages, *, temperature=0.0, n=1, seed=None, sample_index=0,
                   max_tokens=None, options=None):  # fmt: skip
        self.options.append(options)
        text = '```json\n{"reasoning": "one", "action": 1}\n```'
        return Completion(model="recording", texts=[text], finish_reasons=["stop"])


def test_every_decision_sends_and_records_the_phase_cap_and_the_current_options():
    client = Recording()
    method = ReAct(client, options={"top_p": 0.9}, phase_max_tokens={"answer": 100})
    first = asyncio.run(method.decide(NIM, (7,), seed=1))
    second = asyncio.run(method.decide(NIM, (6,), seed=2))
    method.options = CallOptions(top_p=0.5, stop=["END"])
    third = asyncio.run(method.decide(NIM, (5,), seed=3))
    sent = [(o.max_tokens, o.top_p, o.stop) for o in client.options]
    assert sent == [(100, 0.9, None), (100, 0.9, None), (100, 0.5, ["END"])]
    recorded = [d.calls[0].options for d in (first, second, third)]
    assert [(r["max_tokens"], r["top_p"], r["stop"]) for r in recorded] == sent
    assert recorded[0] == recorded[1] and recorded[0] is not recorded[1]
