"""Every game as an OpenSpiel game, checked by OpenSpiel's own tests, search and bots.

Optional extra `open_spiel`; CI installs it and sets `METANIM_REQUIRE`, so there these
tests fail rather than skip without it (`conftest.need`). The checks are OpenSpiel's as
it ships: `pyspiel.random_sim_test` (its C++ API conformance test, with serialization),
the test pattern of its Python games (open_spiel/python/games/tic_tac_toe_test.py:
create, random game, pickle, clone, Python observer = C++ tensor), its exact
`MinimaxSolver` (open_spiel/python/algorithms/minimax_solver.py) and its C++ `nim`,
its `MCTSBot` and `evaluate_bots`.
"""

from __future__ import annotations

import inspect
import json
import pickle
from typing import Any

import numpy as np
import pytest

from metanim.games import GAMES, PRESETS, make_game
from metanim.solver import solver_for
from tests.conftest import need

pyspiel = need("pyspiel")
from metanim.integrations import open_spiel as mos  # noqa: E402  (after the check above)

# Configurations beyond the presets: several heaps with unbounded takes, several rows,
# a non-square board, a chosen start, a tiny pile.
CUSTOM: list[tuple[str, dict[str, Any]]] = [
    ("nim", {"heaps": [3, 4, 5], "max_take": None}),
    ("nim", {"heaps": [2, 7], "max_take": 2, "misere": True}),
    ("fibonacci", {"n": 7}),
    ("kayles", {"rows": [3, 1, 4], "misere": True}),
    ("chomp", {"rows": 3, "cols": 4}),
    ("corner_queen", {"height": 6, "width": 9, "start": [0, 8], "misere": True}),
]
CONFIGS = [(name, {}) for name in PRESETS] + CUSTOM
CONFIG_IDS = list(PRESETS) + [f"{n}-{json.dumps(p, separators=(',', ':'))}" for n, p in CUSTOM]

# Small enough for OpenSpiel's exact search over every reachable state in Python; the
# Kayles-20 presets (2**20 pin patterns) are left to MCTS below.
SMALL = [name for name in PRESETS if not name.startswith("kayles-20")]


@pytest.mark.parametrize(("name", "params"), CONFIGS, ids=CONFIG_IDS)
def test_random_sim_test(name: str, params: dict[str, Any]) -> None:
    """OpenSpiel's C++ API test (with serialize/deserialize) on every preset and more."""
    game = mos.load_game(name, **params)
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)  # raises on a fault
    # And a random playout of our own: a game of two players ends with one winner.
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    while not state.is_terminal():
        state.apply_action(int(rng.choice(state.legal_actions())))
    assert sorted(state.returns()) == [-1.0, 1.0]


def test_every_game_is_registered_with_its_parameters() -> None:
    names = set(pyspiel.registered_names())
    for cls in GAMES.values():
        short = f"metanim_{cls.name}"
        assert short in names
        game = pyspiel.load_game(short)
        spec = game.get_type().parameter_specification
        arguments = set(inspect.signature(cls.__init__).parameters) - {"self"}
        assert set(spec) == arguments  # every constructor argument, no other
        assert mos.metanim_game(game) == cls()  # the defaults are the game's own
        assert game.num_distinct_actions() == cls().info.num_actions


def test_parameters_follow_openspiel_types() -> None:
    """Lists are ;-separated strings (OpenSpiel's `nim(pile_sizes=1;3;5;7)` form), an
    optional number takes 0 for None, and OpenSpiel refuses a value of the wrong type."""
    game = pyspiel.load_game("metanim_nim(heaps=3;4;5,max_take=0,misere=True)")
    assert mos.metanim_game(game) == make_game("nim", heaps=[3, 4, 5], max_take=None, misere=True)
    one = pyspiel.load_game("metanim_kayles(rows=7;)")
    assert mos.metanim_game(one) == make_game("kayles", rows=[7])
    queen = pyspiel.load_game("metanim_corner_queen(height=6,width=9)")
    assert mos.metanim_game(queen) == make_game("corner_queen", height=6, width=9)
    with pytest.raises(pyspiel.SpielError, match="Wrong type for parameter heaps"):
        pyspiel.load_game("metanim_nim(heaps=31)")
    with pytest.raises(ValueError, match="separated by ';'"):
        pyspiel.load_game("metanim_nim(heaps=3;x)")


