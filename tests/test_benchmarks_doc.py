"""docs/benchmarks.md is the current truth: every figure lies in a section that a script
writes, between the comments `scripts/_bench.write_section` puts around it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
OPEN = re.compile(r"<!-- written by scripts/([\w.-]+\.py): ([\w-]+) -->")


def sections(text: str) -> tuple[list[tuple[str, str, str]], str]:
    """(script, name, body) of every marked section, and the text outside them."""
    found, outside, at = [], [], 0
    for match in OPEN.finditer(text):
        if match.start() < at:
            raise AssertionError(f"section {match.group(2)} opens inside another")
        script, name = match.groups()
        end = text.find(f"<!-- end of {name} -->", match.end())
        assert end >= 0, f"section {name} (scripts/{script}) is never closed"
        outside.append(text[at : match.start()])
        found.append((script, name, text[match.end() : end]))
        at = end + len(f"<!-- end of {name} -->")
    outside.append(text[at:])
    return found, "".join(outside)


def test_no_figure_outside_a_script_written_section() -> None:
    _, outside = sections(DOC.read_text())
    stray = [line for line in outside.splitlines() if re.search(r"\d", line)]
    assert stray == [], f"figures outside the script-written sections: {stray[:3]}"


def test_every_section_names_a_script_that_writes_it() -> None:
    found, _ = sections(DOC.read_text())
    assert found, "no script-written section at all"
    names = [name for _, name, _ in found]
    assert len(names) == len(set(names)), "a section appears twice"
    for script, name, body in found:
        source = (ROOT / "scripts" / script).read_text()
        # The script writes this section by name (write_section("<name>", ...)).
        assert re.search(r"write_section\(\s*\"" + re.escape(name) + '"', source), (script, name)
        assert body.strip(), f"section {name} is empty"


def test_the_check_catches_a_stray_figure_and_an_unclosed_section() -> None:
    text = DOC.read_text()
    _, outside = sections(text + "\nThe env runs at 3.5M steps/s.\n")
    assert re.search(r"\d", outside)
    broken = text.replace("<!-- end of env -->", "", 1)
    try:
        sections(broken)
    except AssertionError:
        pass
    else:  # pragma: no cover - the check itself is broken
        raise AssertionError("an unclosed section went unnoticed")
