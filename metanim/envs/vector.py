"""`ImpartialGameVectorEnv`: B boards of one game stepped at once in numba.

Two ways to hold the boards, both built from the rules (`metanim.games`):

* Kayles of at most `KAYLES_MAX_PINS` (24) pins in all rows, normal or misère
  (`kayles-20` included, whose 2**20 states are all reachable): a state is the bit
  mask of its standing pins, rows concatenated. Legal moves, children, action masks
  and observations are bit operations in the kernels; outcomes (P/N) come from one
  byte per mask, filled by a numba pass over all 2**pins masks in increasing order
  (a child always has fewer pins, so a smaller mask). Nothing is listed per state
  in Python.
* Every other game (and larger Kayles): its reachable states are enumerated once
  into tables: observation, action mask, child state per action, legal and winning
  actions (the latter from the solver, `metanim.envs._solve`), outcome. A step is
  then table lookups.

Either way a step is one compiled loop over the B boards: the agent's move, the
built-in opponent's reply, rewards, autoreset and the next masks. Moves are
enumerated in action-id order, the order of `Game.legal_moves` and of the solver's
winning moves, so a random index picks the same move as in the single env.

Randomness comes from the counter-based per-episode stream of
`metanim.envs._stream`, which `ImpartialGameEnv` also uses: sub-env `i` after
`reset(seed=s)` plays exactly the episodes of `ImpartialGameEnv(...).reset(seed=s + i)`
followed by unseeded `reset()` calls, given the same actions.

Supported: the built-in opponents ("optimal", "random", "epsilon:<p>"), both seats,
`illegal="lose"`, the start modes "random_n", "auto", "initial" or a state, the
observation encodings "raw", "onehot" and "binary" (`metanim.envs.observations`,
applied to the whole batch), and tabled games with at most `max_states` reachable
states (every other preset fits: the largest, corner-queen, has 272).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numba as nb
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from metanim.envs import _solve
from metanim.envs.env import SEATS, START_MODES, _as_state, _build_game, warn_unwinnable_start
from metanim.envs.observations import ObservationEncoder, masked_space
from metanim.envs.opponents import (
    EpsilonOptimalOpponent,
    OptimalOpponent,
    RandomOpponent,
    make_opponent,
)
from metanim.games import Game, Kayles, SizeLimitError

_MASK64 = (1 << 64) - 1
_G = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S32, _S11 = (np.uint64(v) for v in (30, 27, 31, 32, 11))
_ONE = np.uint64(1)
_MAX_START_TRIES = 1000
_RANDOM, _OPTIMAL, _EPSILON = 0, 1, 2
_AUTORESET_MODES = (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP)
#: Most bytes the per-board arrays of one batch may take: the kernels' state, one
#: step's observations and action masks. Past it numpy would fail deep inside reset().
MAX_BATCH_BYTES = 4 << 30
# `gym.make_vec(id, num_envs=B)` picks this env by default (it is the vector entry point).
_HINT = '; gym.make_vec(..., vectorization_mode="sync") runs any setting'


@nb.njit(cache=True, inline="always")
def _mix(z: np.uint64) -> np.uint64:  # pragma: no cover - compiled
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@nb.njit(cache=True, inline="always")
def _episode_key(seed: np.uint64, episode: np.int64) -> np.uint64:  # pragma: no cover
    return _mix(_mix(seed + _G) + np.uint64(episode + 1) * _G)


@nb.njit(cache=True, inline="always")
def _integers(key: np.uint64, count: np.int64, n: np.int64) -> np.int64:  # pragma: no cover
    word = _mix(key + np.uint64(count) * _G)
    return np.int64(((word >> _S32) * np.uint64(n)) >> _S32)


@nb.njit(cache=True, inline="always")
def _random(key: np.uint64, count: np.int64) -> float:  # pragma: no cover
    word = _mix(key + np.uint64(count) * _G)
    return float(word >> _S11) * (1.0 / 9007199254740992.0)


@nb.njit(cache=True, inline="always")
def _reply(i, s, keys, counts, tab, opp_kind, epsilon):  # pragma: no cover
    """The built-in opponent's action at `s`, drawn as `ImpartialGameEnv._builtin_reply`."""
    legal_ptr, legal_act, win_ptr, win_act = tab[0], tab[1], tab[2], tab[3]
    key = keys[i]
    use_random = opp_kind == _RANDOM
    if opp_kind == _EPSILON:
        counts[i] += 1
        use_random = _random(key, counts[i]) < epsilon
    counts[i] += 1
    nwin = win_ptr[s + 1] - win_ptr[s]
    if use_random or nwin == 0:
        n = legal_ptr[s + 1] - legal_ptr[s]
        return legal_act[legal_ptr[s] + _integers(key, counts[i], n)]
    return win_act[win_ptr[s] + _integers(key, counts[i], nwin)]


