"""`ImpartialGameEnv`: one Gymnasium env over any `Game`, with a built-in opponent."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from metanim.envs import _render, _solve, _starts, _stream
from metanim.envs._starts import MAX_START_TRIES, no_start_error
from metanim.envs._stream import EpisodeStream
from metanim.envs.observations import ObservationEncoder, masked_space
from metanim.envs.opponents import (
    EpsilonOptimalOpponent,
    OpponentSpec,
    OptimalOpponent,
    RandomOpponent,
    as_action_index,
    make_opponent,
    resolve_move,
)
from metanim.games import (
    PRESETS,
    Game,
    IllegalMoveError,
    MoveError,
    SizeLimitError,
    UnparsableMoveError,
    check_listable,
    game_class,
    make_game,
)

ILLEGAL_POLICIES = ("lose", "penalize", "raise")
SEATS = ("first", "second")
START_MODES = ("random_n", "initial", "auto")
# Rejection sampling of start states gives up after this many playouts (it needs ~2).
_MAX_START_TRIES = MAX_START_TRIES
# A random start plays whole games out and keeps each one's states: past this many
# moves that is seconds of CPU and megabytes per reset (a heap of 10**20 would never end).
MAX_PLAYOUT_MOVES = 100_000
# States whose derived values (legal moves, mask, observation, JSON) an env keeps; more
# would slow every garbage collection in games of many states (Kayles). Each state's
# mask has one byte per action: with many actions, fewer states (20,000 of 100,000
# actions would be 2 GB).
_RECORD_LIMIT = 20_000
_RECORD_ACTIONS = 20_000_000
# Past this many actions no mask is kept: each one returned is written fresh by the game's
# closed form (Gymnasium wants new data from every call, so a kept mask would cost a
# copy as long as the mask on top of keeping it up to date), and an action's legality
# comes from the rules (`Game.is_legal`).
_KEPT_MASK_ACTIONS = 4096
# States a wide game's env keeps records and counts of. Its states seldom recur (NIM of
# 10**5 stones has 10**5), and a table of them all is memory no cache holds: after the
# caller's own pass over a mask of 10**5 bytes, one lookup in a table of 10**5 states
# costs 15 µs on the benchmark's machine (misses through two levels of page tables),
# more than deriving the record. A table this small stays in cache and still serves
# the states that do recur (the end of the game, every episode's start).
_WIDE_RECORD_LIMIT = 2048
_INT64 = np.int64
# Up to this many actions a step goes through state nodes (see `_by_nodes`): a node
# lists its legal action ids and keeps a child per action played; past it, states
# rarely repeat their (state, action) pairs (NIM of 1,000 stones has 500,000) and the
# state-by-state path costs less.
_NODE_ACTIONS = 512
# A JSON state holding one of these is rebuilt for each `info`, never kept (see `_record`).
_NESTED = (list, dict)
# A random start lists every position's moves along a playout: past this many moves
# times actions a reset takes many seconds (Kayles of 50,000 pins: 5e9).
MAX_PLAYOUT_WORK = 200_000_000


class OpponentForfeitError(MoveError):
    """Raised by `reset()` when the opponent, moving first, gives no legal move.

    In `step()` the same forfeit ends the episode as the agent's win; `reset()` cannot
    return a finished episode, so it raises instead (never silently asks again). The
    env stays done: call `reset()` again, e.g. with another seed.
    """

    kind = "opponent_forfeit"


class ImpartialGameEnv(gym.Env[np.ndarray, np.int64]):
    """Play one of the MetaNIM games against a built-in opponent.

    ## Description
    The agent is always the player to move. `step(action)` plays the agent's move
    and then, unless the game is over, the opponent's reply, so every observation
    is a decision point of the agent. Rules, encodings and texts come from the
    `Game` (`env.unwrapped.game`); this class only adapts them to Gymnasium.

    ## Action Space
    `Discrete(game.info.num_actions)`: the game's flat action id (see the game's
    docstring, e.g. NIM `heap * max_take + count - 1`). Only some actions are legal
    in a state: `info["action_mask"]` (int8) and `action_masks()` (bool, the
    sb3-contrib MaskablePPO convention) mark them. `step` also accepts an answer
    text (e.g. an LLM's reply), parsed with `parse_action`.

    ## Observation Space
    `Box(0, game.info.observation_high, game.info.observation_shape, int64)`: NIM
    heap sizes; Fibonacci `[remaining, max_take]`; Kayles and Chomp 0/1 grids;
    Corner Queen `[row, col]`. With `observation="onehot"` or `"binary"`:
    `MultiBinary(k)` (int8), each integer as indicators of its value or as its
    bits, see `metanim.envs.observations`. With `observation="index"`:
    `Discrete(game.num_states)`, the game's state index (`Game.state_index`).

    ## Starting State
    `start="random_n"` (default without a preset): a random N-position reached by a
    random playout from the game's initial state, so the agent can always force a
    win. `start="auto"` (default with a preset, and in tournaments for every
    setting): the initial state when it is an N-position, else a random N-position.
    `start="initial"`: the game's initial state, with a warning if the agent would
    start in a P-position. A state value (e.g. `[12]`, `[20, 19]`) starts
    there; `reset(options={"state": ...})` overrides it for one episode. With
    `seat="second"` the opponent moves first inside `reset`; `"random_n"` then
    samples a P-position for the opponent, so the agent again starts at an N-position.
    Start sampling and the built-in opponents draw from a counter-based
    per-episode stream (`metanim.envs._stream`; episode 0 after `reset(seed=s)`,
    then 1, 2, ... on unseeded resets), which the batched env `metanim.envs.vector`
    reproduces; a callable opponent gets `env.np_random`.

    ## Rewards
    +1 when the agent wins, -1 when it loses, 0 otherwise. Normal play: whoever
    makes the last move wins; misère: whoever makes it loses.

    ## Episode End
    `terminated` when the game ends, when the agent plays an illegal action under
    `illegal="lose"` (a loss), or when the opponent forfeits with an illegal
    answer (a win). Never truncated by the env itself; with `illegal="penalize"`
    use `max_episode_steps` in `gym.make`.

    ## Information
    `action_mask`, `state` (JSON form), `agent_move` and `opponent_move` (canonical
    move texts of the last step, `None` if none), `winner` (`"agent"`,
    `"opponent"` or `None`), `illegal_action` (bool) and, when illegal,
    `illegal_kind` (`"unparsable"`: not an action id or a readable answer;
    `"illegal"`: a move the rules forbid here) and `error` (the precise reason), `opponent_error` when the opponent forfeited; with
    `solver_info=True` also `outcome` ("N"/"P" for the
    agent), `winning_actions` and, in normal play, `grundy`.

    ## Arguments
    `game` (name or `Game`), `preset` (a name of `metanim.PRESETS`), game sizes as
    keyword arguments (e.g. `heaps=[3, 4, 5]`, `max_take=None`, `n=30`,
    `rows=[20]`, `cols=8`, `height`, `width`) or as `game_params`, `misere`,
    `opponent` ("optimal", "random", "epsilon:0.2" or a callable, see
    `metanim.envs.opponents`), `start`, `seat` ("first"/"second"), `illegal`
    ("lose"/"penalize"/"raise"), `illegal_reward` (reward of a penalized illegal
    action), `render_mode` ("ansi"/"rgb_array"/"human": the ansi board printed after
    each reset and step), `solver_info`, `observation` ("raw"/"onehot"/"binary"/"index"),
    `mask_in_obs` (observations as `{"observation", "action_mask"}` dicts with a bool
    mask, PettingZoo's layout; torchrl's `ActionMask` reads it).

    ## Registered Configurations
    `MetaNIM/Nim-v0` (one heap of 31, max take 3), `MetaNIM/Fibonacci-v0` (20),
    `MetaNIM/Kayles-v0` (one row of 20), `MetaNIM/Chomp-v0` (5×5),
    `MetaNIM/CornerQueen-v0` (20×20, queen at [4, 16]). Presets (the seed paper's
    simulator, Tables 6–7): nim-31-k3/k4/k5, fibonacci-20, kayles-20, kayles-2rows,
    chomp-2x8, chomp-5x5, corner-queen.

    ## Version History
    v0: initial version.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "rgb_array", "human"],
        "render_fps": 4,
    }

    def __init__(
        self,
        game: str | Game[Any, Any] = "nim",
        *,
        preset: str | None = None,
        game_params: Mapping[str, Any] | None = None,
        misere: bool | None = None,
        opponent: OpponentSpec = "optimal",
        start: str | Any = None,
        seat: str = "first",
        illegal: str = "lose",
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
        solver_info: bool = False,
        observation: str = "raw",
        mask_in_obs: bool = False,
        **params: Any,
    ) -> None:
        self.game: Game[Any, Any] = _build_game(game, preset, game_params, misere, params)
        self.opponent = make_opponent(opponent)
        if seat not in SEATS:
            raise ValueError(f"seat must be one of {SEATS}, got {seat!r}")
        if illegal not in ILLEGAL_POLICIES:
            raise ValueError(f"illegal must be one of {ILLEGAL_POLICIES}, got {illegal!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        self._start: Any = start_setting(self.game, start, preset=preset is not None)
        self.seat = seat
        self.illegal = illegal
        self.illegal_reward = float(illegal_reward)
        self.render_mode = render_mode
        self.solver_info = bool(solver_info)

        info = self.game.info
        # `Game.info` builds a new record on each access: read it once.
        self._num_actions = info.num_actions
        opponent_ = self.opponent
        self._builtin = isinstance(
            opponent_, OptimalOpponent | RandomOpponent | EpsilonOptimalOpponent
        )
        # The built-in opponent as two numbers read on every step: always random (1.0),
        # never (0.0), or with probability epsilon.
        self._explore = (
            1.0
            if isinstance(opponent_, RandomOpponent)
            else float(opponent_.epsilon)
            if isinstance(opponent_, EpsilonOptimalOpponent)
            else 0.0
        )
        # The epsilon of an opponent that explores only sometimes, 0.0 for the others:
        # the node path's one check before its `random()` draw.
        self._epsilon = self._explore if self._explore < 1.0 else 0.0
        # Derived once per state instead of on every step: (int8 mask, observation,
        # JSON form, number of legal moves) of the states returned to the agent, the
        # number of legal moves of the states the opponent moves in, the legal moves of
        # the states a random start plays through; moves and texts of action ids
        # likewise. A step lists no move: the mask, the terminal test (no legal move)
        # and a random reply come from the game's closed forms (`legal_mask`,
        # `num_legal_moves`, `legal_move_at`). Callers get copies of the arrays (they
        # keep what they are given, and Gymnasium's checker requires new data on every
        # call). Only tuples and arrays are kept, never lists: the garbage
        # collector stops tracking them, where thousands of cached lists made every
        # full collection scan them.
        self._legal_of: dict[Any, tuple[Any, ...]] = {}
        self._records: dict[Any, tuple[np.ndarray | None, np.ndarray, Any, int, Any]] = {}
        self._keep_masks = self._num_actions <= _KEPT_MASK_ACTIONS
        # Whatever holds a byte or a move per action (masks, listed moves) is bounded by
        # the bytes it takes; records without masks by what a cache holds.
        self._listing_limit = max(
            64, min(_RECORD_LIMIT, _RECORD_ACTIONS // max(1, self._num_actions))
        )
        self._record_limit = self._listing_limit if self._keep_masks else _WIDE_RECORD_LIMIT
        self._counts: dict[Any, int] = {}
        mover_wins_at_end = self.game.mover_wins_at_terminal
        # (winner, reward, status) of a step that ends the game, by whether the opponent
        # made the last move: the player to move at the end wins in misère play.
        self._ends = tuple(
            ("agent", 1.0, "agent won")
            if mover_wins_at_end == opponent_last
            else ("opponent", -1.0, "agent lost")
            for opponent_last in (False, True)
        )
        self._texts: dict[Any, str] = {}
        # (move, text) of every action id, made now when masks are kept (at most
        # 4,096 actions): a step then decodes the agent's action with one lookup, and a
        # fresh env's first steps do not decode them one by one.
        self._actions: dict[int, tuple[Any, str]] = {}
        if self._keep_masks:
            for index in range(self._num_actions):
                move = self.game.move_from_action(index)
                self._actions[index] = (move, self._text(move))
        self._winning = _solve.WinningLookup(self.game)
        # The step path of kept masks and a built-in opponent: every state met gets an id
        # and a node, a tuple that extends the record above with the state, its children
        # by action id (ids, filled as actions are played), its legal action ids and the
        # opponent's choices there (the legal ids for the random opponent; else the
        # winning ids, or the legal ones in a P-position). A step is then a few dict and
        # list reads per move, with no game rule called after a state's first visit.
        # Nodes hold tuples, ints and arrays only, so the garbage collector does not
        # track them; past the record limit they are forgotten and made again as met.
        self._by_nodes = self._keep_masks and self._num_actions <= _NODE_ACTIONS and self._builtin
        self._ids: dict[Any, int] = {}
        self._nodes: list[tuple[Any, ...]] = []
        self._move_texts: list[str] = [text for _, text in self._actions.values()]
        # The k-th legal move for a random reply: the game's closed form where it has one,
        # else its listed moves, cached per state (listing them for every reply costs more).
        closed = type(self.game).legal_move_at is not Game.legal_move_at
        self._move_at = self.game.legal_move_at if closed else self._listed_move_at
        if self._explore < 1.0 or not isinstance(self._start, tuple):
            # The optimal opponent or start sampling will ask the solver about many
            # states: let it build its whole-game tables now (Chomp: one table instead of
            # one per new extent), so the first steps cost what the later ones do.
            _solve.prepare(self.game)
        self._stream_seed: int | None = None
        self._episode = 0
        self._draws = EpisodeStream(0, 0)
        self._starts = _stream.Starts()
        # How an episode starts without `options["state"]`, planned at the first reset
        # (`_plan_start`): a fixed start is checked (and warned about) once, a random
        # one draws from its law's table where it has one (`_start_law`), else plays.
        self._start_plan: str | None = None
        self._start_fixed: Any = None
        self._start_law: _starts.StartLaw | None = None
        # "N"/"P" of the states an episode starts at (`info["start_outcome"]`).
        self._start_outcomes: dict[Any, str | None] = {}
        self.action_space = spaces.Discrete(info.num_actions)
        self._encode = ObservationEncoder(self.game, observation)
        self.mask_in_obs = bool(mask_in_obs)
        self.observation_space = (
            masked_space(self._encode.space, info.num_actions)
            if self.mask_in_obs
            else self._encode.space
        )
        # What a step adds past the common case (checked once per step).
        self._extras = self.mask_in_obs or self.solver_info or render_mode == "human"
        self._set_state(self.game.initial_state())
        self._done = True
        self._status = "call reset() to start"

    # ------------------------------------------------------------------ gym API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is not None:
            super().reset(seed=seed)  # Gymnasium's seeding of `np_random`, its only work
            self._stream_seed, self._episode = int(seed), 0
        elif self._stream_seed is None:
            self._stream_seed, self._episode = int(self.np_random.integers(2**63)), 0
        else:
            self._episode += 1
        draws = self._draws
        self._starts.restart(draws, self._stream_seed, self._episode)
        opponent_move = None
        if options and "state" in options:
            start = self.game.validate_state(_as_state(options["state"]))
            # The agent's first decision is at an N-position: with the opponent first,
            # the opponent starts from a P-position.
            state = resolve_start(
                self.game, start, draws, mover_wins=self.seat == "first", moves=self._moves
            )
        else:
            plan = self._start_plan or self._plan_start()
            if plan == "fixed":
                state = self._start_fixed
            elif plan == "law":
                state = self._start_law.draw(draws)  # type: ignore[union-attr]
            else:
                state = sample_start(
                    self.game, draws, mover_wins=self.seat == "first", moves=self._moves
                )
        if self.seat == "second":
            try:
                if self._builtin:
                    move = self._builtin_reply(state, self._count(state))
                else:
                    move = resolve_move(
                        self.game, state, self.opponent(self.game, state, self.np_random)
                    )
            except MoveError as err:
                # A forfeit in step() is the agent's win; reset() cannot return a finished
                # episode, and replaying the opponent would hide the forfeit. Say so.
                self._done = True
                self._status = f"opponent forfeited its first move: {err.reason}"
                raise OpponentForfeitError(
                    f"the opponent forfeited its first move (seat='second'): {err.reason}",
                    err.text,
                ) from err
            state = self.game.child(state, move)
            opponent_move = self._text(move)
            if not self._count(state):
                raise ValueError(
                    f"the opponent's first move {opponent_move} ended the game; "
                    "start from another state"
                )
        self._set_state(state)
        self._done = False
        self._status = "agent to move"
        info = self._info(agent_move=None, opponent_move=opponent_move, winner=None)
        # The outcome at the agent's first decision, as tournaments record it per episode.
        found = self._start_outcomes.get(state, "")
        if found == "":
            if len(self._start_outcomes) >= _RECORD_LIMIT:
                self._start_outcomes.clear()
            try:
                found = _solve.outcome(self.game, state)
            except SizeLimitError:
                found = None
            self._start_outcomes[state] = found
        info["start_outcome"] = found
        if self._extras:  # the board printed, or the mask inside the observation
            if self.render_mode == "human":
                self.render()
            return self._obs(), info
        return self._current[1].copy(), info

    def _plan_start(self) -> str:
        """How this env's episodes start without `options["state"]`: "fixed" (one state,
        checked and warned about now, once), "law" (the start law's table) or "play"."""
        game, start, mover_wins = self.game, self._start, self.seat == "first"
        fixed = start if isinstance(start, tuple) or not isinstance(start, str) else None
        if start == "initial":
            fixed = game.initial_state()
        elif start == "auto":
            initial = game.initial_state()
            wanted = not game.is_terminal(initial) and (
                (_solve.outcome(game, initial) == "N") == mover_wins
            )
            fixed = initial if wanted else None
        if fixed is not None:
            self._start_fixed = resolve_start(game, fixed, self._draws, mover_wins=mover_wins)
            self._start_plan = "fixed"
        else:
            check_playout_length(game)
            self._start_law = _starts.start_law(game, mover_wins)
            self._start_plan = "play" if self._start_law is None else "law"
        return self._start_plan

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._done:
            if self._stream_seed is None:  # reset() has never run
                raise RuntimeError("no episode has started: call reset() before the first step()")
            raise RuntimeError("the episode is over; call reset() before step()")
        if not self._by_nodes:
            return self._step_general(action)
        node = self._current
        # An int, or the NumPy int a policy's action array hands out (a bool is not an id).
        kid = node[6].get(action) if type(action) is int or type(action) is _INT64 else None
        if kid is None:  # an action not played here before, or not an id, or illegal
            try:
                action, kid = self._learn(node, action)
            except MoveError as err:
                return self._shown(self._illegal(err))
        nodes = self._nodes
        child = nodes[kid]
        texts = self._move_texts
        if child[3]:
            # The built-in opponent's reply, drawn as `_builtin_reply` draws (inline).
            draws, epsilon = self._draws, self._epsilon
            # With epsilon, a random legal move this time; else the opponent's choices.
            choices = child[7] if epsilon and draws.random() < epsilon else child[8]
            n = len(choices)
            count = draws.count = draws.count + 1
            if n == 1:
                reply = choices[0]
            else:  # `EpisodeStream.integers`, inline
                j = count - draws._base
                word = draws._words[j] if j < draws._end else draws._word53(count)  # type: ignore[index]
                reply = choices[((word >> 21) * n) >> 32]
            grandchild = child[6].get(reply)
            if grandchild is None:
                grandchild = self._child_id(child, reply)
            node = nodes[grandchild]
            opponent_move = texts[reply]
        else:
            node = child
            opponent_move = None
        self._state, self._current = node[5], node
        if node[3]:
            winner = None
            reward = 0.0
        else:  # the game is over (`_game_over`, inline)
            winner, reward, self._status = self._ends[opponent_move is not None]
            self._done = True
        value = node[2]
        info = {
            "action_mask": node[0].copy(),
            "state": self.game.to_json(node[5]) if value is None else list(value),
            "agent_move": texts[action],
            "opponent_move": opponent_move,
            "winner": winner,
            "illegal_action": False,
        }
        if self._extras:
            return self._finish(reward, winner is not None, info)
        return node[1].copy(), reward, winner is not None, False, info

    def _game_over(self, opponent_move: str | None) -> tuple[str, float]:
        """(winner, reward) of a step that ended the game, whose last move was the
        opponent's when it made one: the player to move at the end wins in misère play."""
        self._done = True
        winner, reward, self._status = self._ends[opponent_move is not None]
        return winner, reward

    def _finish(
        self, reward: float, terminated: bool, info: dict[str, Any]
    ) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """A step's result with what the less used options add: solver facts, the
        observation with its mask inside, the board printed."""
        if self.solver_info:
            self._add_solver_info(info)
        if self.render_mode == "human":
            self.render()
        return self._obs(), reward, terminated, False, info

    def _step_general(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """`step` by states: many actions (no kept masks) or a callable opponent."""
        found = self._actions.get(action) if type(action) is int else None
        if found is None or not self._current[4][action]:
            try:
                found = self._agent_move(action)
            except MoveError as err:
                return self._shown(self._illegal(err))
        move, agent_move = found
        game = self.game
        state = game.child(self._state, move)
        counts = self._counts
        count = counts.get(state)
        if count is None:  # `_count`, inline: a fresh env's first steps mostly miss
            if len(counts) >= self._record_limit:
                counts.clear()
            count = counts[state] = game.num_legal_moves(state)
        if count:
            if self._explore == 1.0:  # the random opponent, its one draw inline
                reply = self._move_at(state, self._draws.integers(count))
            else:
                try:
                    if self._builtin:
                        reply = self._builtin_reply(state, count)
                    else:
                        choice = self.opponent(game, state, self.np_random)
                        reply = resolve_move(game, state, choice, self._moves(state))
                except MoveError as err:
                    # The opponent forfeits; an LLM opponent can answer illegally too.
                    self._set_state(state)
                    self._done = True
                    self._status = f"opponent forfeited: {err.reason}"
                    info = self._info(agent_move=agent_move, opponent_move=None, winner="agent")
                    info["opponent_error"] = err.reason
                    return self._shown((self._obs(), 1.0, True, False, info))
            state = game.child(state, reply)
            opponent_move = self._texts.get(reply) or self._text(reply)
        else:
            opponent_move = None
        record = self._records.get(state) or self._record(state)
        winner = None
        reward = 0.0
        if not record[3]:
            winner, reward = self._game_over(opponent_move)
        self._state, self._current = state, record
        info = self._info(agent_move, opponent_move, winner)
        if self.render_mode == "human":
            self.render()
        if self.mask_in_obs:
            return self._obs(), reward, winner is not None, False, info
        return record[1].copy(), reward, winner is not None, False, info

    def _shown(self, result: tuple[Any, ...]) -> tuple[Any, ...]:
        """A step's result, after printing the board in render mode "human"."""
        if self.render_mode == "human":
            self.render()
        return result

    def render(self) -> str | np.ndarray | None:  # type: ignore[override]
        if self.render_mode in ("ansi", "human"):
            text = _render.ansi(self.game, self._state, self._status)
            if self.render_mode == "human":
                print(text)  # "human": the ansi board on stdout, returning None
                return None
            return text
        if self.render_mode == "rgb_array":
            return _render.rgb(self.game, self._state)
        return None

    def action_masks(self) -> np.ndarray:
        """Legal actions as a bool array (sb3-contrib MaskablePPO's `action_masks()`)."""
        return self._fresh_mask().view(bool)

    # ---------------------------------------------------------------- text view
    @property
    def state(self) -> Any:
        """The current game state (the agent is to move unless the episode is over)."""
        return self._state

    def prompt(self, agent_name: str = "Player 1") -> str:
        """The paper-style game prompt of the current state, for an LLM agent."""
        return self.game.prompt(self._state, agent_name)

    def parse_action(self, text: str) -> int:
        """The action id of an answer text; raises `UnparsableMoveError`/`IllegalMoveError`."""
        return self.game.action_id(self.game.parse_move(text, self._state))

    # ----------------------------------------------------------------- internals
    def _agent_move(self, action: Any) -> tuple[Any, str]:
        """The agent's legal move and its text, or the precise `MoveError`."""
        if type(action) is int:  # the common case, checked first (bool is not int here)
            index: int | None = action
        elif isinstance(action, str):
            move = self.game.parse_move(action, self._state)
            return move, self._text(move)
        else:
            index = as_action_index(action)
        if index is None:  # never truncate 0.7 to 0 or read True as 1
            raise UnparsableMoveError(
                f"action {action!r} ({type(action).__name__}) is neither an integer action id "
                "nor an answer text"
            )
        if not 0 <= index < self._num_actions:
            raise IllegalMoveError(
                f"action {index} is outside the action space [0, {self._num_actions - 1}]"
            )
        if not self._keep_masks:
            # No kept mask to read (many actions): the rules say, and the cache of action
            # ids stays empty, so every step comes here.
            move = self.game.move_from_action(index)
            if not self.game.is_legal(self._state, move):
                raise IllegalMoveError(self.game.why_illegal(self._state, move), str(index))
            return move, self._text(move)
        found = self._actions[index]
        if not self._current[4][index]:
            raise IllegalMoveError(self.game.why_illegal(self._state, found[0]), str(index))
        return found

    def _illegal(self, err: MoveError) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self.illegal == "raise":
            raise err
        lose = self.illegal == "lose"
        info = self._info(agent_move=None, opponent_move=None, winner="opponent" if lose else None)
        info["illegal_action"] = True
        info["illegal_kind"] = "unparsable" if isinstance(err, UnparsableMoveError) else "illegal"
        info["error"] = err.reason
        if lose:
            self._done = True
            self._status = f"agent lost by an illegal action: {err.reason}"
            return self._obs(), -1.0, True, False, info
        return self._obs(), self.illegal_reward, False, False, info

    def _set_state(self, state: Any) -> None:
        """Make `state` the current one, with its record (its node on the node path)."""
        self._state = state
        self._current = self._nodes[self._id(state)] if self._by_nodes else self._record(state)

    # ------------------------------------------------------------------ nodes
    def _id(self, state: Any) -> int:
        """The id of `state`, its node made on first use (past the record limit, every
        node is forgotten first: a step's ids stay valid, since it asks before it reads)."""
        found = self._ids.get(state)
        if found is None:
            if len(self._nodes) >= self._record_limit:
                self._ids.clear()
                self._nodes.clear()
            mask, obs, value, count, view = self._derive(state)
            legal = choices = tuple(mask.nonzero()[0].tolist()) if count else ()
            if count and self._explore != 1.0:
                action_id = self.game.action_id
                choices = tuple(action_id(m) for m in self._winning(state)) or legal
            found = self._ids[state] = len(self._nodes)
            self._nodes.append((mask, obs, value, count, view, state, {}, legal, choices))
        return found

    def _learn(self, node: tuple[Any, ...], action: Any) -> tuple[int, int]:
        """(action id, child id) of an agent's action not played from `node` before; raises
        the precise `MoveError` for one that is not legal there."""
        if type(action) is not int and not isinstance(action, str):
            index = as_action_index(action)  # a NumPy integer (SB3's actions) is an id too
            if index is not None:
                action = index
                kid = node[6].get(index)
                if kid is not None:
                    return index, kid
        if type(action) is int and 0 <= action < self._num_actions and node[4][action]:
            return action, self._child_id(node, action)
        move, _ = self._agent_move(action)
        index = self.game.action_id(move)
        kid = node[6].get(index)
        if kid is None:
            kid = self._child_id(node, index)
        return index, kid

    def _child_id(self, node: tuple[Any, ...], index: int) -> int:
        """The id of the state after legal action `index` in `node`, kept in its children.
        A forgotten graph (the record limit) drops `node`: it is made again first."""
        child = self.game.child(node[5], self._actions[index][0])
        forgets = len(self._nodes) >= self._record_limit
        kid = self._id(child)
        if forgets:  # `node` is gone with the rest: its state's node is made again
            node = self._nodes[self._id(node[5])]
        node[6][index] = kid
        return kid

    def _fresh_mask(self) -> np.ndarray:
        """A new int8 mask of the current state (the kept one copied, or written anew)."""
        if self._keep_masks:
            return self._current[0].copy()
        return self.game.legal_mask(self._state, np.empty(self._num_actions, dtype=np.int8))

    def _record(self, state: Any) -> tuple[np.ndarray | None, np.ndarray, Any, int, Any]:
        """(int8 mask, encoded observation, JSON form, number of legal moves, the mask's
        bytes) of a state shown to the agent, cached (indexing bytes gives an int at a
        fraction of the cost of indexing the array, and unlike a memoryview they leave
        the record untracked by the garbage collector).

        The mask, its bytes and the JSON form are None when the env keeps no masks (many
        actions: `info` makes the JSON). Otherwise the JSON form is kept when it is a flat
        list (every game's is), whose copy is cheap; anything else is rebuilt for each
        `info`.
        """
        found = self._records.get(state)
        if found is None:
            if len(self._records) >= self._record_limit:
                self._records.clear()
            found = self._records[state] = self._derive(state)
        return found

    def _derive(self, state: Any) -> tuple[np.ndarray | None, np.ndarray, Any, int, Any]:
        """A state's record, made anew (see `_record`)."""
        game = self.game
        # The observation in the env's encoding (raw, onehot or binary).
        obs = self._encode(game.observation(state))
        if not self._keep_masks:
            # A wide game's states seldom recur: its record keeps no JSON (`info` makes it).
            return None, obs, None, game.num_legal_moves(state), None
        mask = game.legal_mask(state, np.empty(self._num_actions, dtype=np.int8))
        value = game.to_json(state)
        flat = isinstance(value, list) and not any([isinstance(v, _NESTED) for v in value])
        view = mask.tobytes()
        # The mask's nonzero bytes count the legal moves in C, where the game's count walks
        # the state in Python (a new state's record is made on every first visit).
        return mask, obs, tuple(value) if flat else None, len(view) - view.count(0), view

    def _count(self, state: Any) -> int:
        """`game.num_legal_moves(state)`, cached (0: the game is over)."""
        found = self._counts.get(state)
        if found is None:
            if len(self._counts) >= self._record_limit:
                self._counts.clear()
            found = self._counts[state] = self.game.num_legal_moves(state)
        return found

    def _moves(self, state: Any) -> tuple[Any, ...]:
        """`game.legal_moves(state)` as a tuple, cached."""
        found = self._legal_of.get(state)
        if found is None:
            if len(self._legal_of) >= self._listing_limit:
                self._legal_of.clear()
            found = self._legal_of[state] = tuple(self.game.legal_moves(state))
        return found

    def _text(self, move: Any) -> str:
        """`game.move_text(move)`, kept for the moves of games whose masks are kept (at
        most `_KEPT_MASK_ACTIONS`); a wider game's moves are many and seldom repeat, and
        a lookup in a table of 10^5 texts costs more than the text (cache misses)."""
        text = self._texts.get(move)
        if text is None:
            text = self.game.move_text(move)
            if self._keep_masks:
                self._texts[move] = text
        return text

    def _builtin_reply(self, state: Any, count: int) -> Any:
        """A built-in opponent's move in `state`, which has `count` legal moves, drawn
        from the episode stream.

        Draws exactly as `RandomOpponent`, `OptimalOpponent` and
        `EpsilonOptimalOpponent` do (one `integers`, after one `random` for epsilon),
        among moves known legal, so no check is needed. A random move is the k-th legal
        move (`Game.legal_move_at`, found without listing them all where the game has a
        closed form).
        """
        draws, explore = self._draws, self._explore
        if explore == 1.0 or (explore and draws.random() < explore):
            return self._move_at(state, draws.integers(count))
        moves = self._winning(state)
        if not moves:
            return self._move_at(state, draws.integers(count))
        return moves[draws.integers(len(moves))]

    def _listed_move_at(self, state: Any, k: int) -> Any:
        return self._moves(state)[k]

    def _obs(self) -> Any:
        if self.mask_in_obs:
            mask = self._fresh_mask().view(bool)
            return {"action_mask": mask, "observation": self._current[1].copy()}
        return self._current[1].copy()

    def _info(
        self, agent_move: str | None, opponent_move: str | None, winner: str | None
    ) -> dict[str, Any]:
        """The `info` of the current state (the mask and the state's JSON new each time)."""
        current = self._current
        value = current[2]
        info: dict[str, Any] = {
            "action_mask": current[0].copy() if self._keep_masks else self._fresh_mask(),
            "state": self.game.to_json(self._state) if value is None else list(value),
            "agent_move": agent_move,
            "opponent_move": opponent_move,
            "winner": winner,
            "illegal_action": False,
        }
        if self.solver_info:
            self._add_solver_info(info)
        return info

    def _add_solver_info(self, info: dict[str, Any]) -> None:
        """The solver's facts about the current state (`solver_info=True`)."""
        if self._current[3]:
            info["outcome"] = _solve.outcome(self.game, self._state)
            info["winning_actions"] = [
                self.game.action_id(m) for m in _solve.winning_moves(self.game, self._state)
            ]
            if not self.game.misere:
                info["grundy"] = int(_solve.solver(self.game).grundy(self._state))


def start_setting(game: Game[Any, Any], start: Any, *, preset: bool) -> Any:
    """A `start` argument as a start setting: "random_n", "initial", "auto" or a state.

    `None` is the default: "auto" for a preset (and for every tournament setting,
    preset or JSON alike), else "random_n". A mode name is kept; any other value is a
    state (JSON lists allowed), checked by `game.validate_state`.
    """
    if start is None:
        return "auto" if preset else "random_n"
    if isinstance(start, str) and start in START_MODES:
        return start
    return game.validate_state(_as_state(start))


def resolve_start(
    game: Game[Any, Any],
    start: Any,
    rng: np.random.Generator | EpisodeStream,
    *,
    mover_wins: bool,
    moves: Callable[[Any], Sequence[Any]] | None = None,
) -> Any:
    """The start state for a `start` setting: "random_n", "initial", "auto" or a state.

    The one start rule ("auto"): the initial state when the first mover's outcome
    there is the wanted one (`mover_wins`: an N-position), else a random state of
    that outcome ("random_n"). "initial" or an explicit state is used as given, with
    a `UserWarning` when it is not the wanted outcome (e.g. the agent would start in
    a P-position and lose against best play). `moves` is a cached `game.legal_moves`.
    """
    if isinstance(start, str) and start == "random_n":
        return sample_start(game, rng, mover_wins=mover_wins, moves=moves)
    if isinstance(start, str) and start == "auto":
        initial = game.initial_state()
        if not game.is_terminal(initial) and (_solve.outcome(game, initial) == "N") == mover_wins:
            return initial
        return sample_start(game, rng, mover_wins=mover_wins, moves=moves)
    state = game.initial_state() if isinstance(start, str) and start == "initial" else start
    if game.is_terminal(state):
        raise ValueError(f"the start state {state!r} is already over: there is no move to make")
    warn_unwinnable_start(game, state, mover_wins=mover_wins)
    return state


def warn_unwinnable_start(game: Game[Any, Any], state: Any, *, mover_wins: bool = True) -> None:
    """Warn when a requested start gives the agent a lost position against best play."""
    found = _solve.outcome(game, state)
    if (found == "N") != mover_wins:
        who = "the first mover" if mover_wins else "the opponent (moving first)"
        warnings.warn(
            f"the start {game.to_json(state)} of {game!r} is a {found}-position for {who}: "
            "the agent starts where it loses against best play (use start='auto' or "
            "'random_n' for a winnable start)",
            UserWarning,
            stacklevel=3,
        )


def sample_start(
    game: Game[Any, Any],
    rng: np.random.Generator | EpisodeStream,
    *,
    mover_wins: bool,
    moves: Callable[[Any], Sequence[Any]] | None = None,
) -> Any:
    """A random non-terminal state of the wanted outcome, from random playouts.

    One playout runs from the initial state to the end; a state is drawn uniformly
    among its non-terminal states of the wanted outcome (`mover_wins`: an N-position),
    so early, middle and late positions are all as likely. For a P-position it also
    requires that no move ends the game, so the other player surely gets a
    non-terminal N-position (in misère play a move can end the game and lose).
    A game of at most `metanim.envs._starts.LAW_STATES` reachable states draws from
    that law computed exactly, with two draws (`_starts.StartLaw.draw`); a larger one
    plays the playout. `moves` is a cached `game.legal_moves`.
    """
    check_playout_length(game)
    law = _starts.start_law(game, mover_wins)
    if law is not None:
        return law.draw(rng)
    legal_moves = game.legal_moves if moves is None else moves
    outcome = _solve.outcome_lookup(game)
    initial = game.initial_state()
    for _ in range(_MAX_START_TRIES):
        state, trail = initial, []
        while True:
            options = legal_moves(state)
            if not options:
                break
            trail.append(state)
            state = game.child(state, options[int(rng.integers(len(options)))])
        candidates = [
            s
            for s in trail
            if (outcome(s) == "N") == mover_wins
            and (mover_wins or not any(not legal_moves(game.child(s, m)) for m in legal_moves(s)))
        ]
        if candidates:
            return candidates[int(rng.integers(len(candidates)))]
    raise no_start_error(game, mover_wins=mover_wins, exists=_any_start(game, mover_wins, moves))


#: States a failed start search walks, at most, to tell "none exists" from "none found".
_START_SEARCH_STATES = 200_000


def _any_start(
    game: Game[Any, Any], mover_wins: bool, moves: Callable[[Any], Sequence[Any]] | None
) -> bool | None:
    """Whether any reachable state is a start `sample_start` accepts (None: too many
    states to walk them all)."""
    legal_moves = game.legal_moves if moves is None else moves
    initial = game.initial_state()
    seen, todo = {initial}, [initial]
    while todo:
        state = todo.pop()
        options = legal_moves(state)
        if not options:
            continue
        children = [game.child(state, m) for m in options]
        if (_solve.outcome(game, state) == "N") == mover_wins and (
            mover_wins or all(legal_moves(c) for c in children)
        ):
            return True
        for child in children:
            if child not in seen:
                if len(seen) >= _START_SEARCH_STATES:
                    return None
                seen.add(child)
                todo.append(child)
    return False


def check_playout_length(game: Game[Any, Any]) -> None:
    """Refuse a random start for a game whose playouts could run past `MAX_PLAYOUT_MOVES`."""
    info = game.info  # built on each access
    longest, actions = info.max_game_length, info.num_actions
    if longest > MAX_PLAYOUT_MOVES:
        raise ValueError(
            f"a random start plays {game!r} out to its end, which can take {longest:,} moves "
            f"(more than {MAX_PLAYOUT_MOVES:,}); start at the initial state or a given one"
        )
    if longest * actions > MAX_PLAYOUT_WORK:
        raise ValueError(
            f"a random start plays {game!r} out, listing each position's moves: up to "
            f"{longest:,} moves of {actions:,} actions (more than {MAX_PLAYOUT_WORK:,} in "
            "all); start at the initial state or a given one"
        )


def _as_state(value: Any) -> Any:
    """JSON lists to the tuples that game states are made of."""
    if isinstance(value, list):
        return tuple(_as_state(v) for v in value)
    return value


def _build_game(
    game: str | Game[Any, Any],
    preset: str | None,
    game_params: Mapping[str, Any] | None,
    misere: bool | None,
    params: dict[str, Any],
) -> Game[Any, Any]:
    if isinstance(game, Game):
        if preset is not None or game_params or params or misere is not None:
            raise ValueError("pass either a Game instance or a game name with parameters, not both")
        return _fits_env(game)
    merged: dict[str, Any] = {}
    name = game
    if preset is not None:
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}; choose one of {sorted(PRESETS)}")
        base, preset_params = PRESETS[preset]
        if game_class(game).name != base:
            raise ValueError(f"preset {preset!r} is a {base} preset, not a {game} one")
        name, merged = base, dict(preset_params)
    merged.update(game_params or {})
    merged.update(params)
    if misere is not None:
        merged["misere"] = bool(misere)
    # An unknown keyword is a TypeError, as Python and Gymnasium raise it: wrappers such
    # as torchrl's GymEnv probe with e.g. `frameskip` and catch exactly TypeError.
    cls = game_class(name)
    valid = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = sorted(set(params) - set(valid))
    if unknown:
        # Python's own wording ("got an unexpected keyword argument 'x'"): torchrl
        # matches on it to drop `frameskip` and retry.
        more = f" (and {', '.join(map(repr, unknown[1:]))})" if len(unknown) > 1 else ""
        raise TypeError(
            f"ImpartialGameEnv.__init__() got an unexpected keyword argument {unknown[0]!r}"
            f"{more}; the {cls.name} game's parameters are {', '.join(valid)}"
        )
    try:
        built = make_game(name, **merged)
    except TypeError as exc:
        raise TypeError(f"bad arguments for {name}: {exc}") from exc
    return _fits_env(built)


def _fits_env(game: Game[Any, Any]) -> Game[Any, Any]:
    """The game, once its action mask and int64 observation are known to fit an env."""
    check_listable(game, "an env (its action mask)")
    if game.info.observation_high > np.iinfo(np.int64).max:
        raise SizeLimitError(
            f"an env's observations are int64, and {game!r} has values up to "
            f"{game.info.observation_high:,}"
        )
    return game
