"""The README's Python examples run as written (each carries its own assertions)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    # Each block carries its own asserts; an exception or a failed assert fails the test.
    exec(compile(BLOCKS[index], f"README.md[python block {index}]", "exec"), namespace)
    assert len(namespace) > 1  # the block ran and defined its names
