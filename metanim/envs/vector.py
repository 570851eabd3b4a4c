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
built-in opponent's reply, rewards, autoreset and the observation and mask rows,
rewritten only where a board's state changed. The boards' fields are a structure of
arrays (`_st`, `_words`: one row per field), and the loop is compiled twice, once
serial and once over `numba.prange` (`num_threads`). Moves are enumerated in action-id
order, the order of `Game.legal_moves` and of the solver's winning moves, so a random
index picks the same move as in the single env.

Randomness comes from the counter-based per-episode stream of
`metanim.envs._stream`, which `ImpartialGameEnv` also uses: sub-env `i` after
`reset(seed=s)` plays exactly the episodes of `ImpartialGameEnv(...).reset(seed=s + i)`
followed by unseeded `reset()` calls, given the same actions.

Supported: the built-in opponents ("optimal", "random", "epsilon:<p>"), both seats,
`illegal="lose"`, the start modes "random_n", "auto", "initial" or a state, the
observation encodings "raw", "onehot", "binary" and "index" (`metanim.envs.observations`,
applied to the whole batch), and tabled games with at most `max_states` reachable
states (every other preset fits: the largest, corner-queen, has 272).
"""

from __future__ import annotations

import types
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from metanim.envs import _solve
from metanim.envs._starts import start_law
from metanim.envs._stream import _bits53, _episode_key, _integers, below
from metanim.envs.env import (
    SEATS,
    START_MODES,
    _as_state,
    _build_game,
    check_playout_length,
    no_start_error,
    warn_unwinnable_start,
)
from metanim.envs.observations import ObservationEncoder, masked_space
from metanim.envs.opponents import (
    EpsilonOptimalOpponent,
    OptimalOpponent,
    RandomOpponent,
    make_opponent,
)
from metanim.games import Game, Kayles, SizeLimitError
from metanim.util.jit import load_numba

# Kernels of `_stream` are called from the loops below: numba must know them.
nb = load_numba()

_MASK64 = (1 << 64) - 1
_MAX_START_TRIES = 1000
_RANDOM, _OPTIMAL, _EPSILON = 0, 1, 2
_AUTORESET_MODES = (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP)
#: Most bytes the per-board arrays of one batch may take: the kernels' state, one
#: step's observations and action masks. Past it numpy would fail deep inside reset().
MAX_BATCH_BYTES = 4 << 30
# `gym.make_vec(id, num_envs=B)` picks this env by default (it is the vector entry point).
_HINT = '; gym.make_vec(..., vectorization_mode="sync") runs any setting'


# Per-board state, structure of arrays: row r of `st` (int64) holds one field of every
# board, row r of `words` (uint64) likewise; a kernel takes two arrays, not one per field.
_CUR, _COUNT, _EPISODE, _ELAPSED, _PENDING, _FINAL = range(6)
_ST_ROWS = 6
_SEED, _KEY = range(2)
#: The configuration row of the kernels (int64): opponent kind, whether the opponent
#: moves first, the fixed start (-1: sampled), the longest game, the time limit (0:
#: none), next-step autoreset, whether the mover wins at a terminal state, for Kayles
#: on bit masks the full board and the pair bits.
_OPP_KIND, _OPP_FIRST, _START, _MAX_LEN, _MAX_STEPS, _NEXT_STEP, _MWAT, _FULL, _PAIRS = range(9)

# Helpers that take and return scalars only are plain compiled functions: numba types
# each once, and LLVM inlines them into the loops that call them, so the loops' machine
# code is the same as with numba's own inlining (`inline="always"`, which types a
# helper again at every call site) and a cold first step compiles less (Kayles 4.0 to
# 3.2 s). Helpers that take arrays stay inlined by numba: a call would count
# references to each array it passes.


@nb.njit(cache=True)
def _explore(key, count, opp_kind, epsilon):  # pragma: no cover
    """Whether the opponent plays at random this move, and the draw count after its
    draws: `random`, or `epsilon` drawing below its rate (one draw, as
    `EpsilonOptimalOpponent`; `epsilon` is the rate as `_stream.below` gives it), then
    the one draw of its pick. Scalars only: LLVM inlines it into the per-board loops at
    no reference-counting cost."""
    explore = opp_kind == _RANDOM
    if opp_kind == _EPSILON:
        count += 1
        explore = _bits53(key, count) < epsilon
    return explore, count + 1


@nb.njit(cache=True)
def _truncates(elapsed, max_steps):  # pragma: no cover
    """Whether an episode of `elapsed` steps ends by the time limit (0: none), as
    Gymnasium's `TimeLimit` counts."""
    return max_steps > 0 and elapsed >= max_steps


