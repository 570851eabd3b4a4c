"""Start-up and first use: whole processes, against `python -c "import gymnasium"`.

    python scripts/bench_startup.py [--repeats 5]

Two tables, every command a fresh process timed from its start to its exit (wall
time), the commands taken in turn in each of several rounds and the minimum kept:
(1) `import metanim`, `metanim --help`, `--version`, every command's `--dry-run` and a
small `solve` against `import gymnasium` (and an empty interpreter), with the heavy
libraries each one loads; (2) the first step of each game's env (import, `gym.make`,
`reset`, one `step`) in a process whose numba cache folder (`NUMBA_CACHE_DIR`) is new
and empty (cold, as after a fresh install) against one whose cache a previous process
filled (warm). Writes the `startup` section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench import machine, table, write_section

PYTHON = sys.executable
#: Libraries `import metanim` and a command that runs nothing must not load.
HEAVY = ("numba", "scipy", "pandas", "aiohttp")
#: The `metanim` command: the console script beside this interpreter, else `-m metanim`.
_SCRIPT = Path(PYTHON).parent / "metanim"
METANIM = [str(_SCRIPT)] if _SCRIPT.exists() else [PYTHON, "-m", "metanim"]

#: (label, argv of `metanim`) of the command-line rows; the results folder is made below.
COMMANDS: list[tuple[str, list[str]]] = [
    ("metanim --help", ["--help"]),
    ("metanim --version", ["--version"]),
    ("metanim solve --help", ["solve", "--help"]),
    ("metanim tournament --help", ["tournament", "--help"]),
    ("metanim tournament --dry-run", ["tournament", "--dry-run"]),
    ("metanim demo --dry-run", ["demo", "--dry-run"]),
    ("metanim play ... --dry-run", ["play", "--game", "nim-31-k3", "--agent", "react",
                                    "--dry-run"]),
    ("metanim evaluate ... --dry-run", ["evaluate", "--dataset", "SAMPLES/mc.jsonl",
                                        "--dry-run"]),
    ("metanim challenging ... --dry-run", ["challenging", "--dataset", "SAMPLES/mc.jsonl",
                                           "--dry-run"]),
    ("metanim dataset build --dry-run", ["dataset", "build", "--dry-run"]),
    ("metanim report RESULTS --dry-run", ["report", "RESULTS", "--dry-run"]),
    ("metanim ratings RESULTS --dry-run", ["ratings", "RESULTS", "--dry-run"]),
    ("metanim reproduce all --dry-run", ["reproduce", "all", "--dry-run"]),
    ('metanim solve nim "[3, 4, 5]"', ["solve", "nim", "[3, 4, 5]"]),
]  # fmt: skip

#: The env of each game's first-step row: `gym.make` of the id, its defaults.
FIRST_STEP = """
import numpy as np, gymnasium as gym, metanim
env = gym.make({env_id!r}) if {single} else gym.make_vec({env_id!r}, num_envs=64)
obs, info = env.reset(seed=0)
mask = info["action_mask"]
if {single}:
    env.step(int(np.flatnonzero(mask)[0]))
else:
    env.step(np.argmax(mask, axis=1))
"""
GAMES = ["Nim", "Fibonacci", "Kayles", "Chomp", "CornerQueen"]

#: The batched env's first step with numba's compile events recorded (`numba.core.event`):
#: the seconds of each outermost compile (a kernel's compile includes the helpers it
#: calls or inlines), printed as one JSON line.
COMPILES = (
    """
import json, time
from numba.core import event
open_, done = [], []
class Timer(event.Listener):  # compiles nest (a kernel compiles what it calls first)
    def on_start(self, ev):
        open_.append(time.perf_counter())
    def on_end(self, ev):
        start = open_.pop()
        done.append((ev.data["dispatcher"].py_func.__name__, time.perf_counter() - start,
                     len(open_)))
event.register("numba:compile", Timer())
# Time inside LLVM (optimisation, code generation): numba holds its LLVM lock there.
llvm = event.TimingListener()
event.register("numba:llvm_lock", llvm)
# What any first compile in a process pays (numba's typing and target set-up), apart.
import numba
start = time.perf_counter()
numba.njit(lambda x: x + 1)(1)
setup = time.perf_counter() - start
"""
    + FIRST_STEP
    + """
