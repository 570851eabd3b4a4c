"""Learning works: tabular Q-learning (scripts/train_tabular.py) beats the random opponent."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "train_tabular.py"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("train_tabular", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("env_id", ["MetaNIM/Nim-v0", "MetaNIM/Fibonacci-v0"])
def test_q_learning_beats_the_random_opponent(env_id: str) -> None:
    script = load_script()
    q = script.train(env_id, 800, opponent="random", seed=0)
    learned = script.win_rate(env_id, q, 300, opponent="random")
    baseline = script.win_rate(env_id, "random", 300, opponent="random")
    assert learned >= 0.9
    assert learned >= baseline + 0.25, (learned, baseline)
