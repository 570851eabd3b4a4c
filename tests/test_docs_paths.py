"""The docs name code that exists: the architecture page's names, and every test file cited
anywhere (a moved test leaves no dangling path in a page, a docstring or a script)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CITED_TEST = re.compile(r"\btests/[A-Za-z0-9_/]*test_[A-Za-z0-9_]+\.py\b")


def _cited_test_paths() -> dict[str, list[str]]:
    cited: dict[str, list[str]] = {}
    files = [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    for folder in ("metanim", "scripts", "tests"):
        files += (ROOT / folder).rglob("*.py")
    for path in files:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for token in CITED_TEST.findall(line):
                cited.setdefault(token, []).append(f"{path.relative_to(ROOT)}:{n}")
    return cited


def test_every_cited_test_file_exists() -> None:
    cited = _cited_test_paths()
    assert cited, "the pattern finds no citation at all: it is broken"
    missing = {p: where for p, where in cited.items() if not (ROOT / p).is_file()}
    assert not missing, missing


@pytest.mark.slow  # imports every module the page names
def test_the_architecture_page_names_only_what_exists() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "check_names.py")],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
