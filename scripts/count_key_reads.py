"""Count the string-key reads of dicts in the modules that read run logs.

A string-key read is `x["name"]` (a subscript by a string constant, read not written)
or `x.get("name", ...)`: how code reads a log line that is a plain dict. A typed record
is read by attribute (`record.status`), which this does not count. The same count runs
on any git revision, so a change is measured before and after by the same script:

    python scripts/count_key_reads.py              # the working tree
    python scripts/count_key_reads.py --rev main   # a commit, branch or tag
"""

from __future__ import annotations

import argparse
import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The readers of log lines: the run summaries, the folder report, the page, the ratings,
#: the folder reader and the log identity, and the modules that take their places.
FILES = (
    "metanim/records/_summary.py",
    "metanim/records/_identity.py",
    "metanim/records/_log.py",
    "metanim/analysis/results.py",
    "metanim/analysis/report.py",
    "metanim/analysis/viewer.py",
    "metanim/analysis/ratings.py",
    # modules of this change that read what the ones above read
    "metanim/records/_read.py",
    "metanim/records/_versions.py",
    "metanim/records/_table.py",
    "metanim/records/_metrics.py",
    "metanim/analysis/frames.py",
    "metanim/analysis/tables.py",
)


def count(source: str) -> int:
    """String-key reads in one module's source."""
    n = 0
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        ) or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            n += 1
    return n


def source_at(path: str, rev: str | None) -> str | None:
    if rev is None:
        file = ROOT / path
        return file.read_text() if file.exists() else None
    done = subprocess.run(
        ["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return done.stdout if done.returncode == 0 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rev", help="a git revision (default: the working tree)")
    args = parser.parse_args()
    total = 0
    for path in FILES:
        source = source_at(path, args.rev)
        if source is None:
            continue
        n = count(source)
        total += n
        print(f"{n:5d}  {path}")
    print(f"{total:5d}  total ({args.rev or 'working tree'})")


if __name__ == "__main__":
    main()
