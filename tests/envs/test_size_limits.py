"""Envs at sizes past what their arrays hold: each refuses with a one-line reason before
doing any work (never numpy's `OverflowError`, a listing of 10**20 moves, or a random
playout that does not end), and just inside each limit an env works."""

from __future__ import annotations

import re
import warnings

import gymnasium as gym
import pytest

import metanim  # noqa: F401 - registers the envs
from metanim.envs.env import MAX_PLAYOUT_MOVES
from metanim.games import MAX_LISTED_ACTIONS, SizeLimitError

BIG = 2**64  # one past the largest uint64; a multiple of 4


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
    with pytest.raises(ValueError, match=r"plays Nim.*100,004 moves.*initial state"):
        env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a P-position start warns; that is not the point
        env = gym.make("MetaNIM/Nim-v0", game_params=long_game, start="initial")
        obs, *_ = env.reset(seed=0)
    assert obs.tolist() == [MAX_PLAYOUT_MOVES + 4]
    # Within both limits alone, but 50,000 moves of 99,999 actions each is 5e9 listed.
    wide = gym.make("MetaNIM/Kayles-v0", rows=[50_000])
    with pytest.raises(ValueError, match=r"listing each position's moves.*initial state"):
        wide.reset(seed=0)
    short = {"heaps": [MAX_PLAYOUT_MOVES - 4], "max_take": 3}
    obs, _ = gym.make("MetaNIM/Nim-v0", game_params=short, start="random_n").reset(seed=0)
    assert 0 < obs[0] < MAX_PLAYOUT_MOVES - 4 and obs[0] % 4 != 0  # an N-position


def test_a_onehot_observation_is_bounded() -> None:
    with pytest.raises(SizeLimitError, match=r"one-hot observation.*binary"):
        gym.make("MetaNIM/Nim-v0", game_params={"heaps": [10**12 + 1], "max_take": 3},
                 observation="onehot", start="initial")  # fmt: skip
    env = gym.make("MetaNIM/Nim-v0", game_params={"heaps": [10**12 + 1], "max_take": 3},
                   observation="binary", start="initial")  # fmt: skip
    obs, _ = env.reset(seed=0)
    assert obs.size == (10**12 + 1).bit_length()


def _batch_peak(game: str, obs: str, num_envs: int) -> tuple[int, bool]:
    """Peak bytes allocated to build a batch, reset it and play eight steps (each step's
    results dropped before the next), measured by tracemalloc; and whether a board
    ended (so `final_obs` was built)."""
    import tracemalloc

    import numpy as np

    from metanim.envs import vector

    warm = vector.ImpartialGameVectorEnv(game, num_envs=1, observation=obs)
    warm.step(np.argmax(warm.reset(seed=0)[1]["action_mask"], axis=1))  # compile first
    ended = False
    tracemalloc.start()
    try:
        env = vector.ImpartialGameVectorEnv(game, num_envs=num_envs, observation=obs)
        mask = env.reset(seed=0)[1]["action_mask"]
        for _ in range(8):
            # Each board's highest legal action id (the largest take in Nim), so that
            # games end within a few steps; a reversed view allocates nothing per action.
            acts = mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)
            del mask
            info = env.step(acts)[4]
            ended = ended or "final_obs" in info
            mask = info.pop("action_mask")
            del info
        del mask
        return tracemalloc.get_traced_memory()[1], ended
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_a_batch_of_boards_past_the_memory_limit_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from metanim.envs import vector

    with pytest.raises(SizeLimitError, match="MAX_BATCH_BYTES"):
        vector.ImpartialGameVectorEnv("nim", num_envs=10**12)  # numpy: 7 TiB MemoryError
    limit = 4 << 20
    cases = [("nim", "raw"), ("kayles", "raw"), ("kayles", "onehot"), ("chomp", "binary")]
    cases += [("corner_queen", "raw"), ("fibonacci", "onehot")]  # kayles: bit masks, others: tables
    for game, obs in cases:
        monkeypatch.setattr(vector, "MAX_BATCH_BYTES", limit)
        with pytest.raises(SizeLimitError) as refused:
            vector.ImpartialGameVectorEnv(game, num_envs=10**9, observation=obs)
        most = int(re.search(r"at most ([\d,]+) boards", str(refused.value))[1].replace(",", ""))
        with pytest.raises(SizeLimitError):
            vector.ImpartialGameVectorEnv(game, num_envs=most + 1, observation=obs)
        # What the boards really take (over one board: the tables are per game, not per
        # board) stays under the limit the refusal names.
        (peak, ended), (base, _) = _batch_peak(game, obs, most), _batch_peak(game, obs, 1)
        assert ended, (game, obs)
        assert 0 < peak - base <= limit, (game, obs, peak - base)
