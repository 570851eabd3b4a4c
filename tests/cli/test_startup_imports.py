"""What a fresh process has imported after `import metanim`, `metanim --help` and every
command that runs nothing (`--dry-run`), and after a preset env's first step: none of the
heavy libraries a command pays for only when it uses them (docs/benchmarks.md, "Start-up
and first use")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SAMPLES = Path(__file__).resolve().parents[2] / "metanim" / "samples"
#: Never imported by these processes (numba 0.3 s, scipy 1 s, pandas, aiohttp 0.25 s).
HEAVY = ("numba", "scipy", "pandas", "aiohttp")


def _loaded(code: str, cwd: Path) -> list[str]:
    """The modules of HEAVY (and their submodules) loaded after `code` in a new process."""
    probe = (
        f"{code}\nimport sys, json\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{HEAVY!r})), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=cwd, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stderr.strip().splitlines()[-1])


def _cli(argv: list[str]) -> str:
    return f"from metanim.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"


def test_import_metanim_loads_no_heavy_library(tmp_path: Path) -> None:
    assert _loaded("import metanim", tmp_path) == []
    # The env ids are registered all the same.
    code = "import metanim, gymnasium as gym\nassert 'MetaNIM/Nim-v0' in gym.registry"
    assert _loaded(code, tmp_path) == []


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["--version"], ["solve", "--help"], ["tournament", "--help"],
     ["dataset", "build", "--help"], ["serve-sim", "--help"], ["serve-local", "--help"]],
    ids=" ".join,
)  # fmt: skip
def test_help_and_version_load_no_heavy_library(argv: list[str], tmp_path: Path) -> None:
    assert _loaded(_cli(argv), tmp_path) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["tournament", "--dry-run"],
        ["tournament", "--game", "kayles-20-misere", "--game", "chomp-5x5", "--game",
         "corner-queen", "--game", "fibonacci-20-misere", "--game", "nim-31-k5-misere",
         "--dry-run"],
        ["demo", "--dry-run"],
        ["play", "--game", "nim-31-k3", "--agent", "react", "--dry-run"],
        ["evaluate", "--dataset", str(SAMPLES / "mc.jsonl"), "--dry-run"],
        ["challenging", "--dataset", str(SAMPLES / "mc.jsonl"), "--dry-run"],
        ["dataset", "build", "--dry-run"],
        ["dataset", "build", "--game", "chomp-5x5", "--dry-run"],
        ["report", "RESULTS", "--dry-run"],
        ["ratings", "RESULTS", "--dry-run"],
        ["reproduce", "all", "--dry-run"],
    ],
    ids=lambda argv: " ".join(a for a in argv if "/" not in a),
)  # fmt: skip
def test_every_dry_run_loads_no_heavy_library(argv: list[str], tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    (results / "t.jsonl").write_text('{"id": "a", "seat": "first", "status": "win"}\n')
    argv = [str(results) if a == "RESULTS" else a for a in argv]
    assert _loaded(_cli(argv), tmp_path) == []


@pytest.mark.parametrize("name", ["Nim", "Fibonacci", "Kayles", "Chomp", "CornerQueen"])
def test_a_preset_envs_first_step_loads_no_numba(name: str, tmp_path: Path) -> None:
    # Its tables are small: the kernels' own code runs in Python, nothing compiles.
    code = (
        "import numpy as np, gymnasium as gym, metanim\n"
        f"env = gym.make('MetaNIM/{name}-v0')\n"
        "obs, info = env.reset(seed=0)\n"
        "env.step(int(np.flatnonzero(info['action_mask'])[0]))"
    )
    assert _loaded(code, tmp_path) == []


def test_the_command_list_loads_no_command_library(tmp_path: Path) -> None:
    """`metanim --help` and `--version` list and name: they load no record, arena, agent
    or LLM module, nor pydantic (each command loads those when it runs)."""
    for argv in (["--help"], ["--version"]):
        probe = (
            f"{_cli(argv)}\nimport sys\nprint(sorted(m for m in sys.modules if m == 'pydantic' "
            "or m.startswith(('metanim.records', 'metanim.arena', 'metanim.agents', "
            "'metanim.llm'))), file=sys.stderr)"
        )
        done = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path,
            timeout=120,
        )  # fmt: skip
        assert done.stderr.strip().splitlines()[-1] == "[]", (argv, done.stderr[-1500:])