@nb.njit(cache=True)
def _reply_at(key, count, opp_kind, epsilon, w0, w1, l0, l1):  # pragma: no cover
    """The built-in opponent's move at a state whose winning moves are `to[w0:w1]` and
    legal ones `to[l0:l1]`, drawn as `ImpartialGameEnv._builtin_reply`: (its position in
    `to`, the draw count after).

    Scalars in and out: an inlined helper that takes arrays makes numba count references
    to each of them, on every board that calls it (two atomic operations per array).
    Which range it draws from is a choice of values, not a branch.
    """
    explore, count = _explore(key, count, opp_kind, epsilon)
    won = (w1 > w0) & (not explore)
    low = w0 if won else l0
    # The word is computed even for one candidate (where it gives 0): a test of n == 1
    # would be a branch as unpredictable as the boards' states.
    return low + _integers(key, count, (w1 if won else l1) - low), count


@nb.njit(cache=True, inline="always")
def _begin(i, st, words):  # pragma: no cover
    """Begin board `i`'s next episode (no steps yet) and return its key, computed only
    here, where a board starts: its steps read it back. Straight-line code, so numba
    prunes the reference counts of the arrays it takes."""
    episode = st[_EPISODE, i] + 1
    st[_EPISODE, i] = episode
    st[_ELAPSED, i] = 0
    key = _episode_key(words[_SEED, i], episode)
    words[_KEY, i] = key
    return key


@nb.njit(cache=True, inline="always")
def _law_pick(key, count, keep, alias, law):  # pragma: no cover
    """A start drawn from the start law's alias table (`metanim.envs._starts`) as
    `StartLaw.draw` draws it, `integers(columns)` then `random()`, after `count` draws:
    (the start, the draw count after). `keep` holds the law's `keep` as `_stream.below`
    gives it."""
    column = _integers(key, count + 1, keep.shape[0])
    if _bits53(key, count + 2) < keep[column]:
        return law[column], count + 2
    return law[alias[column]], count + 2


# A real call, not inlined: the per-board loops stay small (see below).
@nb.njit(cache=True)
def _playout(key, legal_ptr, to, wanted, longest):  # pragma: no cover
    """A start sampled as `sample_start` samples it where the game has no start law: a
    playout from state 0, the initial state, then a uniform pick among its `wanted`
    states, a new playout when it has none: (the start, the draw count after); -1: no
    wanted state found. `longest`: the most moves a game lasts."""
    # Scratch per playout (not per kernel call): boards may run on several threads.
    row = np.empty(longest + 1, np.int64)
    count = 0
    for _ in range(_MAX_START_TRIES):
        s = 0
        length = 0
        while legal_ptr[s + 1] > legal_ptr[s]:
            row[length] = s
            length += 1
            count += 1
            pick = _integers(key, count, legal_ptr[s + 1] - legal_ptr[s])
            s = to[legal_ptr[s] + pick]
        found = 0
        for j in range(length):  # compact the wanted states to the front, without a branch
            row[found] = row[j]
            found += wanted[row[j]]
        if found > 0:
            count += 1
            return row[_integers(key, count, found)], count
    return -1, count


