"""Behaviour of `ImpartialGameEnv`: rewards, opponents, starts, illegal actions, text view."""

from __future__ import annotations

import random
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import metanim
from metanim import solver
from metanim.envs import ENV_IDS, ActionId, ImpartialGameEnv, OpponentForfeitError, register_envs
from metanim.envs.opponents import EpsilonOptimalOpponent, make_opponent
from metanim.games import IllegalMoveError, InvalidStateError, MoveError, UnparsableMoveError


def nim(**kwargs: Any) -> ImpartialGameEnv:
    return gym.make("MetaNIM/Nim-v0", **kwargs).unwrapped  # type: ignore[return-value]


def play_optimally(env: gym.Env[Any, Any], info: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    """Play the solver's moves to the end; returns the last reward and info."""
    game = env.unwrapped.game
    while True:
        move = solver.optimal_move(game, env.unwrapped.state, np.random.default_rng(0))
        _, reward, terminated, _, info = env.step(game.action_id(move))
        if terminated:
            return float(reward), info


def test_registration_is_idempotent() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        register_envs()
        register_envs()
    assert [i for i in gym.registry if i.startswith("MetaNIM/")] == ENV_IDS


def test_defaults_are_the_paper_settings() -> None:
    assert nim().game == metanim.make_game("nim-31-k3")
    assert gym.make("MetaNIM/Fibonacci-v0").unwrapped.game.n == 20
    assert gym.make("MetaNIM/Kayles-v0").unwrapped.game.rows == (20,)
    queen = gym.make("MetaNIM/CornerQueen-v0", preset="corner-queen")
    assert queen.reset(seed=0)[0].tolist() == [4, 16]


@pytest.mark.parametrize(
    ("preset", "start"),
    [
        ("nim-31-k4", [31]),
        ("fibonacci-20", [20, 19]),
        ("chomp-2x8", [8, 8]),
        ("kayles-2rows", None),
    ],
)
def test_a_preset_starts_at_the_paper_start(preset: str, start: list[int] | None) -> None:
    env_id = {"nim": "Nim", "fibonacci": "Fibonacci", "chomp": "Chomp", "kayles": "Kayles"}
    env = gym.make(f"MetaNIM/{env_id[preset.split('-')[0]]}-v0", preset=preset)
    _, info = env.reset(seed=0)
    game = env.unwrapped.game
    assert info["state"] == game.to_json(game.initial_state())
    if start is not None:
        assert info["state"] == start
    assert solver.outcome(game, game.initial_state()) == "N"


def test_size_kwargs_and_game_params_and_misere() -> None:
    env = nim(heaps=[3, 4, 5], max_take=None, misere=True)
    assert env.game.heaps == (3, 4, 5) and env.game.max_take is None and env.game.misere
    assert env.observation_space.shape == (3,)
    assert nim(game_params={"heaps": [7], "max_take": 2}).game.max_take == 2
    with pytest.raises(ValueError, match="preset"):
        nim(preset="fibonacci-20")
    with pytest.raises(ValueError, match="unknown preset"):
        nim(preset="nim-99")
    # An unknown keyword is a TypeError, as Python and Gymnasium raise it (torchrl relies on it).
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'pins'.*heaps, max_take"):
        nim(pins=3)


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("seat", ["first", "second"])
@pytest.mark.parametrize("misere", [False, True])
def test_random_start_is_an_n_position_and_optimal_play_wins(
    env_id: str, seat: str, misere: bool
) -> None:
    env = gym.make(env_id, seat=seat, misere=misere)
    game = env.unwrapped.game
    starts = set()
    for seed in range(6):
        _, info = env.reset(seed=seed)
        assert solver.outcome(game, env.unwrapped.state) == "N"
        assert (info["opponent_move"] is not None) == (seat == "second")
        starts.add(str(info["state"]))
        reward, info = play_optimally(env, info)
        assert reward == 1.0 and info["winner"] == "agent"
    assert len(starts) > 1


def test_rewards_normal_and_misere() -> None:
    env = nim()
    env.reset(seed=0, options={"state": [6]})
    _, reward, terminated, _, info = env.step(0)  # take 1 -> 5; opponent takes 1 -> 4 (P)
    assert (reward, terminated, info["opponent_move"], info["state"]) == (0.0, False, "1", [4])
    _, reward, terminated, _, info = env.step(2)  # take 3 -> 1; opponent takes the last item
    assert (reward, terminated, info["winner"]) == (-1.0, True, "opponent")

    misere = nim(misere=True)
    misere.reset(options={"state": [2]})
    assert misere.step(1)[1:3] == (-1.0, True)  # took the last item: loses in misère
    misere.reset(options={"state": [2]})
    _, reward, terminated, _, info = misere.step(0)  # opponent must take the last item
    assert (reward, terminated, info["winner"], info["opponent_move"]) == (1.0, True, "agent", "1")


def test_fibonacci_observation_carries_the_max_take() -> None:
    env = gym.make("MetaNIM/Fibonacci-v0", opponent="random")
    obs, _ = env.reset(seed=0, options={"state": [20, 19]})
    assert obs.tolist() == [20, 19]
    obs, _, _, _, info = env.step(0)  # take 1: the opponent may take at most 2
    taken = int(info["opponent_move"])
    assert taken in (1, 2)
    assert obs.tolist() == [19 - taken, min(2 * taken, 19 - taken)]
    assert info["action_mask"].sum() == obs[1]


def test_illegal_action_policies() -> None:
    env = nim()
    env.reset(seed=0, options={"state": [2]})
    _, reward, terminated, _, info = env.step(2)  # take 3 from a heap of 2
    assert (reward, terminated, info["illegal_action"], info["winner"]) == (
        -1.0,
        True,
        True,
        "opponent",
    )
    assert "only 2" in info["error"]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    _, info = env.reset(seed=0, options={"state": [2]})
    assert info["illegal_action"] is False and info["winner"] is None  # nothing leaks

    penal = nim(illegal="penalize", illegal_reward=-0.5)
    penal.reset(options={"state": [2]})
    obs, reward, terminated, _, info = penal.step(99)
    assert (obs.tolist(), reward, terminated, info["illegal_action"]) == ([2], -0.5, False, True)
    assert "outside the action space" in info["error"]
    assert penal.step(1)[1:3] == (1.0, True)

    strict = nim(illegal="raise")
    strict.reset(options={"state": [2]})
    with pytest.raises(IllegalMoveError, match="only 2"):
        strict.step(2)
    with pytest.raises(ValueError, match="illegal must be"):
        nim(illegal="ignore")


def test_action_masks_match_the_legal_moves() -> None:
    env = gym.make("MetaNIM/Chomp-v0", preset="chomp-2x8")
    _, info = env.reset(seed=0)
    game, state = env.unwrapped.game, env.unwrapped.state
    expected = np.zeros(game.info.num_actions, dtype=bool)
    expected[[game.action_id(m) for m in game.legal_moves(state)]] = True
    assert np.array_equal(env.unwrapped.action_masks(), expected)
    assert info["action_mask"].dtype == np.int8 and np.array_equal(info["action_mask"], expected)
    assert not expected[0]  # the poison is never a legal bite


def test_given_start_state_is_validated() -> None:
    with pytest.raises(InvalidStateError):
        nim(start=[40])
    env = nim(start=[9])
    assert env.reset(seed=0)[0].tolist() == [9]
    with pytest.raises(InvalidStateError):
        env.reset(options={"state": [-1]})
    with pytest.raises(ValueError, match="already over"):
        env.reset(options={"state": [0]})


def test_opponents_by_name_and_bad_names() -> None:
    assert isinstance(make_opponent("epsilon:0.2"), EpsilonOptimalOpponent)
    assert make_opponent("epsilon:0.2").epsilon == 0.2
    for bad in ("best", "epsilon:x", "epsilon:2"):
        with pytest.raises(ValueError):
            make_opponent(bad)


def test_epsilon_opponent_sits_between_random_and_optimal() -> None:
    # From 31 items (k=3) the optimal reply to any agent move is to restore n ≡ 0 mod 4.
    def restores_p_position(opponent: str) -> float:
        env, hits = nim(opponent=opponent, start=[31]), 0
        for seed in range(200):
            env.reset(seed=seed)
            hits += env.step(0)[4]["state"] == [28]
        return hits / 200

    optimal, eps, rand = (restores_p_position(o) for o in ("optimal", "epsilon:0.5", "random"))
    assert optimal == 1.0
    assert 0.5 < eps < 0.95
    assert rand < 0.5


@pytest.mark.parametrize(
    "reply",
    [
        lambda game, state, rng: (0, 1),  # a move
        lambda game, state, rng: ActionId(0),  # an action id
        lambda game, state, rng: np.int64(0),  # a plain integer: an action id in NIM
        # an LLM's reply: prose plus a fenced JSON block, read by the one reply parser
        lambda game, state, rng: 'I take 1 item.\n```json\n{"action": 1}\n```',
    ],
)
def test_callable_opponent_may_return_move_id_or_text(reply: Any) -> None:
    env = nim(opponent=reply)
    env.reset(seed=0, options={"state": [10]})
    _, reward, _, _, info = env.step(0)
    assert (info["state"], info["opponent_move"], reward) == ([8], "1", 0.0)


def test_fibonacci_callable_integer_is_stones_and_action_id_is_explicit() -> None:
    taken = []
    for reply in (lambda g, s, r: 2, lambda g, s, r: ActionId(0)):
        env = gym.make("MetaNIM/Fibonacci-v0", opponent=reply)
        env.reset(options={"state": [20, 19]})
        taken.append(env.step(0)[4]["opponent_move"])
    assert taken == ["2", "1"]


def test_illegal_opponent_forfeits() -> None:
    env = nim(opponent=lambda game, state, rng: "action: 7")
    env.reset(options={"state": [10]})
    _, reward, terminated, _, info = env.step(0)
    assert (reward, terminated, info["winner"]) == (1.0, True, "agent")
    assert "at most 3" in info["opponent_error"]


def test_all_randomness_comes_from_the_env_seed() -> None:
    def episode() -> list[Any]:
        env = nim(opponent="random", heaps=[12, 9], max_take=None)
        _, info = env.reset(seed=42)
        trace = [info["state"]]
        terminated = False
        while not terminated:
            _, _, terminated, _, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
            trace.append(info["state"])
        return trace

    random.seed(1)
    np.random.seed(1)
    first = episode()
    random.seed(2)
    np.random.seed(2)
    assert episode() == first


def test_reset_reuses_the_generator_without_a_seed() -> None:
    env = nim()
    starts = {env.reset(seed=0)[1]["state"][0]} | {env.reset()[1]["state"][0] for _ in range(8)}
    assert len(starts) > 1


def test_solver_info() -> None:
    env = nim(solver_info=True)
    _, info = env.reset(options={"state": [10]})
    assert (info["outcome"], info["grundy"], info["winning_actions"]) == ("N", 2, [1])
    _, info = nim(solver_info=True, misere=True).reset(options={"state": [9]})
    assert info["outcome"] == "P" and info["winning_actions"] == [] and "grundy" not in info


def test_prompt_and_parse_action_let_text_play_through_step() -> None:
    env = nim()
    env.reset(options={"state": [10]})
    prompt = env.prompt("Alice")
    assert prompt.startswith("#Game Role: You are Alice")
    assert "#Current State: There are 10 items remaining in the pile." in prompt
    assert env.parse_action('```json\n{"action": 2}\n```') == 1
    with pytest.raises(UnparsableMoveError):
        env.parse_action("no idea")
    with pytest.raises(IllegalMoveError, match="at most 3"):
        env.parse_action("5")
    _, _, _, _, info = env.step("2")  # 10 -> 8, a P-position: any reply is a loss for it
    assert info["agent_move"] == "2" and info["state"][0] in (5, 6, 7)
    _, reward, terminated, _, info = env.step("take banana")
    assert (reward, terminated, info["illegal_action"]) == (-1.0, True, True)
    assert "number" in info["error"]


@pytest.mark.parametrize("action", [0.7, 2.0, np.float64(1.0), True, np.bool_(False), None, [0]])
def test_a_non_integer_action_is_refused_never_truncated(action: Any) -> None:
    env = nim(illegal="penalize", illegal_reward=-0.5)
    env.reset(options={"state": [10]})
    obs, reward, terminated, _, info = env.step(action)
    assert (obs.tolist(), reward, terminated) == ([10], -0.5, False)  # nothing was played
    assert info["illegal_kind"] == "unparsable" and "neither an integer" in info["error"]
    # Integers of every kind are action ids: int, NumPy scalar, 0-d array.
    for index in (1, np.int64(1), np.array(1)):
        env.reset(options={"state": [10]})
        assert env.step(index)[4]["agent_move"] == "2"


def test_info_tells_unparsable_from_illegal_text() -> None:
    env = nim(illegal="penalize")
    env.reset(options={"state": [2]})
    info = env.step("I pass")[4]
    assert (info["illegal_action"], info["illegal_kind"]) == (True, "unparsable")
    info = env.step("3")[4]
    assert (info["illegal_action"], info["illegal_kind"]) == (True, "illegal")
    assert "only 2" in info["error"]
    assert "illegal_kind" not in env.step(0)[4]


@pytest.mark.parametrize("choice", [2.0, np.float32(1.0), (0.0,), True])
def test_an_opponent_float_is_a_forfeit_not_a_move(choice: Any) -> None:
    env = gym.make("MetaNIM/Fibonacci-v0", opponent=lambda g, s, r: choice)
    env.reset(options={"state": [20, 19]})
    _, reward, terminated, _, info = env.step(0)
    assert (reward, terminated, info["winner"], info["opponent_move"]) == (1.0, True, "agent", None)
    assert "is not a move" in info["opponent_error"]


def test_an_opponent_forfeit_in_reset_raises_a_named_error() -> None:
    env = nim(seat="second", opponent=lambda game, state, rng: "7")
    with pytest.raises(OpponentForfeitError, match=r"forfeited its first move.*at most 3") as err:
        env.reset(seed=0, options={"state": [10]})
    assert isinstance(err.value, MoveError) and err.value.text == "7"
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)  # no half-started episode is left to play


