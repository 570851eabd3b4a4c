"""A results folder of any size, quickly: a real run, then its lines replayed.

The first `--base` episodes (default 1,000) are a real tournament through the run loop:
`metanim tournament` with ReAct on the default simulated model against the optimal
player on NIM (`nim`: one heap of 31, take 1 to 3), 64 episodes at once, every decision
recorded. Past `--base`, each further episode k is a copy of episode k mod base under
the id, index and seed the same run would give episode k (so the folder reads as one
run of `--episodes` episodes, and a resume with that many finds nothing left): playing
100,000 episodes on a shared 2-core machine takes most of an hour, replaying them a
minute. Every line of every log file of the run that carries an episode id is replayed
(the log and its transcripts); the other lines are kept once.

    python scripts/gen_results.py /tmp/results-10k --episodes 10000
    python scripts/gen_results.py /tmp/old --episodes 1000 --code /tmp/oldcheckout

`--code` runs the tournament from another checkout of the project (a git worktree of an
older commit), so the same generator writes logs in the format of any version.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

GAME = "nim"
BASE = 1000


def launcher(code: str | None) -> list[str]:
    """The command that runs `metanim` from `code` (default: the installed package)."""
    if code is None:
        return [sys.executable, "-m", "metanim"]
    # The editable install's finder would win over sys.path: drop it for this process.
    boot = (
        "import sys; sys.meta_path[:] = [f for f in sys.meta_path "
        "if 'editable' not in type(f).__name__.lower()]; "
        f"sys.path.insert(0, {str(Path(code).resolve())!r}); "
        "from metanim.cli import main; sys.argv[0] = 'metanim'; sys.exit(main())"
    )
    return [sys.executable, "-c", boot]


def play(out: Path, episodes: int, code: str | None = None, concurrency: int = 64) -> Path:
    """A real tournament of `episodes` episodes into `out`; returns its log."""
    command = [
        *launcher(code), "tournament", "--games", GAME, "--method", "react",
        "--opponent", "optimal", "--episodes", str(episodes), "--concurrency", str(concurrency),
        "--seed", "0", "--results-dir", str(out), "--no-progress",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
    (log,) = (p for p in out.glob("tournament-*.jsonl") if p.name.count(".") == 1)
    return log


def derive_seed(seed: int, *parts: object) -> int:
    """`metanim.util.derive_seed`, written out so that any version's logs replay alike."""
    return zlib.crc32(repr((seed, *parts)).encode()) & 0x7FFFFFFF


def replay(log: Path, episodes: int) -> None:
    """Extend the run of `log` to `episodes` episodes by copying its lines (see above)."""
    digest = log.stem.rsplit("-", 1)[1]
    files = [p for p in (log, log.with_suffix(".transcripts")) if p.exists()]
    rows = [json.loads(line) for line in log.open("rb")]
    base = {r["id"]: (r["setting"], r["index"]) for r in rows}
    count = len(rows)
    for path in files:
        keyed: dict[str, list[dict]] = {}
        for line in path.open("rb"):
            row = json.loads(line)
            if isinstance(row, dict) and row.get("id") in base:
                keyed.setdefault(row["id"], []).append(row)
        order = sorted(keyed, key=lambda i: base[i][1])
        with path.open("ab") as f:
            for k in range(count, episodes):
                source = order[k % count]
                setting = base[source][0]
                new_id = hashlib.sha256(f"{digest}|{setting}|{k}".encode()).hexdigest()[:16]
                for row in keyed[source]:
                    copy = {**row, "id": new_id}
                    if "index" in copy:
                        copy["index"] = k
                        copy["seed"] = derive_seed(0, setting, k)
                    f.write(json.dumps(copy, separators=(",", ":")).encode() + b"\n")


def generate(out: Path, episodes: int, *, base: int = BASE, code: str | None = None) -> Path:
    """A folder of one run of `episodes` episodes (the first `base` played); its log."""
    out.mkdir(parents=True, exist_ok=True)
    log = play(out, min(base, episodes), code)
    if episodes > base:
        replay(log, episodes)
    return log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="the results folder to write (new)")
    parser.add_argument("--episodes", type=int, default=BASE)
    parser.add_argument("--base", type=int, default=BASE, help="episodes actually played")
    parser.add_argument("--code", help="a checkout of the project to play with")
    args = parser.parse_args()
    if args.out.exists() and any(args.out.iterdir()):
        parser.error(f"{args.out} is not empty")
    log = generate(args.out, args.episodes, base=args.base, code=args.code)
    size = sum(p.stat().st_size for p in args.out.iterdir() if p.is_file())
    print(f"{log}: {args.episodes} episodes, {size / args.episodes:,.0f} bytes per episode")


if __name__ == "__main__":
    main()