def _twin(fn: Any, name: str) -> Any:
    """`fn` under another name: the same loop compiled a second time (with
    `parallel=True`) gets its own entry in numba's on-disk cache, which is keyed by name."""
    code = fn.__code__.replace(co_name=name, co_qualname=name)
    twin = types.FunctionType(code, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    twin.__qualname__ = name
    return twin


# The per-board loops below are written out flat, with only small helpers inlined: a
# large inlined helper taking arrays makes numba count references to every array it
# takes, on every board (two atomic operations per array and board).


def _step_loop(actions, st, words, legal_ptr, win_ptr, to, child, wanted, cfg,
               epsilon, keep, alias, law, obs_tab, mask_tab, obs, mask, final, rewards,
               terminated, truncated):  # pragma: no cover  # fmt: skip
    """One agent step of every board on the state tables: the agent's action, the
    opponent's reply, reward and flags, autoreset, and the observation and mask rows,
    rewritten only where a board's state changed (`final[i]` where a board ended, with
    same-step autoreset).

    A board that starts an episode (its autoreset, or its first after `reset`) begins
    episode `st[_EPISODE, i] + 1`: its key, no steps, its start `cfg[_START]` or sampled
    (from the start law: two draws; else `_playout` among the `wanted` states, None
    where no start is played out), then with the opponent first, its reply. Its state
    -1: no wanted state found; -2: the opponent's reply ended the game.
    """
    opp_kind, mwat, max_steps = cfg[_OPP_KIND], cfg[_MWAT], cfg[_MAX_STEPS]
    next_step = cfg[_NEXT_STEP] != 0
    start, opp_first = cfg[_START], cfg[_OPP_FIRST] != 0
    longest = cfg[_MAX_LEN]
    num_actions = child.shape[1]
    for i in nb.prange(st.shape[1]):
        s0 = st[_CUR, i]
        s = s0
        restart = st[_PENDING, i] != 0
        if restart:  # next-step autoreset: this step only starts the next episode
            st[_PENDING, i] = 0
            rewards[i] = 0.0
            terminated[i] = False
            truncated[i] = False
        else:
            a = actions[i]
            done = True
            reward = -1.0  # an illegal action loses (illegal="lose")
            if 0 <= a < num_actions and child[s, a] >= 0:
                s = child[s, a]
                if legal_ptr[s + 1] == legal_ptr[s]:  # the agent moved last
                    reward = -1.0 if mwat else 1.0
                else:
                    at, count = _reply_at(words[_KEY, i], st[_COUNT, i], opp_kind, epsilon,
                                          win_ptr[s], win_ptr[s + 1], legal_ptr[s],
                                          legal_ptr[s + 1])  # fmt: skip
                    st[_COUNT, i] = count
                    s = to[at]
                    if legal_ptr[s + 1] == legal_ptr[s]:  # the opponent moved last
                        reward = 1.0 if mwat else -1.0
                    else:
                        done = False
                        reward = 0.0
            rewards[i] = reward
            terminated[i] = done
            st[_FINAL, i] = s
            # The time limit (Gymnasium's TimeLimit counts every step of an episode).
            st[_ELAPSED, i] += 1
            trunc = _truncates(st[_ELAPSED, i], max_steps)
            truncated[i] = trunc
            if done or trunc:
                if next_step:
                    st[_PENDING, i] = 1  # restarts on its next step
                else:
                    for j in range(obs_tab.shape[1]):
                        final[i, j] = obs_tab[s, j]
                    restart = True
        if restart:
            key = _begin(i, st, words)
            s, count = start, 0
            if s < 0:  # sampled: from the start law, else by playouts
                # `wanted` is None unless starts are played out: numba prunes the branch
                # a None argument rules out before typing, so a kernel for a start law
                # does not compile `_playout` (0.4 s of a cold first step).
                if wanted is None:
                    s, count = _law_pick(key, 0, keep, alias, law)
                else:
                    s, count = _playout(key, legal_ptr, to, wanted, longest)
            if opp_first and s >= 0:
                at, count = _reply_at(key, count, opp_kind, epsilon, win_ptr[s],
                                      win_ptr[s + 1], legal_ptr[s], legal_ptr[s + 1])  # fmt: skip
                s = to[at]
                if legal_ptr[s + 1] == legal_ptr[s]:
                    s = -2  # the opponent's reply ended the game
            st[_COUNT, i] = count
        st[_CUR, i] = s
        if s != s0 and s >= 0:
            for j in range(obs_tab.shape[1]):
                obs[i, j] = obs_tab[s, j]
            for j in range(mask_tab.shape[1]):
                mask[i, j] = mask_tab[s, j]


_step = nb.njit(cache=True)(_step_loop)
_step_threads = nb.njit(cache=True, parallel=True)(_twin(_step_loop, "_step_threads"))


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
def _kayles_outcomes(out, pairs, misere):  # pragma: no cover
    """`out[m]` = 1 where the player to move at mask `m` wins (an N-position), else 0,
    for every mask below `len(out)` (a power of two; all zeros, made by the caller:
    numba's `np.zeros` would be most of this kernel's compile).

    Every child of `m` is a smaller number, so one pass in increasing order sees every
    child solved. The empty board is a P-position in normal play, N in misère (the
    player who cannot move has won).
    """
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


# A set of moves at a mask is one int64 with bit 2p for the pin p alone and bit 2p + 1
# for the pins p and p + 1: its bits in increasing order are the moves in action-id order,
# so the k-th legal (or winning) move is its k-th set bit.


@nb.njit(cache=True)
def _spread(x):  # pragma: no cover
    """Bits 0..31 of `x` to the even bits 0..62."""
    x &= 0xFFFFFFFF
    x = (x | (x << 16)) & 0x0000FFFF0000FFFF
    x = (x | (x << 8)) & 0x00FF00FF00FF00FF
    x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0F
    x = (x | (x << 2)) & 0x3333333333333333
    return (x | (x << 1)) & 0x5555555555555555


# Broadword select (Vigna, "Broadword implementation of rank/select queries", 2008) on
# uint64 words, 8 lanes of 8 bits: the k-th set bit in a fixed number of operations, no
# branch. A loop that clears k low bits costs k steps and a mispredicted exit; a
# playout draws one move after another, each waiting on the last.
_L01, _L40, _L0F, _L33, _L55 = (
    np.uint64(v) for v in (0x0101010101010101, 0x4040404040404040, 0x0F0F0F0F0F0F0F0F,
                           0x3333333333333333, 0x5555555555555555)
)  # fmt: skip
_U1, _U2, _U3, _U4, _U6, _U8, _U56 = (np.uint64(v) for v in (1, 2, 3, 4, 6, 8, 56))
_BYTE = np.uint64(0xFF)


def _byte_select() -> np.ndarray:
    """`out[r * 256 + x]`: the position of the r-th set bit (from 0) of the byte x."""
    out = np.zeros(8 * 256, np.uint8)
    for x in range(256):
        for r, p in enumerate(p for p in range(8) if x >> p & 1):
            out[r * 256 + x] = p
    return out


#: A global array, so numba compiles it in as a constant (no argument to pass).
_BYTE_SELECT = _byte_select()


@nb.njit(cache=True)
def _running(x):  # pragma: no cover
    """Lane b of the result: the set bits of `x` in its bytes 0..b (the top lane: all)."""
    s = x - ((x >> _U1) & _L55)
    s = (s & _L33) + ((s >> _U2) & _L33)
    return ((s + (s >> _U4)) & _L0F) * _L01


@nb.njit(cache=True)
def _kayles_moves(m, pairs):  # pragma: no cover
    """The legal moves at mask `m`: every standing pin, every standing adjacent pair."""
    return _spread(m) | (_spread(m & (m >> 1) & pairs) << 1)


@nb.njit(cache=True)
def _kayles_pick(key, count, moves):  # pragma: no cover
    """The move of the move set `moves` that draw `count` picks uniformly (`_integers`), as
    its bit b: it clears pin b // 2, with the next pin when b is odd. The select is
    written out here, not as helpers of its own: every compiled function adds about
    0.04 s to a cold first step, and this is its only use."""
    x = np.uint64(moves)
    running = _running(x)  # lane b: the set bits of x in its bytes 0..b
    k = np.uint64(_integers(key, count, np.int64(running >> _U56)))
    # The k-th set bit (from 0) of x: the byte holding it is the number of lanes of
    # `running` at most k (each below 64, increasing), times 8 ...
    place = ((((((k * _L01) | _L40) - running) & _L40) >> _U6) * _L01 >> _U56) << _U3
    rank = k - (((running << _U8) >> place) & _BYTE)  # ... and its rank inside that byte
    return np.int64(place + _BYTE_SELECT[(rank << _U8) | ((x >> place) & _BYTE)])


@nb.njit(cache=True)
def _kayles_draw(key, count, m, moves):  # pragma: no cover
    """The mask after the move `_kayles_pick` draws from `moves` at `m`."""
    b = _kayles_pick(key, count, moves)
    return m ^ ((1 + 2 * (b & 1)) << (b >> 1))


@nb.njit(cache=True, inline="always")
def _kayles_winning(m, pairs, outcome):  # pragma: no cover
    """The winning moves at `m` (to P-positions), as a move set.

    Each test is a product, not a branch: which children are P-positions follows no
    pattern a branch predictor learns. A pin that cannot fall with the next one looks up
    `m` itself (in range) and keeps nothing.
    """
    alone = 0  # pins whose fall alone wins
    both = 0  # pins whose fall with the next pin wins
    rest = m
    while rest:
        low = rest & -rest
        rest ^= low
        alone |= low * (outcome[m ^ low] == 0)
        pair = low & pairs & (m >> 1)  # low, where it and the next pin can fall together
        both |= pair * (outcome[m ^ pair ^ (pair << 1)] == 0)
    return _spread(alone) | (_spread(both) << 1)


@nb.njit(cache=True, inline="always")
def _kayles_reply(key, count, m, pairs, outcome, opp_kind, epsilon):  # pragma: no cover
    """The built-in opponent's move at `m`, drawn as `_reply_at` draws it: (the mask
    after it, the draw count after)."""
    explore, count = _explore(key, count, opp_kind, epsilon)
    moves = 0 if explore else _kayles_winning(m, pairs, outcome)
    if moves == 0:
        moves = _kayles_moves(m, pairs)
    return _kayles_draw(key, count, m, moves), count


@nb.njit(cache=True, inline="always")
def _kayles_wanted(m, outcome, opp_first):  # pragma: no cover
    """Whether `m` is a start `sample_start` accepts: an N-position for the agent; with
    the opponent first, a P-position from which no move ends the game."""
    if not opp_first:
        return outcome[m] == 1
    # Only one pin or two adjacent pins can be cleared at once, and two adjacent pins
    # are an N-position in both plays: the only P-position a move ends is one pin
    # (misère).
    return (outcome[m] == 0) & ((m & (m - 1)) != 0)


# A real call, not inlined: the per-board loops stay small.
@nb.njit(cache=True)
def _kayles_playout(key, full, pairs, opp_first, outcome):  # pragma: no cover
    """`_playout` on masks, from the full board `full`: (the start, the draw count
    after); -1: no wanted state found."""
    row = np.empty(KAYLES_MAX_PINS + 1, np.int64)
    count = 0
    for _ in range(_MAX_START_TRIES):
        m = full
        moves = _kayles_moves(m, pairs)
        length = 0
        while moves:  # while a pin stands
            row[length] = m
            length += 1
            count += 1
            b = _kayles_pick(key, count, moves)
            m ^= (1 + 2 * (b & 1)) << (b >> 1)
            # The moves that used a fallen pin, from the last: with pin p alone, bits
            # 2p - 1 (pins p - 1 and p) to 2p + 1; with pins p and p + 1, to 2p + 3. One
            # step, where the set anew from `m` takes two `_spread`s.
            moves &= ~(((7 + 24 * (b & 1)) << (b & -2)) >> 1)
        found = 0
        for j in range(length):  # compact the wanted states to the front, without a branch
            row[found] = row[j]
            found += _kayles_wanted(row[j], outcome, opp_first)
        if found > 0:
            count += 1
            return row[_integers(key, count, found)], count
    return -1, count


@nb.njit(cache=True, inline="always")
def _kayles_update(obs, mask, i, old, new, pairs, cell_of_bit):  # pragma: no cover
    """Rewrite board `i`'s observation cells and mask entries of the pins that changed
    between masks `old` and `new`, and nothing else.

    Pin bit p is observation cell `cell_of_bit[p]` (row * width + pin); its actions
    are 2 * cell (the pin) and 2 * cell + 1 (it and the next pin), and the pair action
    of pin p - 1 depends on it too.

    The loop visits the changed pins only, not every bit up to the highest: a test per
    bit goes either way at random and mispredicts.
    """
    d = old ^ new
    while d:
        low = d & -d
        d ^= low
        p = np.int64(_running(np.uint64(low - 1)) >> _U56)  # the pin: bits below it
        cell = cell_of_bit[p]
        bit = (new >> p) & 1
        obs[i, cell] = bit
        mask[i, 2 * cell] = bit
        mask[i, 2 * cell + 1] = bit & (new >> (p + 1)) & (pairs >> p) & 1
        if p > 0:  # the pair action of pin p - 1 (0 where p starts a row: no such pair)
            mask[i, 2 * cell_of_bit[p - 1] + 1] = (new >> (p - 1)) & bit & (pairs >> (p - 1)) & 1


def _kayles_step_loop(actions, st, words, cfg, epsilon, keep, alias, law, outcome, clears,
                      cell_of_bit, obs, mask, final, rewards, terminated,
                      truncated):  # pragma: no cover  # fmt: skip
    """`_step_loop` on masks; `clears[a]` is the pins action `a` knocks down (0: no such
    pins). Observation cells and mask entries change only for the pins that fell or
    stood up again (`_kayles_update`)."""
    opp_kind, mwat, max_steps, pairs = cfg[_OPP_KIND], cfg[_MWAT], cfg[_MAX_STEPS], cfg[_PAIRS]
    next_step = cfg[_NEXT_STEP] != 0
    start, opp_first, full = cfg[_START], cfg[_OPP_FIRST] != 0, cfg[_FULL]
    has_law = keep.shape[0] > 0
    num_actions = clears.shape[0]
    for i in nb.prange(st.shape[1]):
        m0 = st[_CUR, i]
        m = m0
        restart = st[_PENDING, i] != 0
        if restart:  # next-step autoreset: this step only starts the next episode
            st[_PENDING, i] = 0
            rewards[i] = 0.0
            terminated[i] = False
            truncated[i] = False
        else:
            a = actions[i]
            done = True
            reward = -1.0  # an illegal action loses (illegal="lose")
            if 0 <= a < num_actions and clears[a] != 0 and (m & clears[a]) == clears[a]:
                m ^= clears[a]
                if m == 0:  # the agent moved last
                    reward = -1.0 if mwat else 1.0
                else:
                    m, count = _kayles_reply(words[_KEY, i], st[_COUNT, i], m, pairs, outcome,
                                             opp_kind, epsilon)  # fmt: skip
                    st[_COUNT, i] = count
                    if m == 0:  # the opponent moved last
                        reward = 1.0 if mwat else -1.0
                    else:
                        done = False
                        reward = 0.0
            rewards[i] = reward
            terminated[i] = done
            st[_FINAL, i] = m
            st[_ELAPSED, i] += 1
            trunc = _truncates(st[_ELAPSED, i], max_steps)
            truncated[i] = trunc
            if done or trunc:
                if next_step:
                    st[_PENDING, i] = 1  # restarts on its next step
                else:
                    rest = m
                    while rest:  # the final observation into its all-zero row, pin by pin
                        low = rest & -rest
                        rest ^= low
                        final[i, cell_of_bit[np.int64(_running(np.uint64(low - 1)) >> _U56)]] = 1
                    restart = True
        if restart:  # as in `_step_loop`
            key = _begin(i, st, words)
            m, count = start, 0
            if m < 0:
                m, count = (_law_pick(key, 0, keep, alias, law) if has_law
                            else _kayles_playout(key, full, pairs, opp_first, outcome))  # fmt: skip
            if opp_first and m >= 0:
                m, count = _kayles_reply(key, count, m, pairs, outcome, opp_kind, epsilon)
                if m == 0:
                    m = -2  # the opponent's reply ended the game
            st[_COUNT, i] = count
        st[_CUR, i] = m
        if m >= 0:
            _kayles_update(obs, mask, i, max(m0, 0), m, pairs, cell_of_bit)


_kayles_step = nb.njit(cache=True)(_kayles_step_loop)
_kayles_step_threads = nb.njit(cache=True, parallel=True)(
    _twin(_kayles_step_loop, "_kayles_step_threads")
)


@nb.njit(cache=True)
def _kayles_fill(states, pairs, cell_of_bit, obs, mask):  # pragma: no cover
    """The observations and int8 masks of a batch of bit masks, into all-zero arrays."""
    for i in range(states.shape[0]):
        _kayles_update(obs, mask, i, 0, states[i], pairs, cell_of_bit)


class _KaylesBits:
    """What the Kayles kernels need: move masks per action, pair bits, outcome table.

    A board is its bit mask, the game's state index (`Kayles.state_index`: rows
    concatenated, pin 0 of row 0 the lowest bit).
    """

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
        self.outcome = np.zeros(1 << self.num_bits, np.uint8)
        _kayles_outcomes(self.outcome, self.pairs, misere)


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
                nxt = game.child(state, move)
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
        legal_to: list[int] = []
        win_to: list[int] = []
        self.is_n = np.zeros(count, np.bool_)
        _solve.prepare(game)  # one whole-game table rather than one per query (Chomp)
        for k, (moves, row) in enumerate(zip(legal, edges, strict=True)):
            for j, move in row:
                a = game.action_id(move)
                self.mask[k, a] = 1
                self.child[k, a] = j
                legal_to.append(j)
            self.legal_ptr[k + 1] = len(legal_to)
            if moves:
                self.is_n[k] = _solve.outcome(game, states[k]) == "N"
                wins = _solve.winning_moves(game, states[k])
                win_to.extend(int(self.child[k, game.action_id(m)]) for m in wins)
            self.win_ptr[k + 1] = len(win_to)
        # The child of every legal move of every state in action-id order, then of every
        # winning move: a reply is one read from either range (`win_ptr` points past the
        # legal ones), not an action and then its child.
        self.to = np.asarray(legal_to + win_to, np.int64)
        self.win_ptr += len(legal_to)
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
    final one is in `infos["final_obs"]` where `infos["_final_obs"]` is true (other
    rows are zeros). `"next_step"` (Gymnasium's default for vector envs; its vector
    observation wrappers need it): a finished board returns its final observation
    (with that state's mask: all zeros at a game's end), and the next `step` ignores
    its action, starts its next episode and returns that episode's first observation
    with reward 0 and both flags false, as `gym.make_vec(..., vectorization_mode="sync")`
    does. `max_episode_steps` truncates an episode after that many agent steps
    (`truncated`, as Gymnasium's `TimeLimit`, which `gym.make_vec` applies in the sync
    and async modes).

    `infos["action_mask"]` is the (num_envs, num_actions) int8 mask of the returned
    observations; `action_masks()` gives it as bool (MaskablePPO's convention).
    `reset(seed=s)` seeds sub-env `i` with `s + i` (a list gives one seed each).
    Returned arrays are the caller's own (copies of the env's buffers) unless
    `copy=False`, which returns the buffers themselves (rewritten by the next step).

    Args:
        game: a game name or `Game`, as for `ImpartialGameEnv`.
        num_envs: the number of boards B.
        preset, game_params, misere, start, **params: as for `ImpartialGameEnv`.
        opponent: "optimal", "random" or "epsilon:<p>".
        seat: "first" or "second" (the opponent moves first, inside reset and autoreset).
        illegal: only "lose".
        max_states: the most reachable states to table (not used by Kayles of at most
            `KAYLES_MAX_PINS` pins, which runs on bit masks).
        observation: "raw", "onehot", "binary" or "index", as for `ImpartialGameEnv`.
        mask_in_obs: observations as `{"observation", "action_mask"}` dicts, as for
            `ImpartialGameEnv`.
        autoreset_mode: "same_step" or "next_step" (or the `AutoresetMode`).
        max_episode_steps: truncate an episode after this many steps (None: never).
        num_threads: step the boards on this many threads (`numba.prange`; at most
            `numba.config.NUMBA_NUM_THREADS`); None: one thread, no thread pool.
        copy: return copies of the observation and mask buffers (True) or the
            buffers themselves.
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
        num_threads: int | None = None,
        copy: bool = True,
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
        if max_episode_steps is not None and not _whole(max_episode_steps, 1):
            raise ValueError(
                f"max_episode_steps must be a whole number >= 1 or None, got {max_episode_steps!r}"
            )
        if num_threads is not None and not _whole(num_threads, 1, nb.config.NUMBA_NUM_THREADS):
            raise ValueError(
                f"num_threads must be None or a whole number from 1 to "
                f"{nb.config.NUMBA_NUM_THREADS} (numba.config.NUMBA_NUM_THREADS), "
                f"got {num_threads!r}"
            )
        # Per instance: Gymnasium's vector wrappers read the mode from here.
        self.metadata = {"autoreset_mode": mode}
        self.autoreset_mode = mode
        self.max_episode_steps = max_episode_steps
        self.num_threads = num_threads
        self.copy = bool(copy)
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
        self._epsilon = 0
        if isinstance(policy, RandomOpponent):
            opp_kind = _RANDOM
        elif isinstance(policy, OptimalOpponent):
            opp_kind = _OPTIMAL
        else:
            assert isinstance(policy, EpsilonOptimalOpponent)
            # The rate as an integer bound on a word's top 53 bits (`_stream.below`).
            opp_kind, self._epsilon = _EPSILON, below(float(policy.epsilon))
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
        opp_first = seat == "second"
        info = game_.info
        # The observation in the single env's encoding, with its space.
        self._encode = ObservationEncoder(game_, observation)
        self.mask_in_obs = bool(mask_in_obs)
        _check_batch_bytes(num_envs, self._encode, info.num_actions, self.mask_in_obs)
        features = int(np.prod(self._encode.space.shape))
        obs_dtype = self._encode.space.dtype
        # Kayles up to KAYLES_MAX_PINS pins: states are bit masks, moves bit operations,
        # outcomes one byte per mask (every subset of pins is reachable: 2**20 states
        # for kayles-20, too many to list in Python). Any other game: state tables.
        self.kayles: _KaylesBits | None = None
        self.tables: _Tables | None = None
        start_index = -1
        full = pairs = 0
        if isinstance(game_, Kayles) and sum(game_.rows) <= KAYLES_MAX_PINS:
            self.kayles = k = _KaylesBits(game_.rows, game_.width, game_.misere)
            full, pairs = k.full, k.pairs
            if fixed is not None:
                start_index = game_.state_index(fixed)
            elif start == "auto" and bool(k.outcome[k.full]) != opp_first:
                start_index = k.full
        else:
            roots = [initial] if fixed is None else [initial, fixed]
            self.tables = t = _Tables(game_, roots, max_states)
            # The agent's first decision is at an N-position: with the opponent first,
            # the opponent starts from a P-position (as in `resolve_start`).
            wanted = t.p_ok if opp_first else t.is_n
            if fixed is not None:
                start_index = t.index[fixed]
            elif start == "auto" and t.legal_ptr[1] > 0 and t.is_n[0] != opp_first:
                start_index = 0
            # Every state's observation, encoded once, in the buffers' dtype.
            encoded = self._encode(t.obs).reshape(len(t.states), -1)
            self._obs_table = np.ascontiguousarray(encoded, dtype=obs_dtype)
        # A sampled start: from the start law's alias table where the game has one (the
        # single env draws the same two words from the same table), else a playout.
        law = None
        if start_index < 0:
            check_playout_length(game_)
            law = start_law(game_, mover_wins=not opp_first)
        if law is None:
            self._law = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
        else:
            k_, t_ = self.kayles, self.tables
            code = game_.state_index if k_ is not None else t_.index.__getitem__  # type: ignore[union-attr]
            states = np.array([code(s) for s in law.states], np.int64)
            self._law = (below(law.keep), law.alias, states)
        if self.kayles is None:
            t = self.tables
            # Where no start is played out, the kernel gets no `wanted` (see `_step_loop`).
            played_out = start_index < 0 and law is None
            self._tab = (t.legal_ptr, t.win_ptr, t.to, t.child, wanted if played_out else None)
        # The Kayles kernels write pin cells: an index observation is read off them (in
        # NumPy, `Game.observation_index`) as each step returns.
        self._cells_to_index = self.kayles is not None and self._encode.kind == "index"
        if self._cells_to_index:
            features, obs_dtype = int(np.prod(self._encode.raw_shape)), np.dtype(np.int64)
        self._cfg = np.zeros(9, np.int64)
        self._cfg[[_OPP_KIND, _OPP_FIRST, _START, _MAX_LEN, _MAX_STEPS, _NEXT_STEP, _MWAT]] = [
            opp_kind,
            opp_first,
            start_index,
            max(info.max_game_length, 1),
            max_episode_steps or 0,
            mode == AutoresetMode.NEXT_STEP,
            bool(game_.mover_wins_at_terminal),
        ]
        self._cfg[_FULL], self._cfg[_PAIRS] = full, pairs

        self.num_envs = num_envs
        self.single_action_space = spaces.Discrete(info.num_actions)
        self.single_observation_space = (
            masked_space(self._encode.space, info.num_actions)
            if self.mask_in_obs
            else self._encode.space
        )
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.observation_space = batch_space(self.single_observation_space, num_envs)

        self._st = np.zeros((_ST_ROWS, num_envs), np.int64)
        self._st[_CUR] = -1
        self._words = np.zeros((2, num_envs), np.uint64)
        # The returned observations and masks, rewritten by the kernels only where a
        # board's state changed.
        self._obs = np.zeros((num_envs, features), obs_dtype)
        self._mask = np.zeros((num_envs, info.num_actions), np.int8)
        self._no_final = np.zeros((0, features), obs_dtype)

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
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
        self._words[_SEED] = seeds
        self._obs[:] = 0
        self._mask[:] = 0
        # Every board's first episode is the step kernel's next-step autoreset: a pending
        # board starts episode `st[_EPISODE] + 1` (0 here) and writes its rows into the
        # zeroed ones. One kernel per game and thread mode, not a second loop to compile
        # (numba's compile time is most of a fresh process's first step).
        st = self._st
        st[_EPISODE] = -1
        st[_PENDING] = 1
        st[_CUR] = -1
        self._run_step(np.zeros(self.num_envs, np.int64), self._no_final)
        self._check_starts()
        obs, mask = self._out()
        return self._observe(obs, mask), {"action_mask": mask}

    def step(
        self, actions: np.ndarray
    ) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self._st[_CUR, 0] < 0:
            raise RuntimeError("call reset() before step()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or acts.dtype.kind not in "iu":
            raise ValueError(
                f"actions must be {self.num_envs} integer action ids, got shape {acts.shape} "
                f"dtype {acts.dtype}"
            )
        acts = acts.astype(np.int64, copy=False)
        same_step = self.autoreset_mode == AutoresetMode.SAME_STEP
        final = np.zeros_like(self._obs) if same_step else self._no_final
        rewards, terminated, truncated = self._run_step(acts, final)
        self._check_starts()
        obs, mask = self._out()
        infos: dict[str, Any] = {"action_mask": mask}
        if same_step:
            ended = terminated | truncated
            if ended.any():
                infos["final_obs"] = self._observe(self._shown(final), self._final_masks(ended))
                infos["_final_obs"] = ended
        return self._observe(obs, mask), rewards, terminated, truncated, infos

    def _run_step(
        self, acts: np.ndarray, final: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The step kernel over every board: (rewards, terminated, truncated)."""
        n = self.num_envs
        rewards = np.empty(n, np.float64)
        terminated = np.empty(n, np.bool_)
        truncated = np.empty(n, np.bool_)
        self._set_threads()
        k = self.kayles
        if k is not None:
            kernel = _kayles_step if self.num_threads is None else _kayles_step_threads
            kernel(acts, self._st, self._words, self._cfg, self._epsilon, *self._law,
                   k.outcome, k.clears, k.cell_of_bit, self._obs, self._mask,
                   final, rewards, terminated, truncated)  # fmt: skip
        else:
            kernel = _step if self.num_threads is None else _step_threads
            kernel(acts, self._st, self._words, *self._tab, self._cfg, self._epsilon,
                   *self._law, self._obs_table, self.tables.mask, self._obs,
                   self._mask, final, rewards, terminated, truncated)  # fmt: skip
        return rewards, terminated, truncated

    def action_masks(self) -> np.ndarray:
        """The legal actions of every board as a (num_envs, num_actions) bool array."""
        return self._mask.astype(bool)

    def _set_threads(self) -> None:
        if self.num_threads is not None:
            nb.set_num_threads(self.num_threads)

    def _out(self) -> tuple[np.ndarray, np.ndarray]:
        """The observations (in the space's shape) and int8 masks to return."""
        if self.copy:
            return self._shown(self._obs).copy(), self._mask.copy()
        return self._shown(self._obs), self._mask

    def _shown(self, rows: np.ndarray) -> np.ndarray:
        """Observation buffer rows (one per board) in the observation space's shape."""
        if self._cells_to_index:
            return self._encode(rows.reshape(len(rows), *self._encode.raw_shape))  # type: ignore[no-any-return]
        return rows.reshape(len(rows), *self._encode.space.shape)

    def _observe(self, obs: np.ndarray, mask: np.ndarray | None) -> Any:
        """The batch's observations; with `mask_in_obs`, with the masks inside (bool)."""
        if self.mask_in_obs:
            assert mask is not None
            return {"action_mask": mask.astype(bool), "observation": obs}
        return obs

    def _final_masks(self, ended: np.ndarray) -> np.ndarray | None:
        """The int8 masks of the final states (rows where `ended`), for `mask_in_obs`."""
        if not self.mask_in_obs:
            return None
        states = self._st[_FINAL]
        out = np.zeros_like(self._mask)
        rows = np.flatnonzero(ended)
        k = self.kayles
        if k is not None:
            obs = np.zeros((len(rows), self._obs.shape[1]), self._obs.dtype)
            part = np.zeros((len(rows), self._mask.shape[1]), np.int8)
            _kayles_fill(states[rows], k.pairs, k.cell_of_bit, obs, part)
            out[rows] = part
        else:
            assert self.tables is not None
            out[rows] = self.tables.mask[states[rows]]
        return out

    def _check_starts(self) -> None:
        cur = self._st[_CUR]
        if cur.min() >= 0:
            return
        failed = (cur == -2).any()
        cur[:] = -1
        if failed:
            raise ValueError(
                "the opponent's first move ended the game (seat='second'); start from another state"
            )
        opp_first = bool(self._cfg[_OPP_FIRST])
        exists = None
        if self.tables is not None:  # every reachable state is in the tables
            exists = bool((self.tables.p_ok if opp_first else self.tables.is_n).any())
        raise no_start_error(self.game, mover_wins=not opp_first, exists=exists)


def _whole(value: Any, low: int, high: int | None = None) -> bool:
    """Whether `value` is an int (not a bool) in [low, high]."""
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and value >= low
        and (high is None or value <= high)
    )


__all__ = ["KAYLES_MAX_PINS", "ImpartialGameVectorEnv"]
