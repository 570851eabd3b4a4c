"""The layer order and the package faces (pyproject's import-linter contracts) hold.

import-linter reads the imports of the installed source tree; the scratch tests copy the
package, add one import that breaks a contract, and check that the same contracts fail.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports on the package under `root`, with the project's contracts."""
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename=sys.argv[2], no_cache=True, no_logo=True))"
    )
    return subprocess.run(
        [sys.executable, "-c", script, str(root), str(ROOT / "pyproject.toml")],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_the_package_keeps_every_contract() -> None:
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        # a rule module reaching up to the arena: a layer imported from below
        ("games/_scratch.py", "import metanim.arena\n", "layers:"),
        # the CLI using another package's private module instead of its face
        ("cli/_scratch.py", "from metanim.arena import _run\n", "private modules"),
        # the chat client learning about games
        ("llm/cache.py", "import metanim.games\n", "the LLM client is game-agnostic"),
    ],
)
def test_a_bad_import_breaks_its_contract(
    tmp_path: Path, module: str, line: str, contract: str
) -> None:
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "metanim", tmp_path / "metanim", ignore=ignore)
    target = tmp_path / "metanim" / module
    target.write_text((target.read_text() if target.exists() else "") + line)
    result = lint(tmp_path)
    assert result.returncode != 0
    # The section after the summary names each broken contract and the offending import.
    _, found, broken = result.stdout.partition("Broken contracts")
    assert found, result.stdout
    assert contract in broken
    assert f"metanim.{module.removesuffix('.py').replace('/', '.')}" in broken


@pytest.mark.slow
def test_one_runs_config_enters_each_file_at_most_twice() -> None:
    """scripts/trace_run.py: a one-episode tournament's config on its way to the first move."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "trace_run.py"), "--json"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr
    entries = json.loads(result.stdout)["entries"]
    # The walk reaches the run loop, the players and the client: it is not empty.
    assert {"metanim/arena/_run.py", "metanim/arena/_players.py", "metanim/llm/client.py"} <= set(
        entries
    )
    assert max(entries.values()) <= 2, entries