@pytest.mark.parametrize(("name", "params"), CONFIGS, ids=CONFIG_IDS)
def test_game_string_pickle_and_serialization_round_trip(name: str, params: dict[str, Any]) -> None:
    rules = make_game(name, **params)
    game = mos.load_game(rules)
    assert str(game) == mos.game_string(rules)
    assert mos.metanim_game(pyspiel.load_game(str(game))) == rules
    assert mos.metanim_game(pickle.loads(pickle.dumps(game))) == rules
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    for _ in range(3):
        if state.is_terminal():
            break
        state.apply_action(int(rng.choice(state.legal_actions())))
    text = pyspiel.serialize_game_and_state(game, state)
    game2, state2 = pyspiel.deserialize_game_and_state(text)
    assert str(game2) == str(game) and str(state2) == str(state)
    assert str(pickle.loads(pickle.dumps(state))) == str(state)


# ------------------------------------------------ OpenSpiel's Python-game test pattern
def test_can_create_game_and_state() -> None:
    game = pyspiel.load_game("metanim_nim(heaps=2;3,max_take=0)")
    state = game.new_initial_state()
    assert str(state) == "[2, 3], player 0 to move"
    assert state.legal_actions() == [0, 1, 3, 4, 5]  # heap h, take c: h * 3 + c - 1


@pytest.mark.parametrize("name", sorted(GAMES))
def test_random_game_follows_the_rules(name: str) -> None:
    """A random game, checked move by move against the rules in plain Python: the
    legal actions are the game's legal moves, and the winner is who the play rule says."""
    for misere in (False, True):
        rules = make_game(name, misere=misere)
        game = mos.load_game(rules)
        state, position = game.new_initial_state(), rules.initial_state()
        rng = np.random.default_rng(1)
        mover = 0
        while not state.is_terminal():
            legal = rules.legal_moves(position)
            assert state.legal_actions() == sorted(rules.action_id(m) for m in legal)
            move = legal[int(rng.integers(len(legal)))]
            assert state.action_to_string(mover, rules.action_id(move)) == rules.move_text(move)
            assert state.string_to_action(rules.move_text(move)) == rules.action_id(move)
            state.apply_action(rules.action_id(move))
            position, last_mover, mover = rules.apply(position, move), mover, 1 - mover
        assert rules.is_terminal(position)
        winner = mover if misere else last_mover  # misère: the last mover loses
        assert state.returns()[winner] == 1.0 and state.returns()[1 - winner] == -1.0


@pytest.mark.parametrize("name", SMALL[:9])  # normal-play presets, one per setting
def test_clone_and_observers_match(name: str) -> None:
    """Clones keep history and position; OpenSpiel's `make_observation` (the Python
    observer) gives the same tensors as the C++ `observation_tensor` and
    `information_state_tensor`, whose history rows are the actions played."""
    from open_spiel.python.observation import INFO_STATE_OBS_TYPE, make_observation

    game = mos.load_game(name)
    obs, info = make_observation(game), make_observation(game, INFO_STATE_OBS_TYPE)
    state = game.new_initial_state()
    rng = np.random.default_rng(2)
    while True:
        clone = state.clone()
        assert clone.history() == state.history() and clone.position == state.position
        for player in (0, 1):
            obs.set_from(state, player)
            np.testing.assert_array_equal(obs.tensor, state.observation_tensor(player))
            info.set_from(state, player)
            np.testing.assert_array_equal(info.tensor, state.information_state_tensor(player))
        rows = info.dict["history"]
        assert [int(np.flatnonzero(r)[0]) for r in rows if r.any()] == state.history()
        np.testing.assert_array_equal(obs.dict["board"], state.rules.observation(state.position))
        if state.is_terminal():
            break
        state.apply_action(int(rng.choice(state.legal_actions())))


# ------------------------------------------------------------- exact search = solver
@pytest.mark.slow
@pytest.mark.parametrize("name", SMALL)
def test_openspiel_minimax_solver_agrees_with_ours(name: str) -> None:
    """OpenSpiel's exact search (MinimaxSolver, a table keyed by the state string) over
    every reachable state: its value is +1 exactly in our N-positions, and the actions it
    values +1 are exactly our winning moves."""
    from open_spiel.python.algorithms.minimax_solver import MinimaxSolver

    rules = make_game(name)
    table = MinimaxSolver(str(mos.load_game(rules))).solve()
    solver = solver_for(rules)
    positions = {key.rsplit(", player", 1)[0] for key in table}
    for key, entry in table.items():
        position = rules.validate_state(json.loads(key.rsplit(", player", 1)[0]))
        assert (entry.value > 0) == (solver.outcome(position) == "N"), key
        winning = {rules.action_id(m) for m in solver.winning_moves(position)}
        assert set(np.flatnonzero(entry.action_values > 0.5).tolist()) == winning, key
    assert json.dumps(rules.to_json(rules.initial_state())) in positions
    assert len(table) >= 60  # every preset reaches dozens of positions at least