@nb.njit(cache=True, inline="always")
def _start(
    i, seeds, episodes, keys, counts, start_index, tab, opp_kind, epsilon, opp_first, trail, cand
):  # pragma: no cover
    """Begin env `i`'s episode `episodes[i]` (its key, no draws yet); its state at the
    agent's first decision.

    `start_index`, or sampled like `sample_start` (a playout from state 0, the initial
    state, then a uniform pick among its `wanted` states); then, with the opponent
    first, its reply. -1: no wanted state found; -2: the opponent's reply ended the game.
    """
    keys[i] = _episode_key(seeds[i], episodes[i])
    counts[i] = 0
    legal_ptr, legal_act, child, wanted = tab[0], tab[1], tab[4], tab[5]
    s = start_index
    if s < 0:
        key = keys[i]
        for _ in range(_MAX_START_TRIES):
            s = 0
            length = 0
            while legal_ptr[s + 1] > legal_ptr[s]:
                trail[length] = s
                length += 1
                counts[i] += 1
                pick = _integers(key, counts[i], legal_ptr[s + 1] - legal_ptr[s])
                s = child[s, legal_act[legal_ptr[s] + pick]]
            found = 0
            for j in range(length):
                if wanted[trail[j]]:
                    cand[found] = trail[j]
                    found += 1
            if found > 0:
                counts[i] += 1
                s = cand[_integers(key, counts[i], found)]
                break
            s = -1
        if s < 0:
            return -1
    if opp_first:
        s = child[s, _reply(i, s, keys, counts, tab, opp_kind, epsilon)]
        if legal_ptr[s + 1] == legal_ptr[s]:
            return -2
    return s


@nb.njit(cache=True, inline="always")
def _end_board(i, done, elapsed, pending, truncated, max_steps, next_step):  # pragma: no cover
    """Count board `i`'s step against the time limit (`max_steps`, 0: none) and say
    whether its next episode starts now: same-step autoreset after a termination or
    truncation; with `next_step`, the board is marked and restarts on the next step,
    as Gymnasium's `TimeLimit` and `AutoresetMode.NEXT_STEP` do in a sync vector env."""
    elapsed[i] += 1
    trunc = max_steps > 0 and elapsed[i] >= max_steps
    truncated[i] = trunc
    if not (done or trunc):
        return False
    if next_step:
        pending[i] = True
        return False
    elapsed[i] = 0
    return True


@nb.njit(cache=True)
def _reset_all(
    seeds, episodes, keys, counts, cur, start_index, tab, opp_kind, epsilon, opp_first, max_len
):  # pragma: no cover
    trail = np.empty(max_len + 1, np.int64)
    cand = np.empty(max_len + 1, np.int64)
    for i in range(cur.shape[0]):
        cur[i] = _start(
            i, seeds, episodes, keys, counts, start_index, tab, opp_kind, epsilon, opp_first,
            trail, cand,
        )  # fmt: skip


@nb.njit(cache=True)
def _step(
    actions,
    seeds,
    episodes,
    keys,
    counts,
    cur,
    start_index,
    tab,
    opp_kind,
    epsilon,
    opp_first,
    max_len,
    mover_wins_at_terminal,
    rewards,
    terminated,
    final_state,
    ends,
):  # pragma: no cover
    """One agent step of every board; `ends` holds the autoreset and time-limit arrays
    (`_end_board`)."""
    legal_ptr, child = tab[0], tab[4]
    num_actions = child.shape[1]
    trail = np.empty(max_len + 1, np.int64)
    cand = np.empty(max_len + 1, np.int64)
    elapsed, pending, truncated, max_steps, next_step = ends
    for i in range(cur.shape[0]):
        if pending[i]:  # next-step autoreset: this step only starts the next episode
            pending[i] = False
            elapsed[i] = 0
            episodes[i] += 1
            s = _start(
                i, seeds, episodes, keys, counts, start_index, tab, opp_kind, epsilon,
                opp_first, trail, cand,
            )  # fmt: skip
            rewards[i] = 0.0
            terminated[i] = False
            truncated[i] = False
            final_state[i] = s
            cur[i] = s
            continue
        s = cur[i]
        a = actions[i]
        done = False
        reward = 0.0
        if a < 0 or a >= num_actions or child[s, a] < 0:
            done = True  # an illegal action loses (illegal="lose")
            reward = -1.0
        else:
            s = child[s, a]
            if legal_ptr[s + 1] == legal_ptr[s]:
                done = True  # the agent moved last
                reward = -1.0 if mover_wins_at_terminal else 1.0
            else:
                s = child[s, _reply(i, s, keys, counts, tab, opp_kind, epsilon)]
                if legal_ptr[s + 1] == legal_ptr[s]:
                    done = True  # the opponent moved last
                    reward = 1.0 if mover_wins_at_terminal else -1.0
        rewards[i] = reward
        terminated[i] = done
        final_state[i] = s
        if _end_board(i, done, elapsed, pending, truncated, max_steps, next_step):
            episodes[i] += 1
            s = _start(
                i, seeds, episodes, keys, counts, start_index, tab, opp_kind, epsilon,
                opp_first, trail, cand,
            )  # fmt: skip
        cur[i] = s


