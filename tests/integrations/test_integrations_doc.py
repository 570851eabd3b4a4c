"""The Python examples of docs/integrations.md's OpenSpiel, game_arena, TextArena and TRL
sections run as written (each carries its own assertions); a block whose first line is
`# not run in the suite` (an API model, a GPU recipe) is only shown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import need

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
SECTIONS = {
    "## OpenSpiel": "pyspiel",
    "## game_arena (through OpenSpiel)": "game_arena",
    "## TextArena": "textarena",
    "## Rewards for LLM training (TRL)": "datasets",
}


def _blocks() -> list[tuple[str, int, str]]:
    text = DOC.read_text()
    found = []
    for heading, module in SECTIONS.items():
        start = text.index(f"\n{heading}\n")
        end = text.find("\n## ", start + 1)
        body = text[start : end if end != -1 else len(text)]
        for index, block in enumerate(re.findall(r"```python\n(.*?)```", body, flags=re.DOTALL)):
            if not block.startswith("# not run in the suite"):
                found.append((module, index, block))
    return found


BLOCKS = _blocks()


def test_every_section_has_a_runnable_example() -> None:
    assert {module for module, _, _ in BLOCKS} == set(SECTIONS.values())


@pytest.mark.parametrize(
    ("module", "index", "block"), BLOCKS, ids=[f"{m}-{i}" for m, i, _ in BLOCKS]
)
def test_doc_example_runs(module: str, index: int, block: str) -> None:
    need(module)
    namespace: dict[str, object] = {}
    exec(compile(block, f"docs/integrations.md[{module} block {index}]", "exec"), namespace)
    assert len(namespace) > 1  # the block ran and defined its names