print(json.dumps({{"compiles": done, "llvm": llvm.duration, "setup": setup}}))
"""
)


def wall(argv: list[str], env: dict[str, str] | None = None) -> float:
    """Seconds from the start of `argv` to its exit (its output thrown away)."""
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, check=False)  # fmt: skip
    seconds = time.perf_counter() - start
    if done.returncode not in (0,):
        raise SystemExit(f"{argv} failed ({done.returncode}): {done.stderr[-500:]}")
    return seconds


def loaded(code: str) -> list[str]:
    """The heavy libraries a fresh interpreter has loaded after running `code`."""
    probe = (
        f"{code}\nimport sys\n"
        f"print('HEAVY', *(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)"
    )
    out = subprocess.run([PYTHON, "-c", probe], capture_output=True, text=True, check=True)
    line = next(x for x in out.stderr.splitlines() if x.startswith("HEAVY"))
    return line.split()[1:]


def cli_code(argv: list[str]) -> str:
    """`metanim argv` in-process, for `loaded` (argparse's exit is caught)."""
    return f"from metanim.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"


def startup_rows(repeats: int, folder: Path) -> list[list[str]]:
    """The start-up table: min wall time of each command over `repeats` rounds."""
    samples = Path(__file__).resolve().parent.parent / "metanim" / "samples"
    results = folder / "results"
    results.mkdir()
    (results / "t.jsonl").write_text('{"id": "a", "seat": "first", "status": "win"}\n')

    def resolved(argv: list[str]) -> list[str]:
        return [a.replace("SAMPLES", str(samples)).replace("RESULTS", str(results)) for a in argv]

    runs: dict[str, tuple[list[str], str]] = {
        "python -c pass": ([PYTHON, "-c", "pass"], "pass"),
        'python -c "import gymnasium" (reference)': (
            [PYTHON, "-c", "import gymnasium"], "import gymnasium"),
        'python -c "import metanim"': ([PYTHON, "-c", "import metanim"], "import metanim"),
    }  # fmt: skip
    for label, argv in COMMANDS:
        runs[label] = ([*METANIM, *resolved(argv)], cli_code(resolved(argv)))
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeats):
        for label, (argv, _) in runs.items():
            best[label] = min(best[label], wall(argv))
    reference = best['python -c "import gymnasium" (reference)']
    rows = []
    for label, (_, code) in runs.items():
        heavy = ", ".join(loaded(code)) or "none"
        rows.append([label, f"{best[label]:.3f}", f"{best[label] / reference:.2f}", heavy])
        print(rows[-1], flush=True)
    return rows


def first_step_rows(repeats: int, folder: Path) -> list[list[str]]:
    """Per game (single env, then the batched env of the default path): the first step
    in a fresh process with an empty numba cache and with a warm one, min of `repeats`."""
    rows = []
    for single in (True, False):
        for name in GAMES if single else GAMES[:3]:
            env_id = f"MetaNIM/{name}-v0"
            code = FIRST_STEP.format(env_id=env_id, single=single)
            warm = folder / f"warm-{name}-{single}"
            env = {**os.environ, "NUMBA_CACHE_DIR": str(warm)}
            wall([PYTHON, "-c", code], env)  # fills the warm cache
            cold_best = warm_best = float("inf")
            for r in range(repeats):
                cold = folder / f"cold-{name}-{single}-{r}"
                cold_best = min(
                    cold_best,
                    wall([PYTHON, "-c", code], {**os.environ, "NUMBA_CACHE_DIR": str(cold)}),
                )
                warm_best = min(warm_best, wall([PYTHON, "-c", code], env))
            heavy = ", ".join(loaded(code)) or "none"
            kind = "`gym.make`" if single else "`gym.make_vec(..., num_envs=64)`"
            rows.append([f"`{env_id}`, {kind}", f"{cold_best:.2f}", f"{warm_best:.2f}",
                         f"{cold_best / warm_best:.2f}", heavy])  # fmt: skip
            print(rows[-1], flush=True)
    return rows


COMPILE_COLUMNS = ["env", "set-up s", "compile s by kernel", "compile s", "in LLVM s",
                   "numba's front end s", "process s"]  # fmt: skip