@nb.njit(cache=True)
def _rows(table, index):  # pragma: no cover
    """`table[index]` for a 2-D table (NumPy's fancy indexing is slower on small rows)."""
    out = np.empty((index.shape[0], table.shape[1]), table.dtype)
    for i in range(index.shape[0]):
        out[i] = table[index[i]]
    return out


# --------------------------------------------------------------- Kayles on bit masks
# A Kayles state is the int64 bit mask of its standing pins, rows concatenated (row r
# at bits off[r]..off[r] + rows[r] - 1, pin i of row r at bit off[r] + i). A move
# clears bit p (width 1) or bits p and p + 1 (width 2, where `pairs` has bit p: the two
# pins are in one row). Increasing p is increasing action id (`Kayles.action_id`), so
# moves enumerated by bit come in `legal_moves` order and the k-th legal or winning
# move is the one the single env's k-th list entry would be.

#: Most pins (all rows together) for the Kayles bit-mask path: its outcome table has
#: 2**pins bytes (16 MiB at 24); past it Kayles goes through the state tables.
KAYLES_MAX_PINS = 24


@nb.njit(cache=True)
def _kayles_outcomes(num_bits, pairs, misere):  # pragma: no cover
    """`out[m]` = 1 where the player to move at mask `m` wins (an N-position), else 0.

    Every child of `m` is a smaller number, so one pass in increasing order sees every
    child solved. The empty board is a P-position in normal play, N in misère (the
    player who cannot move has won).
    """
    out = np.zeros(np.int64(1) << num_bits, np.uint8)
    out[0] = 1 if misere else 0
    for m in range(1, out.shape[0]):
        rest = m
        while rest:
            low = rest & -rest
            rest ^= low
            if out[m ^ low] == 0 or (
                (pairs & low) and (m & (low << 1)) and out[m ^ low ^ (low << 1)] == 0
            ):
                out[m] = 1
                break
    return out


@nb.njit(cache=True, inline="always")
def _kayles_num_legal(m, pairs):  # pragma: no cover
    """Number of legal moves at mask `m`: every standing pin, every standing adjacent pair."""
    count = 0
    both = m & (m >> 1) & pairs
    while m:
        m &= m - 1
        count += 1
    while both:
        both &= both - 1
        count += 1
    return count


@nb.njit(cache=True, inline="always")
def _kayles_child(m, k, pairs):  # pragma: no cover
    """The mask after the k-th legal move at `m`, in action-id order (`legal_moves[k]`)."""
    rest = m
    while rest:
        low = rest & -rest
        rest ^= low
        if k == 0:
            return m ^ low
        k -= 1
        if (pairs & low) and (m & (low << 1)):
            if k == 0:
                return m ^ low ^ (low << 1)
            k -= 1
    return -1


@nb.njit(cache=True, inline="always")
def _kayles_winning(m, pairs, outcome, out):  # pragma: no cover
    """The masks after the winning moves at `m` (to P-positions), in action-id order (the
    solver's `winning_moves` order), written to `out`; returns how many."""
    count = 0
    rest = m
    while rest:
        low = rest & -rest
        rest ^= low
        c = m ^ low
        if outcome[c] == 0:
            out[count] = c
            count += 1
        if (pairs & low) and (m & (low << 1)):
            c ^= low << 1
            if outcome[c] == 0:
                out[count] = c
                count += 1
    return count


@nb.njit(cache=True, inline="always")
def _kayles_reply(i, m, keys, counts, pairs, outcome, opp_kind, epsilon, wins):  # pragma: no cover
    """The mask after the built-in opponent's move at `m`, drawn as `_reply` does
    (`wins`: scratch for the winning children)."""
    key = keys[i]
    use_random = opp_kind == _RANDOM
    if opp_kind == _EPSILON:
        counts[i] += 1
        use_random = _random(key, counts[i]) < epsilon
    counts[i] += 1
    if not use_random:
        nwin = _kayles_winning(m, pairs, outcome, wins)
        if nwin > 0:
            return wins[_integers(key, counts[i], nwin)]
    return _kayles_child(m, _integers(key, counts[i], _kayles_num_legal(m, pairs)), pairs)


@nb.njit(cache=True, inline="always")
def _kayles_wanted(m, outcome, opp_first):  # pragma: no cover
    """Whether `m` is a start `sample_start` accepts: an N-position for the agent; with
    the opponent first, a P-position from which no move ends the game."""
    if not opp_first:
        return outcome[m] == 1
    # Only one pin or two adjacent pins can be cleared at once, and two adjacent pins
    # are an N-position in both plays: the only P-position a move ends is one pin
    # (misère).
    return outcome[m] == 0 and (m & (m - 1)) != 0


