"""The README's Python examples run as written (each carries its own assertions)."""

from __future__ import annotations

import re
import shlex
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


#: The commands of the README's command table, as a shell reads them (`\|` is a table's `|`).
TABLE = [
    row.replace("\\|", "|")
    for row in re.findall(r"^\| `(metanim [^`]*)` \|", README.read_text(), flags=re.MULTILINE)
]
#: The rows that run as written: every name in them is a real one or a model name, which a
#: dry run takes without calling it (A|B in the cross-model row).
AS_WRITTEN = (
    "metanim play ",
    "metanim dataset build ",
    "metanim evaluate --dataset samples/math.jsonl ",
)


def test_the_command_table_is_found() -> None:
    assert len(TABLE) >= 10
    assert all(any(row.startswith(prefix) for row in TABLE) for prefix in AS_WRITTEN)


@pytest.mark.parametrize("prefix", AS_WRITTEN)
def test_a_command_row_plans_as_written(prefix: str, tmp_path: Path, run_metanim) -> None:
    (row,) = [row for row in TABLE if row.startswith(prefix)]
    done = run_metanim(*shlex.split(row)[1:], "--dry-run", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("dry run:")
    assert not list(tmp_path.iterdir())  # a dry run writes nothing


def test_the_challenging_row_says_what_the_command_and_its_defaults_do(run_metanim) -> None:
    from metanim.arena import ChallengingConfig

    fields = ChallengingConfig.model_fields
    rule = (
        f"items a baseline answers right in < {fields['below'].default:.0%} of "
        f"{fields['repeats'].default} runs at T = {fields['temperature'].default}"
    )
    (row,) = re.findall(r"^\| `metanim challenging [^|]*\| (.*) \|$", README.read_text(), re.M)
    assert rule in row
    shown = " ".join(run_metanim("challenging", "--help").stdout.split())
    assert rule in shown
    listed = " ".join(run_metanim("--help").stdout.split())
    assert rule in listed
