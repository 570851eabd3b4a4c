"""Observation encodings of the envs: `"raw"`, `"onehot"`, `"binary"` and `"index"`.

The raw observation of a game (`Game.observation`) is a small integer array:
NIM heap sizes, Fibonacci `[remaining, max_take]`, Kayles and Chomp 0/1 grids,
Corner Queen `[row, col]`. An MLP reads such integers as magnitudes, which
hides the arithmetic structure the games are about (NIM with max take k is
decided by the heap size mod k + 1). The other two encodings turn each integer
into 0/1 features, element by element, in the raw array's C order, and
concatenate them into one flat `MultiBinary` vector:

* `"onehot"`: an element whose values lie in `[0, h]` becomes `h + 1`
  indicators, the one at its value set; except a 0/1 element (`h = 1`, every
  Kayles/Chomp cell), which is already its own indicator and stays one feature,
  so onehot of a grid is the flattened grid.
* `"binary"`: an element in `[0, h]` becomes `max(h.bit_length(), 1)` bits,
  most significant bit first (a 0/1 element stays one bit).

The bound `h` of each element, per game:

| game | raw | bound of each element |
|---|---|---|
| NIM | heap sizes | each heap `[0, capacity]` (the largest initial heap) |
| Fibonacci | `[remaining, max_take]` | `[0, n]` and `[0, n - 1]` |
| Kayles | rows × longest row, 0/1 (cells past a row's end are 0) | `[0, 1]` |
| Chomp | rows × cols, 0/1 | `[0, 1]` |
| Corner Queen | `[row, col]` | `[0, height - 1]` and `[0, width - 1]` |

A game this module does not know uses `info.observation_high` for every element.

`"index"` is the game's state index (`Game.state_index`, read off the raw
observation by `Game.observation_index`) in a `Discrete(game.num_states)` space: one
integer per state, for tabular methods. It needs `num_states` within int64.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from metanim.games import Game, SizeLimitError, check_int64_states

#: The accepted values of the env's `observation=` argument.
OBSERVATIONS = ("raw", "onehot", "binary", "index")
# Encoded single observations kept per encoder: 65,536 vectors of at most a few
# hundred bytes each (Kayles-20 has 2**20 states; the memo stops growing, it still encodes).
_MEMO_LIMIT = 65_536
# Features of a one-hot observation (h + 1 per element): past this, arrays of GBs.
MAX_ONEHOT_WIDTH = 10_000_000


def element_highs(game: Game[Any, Any]) -> np.ndarray:
    """The largest value of each element of `game.observation(...)` (its shape, int64).

    Tighter than `info.observation_high` where the rules give a tighter bound
    (Fibonacci's max take, Corner Queen's two sides), so no feature is always 0.
    """
    info = game.info
    highs = np.full(info.observation_shape, info.observation_high, dtype=np.int64)
    params = info.params
    if info.name == "fibonacci":
        # The max take never exceeds n - 1: the first move may not take the whole pile.
        highs[:] = [params["n"], params["n"] - 1]
    elif info.name == "corner_queen":
        highs[:] = [params["height"] - 1, params["width"] - 1]
    return highs


def masked_space(space: spaces.Space[Any], num_actions: int) -> spaces.Dict:
    """The observation space with the legal actions inside (`mask_in_obs=True`).

    PettingZoo's classic layout, `Dict(observation=..., action_mask=...)`, but with a
    bool mask (`Box(0, 1, (num_actions,), bool)`): torchrl's `ActionMask` transform
    reads the mask as a bool tensor and refuses int8.
    """
    mask = spaces.Box(low=0, high=1, shape=(num_actions,), dtype=np.bool_)
    return spaces.Dict({"observation": space, "action_mask": mask})


class ObservationEncoder:
    """Maps raw observations to one encoding; also builds its observation space.

    `encoder(raw)` accepts one raw observation (shape `info.observation_shape`) or
    a batch of them (leading axes kept), so a batched env can share it.

    Args:
        game: The game whose `observation()` is encoded.
        kind: `"raw"`, `"onehot"` or `"binary"`.
    """

    def __init__(self, game: Game[Any, Any], kind: str) -> None:
        if kind not in OBSERVATIONS:
            raise ValueError(f"observation must be one of {OBSERVATIONS}, got {kind!r}")
        info = game.info
        self.kind = kind
        self.game = game
        self.raw_shape: tuple[int, ...] = tuple(info.observation_shape)
        if kind == "index":
            check_int64_states(game, "observation='index'", "use 'raw', 'onehot' or 'binary'")
        highs = element_highs(game).reshape(-1)
        self.highs = highs
        # Output feature j reads raw element _source[j] and compares it with
        # _target[j] (onehot) or takes its bit _shift[j] (binary): a gather and one
        # vectorised comparison, the same for one observation or a batch.
        if kind == "onehot":
            widths = np.where(highs == 1, 1, highs + 1)
            if int(widths.sum()) > MAX_ONEHOT_WIDTH:
                raise SizeLimitError(
                    f"a one-hot observation of {game!r} has {int(widths.sum()):,} features "
                    f"(the limit is {MAX_ONEHOT_WIDTH:,}); use observation='binary' or 'raw'"
                )
            self._source = np.repeat(np.arange(highs.size), widths)
            starts = np.repeat(np.cumsum(widths) - widths, widths)
            slot = np.arange(widths.sum()) - starts
            self._target = np.where(highs[self._source] == 1, 1, slot)
        elif kind == "binary":
            widths = np.array([max(int(h).bit_length(), 1) for h in highs])
            self._source = np.repeat(np.arange(highs.size), widths)
            starts = np.repeat(np.cumsum(widths) - widths, widths)
            self._shift = widths[self._source] - 1 - (np.arange(widths.sum()) - starts)
        self._memo: dict[bytes, np.ndarray] = {}
        if kind == "raw":
            self.space: spaces.Space[Any] = spaces.Box(
                low=0, high=info.observation_high, shape=self.raw_shape, dtype=np.int64
            )
        elif kind == "index":
            self.space = spaces.Discrete(game.num_states)
        else:
            self.space = spaces.MultiBinary(int(self._source.size))

    def __call__(self, raw: np.ndarray) -> np.ndarray:
        if self.kind == "raw":
            return raw
        if self.kind == "index":
            # One observation gives an int64 scalar (what `Discrete` holds), a batch an array.
            index = self.game.observation_index(raw)
            return index[()] if index.ndim == 0 else index
        if np.ndim(raw) == len(self.raw_shape):
            # One observation (an env step): a few numpy calls cost several times the
            # raw observation itself, so a bounded memo of encoded vectors serves
            # repeated states; the copy keeps the memo safe from callers' edits.
            key = np.asarray(raw).tobytes()
            hit = self._memo.get(key)
            if hit is None:
                hit = self._encode(raw)
                if len(self._memo) < _MEMO_LIMIT:
                    self._memo[key] = hit
            return hit.copy()
        return self._encode(raw)

    def _encode(self, raw: np.ndarray) -> np.ndarray:
        flat = np.asarray(raw).reshape(*np.shape(raw)[: np.ndim(raw) - len(self.raw_shape)], -1)
        picked = flat[..., self._source]
        if self.kind == "onehot":
            return (picked == self._target).astype(np.int8)
        return ((picked >> self._shift) & 1).astype(np.int8)
