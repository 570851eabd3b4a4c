"""The env's `observation=` encodings decode back to the raw observation.

The decoder and the per-game bounds below are written from the definitions in
`metanim.envs.observations` (docs/envs.md), not from its code: each encoded
observation of a random state is read back element by element and compared
with the raw env's observation of the same state.
"""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import metanim  # noqa: F401  (registers the ids)
from metanim.envs.observations import ObservationEncoder

# (id, kwargs): every registered id at its defaults, plus sizes at the encodings'
# edges: a bound of 0 or 1, bounds just below and at a power of two, ragged rows.
CASES: list[tuple[str, dict[str, Any]]] = [
    ("MetaNIM/Nim-v0", {}),
    ("MetaNIM/Nim-v0", {"heaps": [3, 4, 5], "max_take": None}),
    ("MetaNIM/Nim-v0", {"heaps": [1, 1], "max_take": None}),
    ("MetaNIM/Nim-v0", {"heaps": [2]}),
    ("MetaNIM/Nim-v0", {"heaps": [32, 7], "max_take": 4}),
    ("MetaNIM/Fibonacci-v0", {}),
    ("MetaNIM/Fibonacci-v0", {"n": 2}),
    ("MetaNIM/Fibonacci-v0", {"n": 33}),
    ("MetaNIM/Kayles-v0", {}),
    ("MetaNIM/Kayles-v0", {"rows": [3, 5]}),
    ("MetaNIM/Chomp-v0", {}),
    ("MetaNIM/Chomp-v0", {"rows": 2, "cols": 8}),
    ("MetaNIM/CornerQueen-v0", {}),
    ("MetaNIM/CornerQueen-v0", {"game_params": {"height": 3, "width": 9, "start": [0, 8]}}),
    ("MetaNIM/CornerQueen-v0", {"game_params": {"height": 1, "width": 2, "start": [0, 1]}}),
]
IDS = [f"{env_id}-{kw}" for env_id, kw in CASES]


def bounds(game: Any) -> list[int]:
    """The largest value of each raw element, in C order, from each game's rules."""
    name, p = game.info.name, game.info.params
    if name == "nim":
        return [max(p["heaps"])] * len(p["heaps"])  # any heap may hold up to the largest
    if name == "fibonacci":
        return [p["n"], p["n"] - 1]  # remaining stones; the max take is below n
    if name == "kayles":
        return [1] * (len(p["rows"]) * max(p["rows"]))
    if name == "chomp":
        return [1] * (p["rows"] * p["cols"])
    if name == "corner_queen":
        return [p["height"] - 1, p["width"] - 1]
    raise AssertionError(name)


def decode_onehot(vector: np.ndarray, highs: list[int]) -> list[int]:
    values, at = [], 0
    for h in highs:
        if h == 1:  # a 0/1 element is its own indicator
            assert vector[at] in (0, 1)
            values.append(int(vector[at]))
            at += 1
        else:
            block = vector[at : at + h + 1]
            assert len(block) == h + 1 and sorted(block.tolist()) == [0] * h + [1]
            values.append(int(np.flatnonzero(block)[0]))
            at += h + 1
    assert at == len(vector), "features left over"
    return values


def decode_binary(vector: np.ndarray, highs: list[int]) -> list[int]:
    values, at = [], 0
    for h in highs:
        width = max(len(bin(h)) - 2, 1)  # the number of binary digits of h
        bits = vector[at : at + width].tolist()
        assert len(bits) == width and set(bits) <= {0, 1}
        values.append(int("".join(str(b) for b in bits), 2))  # most significant first
        at += width
    assert at == len(vector), "features left over"
    return values


def random_states(game: Any, rng: np.random.Generator, count: int) -> list[Any]:
    """Valid states drawn straight from each game's state definition (not only reachable ones)."""
    name, p = game.info.name, game.info.params
    states: list[Any] = []
    for _ in range(count):
        if name == "nim":
            cap = max(p["heaps"])
            states.append([int(rng.integers(0, cap + 1)) for _ in p["heaps"]])
        elif name == "fibonacci":
            n = p["n"]
            remaining = int(rng.integers(0, n + 1))
            top = min(remaining, n - 1)
            states.append([remaining, int(rng.integers(1, top + 1)) if remaining else 0])
        elif name == "kayles":
            states.append(["".join(rng.choice(["0", "1"], size=r)) for r in p["rows"]])
        elif name == "chomp":
            first = int(rng.integers(1, p["cols"] + 1))  # the poisoned square stays
            rows = sorted(rng.integers(0, first + 1, size=p["rows"] - 1).tolist(), reverse=True)
            states.append([first, *rows])
        else:
            states.append([int(rng.integers(0, p["height"])), int(rng.integers(0, p["width"]))])
    return states


