"""Real logs in the format of earlier versions: small fixtures for the readers' tests.

For each commit named, a git worktree of it runs, from its own code, a 2-episode
tournament (ReAct on the default simulated model against the optimal player, NIM) and an
evaluation of 2 critical states of NIM, 2 repeats, every decision recorded; the logs and
the config files beside them land in `tests/records/data/<date>-<commit>/`. The test
`tests/records/test_versions.py` reads every one of them with today's readers.

    python scripts/old_logs.py 7f19bad 2d62bc4 ...
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "records" / "data"

RUN = r"""
import sys, json, warnings
warnings.simplefilter("ignore")
from pathlib import Path
out = Path(sys.argv[1])
from metanim.arena.tournament import TournamentConfig, run_tournament
from metanim.arena.evaluate import EvaluationConfig, run_evaluation
from metanim.datasets import build
fields = TournamentConfig.model_fields
kw = dict(games=["nim"], method="react", opponent="optimal", episodes=2, results_dir=str(out), seed=0)
kw = {k: v for k, v in kw.items() if k in fields}
if "progress" in fields:
    kw["progress"] = False
run_tournament(TournamentConfig(**kw))
records = build("nim", 2, seed=0, params={"heaps": [31], "max_take": 3})
data = out / "nim-data.jsonl"
data.write_text("".join(r.model_dump_json() + "\n" for r in records))
fields = EvaluationConfig.model_fields
kw = dict(dataset=[str(data)], method="react", repeats=2, results_dir=str(out), seed=0)
kw = {k: v for k, v in kw.items() if k in fields}
if "progress" in fields:
    kw["progress"] = False
run_evaluation(EvaluationConfig(**kw))
"""


def main() -> None:
    for commit in sys.argv[1:]:
        date = subprocess.run(
            ["git", "show", "-s", "--format=%cs", commit], cwd=ROOT, capture_output=True,
            text=True, check=True,
        ).stdout.strip()  # fmt: skip
        target = OUT / f"{date}-{commit[:7]}"
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp) / "tree"
            subprocess.run(
                ["git", "worktree", "add", "--detach", str(tree), commit], cwd=ROOT, check=True,
                capture_output=True,
            )  # fmt: skip
            try:
                out = Path(tmp) / "out"
                boot = (
                    "import sys; sys.meta_path[:] = [f for f in sys.meta_path "
                    "if 'editable' not in type(f).__name__.lower()]; "
                    f"sys.path.insert(0, {str(tree)!r}); sys.argv = ['x', {str(out)!r}]; "
                    f"exec({RUN!r})"
                )
                done = subprocess.run([sys.executable, "-c", boot], capture_output=True, text=True)
                if done.returncode != 0:
                    print(f"{commit}: failed\n{done.stderr[-2000:]}")
                    continue
                target.mkdir(parents=True, exist_ok=True)
                for path in out.iterdir():
                    if (
                        path.name.endswith((".jsonl", ".config.json"))
                        and path.name != "nim-data.jsonl"
                    ):
                        shutil.copy(path, target / path.name)
                print(f"{commit}: {target}")
            finally:
                subprocess.run(
                    ["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False
                )


if __name__ == "__main__":
    main()
