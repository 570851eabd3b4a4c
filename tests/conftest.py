"""The test tiers, and shared fixtures.

Tiers: `pytest` runs the fast tier, every test not marked `slow` and not under
tests/e2e/ (marked `e2e` here); `pytest --full` runs every test, which CI does. A marker
expression of one's own (`-m ...`) replaces the tier, and a test file or node id named on
the command line runs whatever its tier (see docs/testing.md).

Fixtures: `sim_server`: the simulated OpenAI-compatible server on loopback;
`run_metanim`: the `metanim` command run in this process; `demo`: a demo-like results
folder with its report; `fresh_probes`: no structured-output probe remembered."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from metanim.analysis import render_report
from metanim.cli import main
from metanim.llm import forget_probes
from metanim.llm.sim import SimServer

E2E = Path(__file__).resolve().parent / "e2e"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--full",
        action="store_true",
        help="run every tier: the fast tier and the tests marked slow or e2e (what CI runs)",
    )


def pytest_report_header(config: pytest.Config) -> str:
    if config.getoption("full") or config.getoption("markexpr"):
        return "tier: full" if config.getoption("full") else "tier: the -m expression"
    return "tier: fast (not slow, not e2e); --full runs every test"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(E2E):
            item.add_marker(pytest.mark.e2e)
    if config.getoption("full") or config.getoption("markexpr"):
        return
    named = {Path(arg.split("::")[0]).resolve() for arg in config.args}
    named = {path for path in named if path.is_file()}  # files and node ids, not folders
    keep, drop = [], []
    for item in items:
        later = item.get_closest_marker("slow") or item.get_closest_marker("e2e")
        (drop if later and item.path not in named else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(scope="session")
def sim_server() -> Iterator[SimServer]:
    """A running simulated server (accepts any key); call `reset_log()` before reading `log`."""
    with SimServer(seed=0) as server:
        yield server


@pytest.fixture
def fresh_probes() -> Iterator[None]:
    """No structured-output probe answer remembered from another test (`forget_probes`)."""
    # Each scripted server gets a new port, but a test must not see another's answer.
    forget_probes()
    yield
    forget_probes()


def main_exit_code(argv: Sequence[str]) -> int:
    """`metanim ARGV` through `metanim.cli.main`, as its process would exit: main's return
    value, or the code of the `SystemExit` argparse raises (a message given in place of a
    code goes to stderr, exit code 1, as the interpreter does)."""
    try:
        return main(list(argv))
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1


@pytest.fixture
def run_metanim(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Runs `metanim ARGS` in this process and answers as the command line does: the exit
    code, stdout and stderr. For tests of what a command says and does; a test whose point
    is the process itself (a signal, an interpreter's start or exit) starts a real one,
    under tests/e2e/."""

    def run(
        *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        with monkeypatch.context() as patch:
            if cwd is not None:
                patch.chdir(cwd)
            for key, value in (env or {}).items():
                patch.setenv(key, value)
            capsys.readouterr()  # what the test printed before is not the command's
            code = main_exit_code(args)
            out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["metanim", *args], code, out, err)

    return run


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo-like folder: DReaMAD vs ReAct on Fibonacci Nim, simulated models."""
    from metanim.arena import TournamentConfig, run_tournament

    root = tmp_path_factory.mktemp("demo")
    # From the initial state the opponent, when it moves first, starts where it can win
    # (a longer game with blunders to grade); the arena warns that the seat is losing.
    with pytest.warns(UserWarning, match="starts where it loses"):
        run_tournament(
        TournamentConfig(
            name="demo", games=["fibonacci-20"], method="dreamad",
            model="sim-biased:heuristic=max_take,p=0.8", opponent="react",
            opponent_model="sim-biased:heuristic=max_take,p=0.6", episodes=4,
            seat="alternate", start="initial", seed=0, results_dir=str(root), progress=False,
        )
        )  # fmt: skip
    render_report(root)
    return root


def need(module: str) -> Any:
    """Import an optional test dependency, or skip the test (or, at module level, the
    module) without it.

    `.ci/run` sets `METANIM_REQUIRE` to the modules CI installs (comma-separated): a
    test that needs one of them then fails instead of skipping when it does not
    import, so those tests can never pass in CI by being skipped.
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        required = {m.strip() for m in os.environ.get("METANIM_REQUIRE", "").split(",")}
        if module in required or module.split(".")[0] in required:
            pytest.fail(f"{module} is required here (METANIM_REQUIRE) but does not import: {err}")
        pytest.skip(f"{module} is not installed: {err}", allow_module_level=True)
