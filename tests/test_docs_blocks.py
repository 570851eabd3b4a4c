"""Every runnable Python block of the docs runs as written.

A page's blocks run in order in one fresh process, as a reader would type them into one
session (a later block uses what an earlier one made), in a scratch folder, with the
simulated server as the OpenAI-compatible endpoint. A block whose first line is
`# not run in the suite: <why>` (a hosted API, minutes of training, files another
command writes) is only shown. The README's blocks run in tests/test_readme.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import need

pytestmark = pytest.mark.slow

DOCS = Path(__file__).resolve().parent.parent / "docs"
#: A fence opens and closes at the start of a line (a ``` inside a string is no fence).
FENCE = re.compile(r"^```python\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
SHOWN_ONLY = "# not run in the suite"
#: The optional packages a page's blocks import (their extras; CI installs them all).
NEEDS = {
    "integrations.md": ("inspect_ai", "pyspiel", "game_arena", "textarena", "trl"),
    "datasets.md": ("pandas",),
}


def _blocks(page: Path) -> list[str]:
    return [textwrap.dedent(block) for block in FENCE.findall(page.read_text(encoding="utf-8"))]


def _runnable(page: Path) -> list[str]:
    return [b for b in _blocks(page) if not b.startswith(SHOWN_ONLY)]


#: The pages with a block to run (a page whose blocks are all shown only has none).
PAGES = sorted(p.name for p in DOCS.glob("*.md") if _runnable(p))


def test_the_fence_pattern_finds_the_blocks() -> None:
    assert {"envs.md", "integrations.md", "questions.md"} <= set(PAGES)
    pages = [p for p in DOCS.glob("*.md")]
    shown = [b for page in pages for b in _blocks(page) if b.startswith(SHOWN_ONLY)]
    assert shown, "no block is shown only: the marker is not found"
    assert all(re.match(rf"{SHOWN_ONLY}: \S", b) for b in shown)  # each says why


@pytest.mark.parametrize("page", PAGES)
def test_a_pages_blocks_run_in_order(page: str, tmp_path: Path) -> None:
    for module in NEEDS.get(page, ()):
        need(module)
    runnable = _runnable(DOCS / page)
    from metanim.llm.sim import SimServer

    with SimServer(seed=0) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sim"}
        done = subprocess.run(
            [sys.executable, "-c", "\n".join(runnable)], capture_output=True, text=True,
            cwd=tmp_path, env=env, timeout=600,
        )  # fmt: skip
    assert done.returncode == 0, (page, done.stderr[-3000:])
