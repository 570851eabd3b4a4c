"""`metanim reproduce mpd-levels` (seed 002): the planned conditions, and the table's
numbers counted again from the run's own records."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from metanim.cli import main
from metanim.records import read_log

#: Liang et al.'s design: each tit-for-tat level with the adaptive break, and the default
#: level (2) with the break off. condition -> (level, adaptive break).
DESIGN = {
    "level-0": (0, True),
    "level-1": (1, True),
    "level-2": (2, True),
    "level-3": (3, True),
    "level-2-fixed": (2, False),
}


def test_the_dry_run_plans_each_level_and_the_fixed_round_run(capsys, tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert main(["reproduce", "mpd-levels", "--dry-run", "--items", "2", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    (line,) = [x for x in printed.splitlines() if x.startswith("dry run: mpd-levels:")]
    assert "repeats=5, items=2, its simulated agents" in line
    runs = re.search(r"; runs (.*); files into", line)
    assert runs is not None and runs.group(1).split(", ") == list(DESIGN)
    assert not out.exists()  # nothing was written


def _cells(md: str, head: str) -> list[list[str]]:
    lines = md.splitlines()
    at = lines.index(head) + 2
    rows = []
    while at < len(lines) and lines[at].startswith("|"):
        rows.append([c.strip() for c in lines[at].strip("|").split("|")])
        at += 1
    return rows


def _log(folder: Path, condition: str) -> Path:
    (path,) = [p for p in folder.glob("*.jsonl") if re.fullmatch(rf"{condition}-[0-9a-f]+", p.stem)]
    return path


@pytest.mark.slow
def test_the_table_counts_what_the_records_hold(tmp_path: Path) -> None:
    from scipy.stats import binomtest

    items = 4
    args = ["reproduce", "mpd-levels", "--out", str(tmp_path), "--no-progress"]
    assert main([*args, "--items", str(items), "--repeats", "1"]) == 0
    md = (tmp_path / "mpd-levels.md").read_text()
    table = _cells(
        md,
        "| condition | level | adaptive break | items × R | accuracy [95% CI] "
        "| mean rounds | broke early |",
    )
    assert [row[0] for row in table] == list(DESIGN)
    majority: dict[str, dict[str, bool]] = {}
    for cond, level, adaptive, n, acc, rounds, early in table:
        records = read_log(_log(tmp_path / "mpd-levels", cond))
        assert len(records) == items
        want_level, want_adaptive = DESIGN[cond]
        for r in records:
            assert r.decision.params["level"] == want_level
            assert r.decision.params.get("adaptive_break", True) is want_adaptive
            # With the break off the judge is asked only once, to extract, after round 3.
            judge = [c.phase for c in r.decision.calls if c.agent == "judge"]
            assert want_adaptive or judge == ["extract"]
        assert (level, adaptive) == (str(want_level), "on" if want_adaptive else "off")
        right = sum(bool(r.correct) for r in records)
        # One repeat: the interval over items is Wilson's over the items (scipy's).
        ci = binomtest(right, items).proportion_ci(method="wilson")
        assert n == f"{items} × 1"
        assert acc == f"{100 * right / items:.1f}% [{100 * ci.low:.1f}%, {100 * ci.high:.1f}%]"
        debated = [len(r.decision.rounds) for r in records]
        assert rounds == f"{sum(debated) / items:.2f}"
        broke = [r.decision.extra["judge"]["adaptive_break"] for r in records]
        assert early == f"{sum(b is not None for b in broke)}/{items}"
        if not want_adaptive:
            assert debated == [3] * items and early == f"0/{items}"
        majority[cond] = {r.record_id: bool(r.correct) for r in records}
    paired = _cells(md, "| A | B | pairs | only A | only B | A − B (pp) [95% Tango] | McNemar p |")
    assert [(row[0], row[1]) for row in paired] == [
        ("level-2", "level-0"),
        ("level-2", "level-2-fixed"),
    ]
    for a, b, pairs, only_a, only_b, diff, _p in paired:
        va, vb = majority[a], majority[b]
        assert pairs == str(items)
        assert only_a == str(sum(va[k] and not vb[k] for k in va))
        assert only_b == str(sum(vb[k] and not va[k] for k in va))
        gap = (sum(va.values()) - sum(vb.values())) / items
        assert diff.startswith(f"{100 * gap:+.1f} [")
