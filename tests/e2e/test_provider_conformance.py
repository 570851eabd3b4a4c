"""Every method against every provider behaviour: it runs, or it refuses with one line.

The expected outcome of each cell is read from the table in docs/llm.md ("Provider
conformance"), so every cell of that table comes from this test. Each fake server
(`metanim.llm.sim.providers`) answers as its provider documents it; the model behind it
plays optimally, so "runs" means: the decision finished, with its answer, no forfeit and
no infrastructure error. A refusal is one line naming the fix, raised before the first
call reaches the server ("before the first call"), or at the first calls: the ones a
method's first round had in flight when the first refusal came back (at most
`FIRST_ROUND` of them; a debate asks its agents at once), nothing sent after.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from metanim.arena import EvaluationConfig, run_evaluation
from metanim.datasets import build, write_jsonl
from metanim.llm import InfrastructureError, forget_probes
from metanim.llm.sim.providers import ProviderServer

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

DOC = Path(__file__).resolve().parents[2] / "docs" / "llm.md"
METHODS = (
    "standard", "react", "cot", "sc", "self_refine", "mad", "mpd", "dreamad",
    "dreamad_minus", "plus_mad", "anonymous_mad", "acemad", "cross",
)  # fmt: skip
#: The most calls a method has in flight at once in its first round (AceMAD's 5 agents,
#: Self-Consistency's 5 samples).
FIRST_ROUND = 5
#: The model each row plays (the first its fake serves; Azure's by deployment).
MODELS = {"azure": "azure:my-o4-mini", "deepseek": "deepseek-reasoner"}


def table() -> tuple[list[tuple[str, str, list[str]]], dict[str, tuple[str, str]]]:
    """(rows: server, flags, cells) and the footnotes: mark -> (when, line)."""
    text = DOC.read_text()
    start = text.index("<!-- conformance: tests/e2e/test_provider_conformance.py -->")
    end = text.index("<!-- end of conformance -->", start)
    rows, notes = [], {}
    for line in text[start:end].splitlines():
        note = re.match(r"^- (\S) (before the first call|at its first calls): `(.+)`$", line)
        if note:
            notes[note.group(1)] = (note.group(2), note.group(3))
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 + len(METHODS) or cells[0] in ("server (fake)", "") or "---" in line:
            continue
        head = [c.strip("` ") for c in line.strip().strip("|").split("|")[2:]]
        rows.append((cells[0].strip("`"), cells[1].strip("`"), head))
    return rows, notes


ROWS, NOTES = table()


def test_the_table_covers_every_method_and_behaviour():
    from metanim.llm.sim.providers import BEHAVIOURS

    header = next(
        line for line in DOC.read_text().splitlines() if line.startswith("| server (fake) |")
    )
    assert [c.strip() for c in header.strip("|").split("|")[2:]] == list(METHODS)
    assert {server for server, _, _ in ROWS} == set(BEHAVIOURS)
    marks = {cell[-1] for _, _, cells in ROWS for cell in cells if cell != "runs"}
    assert marks <= set(NOTES), marks - set(NOTES)


@pytest.fixture(scope="module")
def item(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("conformance") / "nim.jsonl"
    write_jsonl(build("nim-31-k3", n=1, seed=3), path)
    return path


def _flags(text: str) -> dict[str, str]:
    words = shlex.split(text)
    out = {}
    for flag, value in zip(words[::2], words[1::2], strict=True):
        out[flag.removeprefix("--").replace("-", "_")] = value
    return out


@pytest.mark.parametrize(("server", "flags", "cells"), ROWS, ids=[f"{s} {f}" for s, f, _ in ROWS])
def test_every_method_against_the_server(server, flags, cells, item, tmp_path, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-test-key")
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-12-01-preview")
    wrong = []
    with ProviderServer(server) as fake:
        model = MODELS.get(server, next(iter(fake.behaviour.models)))
        url = fake.root if server == "azure" else fake.base_url
        for method, want in zip(METHODS, cells, strict=True):
            forget_probes()
            spec = method if method != "cross" else f"cross:models={model}@{url}|{model}@{url}"
            before = fake.handlers.calls
            got = _outcome(spec, model, url, item, tmp_path / method, _flags(flags))
            sent = fake.handlers.calls - before
            if want == "runs":
                ok = got == "runs"
            else:
                when, line = NOTES[want[-1]]
                if when == "before the first call":
                    ok = line in got and sent == 0
                else:
                    ok = line in got and 1 <= sent <= FIRST_ROUND
            if not ok:
                wrong.append(f"{method}: want {want!r}, got {got!r} ({sent} calls sent)")
    assert not wrong, "\n".join(wrong)


def _outcome(spec: str, model: str, url: str, item: Path, results: Path, flags: dict) -> str:
    try:
        config = EvaluationConfig(
            dataset=[str(item)], method=spec, model=model, base_url=url, repeats=1,
            results_dir=str(results), progress=False, concurrency=1, **flags,
        )  # fmt: skip
        result = run_evaluation(config)
    except (ValueError, InfrastructureError) as exc:
        return str(exc).splitlines()[0]
    rows = result.records
    if result.complete and rows and all(r.status == "ok" for r in rows):
        return "runs"
    return "; ".join(f"{r.status}: {r.error or r.verdict}" for r in rows)