def compile_rows(folder: Path) -> list[list[str]]:
    """Per game's batched env: numba's compile seconds of each outermost kernel its cold
    first step compiles (one cold process each), their sum and that process's wall time."""
    rows = []
    for name in GAMES[:3]:
        env_id = f"MetaNIM/{name}-v0"
        code = COMPILES.format(env_id=env_id, single=False)
        env = {**os.environ, "NUMBA_CACHE_DIR": str(folder / f"compile-{name}")}
        start = time.perf_counter()
        out = subprocess.run([PYTHON, "-c", code], env=env, capture_output=True, text=True,
                             check=True)  # fmt: skip
        seconds = time.perf_counter() - start
        found = json.loads(out.stdout.strip().splitlines()[-1])
        done = found["compiles"]
        # Outermost compiles, and the largest one each compiles inside it (depth 1).
        outer = [(k, t) for k, t, depth in done if depth == 0 and k != "<lambda>"]
        inner = [(k, t) for k, t, depth in done if depth == 1 and t >= 0.1]
        listed = ", ".join(f"`{k}` {t:.2f}" for k, t in outer)
        listed += "; inside them: " + ", ".join(f"`{k}` {t:.2f}" for k, t in inner)
        total = sum(t for _, t in outer) + found["setup"]
        rows.append([f"`{env_id}`", f"{found['setup']:.2f}", listed, f"{total:.2f}",
                     f"{found['llvm']:.2f}", f"{total - found['llvm']:.2f}",
                     f"{seconds:.2f}"])  # fmt: skip
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="rounds, min")
    parser.add_argument("--no-first-step", action="store_true", help="the start-up table only")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        start = startup_rows(args.repeats, folder)
        first = [] if args.no_first_step else first_step_rows(args.repeats, folder)
        compiled = [] if args.no_first_step else compile_rows(folder)
    parts = [
        "## Start-up and first use (`scripts/bench_startup.py`)",
        f"Machine: {machine()}. Load average (1, 5, 15 min) at the start: {load[0]:.1f}, "
        f"{load[1]:.1f}, {load[2]:.1f} (the 2 cores are shared with other jobs). Every row "
        "is a fresh process timed from its start to its exit, the commands taken in turn "
        f"in each of {args.repeats} rounds, the minimum kept; *heavy* lists which of "
        f"{', '.join(HEAVY)} the process has loaded when it ends (checked in a separate run).",
        "### Start-up against `import gymnasium`\n\nSeconds of wall time and the ratio to "
        "an interpreter that imports Gymnasium (which `import metanim` does, to register "
        "the env ids). A command imports the library where it uses it, and adds its own "
        "flags only when it is the one parsed: `--help` lists the commands without building "
        "their flags.",
        table(["command", "seconds", "vs import gymnasium", "heavy"], start),
    ]
    if first:
        parts += [
            "### First step, empty numba cache against a warm one\n\nSeconds from the "
            "process's start to the end of its env's first step (import, make, `reset`, one "
            "`step`), each game's registered defaults: in a process whose `NUMBA_CACHE_DIR` "
            "is a new empty folder (*cold*: a fresh install, a container, a new numba) and in "
            "one whose cache a previous process filled (*warm*). The single env of a small "
            "game compiles nothing: its tables (solver, start law) are built by the kernels' "
            "own code run in Python, and its random words by the same code, until a process "
            "has used them enough that compiling pays (`metanim.util.jit`). The batched env "
            "is compiled code throughout: its first step compiles (cold) or loads (warm) its "
            "kernels.",
            table(["env", "cold s", "warm s", "cold/warm", "heavy"], first),
            "What bounds the batched env's cold first step: numba's compile time. Each "
            "game's batched env compiles one step kernel (its `reset` runs the same kernel), "
            "with the random-stream helpers it inlines; the playout kernel it calls only where "
            "starts are played out (Kayles of 20 pins, which has no start law: a kernel for a "
            "start law or a fixed start gets no table of wanted states, and numba prunes the "
            "playout branch before typing), and Kayles its outcome table's kernel; seconds of "
            "each outermost compile in one cold process "
            "(numba's `numba:compile` events; a kernel's time includes the kernels it calls or "
            "inlines, compiled first: those of 0.1 s or more are listed after the semicolon), "
            "the outermost ones' sum, and that process's wall time. A warm process loads the "
            "same kernels from the cache instead. *Set-up* is a one-line kernel compiled first "
            "in the same process: what any first compile pays (numba's typing and code "
            "generation set up), counted in the total. *In LLVM* is the time numba holds its "
            "LLVM lock (the `numba:llvm_lock` event: LLVM's optimisation and machine code); "
            "the rest of the total, numba's own typing and lowering in Python, is what a "
            "lower optimisation level cannot remove.",
            table(COMPILE_COLUMNS, compiled),
        ]
    markdown = "\n\n".join(parts)
    if not args.no_write:
        write_section("startup", markdown)
    print(markdown)


if __name__ == "__main__":
    main()