@nb.njit(cache=True, inline="always")
def _kayles_start(
    i,
    seeds,
    episodes,
    keys,
    counts,
    start_mask,
    full,
    pairs,
    outcome,
    opp_kind,
    epsilon,
    opp_first,
    trail,
    wins,
):  # pragma: no cover
    """`_start` on masks: begin episode `episodes[i]`; the state at the agent's first
    decision, -1 or -2 as there.

    `trail` and `wins` are scratch arrays."""
    keys[i] = _episode_key(seeds[i], episodes[i])
    counts[i] = 0
    m = start_mask
    if m < 0:
        key = keys[i]
        for _ in range(_MAX_START_TRIES):
            m = full
            length = 0
            while m:
                trail[length] = m
                length += 1
                counts[i] += 1
                m = _kayles_child(m, _integers(key, counts[i], _kayles_num_legal(m, pairs)), pairs)
            found = 0
            for j in range(length):  # compact the wanted states to the front
                if _kayles_wanted(trail[j], outcome, opp_first):
                    trail[found] = trail[j]
                    found += 1
            if found > 0:
                counts[i] += 1
                m = trail[_integers(key, counts[i], found)]
                break
            m = -1
        if m < 0:
            return -1
    if opp_first:
        m = _kayles_reply(i, m, keys, counts, pairs, outcome, opp_kind, epsilon, wins)
        if m == 0:
            return -2
    return m


@nb.njit(cache=True)
def _kayles_reset_all(
    seeds,
    episodes,
    keys,
    counts,
    cur,
    start_mask,
    full,
    pairs,
    outcome,
    opp_kind,
    epsilon,
    opp_first,
):  # pragma: no cover
    trail = np.empty(KAYLES_MAX_PINS + 1, np.int64)
    wins = np.empty(2 * KAYLES_MAX_PINS, np.int64)
    for i in range(cur.shape[0]):
        cur[i] = _kayles_start(
            i, seeds, episodes, keys, counts, start_mask, full, pairs, outcome, opp_kind,
            epsilon, opp_first, trail, wins,
        )  # fmt: skip


@nb.njit(cache=True)
def _kayles_step(
    actions,
    seeds,
    episodes,
    keys,
    counts,
    cur,
    start_mask,
    full,
    pairs,
    outcome,
    clears,
    opp_kind,
    epsilon,
    opp_first,
    mover_wins_at_terminal,
    rewards,
    terminated,
    final_state,
    ends,
):  # pragma: no cover
    """`_step` on masks; `clears[a]` is the pins action `a` knocks down (0: no such pins)."""
    trail = np.empty(KAYLES_MAX_PINS + 1, np.int64)
    wins = np.empty(2 * KAYLES_MAX_PINS, np.int64)
    elapsed, pending, truncated, max_steps, next_step = ends
    for i in range(cur.shape[0]):
        if pending[i]:  # next-step autoreset: this step only starts the next episode
            pending[i] = False
            elapsed[i] = 0
            episodes[i] += 1
            m = _kayles_start(
                i, seeds, episodes, keys, counts, start_mask, full, pairs, outcome, opp_kind,
                epsilon, opp_first, trail, wins,
            )  # fmt: skip
            rewards[i] = 0.0
            terminated[i] = False
            truncated[i] = False
            final_state[i] = m
            cur[i] = m
            continue
        m = cur[i]
        a = actions[i]
        done = False
        reward = 0.0
        if a < 0 or a >= clears.shape[0] or clears[a] == 0 or (m & clears[a]) != clears[a]:
            done = True  # an illegal action loses (illegal="lose")
            reward = -1.0
        else:
            m ^= clears[a]
            if m == 0:
                done = True  # the agent moved last
                reward = -1.0 if mover_wins_at_terminal else 1.0
            else:
                m = _kayles_reply(i, m, keys, counts, pairs, outcome, opp_kind, epsilon, wins)
                if m == 0:
                    done = True  # the opponent moved last
                    reward = 1.0 if mover_wins_at_terminal else -1.0
        rewards[i] = reward
        terminated[i] = done
        final_state[i] = m
        if _end_board(i, done, elapsed, pending, truncated, max_steps, next_step):
            episodes[i] += 1
            m = _kayles_start(
                i, seeds, episodes, keys, counts, start_mask, full, pairs, outcome, opp_kind,
                epsilon, opp_first, trail, wins,
            )  # fmt: skip
        cur[i] = m


@nb.njit(cache=True)
def _kayles_views(masks, pairs, cell_of_bit, num_cells):  # pragma: no cover
    """(int8 action masks, int64 raw observations flattened) of a batch of bit masks.

    Pin bit p is flattened observation cell `cell_of_bit[p]` (row * width + pin), and
    its actions are 2 * cell (the pin) and 2 * cell + 1 (it and the next pin).
    """
    b = masks.shape[0]
    legal = np.zeros((b, 2 * num_cells), np.int8)
    obs = np.zeros((b, num_cells), np.int64)
    for i in range(b):
        m = masks[i]
        both = m & (m >> 1) & pairs
        rest = m
        p = 0
        while rest:
            if rest & 1:
                cell = cell_of_bit[p]
                obs[i, cell] = 1
                legal[i, 2 * cell] = 1
                legal[i, 2 * cell + 1] = (both >> p) & 1
            rest >>= 1
            p += 1
    return legal, obs