@pytest.mark.parametrize(
    ("kwargs", "start"),
    [
        ({"game": "nim", "heaps": [3, 4], "max_take": None}, [3, 4]),
        ({"game": "kayles", "preset": "kayles-20"}, None),
    ],
)
def test_info_state_and_arrays_are_fresh_each_time(kwargs: dict[str, Any], start: Any) -> None:
    # States are cached inside the env; what it hands out must not alias the cache.
    env = ImpartialGameEnv(**kwargs, start="initial" if start is None else start)
    obs, info = env.reset(seed=0)
    expected_state, expected_obs = list(info["state"]), obs.copy()
    info["state"].append("edited")
    info["action_mask"][:] = 0
    obs[...] = 7
    obs2, info2 = env.reset(seed=0)
    assert info2["state"] == expected_state
    assert np.array_equal(obs2, expected_obs) and info2["action_mask"].any()


@pytest.mark.filterwarnings("ignore:the start")  # jumps to P-positions on purpose
@pytest.mark.parametrize("kept", [True, False], ids=["kept masks", "fresh masks"])
@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [(env_id, {}) for env_id in ENV_IDS]
    + [
        ("MetaNIM/Nim-v0", {"heaps": [3, 9, 5], "max_take": None, "misere": True}),
        ("MetaNIM/Kayles-v0", {"rows": [4, 7], "opponent": "random", "seat": "second"}),
        ("MetaNIM/Chomp-v0", {"rows": 4, "cols": 6, "opponent": "epsilon:0.5"}),
    ],
)
def test_every_step_shows_the_rules_mask_and_state(
    monkeypatch: pytest.MonkeyPatch, kept: bool, env_id: str, kwargs: dict[str, Any]
) -> None:
    # Masks come from per-state caches (kept) or are written fresh for each call (many
    # actions; forced here with a limit of 0): either way each one equals the mask
    # listed from the rules, across steps, illegal actions and resets to any state,
    # and editing what the env returned changes nothing it returns later.
    from metanim.envs import env as env_module

    if not kept:
        monkeypatch.setattr(env_module, "_KEPT_MASK_ACTIONS", 0)
    env = gym.make(env_id, **kwargs)
    agent = env.unwrapped
    assert agent._keep_masks == kept
    game = agent.game
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    seen = []
    for _ in range(300):
        state = agent.state
        seen.append(state)
        expected = np.zeros(game.info.num_actions, np.int8)
        expected[[game.action_id(m) for m in game.legal_moves(state)]] = 1
        assert np.array_equal(info["action_mask"], expected), state
        assert np.array_equal(agent.action_masks(), expected.astype(bool)), state
        assert game.validate_state(info["state"]) == state
        raw = game.observation(state)
        assert np.array_equal(obs, raw if agent._encode.kind == "raw" else agent._encode(raw))
        info["action_mask"][:] = 0  # the caller's copies are the caller's
        obs[...] = 0
        if rng.random() < 0.05:
            action = int(np.flatnonzero(expected == 0)[0]) if not expected.all() else len(expected)
        else:
            legal = np.flatnonzero(expected)
            action = int(legal[rng.integers(len(legal))])
        obs, _, terminated, _, info = env.step(action)
        if terminated:
            jump = game.to_json(seen[rng.integers(len(seen))])
            # (With the opponent first, a jump could let its first move end the game.)
            second = kwargs.get("seat") == "second"
            options = {"state": jump} if rng.random() < 0.5 and not second else None
            obs, info = env.reset(options=options)


def test_a_mask_of_many_actions_is_written_fresh_for_each_step() -> None:
    # 5,000 actions: past the kept-mask limit, so no mask is cached per state.
    env = gym.make("MetaNIM/Nim-v0", heaps=[5_000], max_take=None, start="initial")
    agent = env.unwrapped
    assert not agent._keep_masks
    rng = np.random.default_rng(1)
    _, info = env.reset(seed=0)
    for _ in range(100):
        heap = agent.state[0]
        assert info["action_mask"][:heap].all() and not info["action_mask"][heap:].any()
        _, _, terminated, _, info = env.step(int(rng.integers(heap)))
        if terminated:
            _, info = env.reset()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_step_before_the_first_reset_says_so(env_id: str) -> None:
    env = gym.make(env_id)
    with pytest.raises(RuntimeError, match=r"no episode has started: call reset\(\) before"):
        env.step(0)
    # After an episode ends, the message says that one is over.
    env.reset(seed=0)
    terminated = truncated = False
    while not (terminated or truncated):
        _, _, terminated, truncated, _ = env.step(10**6)  # illegal: the agent forfeits
    with pytest.raises(RuntimeError, match=r"the episode is over; call reset\(\)"):
        env.step(0)
