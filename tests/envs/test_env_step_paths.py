"""The single env's step paths return the same thing: the graph of state nodes (a
built-in opponent, at most 512 actions), the state-by-state path every other setting
takes, and that path as a wide game takes it (no kept masks, records derived), seed for
seed, across illegal and text actions, resets to given states and the kept states
forgotten and rebuilt past their limit."""

from __future__ import annotations

import re
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import metanim  # noqa: F401  (registers the env ids)

CASES = [
    ("MetaNIM/Nim-v0", {}),
    ("MetaNIM/Nim-v0", {"heaps": [3, 9, 5], "max_take": None, "misere": True}),
    ("MetaNIM/Fibonacci-v0", {"opponent": "random"}),
    ("MetaNIM/Kayles-v0", {"rows": [4, 7], "opponent": "epsilon:0.3", "seat": "second"}),
    ("MetaNIM/Chomp-v0", {"rows": 4, "cols": 6, "misere": True}),
    ("MetaNIM/CornerQueen-v0", {"opponent": "random", "start": "initial"}),
]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


@pytest.mark.filterwarnings("ignore:the start")  # resets to P-positions on purpose
@pytest.mark.parametrize("limit", [None, 7], ids=["kept", "forgotten past 7 states"])
@pytest.mark.parametrize("path", ["states", "wide"])
@pytest.mark.parametrize(("env_id", "kwargs"), CASES)
def test_the_node_path_steps_as_the_state_path(
    env_id: str, kwargs: dict[str, Any], path: str, limit: int | None, monkeypatch
) -> None:
    nodes = gym.make(env_id, **kwargs)
    if path == "wide":  # as if the game had more actions than masks are kept for
        monkeypatch.setattr("metanim.envs.env._KEPT_MASK_ACTIONS", 0)
    states = gym.make(env_id, **kwargs)
    assert nodes.unwrapped._by_nodes
    assert states.unwrapped._keep_masks == (path == "states")
    states.unwrapped._by_nodes = False  # the path of callable opponents and wide games
    if limit is not None:
        nodes.unwrapped._record_limit = states.unwrapped._record_limit = limit
    rng = np.random.default_rng(0)
    game = nodes.unwrapped.game
    first = second = (None, None)
    for episode in range(40):
        options = None
        if episode % 5 == 4:  # a reset to a state met before
            options = {"state": game.to_json(nodes.unwrapped.state)}
        try:
            first = nodes.reset(seed=episode if episode % 3 == 0 else None, options=options)
        except ValueError as err:  # a start already over, or ended by the opponent
            with pytest.raises(ValueError, match=re.escape(str(err))):
                states.reset(seed=episode if episode % 3 == 0 else None, options=options)
            continue
        second = states.reset(seed=episode if episode % 3 == 0 else None, options=options)
        assert _same(first, second)
        for _ in range(60):
            mask = first[-1]["action_mask"]
            legal = np.flatnonzero(mask)
            roll = rng.random()
            if roll < 0.05:
                action: Any = int(np.flatnonzero(mask == 0)[0]) if not mask.all() else len(mask)
            elif roll < 0.1:  # an answer text
                action = game.move_text(game.move_from_action(int(rng.choice(legal))))
            else:
                action = int(rng.choice(legal))
            first, second = nodes.step(action), states.step(action)
            assert _same(first, second), action
            if first[2]:
                break
