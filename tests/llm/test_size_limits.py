"""The simulated server at sizes past int64: it plays heaps past uint64 optimally (Nim has
a closed form) and refuses with a 400 a position whose moves it cannot list."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from metanim.games import make_game
from metanim.llm import InfrastructureError, OpenAIChatClient
from tests.oracles import take_k_winning
from tests.replies import FORMAT

BIG = 2**64  # one past the largest uint64; a multiple of 4


def ask(server, content: str, **kwargs):
    client = OpenAIChatClient("sim-optimal", base_url=server.base_url, backoff_s=0.001)
    return asyncio.run(client.chat([{"role": "user", "content": content}], **kwargs))


@pytest.mark.parametrize(
    "heaps", [(BIG + 1,), (BIG + 2,), (BIG + 3,), (BIG + 2, 2**70 + 1), (5, BIG * 3 + 1, 2)]
)
def test_the_simulator_plays_heaps_past_uint64_optimally(sim_server, heaps) -> None:
    game = make_game("nim", heaps=list(heaps), max_take=3)
    state = tuple(heaps)
    expected = take_k_winning(state, 3)
    assert expected  # each case is an N-position
    reply = ask(sim_server, game.prompt(state) + FORMAT, n=6, seed=1, temperature=1.0)
    for text in reply.texts:
        action = json.loads(re.search(r"```json\n(.*?)\n```", text, re.DOTALL).group(1))["action"]
        assert game.parse_move(json.dumps(action), state) in expected


def test_the_simulator_refuses_a_position_it_cannot_list_with_a_400(sim_server) -> None:
    game = make_game("fibonacci", n=10**20)
    with pytest.raises(InfrastructureError, match=r"HTTP 400.*lists every move") as caught:
        ask(sim_server, game.prompt(game.initial_state()) + FORMAT)
    assert "100,000,000,000,000,000,000 actions" in str(caught.value)
    sim_server.reset_log()
    with pytest.raises(InfrastructureError):  # a 400 is the request's fault: no retry
        ask(sim_server, game.prompt(game.initial_state()) + FORMAT)
    assert [r["status"] for r in sim_server.log] == [400]