class _KaylesBits:
    """What the Kayles kernels need: move masks per action, pair bits, outcome table."""

    def __init__(self, rows: Sequence[int], width: int, misere: bool) -> None:
        offsets = np.concatenate([[0], np.cumsum(rows)[:-1]]).astype(np.int64)
        self.num_bits = int(sum(rows))
        self.full = (1 << self.num_bits) - 1
        self.pairs = 0
        self.clears = np.zeros(len(rows) * width * 2, np.int64)
        self.num_cells = len(rows) * width
        self.cell_of_bit = np.zeros(self.num_bits, np.int64)
        for r, (size, off) in enumerate(zip(rows, offsets, strict=True)):
            for i in range(size):
                p = int(off) + i
                self.cell_of_bit[p] = r * width + i
                self.clears[(r * width + i) * 2] = 1 << p
                if i + 1 < size:
                    self.pairs |= 1 << p
                    self.clears[(r * width + i) * 2 + 1] = 3 << p
        self.outcome = _kayles_outcomes(self.num_bits, self.pairs, misere)

    def mask_of(self, state: tuple[str, ...]) -> int:
        """The bit mask of a validated Kayles state (rows concatenated, pin 0 lowest)."""
        bits = "".join(state)
        return sum(1 << p for p, cell in enumerate(bits) if cell == "1")


def _check_batch_bytes(
    num_envs: int, encode: ObservationEncoder, num_actions: int, mask_in_obs: bool
) -> None:
    """Refuse a batch whose per-board arrays would pass `MAX_BATCH_BYTES`, naming the size,
    before the (possibly long) table build."""
    features = int(np.prod(encode.space.shape))
    obs = features * np.dtype(encode.space.dtype).itemsize
    raw = int(np.prod(encode.raw_shape)) * 8
    # An upper bound of what the env holds per board, in bytes:
    state = 11 * 8 + 8  # eleven int64/bool state arrays, reset()'s seeds
    batched_spaces = 8 + 2 * obs + 2 * features  # action counts; a Box's bounds and flags
    # A step's observations and, when a board ends, `final_obs`: encoded and raw int64
    # observations and int8 masks, twice.
    step = 2 * (obs + raw + num_actions * (2 if mask_in_obs else 1))
    encoding = 0 if encode.kind == "raw" else 9 * features  # the int64 cells it reads, a bool each
    per_board = state + batched_spaces + step + encoding
    need = num_envs * per_board
    if need > MAX_BATCH_BYTES:
        raise SizeLimitError(
            f"num_envs={num_envs:,} boards need about {need / 2**20:,.0f} MiB "
            f"({per_board:,} bytes each with this observation); the limit is "
            f"{MAX_BATCH_BYTES / 2**20:,.0f} MiB (metanim.envs.vector.MAX_BATCH_BYTES): "
            f"at most {MAX_BATCH_BYTES // per_board:,} boards"
        )


class _Tables:
    """Every state reachable from `roots`, with what a step needs of each."""

    def __init__(self, game: Game[Any, Any], roots: list[Any], max_states: int) -> None:
        index: dict[Any, int] = {}
        states: list[Any] = []
        frontier = []
        for root in roots:
            if root not in index:
                index[root] = len(states)
                states.append(root)
                frontier.append(root)
        legal: list[list[Any]] = []
        edges: list[list[tuple[int, Any]]] = []
        i = 0
        while i < len(states):
            state = states[i]
            moves = game.legal_moves(state)
            legal.append(moves)
            row = []
            for move in moves:
                nxt = game._apply(state, move)
                j = index.get(nxt)
                if j is None:
                    if len(states) >= max_states:
                        bits = (
                            f"; Kayles of at most {KAYLES_MAX_PINS} pins in all runs on bit masks"
                            if isinstance(game, Kayles)
                            else ""
                        )
                        raise ValueError(
                            f"{game!r} has more than max_states={max_states:,} reachable states; "
                            "the batched env tables every state (pass a larger max_states)"
                            + bits
                            + _HINT
                        )
                    j = index[nxt] = len(states)
                    states.append(nxt)
                row.append((j, move))
            edges.append(row)
            i += 1
        info = game.info
        count, num_actions = len(states), info.num_actions
        self.index = index
        self.states = states
        self.obs = np.stack([game.observation(s) for s in states]).astype(np.int64)
        self.obs_flat = np.ascontiguousarray(self.obs.reshape(count, -1))
        self.mask = np.zeros((count, num_actions), np.int8)
        self.child = np.full((count, num_actions), -1, np.int64)
        self.legal_ptr = np.zeros(count + 1, np.int64)
        self.win_ptr = np.zeros(count + 1, np.int64)
        legal_act: list[int] = []
        win_act: list[int] = []
        self.is_n = np.zeros(count, np.bool_)
        for k, (moves, row) in enumerate(zip(legal, edges, strict=True)):
            for j, move in row:
                a = game.action_id(move)
                self.mask[k, a] = 1
                self.child[k, a] = j
                legal_act.append(a)
            self.legal_ptr[k + 1] = len(legal_act)
            if moves:
                self.is_n[k] = _solve.outcome(game, states[k]) == "N"
                win_act.extend(game.action_id(m) for m in _solve.winning_moves(game, states[k]))
            self.win_ptr[k + 1] = len(win_act)
        self.legal_act = np.asarray(legal_act, np.int64)
        self.win_act = np.asarray(win_act, np.int64)
        terminal = self.legal_ptr[1:] == self.legal_ptr[:-1]
        # P-positions from which no move ends the game: the opponent's sampled starts
        # (`sample_start` with mover_wins=False).
        ends = (self.child >= 0) & terminal[np.maximum(self.child, 0)]
        self.p_ok = ~terminal & ~self.is_n & ~ends.any(axis=1)