def as_tuples(value: Any) -> Any:
    return tuple(as_tuples(v) for v in value) if isinstance(value, list) else value


def paired_observations(env_id: str, kwargs: dict[str, Any], kind: str) -> list[tuple[Any, Any]]:
    """(raw, encoded) observations of the same states from two envs driven alike."""
    raw_env = gym.make(env_id, opponent="random", **kwargs).unwrapped
    enc_env = gym.make(env_id, opponent="random", observation=kind, **kwargs).unwrapped
    game = raw_env.game
    rng = np.random.default_rng(7)
    pairs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # P-position starts are fine here
        for state in random_states(game, rng, 60):
            if game.is_terminal(game.validate_state(as_tuples(state))):
                continue
            a, _ = raw_env.reset(seed=0, options={"state": state})
            b, _ = enc_env.reset(seed=0, options={"state": state})
            pairs.append((a, b))
    # Trajectories, terminal states included, under random legal actions.
    obs_a, info = raw_env.reset(seed=3)
    obs_b, _ = enc_env.reset(seed=3)
    for _ in range(80):
        pairs.append((obs_a, obs_b))
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs_a, _, done, _, info = raw_env.step(action)
        obs_b, _, done_b, _, _ = enc_env.step(action)
        assert done == done_b
        if done:
            pairs.append((obs_a, obs_b))
            obs_a, info = raw_env.reset()
            obs_b, _ = enc_env.reset()
    return pairs


@pytest.mark.parametrize(("env_id", "kwargs"), CASES, ids=IDS)
@pytest.mark.parametrize("kind", ["onehot", "binary"])
def test_encoding_decodes_to_raw(env_id: str, kwargs: dict[str, Any], kind: str) -> None:
    env = gym.make(env_id, observation=kind, **kwargs)
    highs = bounds(env.unwrapped.game)
    space = env.observation_space
    assert isinstance(space, gym.spaces.MultiBinary)
    decode = decode_onehot if kind == "onehot" else decode_binary
    pairs = paired_observations(env_id, kwargs, kind)
    assert len(pairs) > 60
    for raw, encoded in pairs:
        assert encoded.dtype == np.int8 and encoded in space
        assert decode(encoded, highs) == raw.reshape(-1).tolist()


def test_sizes_from_the_definition() -> None:
    # NIM-31: 32 indicators or 5 bits; Fibonacci-20: 21 + 20 indicators, 5 + 5 bits;
    # Corner Queen 20x20: 20 + 20 indicators, 5 + 5 bits; grids stay one feature a cell.
    expected = {
        "MetaNIM/Nim-v0": (32, 5),
        "MetaNIM/Fibonacci-v0": (41, 10),
        "MetaNIM/Kayles-v0": (20, 20),
        "MetaNIM/Chomp-v0": (25, 25),
        "MetaNIM/CornerQueen-v0": (40, 10),
    }
    for env_id, (onehot, binary) in expected.items():
        assert gym.make(env_id, observation="onehot").observation_space.n == onehot
        assert gym.make(env_id, observation="binary").observation_space.n == binary
        raw = gym.make(env_id).observation_space
        assert isinstance(raw, gym.spaces.Box) and raw.dtype == np.int64


def test_raw_is_unchanged_default() -> None:
    a, b = gym.make("MetaNIM/Nim-v0"), gym.make("MetaNIM/Nim-v0", observation="raw")
    assert a.observation_space == b.observation_space == gym.spaces.Box(0, 31, (1,), np.int64)
    assert a.reset(seed=5)[0].tolist() == b.reset(seed=5)[0].tolist()


@pytest.mark.parametrize("kind", ["onehot", "binary"])
def test_batch_encoding_matches_one_at_a_time(kind: str) -> None:
    env = gym.make("MetaNIM/Kayles-v0", rows=[3, 5]).unwrapped
    encoder = ObservationEncoder(env.game, kind)
    rng = np.random.default_rng(1)
    raws = rng.integers(0, 2, size=(4, 3, *env.observation_space.shape))
    batch = encoder(raws)
    assert batch.shape == (4, 3, encoder.space.n)
    for i in range(4):
        for j in range(3):
            assert np.array_equal(batch[i, j], encoder(raws[i, j]))


@pytest.mark.parametrize("bad", ["one-hot", "RAW", None, 1])
def test_unknown_encoding_is_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="observation must be one of"):
        gym.make("MetaNIM/Nim-v0", observation=bad)


def test_editing_a_returned_observation_changes_no_later_one() -> None:
    env = gym.make("MetaNIM/Nim-v0", observation="onehot")
    first, _ = env.reset(seed=0, options={"state": [9]})
    first[:] = 0  # a caller may write into its observation
    again, _ = env.reset(seed=0, options={"state": [9]})
    assert np.flatnonzero(again).tolist() == [9]
