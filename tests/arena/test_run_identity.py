"""One run spelled many ways is one identity (one hash, one log); two runs are two.

The spellings are the ones a user writes for one run: a method's alias or its long name,
a default written out or left out, parameters in either order, inline or given apart, a
game by preset or by name, a simulated model's parameters in either order, a replicated
model's replicas in either order. A log keyed by the hash the config had as spelled (the
key of every log written before identities were canonical) is resumed, not replaced.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from pathlib import Path
from typing import Any

import pytest

from metanim.agents import SelfConsistency
from metanim.arena import TournamentConfig, run_tournament
from metanim.records import NOT_IDENTITY, config_identity, current_prompt_versions, read_log

R1, R2 = "http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"


def _hash(**fields: Any) -> str:
    # structured_output off: a real model's server is never asked what it constrains.
    return TournamentConfig(structured_output="off", **fields).config_hash()


#: Groups of spellings of one run: each group one hash.
SAME = {
    "sc alias": [{"method": "sc"}, {"method": "self_consistency"}],
    "refine alias": [{"method": "refine"}, {"method": "self_refine"}],
    "anon_mad alias": [{"method": "anon_mad"}, {"method": "anonymous_mad"}],
    "dreamad- alias": [
        {"method": "dreamad-"},
        {"method": "dreamad_minus"},
        {"method": "dreamad", "params": {"variant": "minus"}},
    ],
    "+mad alias": [{"method": "+mad"}, {"method": "plus_mad"}],
    "default written out": [
        {"method": "sc"},
        {"method": "sc:n=5"},
        {"method": "sc", "params": {"n": 5}},
        {"method": "self_consistency:temperature=0.7"},
    ],
    "parameter order": [
        {"method": "sc:n=3,temperature=0.5"},
        {"method": "sc:temperature=0.5,n=3"},
        {"method": "sc:n=3", "params": {"temperature": 0.5}},
        {"method": "self_consistency", "params": {"temperature": 0.5, "n": 3}},
    ],
    "game name": [
        {"games": ["fibonacci"]},
        {"games": ["fibonacci-20"]},
        {"games": ['fibonacci:{"n":20}']},
        {"games": ["fibonacci-20", "fibonacci"]},
    ],
    "game order": [
        {"games": ["fibonacci-20", "nim-31-k3"]},
        {"games": ["nim-31-k3", "fibonacci-20"]},
    ],
    "simulated model parameter order": [
        {"method": "react", "model": "sim-biased:heuristic=min_take,p=0.8"},
        {"method": "react", "model": "sim-biased:p=0.8,heuristic=min_take"},
        {"method": "react", "model": "sim-biased:p=0.80,heuristic=min_take"},
        {"method": "react:sim-biased:p=0.8,heuristic=min_take"},
    ],
    "replica order": [
        {"method": "react", "model": f"m@{R1}|{R2}"},
        {"method": "react", "model": f"m@{R2}|{R1}"},
        {"method": "react", "model": "m", "base_url": f"{R2}|{R1}"},
        {"method": f"react:m@{R2}|{R1}"},
    ],
    "solver spelling": [
        {"opponent": "epsilon:0.5"},
        {"opponent": "epsilon:0.50"},
        {"opponent": "Epsilon:0.5"},
    ],
}

#: Pairs of different runs: each pair two hashes.
DIFFERENT = {
    "parameter value": ({"method": "sc:n=5"}, {"method": "sc:n=6"}),
    "method": ({"method": "sc"}, {"method": "self_refine"}),
    "dreamad variant": ({"method": "dreamad"}, {"method": "dreamad-"}),
    "model": ({"model": "sim-optimal"}, {"model": "sim-random"}),
    "model parameter": (
        {"model": "sim-biased:heuristic=max_take,p=0.8"},
        {"model": "sim-biased:heuristic=max_take,p=0.6"},
    ),
    "game size": ({"games": ["fibonacci-20"]}, {"games": ['fibonacci:{"n":21}']}),
    "game rule": ({"games": ["fibonacci-20"]}, {"games": ["fibonacci-20-misere"]}),
    "replica set": ({"model": f"m@{R1}|{R2}"}, {"model": f"m@{R1}|http://127.0.0.1:11/v1"}),
    "opponent": ({"opponent": "epsilon:0.5"}, {"opponent": "epsilon:0.25"}),
}


@pytest.mark.parametrize("spellings", SAME.values(), ids=SAME.keys())
def test_every_spelling_of_a_run_has_one_hash(spellings: list[dict[str, Any]]) -> None:
    hashes = {_hash(**fields) for fields in spellings}
    assert len(hashes) == 1, spellings


@pytest.mark.parametrize(("one", "other"), DIFFERENT.values(), ids=DIFFERENT.keys())
def test_different_runs_have_different_hashes(one: dict[str, Any], other: dict[str, Any]) -> None:
    assert _hash(**one) != _hash(**other)


def test_the_identity_holds_the_long_name_and_the_declared_defaults() -> None:
    identity = config_identity(TournamentConfig(method="sc").model_dump(mode="json"))
    assert identity["method"] == "self_consistency"
    # The defaults as the class declares them, read from its signature here.
    declared = inspect.signature(SelfConsistency.__init__).parameters
    assert identity["params"]["n"] == declared["n"].default
    assert identity["params"]["temperature"] == declared["temperature"].default
    assert identity["games"] == ["fibonacci-20"]


def _as_the_previous_code(config: TournamentConfig) -> str:
    """The hash the previous code gave `config` (one method side on the in-process
    simulator, a solver opponent): the config minus its run settings, the method, model
    and games as spelled, the server token, the prompt versions (and no `list_moves`, a
    field it did not have)."""
    body = {k: v for k, v in config.model_dump(mode="json").items() if k not in NOT_IDENTITY}
    body.pop("list_moves")
    for name in ("opponent_model", "opponent_params", "opponent_base_url"):
        body.pop(name)
    body["base_url"] = "sim:in-process"
    body["prompt_versions"] = current_prompt_versions()
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12]


def _sc_on_sim(tmp_path: Path, **fields: Any) -> TournamentConfig:
    """Self-consistency (n=3, inline) on the in-process simulator against a solver."""
    return TournamentConfig(
        method="sc:n=3", model="sim-optimal", opponent="random", structured_output="off",
        results_dir=str(tmp_path), progress=False, **fields,
    )  # fmt: skip


def test_a_log_keyed_by_the_config_as_spelled_is_resumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _sc_on_sim(tmp_path, games=["fibonacci"], episodes=3)
    old = _as_the_previous_code(config)
    assert old != config.config_hash()
    old_log = tmp_path / f"tournament-{old}.jsonl"
    # The previous code's log: its hash, and its setting keyed as spelled.
    with monkeypatch.context() as m:
        m.setattr(TournamentConfig, "log_choice", lambda self, sides=None: (old, old_log, True))
        first = run_tournament(config.model_copy(update={"episodes": 2}))
    assert first.log_path == old_log and first.played_now == 2
    key = 'fibonacci:{"misere":false,"n":20}'
    ids = [hashlib.sha256(f"{old}|{key}|{i}".encode()).hexdigest()[:16] for i in range(2)]
    assert sorted(r.id for r in read_log(old_log)) == sorted(ids)

    # The same command, one episode more: it resumes that log, playing only the third.
    again = run_tournament(config)
    assert again.log_path == old_log and again.played_now == 1
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == [old_log.name]
    assert len({r.id for r in read_log(old_log)}) == 3


def test_the_canonical_log_comes_before_one_keyed_as_spelled(tmp_path: Path) -> None:
    config = _sc_on_sim(tmp_path, episodes=1)
    canonical = tmp_path / f"tournament-{config.config_hash()}.jsonl"
    spelled = tmp_path / f"tournament-{config.config_hash(as_spelled=True)}.jsonl"
    assert canonical != spelled
    canonical.touch()
    spelled.touch()
    assert config.log_path == canonical
    canonical.unlink()
    assert config.log_path == spelled
    spelled.unlink()
    assert config.log_path == canonical