def _root_values(game_string: str) -> tuple[float, list[int]]:
    """OpenSpiel's exact value of the first position and of each first move (sorted)."""
    from open_spiel.python.algorithms.minimax_solver import MinimaxSolver

    solver = MinimaxSolver(game_string)
    table = solver.solve()
    root = pyspiel.load_game(game_string).new_initial_state()
    values = solver.action_values_from_state(root)
    return table[str(root)].value, sorted(round(float(values[a])) for a in root.legal_actions())


@pytest.mark.parametrize("misere", [False, True], ids=["normal", "misere"])
@pytest.mark.parametrize("piles", [[1, 3, 5, 7], [2, 3], [4, 4, 1], [1, 1, 1]])
def test_same_values_as_openspiel_own_nim(piles: list[int], misere: bool) -> None:
    """metanim_nim with unbounded takes and OpenSpiel's C++ `nim` are the same game:
    OpenSpiel's exact search gives both the same value, first move by first move (the
    two name a move differently, "[h, c]" and "pile:h+1, take:c"), and our solver agrees."""
    rules = make_game("nim", heaps=piles, max_take=None, misere=misere)
    ours = _root_values(mos.game_string(rules))
    theirs = _root_values(f"nim(pile_sizes={';'.join(map(str, piles))},is_misere={misere})")
    assert ours == theirs
    assert ours[0] == (1 if solver_for(rules).outcome(tuple(piles)) == "N" else -1)


# ------------------------------------------------------------------- MCTS and bots
LARGER = ["kayles-20", "kayles-20-misere", "nim-31-k5", "chomp-5x5-misere", "corner-queen"]


@pytest.mark.slow
@pytest.mark.parametrize("name", LARGER)
def test_mcts_with_solver_values_plays_only_winning_moves(name: str) -> None:
    """OpenSpiel's MCTSBot with `SolverEvaluator` picks a winning move in every
    N-position of seeded random games (a sign error in the values would pick losers)."""
    from open_spiel.python.algorithms import mcts

    rules = make_game(name)
    game, solver = mos.load_game(rules), solver_for(rules)
    rng = np.random.default_rng(3)
    checked = 0
    while checked < 20:  # random games until 20 decisions are checked
        state = game.new_initial_state()
        while not state.is_terminal():
            if solver.outcome(state.position) == "N":
                bot = mcts.MCTSBot(
                    game,
                    uct_c=2.0,
                    max_simulations=2 * len(state.legal_actions()) + 10,
                    evaluator=mos.SolverEvaluator(),
                    random_state=np.random.RandomState(checked),
                )
                move = rules.move_from_action(bot.step(state))
                assert move in solver.winning_moves(state.position), (str(state), move)
                checked += 1
            state.apply_action(int(rng.choice(state.legal_actions())))


class _Recording(mos.SolverBot):
    """A SolverBot that notes whether it was ever to move in an N-position."""

    def __init__(self, player_id: int, seed: int) -> None:
        super().__init__(player_id, seed)
        self.had_n = False

    def step(self, state: Any) -> int:
        self.had_n |= solver_for(state.rules).outcome(state.position) == "N"
        return super().step(state)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["kayles-20", "chomp-5x5", "nim-31-k4-misere"])
def test_mcts_bot_against_the_solver(name: str) -> None:
    """OpenSpiel's MCTSBot (random rollouts) against `SolverBot` in OpenSpiel's own game
    loop (`evaluate_bots`), both seats: the solver wins exactly the games in which it is
    ever to move in an N-position (it never lets a won position go)."""
    from open_spiel.python.algorithms import evaluate_bots, mcts

    game = mos.load_game(name)
    solver_wins = 0
    for seed in range(6):
        seat = seed % 2
        rollouts = mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed))
        mcts_bot = mcts.MCTSBot(game, 2.0, 60, rollouts, random_state=np.random.RandomState(seed))
        solver_bot = _Recording(seat, seed)
        bots = [solver_bot, mcts_bot] if seat == 0 else [mcts_bot, solver_bot]
        returns = evaluate_bots.evaluate_bots(
            game.new_initial_state(), bots, np.random.RandomState(seed)
        )
        assert (returns[seat] == 1.0) == solver_bot.had_n
        solver_wins += returns[seat] == 1.0
    assert solver_wins >= 3  # the solver moving first from an N-position always wins
