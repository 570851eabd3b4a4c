"""Every benchmark script under scripts/ runs at HEAD: each one, in a tiny size, in its
own process, writing its sections (if it writes any) into a scratch file named by
`METANIM_BENCH_DOC`, never into docs/benchmarks.md."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
#: Each benchmark script's arguments for a run of a few seconds.
TINY: dict[str, list[str]] = {
    "bench_client.py": ["--calls", "10", "--rounds", "1", "--concurrency", "4",
                        "--episodes", "4", "--latency", "0.01", "--tournament-concurrency", "4",
                        "--tournament-repeats", "1", "--no-write"],
    "bench_closed_forms.py": [],
    "bench_datasets.py": ["--n", "20", "--ref-n", "5", "--games", "1", "--no-default"],
    "bench_env.py": ["--steps", "40", "--repeats", "1", "--warm", "40", "--games", "nim-31-k3",
                     "--no-write"],
    "bench_long_run.py": ["--episodes", "20", "--early", "10", "--concurrency", "4",
                          "--no-write"],
    "bench_methods.py": ["--methods", "standard", "mad"],
    "bench_ppo.py": ["--steps", "64", "--episodes", "4", "--observations", "raw", "--no-write"],
    "bench_real_model.py": ["--episodes", "1", "--speed-decisions", "1", "--speed-cap", "16",
                            "--no-write"],
    "bench_report.py": ["--sizes", "20", "--no-write"],
    "bench_sim_memory.py": ["--calls", "300", "--reference-calls", "200", "--every", "100",
                            "--no-write"],
    "bench_sim_server.py": ["--calls", "20", "--rounds", "1", "--latency", "0",
                            "--concurrency", "4", "--model", "sim-optimal"],
    "bench_solver.py": ["--quick"],
    "bench_streaming_real.py": ["--items", "1", "--methods", "standard", "--no-write"],
    "bench_startup.py": ["--repeats", "1", "--no-first-step", "--no-write"],
    "bench_tournament.py": ["--episodes", "2", "--latency", "0.01", "--goal-episodes", "4",
                            "--goal-latency", "0.01", "--goal-repeats", "1", "--no-write"],
    "bench_vector_env.py": ["--num-envs", "64", "--calls", "5", "--sizes", "256",
                            "--options-batch", "256", "--repeats", "1", "--work", "2000",
                            "--games", "MetaNIM/Nim-v0", "--no-write"],
    "bench_viewer.py": ["--sizes", "3", "--repeats", "1"],
}  # fmt: skip


def test_every_benchmark_script_has_a_tiny_run() -> None:
    assert {p.name for p in SCRIPTS.glob("bench_*.py")} == set(TINY)


@pytest.mark.parametrize("script", sorted(TINY))
def test_the_script_runs(script: str, tmp_path: Path) -> None:
    args = list(TINY[script])
    if script in ("bench_real_model.py", "bench_streaming_real.py"):  # a real model
        gguf = os.environ.get("METANIM_TEST_GGUF")
        if not gguf or not Path(gguf).exists():
            pytest.skip("METANIM_TEST_GGUF names no GGUF model file here")
        args += ["--gguf", gguf]
        if script == "bench_real_model.py":
            args += ["--results-dir", str(tmp_path / "results")]
    if script == "bench_viewer.py":
        pytest.importorskip("selenium")
    doc = tmp_path / "benchmarks.md"
    env = {**os.environ, "METANIM_BENCH_DOC": str(doc)}
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / script), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-4000:])
    if doc.exists():  # what it wrote went to the scratch file, between its markers
        text = doc.read_text()
        assert f"<!-- written by scripts/{script}:" in text
