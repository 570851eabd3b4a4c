"""Model options in the arena: the run header states each model's profile and defaults,
profiles may set run settings (not two differently), and --provider names every kind."""

from __future__ import annotations

import typing

import pytest

from metanim.arena import (
    AgentProfile,
    ClientPool,
    TournamentConfig,
    merge_profiles,
    profile_fields,
)
from metanim.arena._config import ProviderSetting
from metanim.arena.tournament import run_tournament
from metanim.llm import PROVIDER_KINDS, ModelSpec, forget_probes
from metanim.llm.sim.providers import ProviderServer


def test_every_provider_kind_can_be_named():
    assert typing.get_args(ProviderSetting) == ("auto", *PROVIDER_KINDS)


def test_the_header_states_each_models_profile_and_defaults(tmp_path):
    forget_probes()
    heard: list[str] = []
    with ProviderServer("openai-reasoning") as server:
        config = TournamentConfig(
            model="o4-mini", base_url=server.base_url, method="react", episodes=1,
            opponent="optimal", results_dir=str(tmp_path), progress=False,
            reasoning_effort="low", omit_params=["seed"],
        )  # fmt: skip
        result = run_tournament(config, announce=heard.append)
    (header,) = heard
    line = next(x for x in header.splitlines() if x.startswith("o4-mini:"))
    assert "provider openai (its models are owned_by 'system')" in line
    assert "cap auto = 25000" in line and "sent as max_completion_tokens" in line
    assert "temperature the server's default" in line and "timeout 600 s of silence" in line
    assert "streamed" in line and "reasoning effort low" in line and "left out: seed" in line
    (sent,) = result.summary["calls_sent"].values()
    assert sent["cap_default"] == 25_000 and sent["adapted"] == []


def test_profiles_set_run_settings_and_two_that_differ_are_refused():
    a = AgentProfile(name="a", model="o4-mini", method="react", options={"timeout_s": 900})
    b = AgentProfile(name="b", model="o3", method="react", options={"timeout_s": 300})
    fields = profile_fields(a)
    assert fields["timeout_s"] == 900 and TournamentConfig(**fields).timeout_s == 900
    with pytest.raises(ValueError, match="set timeout_s differently"):
        merge_profiles(profile_fields(a), profile_fields(b, prefix="opponent_"))
    with pytest.raises(ValueError, match="unknown option"):
        AgentProfile(name="c", model="m", method="react", options={"episodes": 3})


@pytest.mark.parametrize(("items", "calls"), [(256, 256), (8, 64)])
def test_a_simulated_model_takes_as_many_calls_as_items_in_flight(items: int, calls: int) -> None:
    # The simulator answers at once and reports no slots: a run of 256 episodes in flight
    # must not wait on 64 call slots (at least 64 however few the items).
    pool = ClientPool(
        "http://127.0.0.1:9/v1", max_concurrency=None, timeout_s=1, max_retries=0,
        items_in_flight=items,
    )  # fmt: skip
    assert pool("sim-optimal").inner.max_concurrency == calls
    # A real model's default is its server's (its slot count, else 8), not the run's.
    assert pool(ModelSpec.parse("gpt-4o", "http://127.0.0.1:9/v1")).inner.max_concurrency is None