class ImpartialGameVectorEnv(VectorEnv):
    """`num_envs` boards of one MetaNIM game against a built-in opponent, stepped in numba.

    Each sub-env behaves as `ImpartialGameEnv` with the same arguments (the agent is
    always to move; a step is the agent's move and the opponent's reply; +1/-1 at
    the end; an illegal action loses).

    Autoreset (`metadata["autoreset_mode"]`): `"same_step"` (the default): a finished
    board's returned observation is already its next episode's first one, and the
    final one is in `infos["final_obs"]` where `infos["_final_obs"]` is true.
    `"next_step"` (Gymnasium's default for vector envs; its vector observation
    wrappers need it): a finished board returns its final observation (with that
    state's mask: all zeros at a game's end), and the next `step` ignores its action,
    starts its next episode and returns that episode's first observation with reward
    0 and both flags false, as `gym.make_vec(..., vectorization_mode="sync")` does.
    `max_episode_steps` truncates an episode after that many agent steps
    (`truncated`, as Gymnasium's `TimeLimit`, which `gym.make_vec` applies in the
    sync and async modes).

    `infos["action_mask"]` is the (num_envs, num_actions) int8 mask of the returned
    observations; `action_masks()` gives it as bool (MaskablePPO's convention).
    `reset(seed=s)` seeds sub-env `i` with `s + i` (a list gives one seed each).

    Args:
        game: a game name or `Game`, as for `ImpartialGameEnv`.
        num_envs: the number of boards B.
        preset, game_params, misere, start, **params: as for `ImpartialGameEnv`.
        opponent: "optimal", "random" or "epsilon:<p>".
        seat: "first" or "second" (the opponent moves first, inside reset and autoreset).
        illegal: only "lose".
        max_states: the most reachable states to table (not used by Kayles of at most
            `KAYLES_MAX_PINS` pins, which runs on bit masks).
        observation: "raw", "onehot" or "binary", as for `ImpartialGameEnv`.
        mask_in_obs: observations as `{"observation", "action_mask"}` dicts, as for
            `ImpartialGameEnv`.
        autoreset_mode: "same_step" or "next_step" (or the `AutoresetMode`).
        max_episode_steps: truncate an episode after this many steps (None: never).
    """

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        game: str | Game[Any, Any] = "nim",
        num_envs: int = 1,
        *,
        preset: str | None = None,
        game_params: Mapping[str, Any] | None = None,
        misere: bool | None = None,
        opponent: str = "optimal",
        start: Any = None,
        seat: str = "first",
        illegal: str = "lose",
        max_states: int = 200_000,
        observation: str = "raw",
        mask_in_obs: bool = False,
        autoreset_mode: str | AutoresetMode = AutoresetMode.SAME_STEP,
        max_episode_steps: int | None = None,
        **params: Any,
    ) -> None:
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"num_envs must be a whole number >= 1, got {num_envs!r}")
        # "same_step"/"next_step", the enum, or its value ("SameStep"/"NextStep").
        mode = next(
            (m for m in _AUTORESET_MODES if autoreset_mode in (m, m.value, m.name.lower())), None
        )
        if mode is None:
            raise ValueError(
                f"autoreset_mode must be 'same_step' or 'next_step', got {autoreset_mode!r}"
            )
        if max_episode_steps is not None and (
            not isinstance(max_episode_steps, int)
            or isinstance(max_episode_steps, bool)
            or max_episode_steps < 1
        ):
            raise ValueError(
                f"max_episode_steps must be a whole number >= 1 or None, got {max_episode_steps!r}"
            )
        # Per instance: Gymnasium's vector wrappers read the mode from here.
        self.metadata = {"autoreset_mode": mode}
        self.autoreset_mode = mode
        self.max_episode_steps = max_episode_steps
        if seat not in SEATS:
            raise ValueError(f"seat must be one of {SEATS}, got {seat!r}")
        if illegal != "lose":
            raise ValueError(
                f"the batched env supports illegal='lose' only, got {illegal!r}{_HINT}"
            )
        if not isinstance(opponent, str):
            raise TypeError(
                "the batched env takes a built-in opponent name ('optimal', 'random', "
                f"'epsilon:<p>'), got {type(opponent).__name__}{_HINT}"
            )
        self.game: Game[Any, Any] = _build_game(game, preset, game_params, misere, params)
        policy = make_opponent(opponent)
        self._epsilon = 0.0
        if isinstance(policy, RandomOpponent):
            self._opp_kind = _RANDOM
        elif isinstance(policy, OptimalOpponent):
            self._opp_kind = _OPTIMAL
        else:
            assert isinstance(policy, EpsilonOptimalOpponent)
            self._opp_kind, self._epsilon = _EPSILON, float(policy.epsilon)
        self.opponent = opponent

        game_ = self.game
        initial = game_.initial_state()
        if start is None:
            start = "auto" if preset is not None else "random_n"
        fixed = None
        if not (isinstance(start, str) and start in ("random_n", "auto")):
            if isinstance(start, str) and start not in START_MODES:
                raise ValueError(f"start must be one of {START_MODES} or a state, got {start!r}")
            fixed = initial if start == "initial" else game_.validate_state(_as_state(start))
            if game_.is_terminal(fixed):
                raise ValueError(f"the start state {fixed!r} is already over")
            warn_unwinnable_start(game_, fixed, mover_wins=seat == "first")
        self.seat = seat
        self._opp_first = seat == "second"
        info = game_.info
        # The observation in the single env's encoding, with its space.
        self._encode = ObservationEncoder(game_, observation)
        _check_batch_bytes(num_envs, self._encode, info.num_actions, bool(mask_in_obs))
        # Kayles up to KAYLES_MAX_PINS pins: states are bit masks, moves bit operations,
        # outcomes one byte per mask (every subset of pins is reachable: 2**20 states
        # for kayles-20, too many to list in Python). Any other game: state tables.
        self.kayles: _KaylesBits | None = None
        self.tables: _Tables | None = None
        self._start_index = -1
        if isinstance(game_, Kayles) and sum(game_.rows) <= KAYLES_MAX_PINS:
            self.kayles = k = _KaylesBits(game_.rows, game_.width, game_.misere)
            if fixed is not None:
                self._start_index = k.mask_of(fixed)
            elif start == "auto" and bool(k.outcome[k.full]) != self._opp_first:
                self._start_index = k.full
        else:
            roots = [initial] if fixed is None else [initial, fixed]
            self.tables = t = _Tables(game_, roots, max_states)
            # The agent's first decision is at an N-position: with the opponent first,
            # the opponent starts from a P-position (as in `resolve_start`).
            self._wanted = t.p_ok if self._opp_first else t.is_n
            if fixed is not None:
                self._start_index = t.index[fixed]
            elif start == "auto" and t.legal_ptr[1] > 0 and t.is_n[0] != self._opp_first:
                self._start_index = 0
            # Every state's observation, encoded once.
            self._obs_table = np.ascontiguousarray(self._encode(t.obs).reshape(len(t.states), -1))
        self._max_len = max(info.max_game_length, 1)
        self._mwat = bool(game_.mover_wins_at_terminal)

        self.num_envs = num_envs
        self.single_action_space = spaces.Discrete(info.num_actions)
        self.mask_in_obs = bool(mask_in_obs)
        self.single_observation_space = (
            masked_space(self._encode.space, info.num_actions)
            if self.mask_in_obs
            else self._encode.space
        )
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.observation_space = batch_space(self.single_observation_space, num_envs)

        self._seeds = np.zeros(num_envs, np.uint64)
        self._episodes = np.zeros(num_envs, np.int64)
        self._keys = np.zeros(num_envs, np.uint64)
        self._counts = np.zeros(num_envs, np.int64)
        self._cur = np.full(num_envs, -1, np.int64)
        self._rewards = np.zeros(num_envs, np.float64)
        self._terminated = np.zeros(num_envs, np.bool_)
        self._final = np.zeros(num_envs, np.int64)
        self._truncated = np.zeros(num_envs, np.bool_)
        self._elapsed = np.zeros(num_envs, np.int64)
        self._pending = np.zeros(num_envs, np.bool_)

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if options:
            raise ValueError(f"the batched env takes no reset options, got {sorted(options)}")
        if seed is None:
            seeds = np.random.SeedSequence().generate_state(self.num_envs, np.uint64)
        elif isinstance(seed, int):
            # (seed + i) mod 2**64 in uint64 arithmetic (it wraps): no list of B ints.
            seeds = np.uint64(seed & _MASK64) + np.arange(self.num_envs, dtype=np.uint64)
        else:
            if len(seed) != self.num_envs:
                raise ValueError(f"expected {self.num_envs} seeds, got {len(seed)}")
            fresh = np.random.SeedSequence().generate_state(self.num_envs, np.uint64)
            seeds = [int(fresh[i]) if s is None else int(s) & _MASK64 for i, s in enumerate(seed)]
        self._seeds[:] = seeds
        self._episodes[:] = 0
        self._elapsed[:] = 0
        self._pending[:] = False
        k = self.kayles
        if k is not None:
            _kayles_reset_all(
                *self._episode_arrays(),
                k.full,
                k.pairs,
                k.outcome,
                *self._opponent_args(),
            )
        else:
            _reset_all(
                *self._episode_arrays(),
                self._tab(),
                *self._opponent_args(),
                self._max_len,
            )
        self._check_starts()
        obs, mask = self._views(self._cur)
        return self._observe(obs, mask), {"action_mask": mask}

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self._cur[0] < 0:
            raise RuntimeError("call reset() before step()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or acts.dtype.kind not in "iu":
            raise ValueError(
                f"actions must be {self.num_envs} integer action ids, got shape {acts.shape} "
                f"dtype {acts.dtype}"
            )
        k = self.kayles
        if k is not None:
            _kayles_step(
                acts.astype(np.int64, copy=False),
                *self._episode_arrays(),
                k.full,
                k.pairs,
                k.outcome,
                k.clears,
                *self._opponent_args(),
                self._mwat,
                self._rewards,
                self._terminated,
                self._final,
                self._ends(),
            )
        else:
            _step(
                acts.astype(np.int64, copy=False),
                *self._episode_arrays(),
                self._tab(),
                *self._opponent_args(),
                self._max_len,
                self._mwat,
                self._rewards,
                self._terminated,
                self._final,
                self._ends(),
            )
        self._check_starts()
        obs, mask = self._views(self._cur)
        infos: dict[str, Any] = {"action_mask": mask}
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            ended = self._terminated | self._truncated
            if ended.any():
                infos["final_obs"] = self._observe(*self._views(self._final))
                infos["_final_obs"] = ended
        return (
            self._observe(obs, mask),
            self._rewards.copy(),
            self._terminated.copy(),
            self._truncated.copy(),
            infos,
        )

    def action_masks(self) -> np.ndarray:
        """The legal actions of every board as a (num_envs, num_actions) bool array."""
        return self._views(self._cur)[1].astype(bool)

    def _observe(self, obs: np.ndarray, mask: np.ndarray) -> Any:
        """The batch's observations; with `mask_in_obs`, with the masks inside (bool)."""
        if self.mask_in_obs:
            return {"action_mask": mask.astype(bool), "observation": obs}
        return obs

    def _views(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(encoded observations, int8 action masks) of a batch of states."""
        shape = (len(states), *self._encode.space.shape)
        if self.kayles is not None:
            k = self.kayles
            mask, raw = _kayles_views(states, k.pairs, k.cell_of_bit, k.num_cells)
            obs = self._encode(raw.reshape((len(states), *self._encode.raw_shape)))
            return obs.reshape(shape), mask
        assert self.tables is not None
        return _rows(self._obs_table, states).reshape(shape), _rows(self.tables.mask, states)

    def _episode_arrays(self) -> tuple[np.ndarray, ...]:
        """The kernels' per-board arrays: seeds, episode numbers, stream keys and counts,
        current states, and the fixed start (or -1)."""
        return (self._seeds, self._episodes, self._keys, self._counts, self._cur, self._start_index)

    def _ends(self) -> tuple[Any, ...]:
        """The kernels' episode ends: steps taken, boards to restart on the next step,
        truncation flags, the time limit (0: none) and whether autoreset is next-step."""
        return (
            self._elapsed,
            self._pending,
            self._truncated,
            self.max_episode_steps or 0,
            self.autoreset_mode == AutoresetMode.NEXT_STEP,
        )

    def _opponent_args(self) -> tuple[Any, ...]:
        """The kernels' opponent: its kind, epsilon, and whether it moves first."""
        return (self._opp_kind, self._epsilon, self._opp_first)

    def _tab(self) -> tuple[np.ndarray, ...]:
        t = self.tables
        assert t is not None
        return (t.legal_ptr, t.legal_act, t.win_ptr, t.win_act, t.child, self._wanted)

    def _check_starts(self) -> None:
        if self._cur.min() >= 0:
            return
        if (self._cur == -2).any():
            self._cur[:] = -1
            raise ValueError(
                "the opponent's first move ended the game (seat='second'); start from another state"
            )
        if (self._cur < 0).any():
            self._cur[:] = -1
            raise ValueError(
                f"found no N-position reachable from {self.game.initial_state()!r} in "
                f"{_MAX_START_TRIES} random playouts; pass start='initial' or a state"
            )


__all__ = ["KAYLES_MAX_PINS", "ImpartialGameVectorEnv"]
