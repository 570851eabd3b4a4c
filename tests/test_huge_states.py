"""States past int64 and games with astronomically many moves, through every layer.

The rules and the solver take any size (Nim has a closed form), so each layer above
them either answers right or refuses with a one-line reason before doing any work:
never an `OverflowError` from numpy, a listing of 10**20 moves, or a random playout
that does not end.
"""

from __future__ import annotations

import asyncio
import json
import re
import warnings

import gymnasium as gym
import pytest

import metanim  # noqa: F401 - registers the envs
from metanim.arena.tournament import TournamentConfig, _check_listing, _solve_start, run_tournament
from metanim.envs.env import MAX_PLAYOUT_MOVES
from metanim.games import MAX_LISTED_ACTIONS, SizeLimitError, make_game
from metanim.llm import InfrastructureError, OpenAIChatClient

BIG = 2**64  # one past the largest uint64; a multiple of 4
FORMAT = '\n#Output Format: ```json\n{"reasoning": "...", "action": <value>}\n```'


def take_k_winning(heaps: tuple[int, ...], k: int) -> set[tuple[int, int]]:
    """Winning moves of Nim with takes of 1..k, from the proven closed form (the Grundy
    value of a heap is its size mod k+1), by brute force over the moves: no solver."""
    out = set()
    for i, h in enumerate(heaps):
        for take in range(1, min(h, k) + 1):
            after = [*heaps[:i], h - take, *heaps[i + 1 :]]
            xor = 0
            for a in after:
                xor ^= a % (k + 1)
            if xor == 0:
                out.add((i, take))
    return out


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


def test_envs_refuse_what_their_arrays_cannot_hold() -> None:
    with pytest.raises(SizeLimitError, match=r"action mask.*the limit is 100,000"):
        gym.make("MetaNIM/Nim-v0", game_params={"heaps": [10**20], "max_take": None})
    with pytest.raises(SizeLimitError, match="int64"):
        gym.make("MetaNIM/Nim-v0", game_params={"heaps": [BIG], "max_take": 3})
    with pytest.raises(SizeLimitError, match="action mask"):
        gym.make("MetaNIM/Fibonacci-v0", n=MAX_LISTED_ACTIONS + 2)
    # Just inside both limits an env works.
    env = gym.make("MetaNIM/Fibonacci-v0", n=MAX_LISTED_ACTIONS + 1, start="initial")
    _, info = env.reset(seed=0)
    assert info["action_mask"].shape == (MAX_LISTED_ACTIONS,)


def test_a_random_start_is_refused_for_a_game_too_long_to_play_out() -> None:
    long_game = {"heaps": [MAX_PLAYOUT_MOVES + 4], "max_take": 3}  # a P-position
    env = gym.make("MetaNIM/Nim-v0", game_params=long_game, start="random_n")
    with pytest.raises(ValueError, match=r"plays Nim.*100,004 moves.*start='initial'"):
        env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a P-position start warns; that is not the point
        env = gym.make("MetaNIM/Nim-v0", game_params=long_game, start="initial")
        obs, *_ = env.reset(seed=0)
    assert obs.tolist() == [MAX_PLAYOUT_MOVES + 4]
    short = {"heaps": [MAX_PLAYOUT_MOVES - 4], "max_take": 3}
    obs, _ = gym.make("MetaNIM/Nim-v0", game_params=short, start="random_n").reset(seed=0)
    assert 0 < obs[0] < MAX_PLAYOUT_MOVES - 4 and obs[0] % 4 != 0  # an N-position


def test_a_tournament_refuses_a_huge_setting_before_any_episode(tmp_path) -> None:
    huge = '{"heaps":[100000000000000000000],"max_take":3}'  # 10**20 % 4 == 0: a P-position
    config = TournamentConfig(
        games=[f"nim:{huge}"], method="react", model="sim-optimal", opponent="optimal",
        episodes=2, seat="alternate", progress=False, results_dir=str(tmp_path),
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"nim:\{.*a random start plays .*start='initial'"):
        run_tournament(config)
    assert not any(p.stat().st_size for p in tmp_path.rglob("*.jsonl"))
    # The agent moving second keeps the initial P-position: nothing to play out.
    game = make_game("nim", heaps=[10**20], max_take=3)
    _solve_start("k", game, "auto", {"second"})
    with pytest.raises(ValueError, match="a random start"):
        _solve_start("k", game, "auto", {"first"})
    with pytest.raises(ValueError, match="a random start"):
        _solve_start("k", game, "random_n", {"second"})
    wide = make_game("nim", heaps=[10**20], max_take=None)
    with pytest.raises(SizeLimitError, match="the simulated model lists every move"):
        _check_listing("k", wide, simulated=True, fallback="forfeit")
    with pytest.raises(SizeLimitError, match="on_failure='random'"):
        _check_listing("k", wide, simulated=False, fallback="random")
    _check_listing("k", wide, simulated=False, fallback="forfeit")  # a real model may play it
