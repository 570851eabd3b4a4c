"""The layer order and the package faces (pyproject's import-linter contracts) hold.

import-linter reads the imports of the installed source tree; the scratch tests copy the
package, add one import that breaks a contract, and check that the same contracts fail.
"""

from __future__ import annotations

import ast
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


# ------------------------------------------------------------------ import circles
CYCLES = """
import sys
sys.path.insert(0, sys.argv[1])
import grimp

graph = grimp.build_graph("metanim", include_external_packages=False)
edges = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
# Tarjan's strongly connected components, iteratively: a component of more than one
# module is an import circle (TYPE_CHECKING imports count: they tie the modules too).
index, low, stack, on_stack, circles = {}, {}, [], set(), []
for root in sorted(edges):
    if root in index:
        continue
    work = [(root, iter(sorted(edges[root])))]
    index[root] = low[root] = len(index)
    stack.append(root)
    on_stack.add(root)
    while work:
        node, children = work[-1]
        for child in children:
            if child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges[child]))))
                break
            if child in on_stack:
                low[node] = min(low[node], index[child])
        else:
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
print(circles)
"""


def import_circles(root: Path) -> list[list[str]]:
    """The import circles among the modules of the package under `root` (grimp's graph)."""
    result = subprocess.run(
        [sys.executable, "-c", CYCLES, str(root)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr
    return ast.literal_eval(result.stdout)


def test_no_module_imports_itself_through_others() -> None:
    assert import_circles(ROOT) == []


def test_an_added_circle_is_found(tmp_path: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "metanim", tmp_path / "metanim", ignore=ignore)
    # The move errors are a leaf below the game interface; importing it back is a circle,
    # and one that only a type checker reads is a circle all the same.
    errors = tmp_path / "metanim" / "games" / "errors.py"
    errors.write_text(
        errors.read_text() + "\nfrom typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from metanim.games._base import Game\n"
    )
    # The game interface imports the reply parser, which imports the errors: all three.
    assert import_circles(tmp_path) == [
        ["metanim.games._base", "metanim.games.errors", "metanim.games.reply"]
    ]
