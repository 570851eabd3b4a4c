"""First contact and faults, driven through the real `metanim` command (issue #13).

One table of bad inputs and faults: each row runs `python -m metanim ...` as a user
would and asserts the exit code, the message, that no traceback is shown and what the
results folder holds afterwards. The rows run as concurrent subprocesses (interpreter
start-ups overlap). Then the cases that need a sequence: a real SIGINT and SIGTERM to
a running tournament, a second writer of the same run, and a resume that neither loses
nor doubles an episode.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from metanim.llm.sim import SimServer

SOLVERS = ["--method", "optimal", "--opponent", "random", "--no-progress"]


def _popen(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "metanim", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        # A shell that started pytest in the background ignores SIGINT; the child must not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _log_lines(folder: Path) -> list[dict]:
    return [json.loads(x) for p in folder.glob("*.jsonl") for x in p.read_text().splitlines()]


# ------------------------------------------------------------------ fake servers
@pytest.fixture(scope="module")
def dead_url() -> str:
    """A URL nothing listens on (a port bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture(scope="module")
def hung_url() -> Iterator[str]:
    """A server that accepts connections and never answers."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    yield f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    s.close()


class _Truncating(http.server.BaseHTTPRequestHandler):
    """Lists models; answers a chat call with a body cut short (Content-Length lies)."""

    def do_GET(self) -> None:
        body = b'{"object":"list","data":[]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "4000")
        self.end_headers()
        self.wfile.write(b'{"id":"x","choices":[')
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def truncating_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Truncating)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def keyed_sim() -> Iterator[str]:
    """A simulated server that only takes the key "right-key"."""
    with SimServer(api_key="right-key") as server:
        yield server.base_url


# ------------------------------------------------------------------ the table
@dataclass
class Case:
    """One row: the command, the exit code, text stderr (or stdout) must hold, and what
    the results folder must hold afterwards (`episodes`: log lines, None: no folder)."""

    name: str
    args: list[str]
    code: int
    message: str
    episodes: int | None = None
    env: dict[str, str] = field(default_factory=dict)
    stdout: str = ""


def _cases(dead: str, hung: str, truncating: str, keyed: str) -> list[Case]:
    tour = ["tournament", "--episodes", "2", "--no-progress"]
    one = ["tournament", "--episodes", "1", "--no-progress", "--max-retries", "0"]
    return [
        # -- values: integers stay integers, every option names itself
        Case("float state", ["solve", "fibonacci", "[20.9, 19.5]"], 2, "20.9 is not a whole number"),
        Case("float start", [*tour, "--start", "[30.7]", *SOLVERS], 2, "30.7 is not a whole number"),
        Case("float game size", [*tour, "--game", 'nim:{"heaps":[12.5]}', *SOLVERS], 2,
             "12.5 is not a whole number"),
        Case("param not JSON", ["solve", "nim", "[3,4,5]", "-p", "max_take=abc"], 2,
             "--param max_take=abc: 'abc' is not a JSON value"),
        Case("param float", ["solve", "nim", "[3,4,5]", "-p", "max_take=2.5"], 2,
             "2.5 is not a whole number"),
        Case("port range", ["serve-sim", "--port", "99999"], 2,
             "argument --port: 99999 is outside 0..65535"),
        Case("boards reversed", ["dataset", "build", "--game", "chomp", "--square-boards", "19-2"],
             2, "argument --square-boards: '19-2': LO must not exceed HI"),
        Case("boards text", ["dataset", "build", "--game", "chomp", "--square-boards", "abc"], 2,
             "argument --square-boards: 'abc' is not LO-HI with whole numbers"),
        Case("boards not chomp", ["dataset", "build", "--game", "nim", "--square-boards", "2-4"],
             2, "--square-boards is for Chomp, not nim"),
        Case("count impossible", ["dataset", "build", "--game", "fibonacci", "-n", "100000000"],
             2, "fibonacci has at most 441 distinct states"),
        Case("count zero", ["dataset", "build", "--game", "fibonacci", "-n", "0"], 2,
             "argument -n/--n: 0: give 1 or more"),
        # -- players the run cannot use: refused before the first episode
        Case("sim typo", [*tour, "--model", "sim-optimall"], 2,
             "simulated model 'sim-optimall': unknown simulated policy 'optimall'"),
        Case("sim bad rate", [*tour, "--opponent-model", "sim-biased:p=2"], 2,
             "simulated model 'sim-biased:p=2'"),
        Case("param type", [*tour, "--param", "temperature=hot"], 2,
             "method parameter temperature='hot' of 'dreamad'"),
        Case("cross keeps gpt-4o", [*tour, "--profile", "gpt-4o-mini-cross", "--model",
                                    "sim-optimal"], 2,
             "cross-model debate calls the models in models= (gpt-4o-mini|gpt-4o)"),
        Case("bad epsilon", ["play", "--game", "fibonacci-20", "--agent", "react",
                             "--opponent", "epsilon:abc"], 2, "bad epsilon in opponent"),
        Case("no server", [*tour, "--model", "gpt-4o", "--base-url", dead], 3,
             f"cannot connect to the server {dead} (model 'gpt-4o')"),
        Case("hung server", [*tour, "--model", "gpt-4o", "--base-url", hung], 3,
             f"the server {hung} (model 'gpt-4o') did not answer within 10 s"),
        Case("wrong key", [*tour, *SOLVERS[2:4], "--model", "sim-optimal"], 2,
             "refused the API key (HTTP 401)",
             env={"METANIM_SIM_URL": keyed, "OPENAI_API_KEY": "wrong-key"}),
        # -- faults during the run: exit 3, a summary by cause, the rerun command
        Case("server errors", [*one, "--opponent-model", "sim-biased:p=0.5,http500=1"], 3,
             "infrastructure_error (server_error): gave up after 1 attempts: HTTP 500", episodes=1),
        Case("truncated body", [*one, "--model", "m", "--base-url", truncating, *SOLVERS[2:4]],
             3, "closed before the response was complete", episodes=1),
        Case("budget stop", ["tournament", "--episodes", "3", "--concurrency", "1",
                             "--no-progress", "--max-calls", "1", "--method", "react",
                             "--opponent", "random"], 3,
             "not run: call budget 1 reached", episodes=1),
        # -- offline defaults, version, python -m metanim
        Case("play offline", ["play", "--game", "fibonacci-20", "--agent", "react"], 0, "",
             env={"OPENAI_BASE_URL": dead}, stdout="opponent: react on sim-biased"),
        Case("play optimal", ["play", "--game", "fibonacci-20", "--agent", "react",
                              "--opponent", "optimal"], 0, "", stdout="opponent: optimal"),
        Case("version", ["--version"], 0, "", stdout="metanim 0.1.0"),
        Case("help codes", ["--help"], 0, "", stdout="130 interrupted"),
        Case("tournament ok", [*tour, *SOLVERS], 0, "", episodes=2,
             stdout="agent: optimal (solver, no model)"),
        Case("cross offline", [*tour[:2], "1", "--no-progress", "--profile", "gpt-4o-mini-cross",
                               "--param", "models=sim-optimal|sim-random", "--opponent", "random"],
             0, "", episodes=1, env={"OPENAI_BASE_URL": dead}),
    ]  # fmt: skip


def _main(args: list[str]) -> int:
    """`metanim ARGS` in this process; argparse's own exits become their codes."""
    from metanim.cli import main

    try:
        return main(args)
    except SystemExit as exc:
        return int(exc.code or 0)


@pytest.mark.parametrize("index", range(28))
def test_every_bad_input_and_fault(
    index: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    dead_url: str,
    hung_url: str,
    truncating_url: str,
    keyed_sim: str,
) -> None:
    case = _cases(dead_url, hung_url, truncating_url, keyed_sim)[index]
    monkeypatch.chdir(tmp_path)
    for key, value in case.env.items():
        monkeypatch.setenv(key, value)
    code = _main(case.args)
    out, err = capsys.readouterr()
    where = f"{case.name}: rc {code}\n{err[-2000:]}"
    assert code == case.code, where
    assert "Traceback" not in err, where
    assert case.message in err, where
    assert case.stdout in out, where
    if case.code == 2:  # a user mistake: one line (after argparse's usage), nothing run
        assert err.strip().splitlines()[-1].startswith("metanim"), where
    results = tmp_path / "results"
    if case.episodes is None:
        assert not results.exists(), where
    else:
        lines = _log_lines(results)
        assert len(lines) == case.episodes == len({r["id"] for r in lines}), where
    if case.code == 3 and case.episodes:
        # The summary ends with the command that reruns the failed ones.
        assert "fix the cause, then rerun them" in err
        assert "metanim " + " ".join(case.args[:3]) in err.replace("'", "")


def test_the_table_has_every_row(dead_url: str) -> None:
    assert len(_cases(dead_url, "", "", "")) == 28


def test_report_refuses_a_corrupt_line_as_tournament_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["tournament", "--episodes", "2", *SOLVERS]
    assert _main(args) == 0
    (log,) = (tmp_path / "results").glob("*.jsonl")
    lines = log.read_text().splitlines()
    log.write_text(lines[0] + "\n{not json}\n" + lines[1] + "\n")
    capsys.readouterr()
    for command in (args, ["report", "results", "--no-plots"]):
        assert _main(command) == 2
        err = capsys.readouterr().err
        assert f"{Path('results') / log.name}:2: corrupt result line" in err, err
    assert len(log.read_text().splitlines()) == 3  # refused: nothing appended


def test_report_names_and_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _main(["tournament", "--episodes", "1", *SOLVERS]) == 0
    report = next((tmp_path / "results").glob("*.report.md")).read_text()
    assert report.startswith("# Tournament\n") and "1 episode per setting" in report
    capsys.readouterr()
    assert _main(["report", "results/", "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "report: results/report.md" in out and "results//" not in out


def test_dataset_files_are_group_readable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert _main(["dataset", "build", "--out", "ds", "--game", "fibonacci", "-n", "3"]) == 0
    umask = os.umask(0)
    os.umask(umask)
    (path,) = (tmp_path / "ds").glob("*.jsonl")
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask


def test_python_dash_m_metanim_runs_the_cli() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "metanim", "solve", "fibonacci", "[20, 19]"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0 and "winning moves" in result.stdout, result.stderr


# ------------------------------------------------------- interrupts and the lock
#: A run that lasts minutes (1 s per model call), so it is surely still running when the
#: second writer starts and when the signal comes, however busy the machine is.
SLOW = [
    "tournament", "--episodes", "200", "--concurrency", "2", "--no-progress",
    "--method", "react", "--model", "sim-optimal:latency=1", "--opponent", "random",
]  # fmt: skip


def _wait_for(predicate, timeout: float = 300.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.2)


def _react_lines(results: Path) -> list[dict]:
    return (
        [r for r in _log_lines(results) if r["agent"].startswith("react")]
        if results.exists()
        else []
    )


@pytest.mark.slow
def test_sigint_saves_and_resumes_and_a_second_writer_is_refused(tmp_path: Path) -> None:
    results = tmp_path / "results"
    first = _popen(SLOW, tmp_path)
    _wait_for(lambda: len(_react_lines(results)) >= 1)
    # The same run again, while the first writes: refused with the writer's PID.
    second = _popen(SLOW, tmp_path)
    # A different run (another seed) may share the folder.
    other = _popen(["tournament", "--episodes", "2", "--seed", "7", *SOLVERS], tmp_path)
    _, err = second.communicate(timeout=300)
    assert second.returncode == 2, err
    assert f"is being written by process {first.pid}" in err and "Traceback" not in err
    assert other.wait(timeout=300) == 0
    assert first.poll() is None  # still running: the refusal was not a race
    # A real Ctrl-C: one line, exit 130, what finished saved and summarized.
    first.send_signal(signal.SIGINT)
    _, err = first.communicate(timeout=300)
    assert first.returncode == 130, err
    assert "Traceback" not in err, err
    (line,) = [x for x in err.splitlines() if "interrupted" in x]
    saved = _react_lines(results)
    assert f"{len(saved)} of 200 episodes finished and saved in" in line
    assert "run the same command to resume" in line
    summaries = [json.loads(p.read_text()) for p in results.glob("*.summary.json")]
    (summary,) = [s for s in summaries if s["config"]["method"] == "react"]
    assert summary["stopped"] == "interrupted" and summary["episodes_logged"] == len(saved)
    assert not list(results.glob("*.lock"))
    # SIGTERM says the same.
    term = _popen(SLOW, tmp_path)
    # Inside the run loop: the lock is held and an episode was appended since it started.
    logged = len(_react_lines(results))
    _wait_for(lambda: any(results.glob("*.lock")) and len(_react_lines(results)) > logged)
    term.send_signal(signal.SIGTERM)
    _, err = term.communicate(timeout=300)
    assert term.returncode == 130 and "Traceback" not in err and "saved in" in err, err
    # The same run with fewer episodes (the count is not part of its identity) finishes
    # its first 12: nothing lost, nothing doubled.
    before = {r["id"]: r for r in _react_lines(results)}
    resume = _popen([*SLOW[:2], "12", *SLOW[3:4], "12", *SLOW[5:]], tmp_path)
    out, err = resume.communicate(timeout=300)
    assert resume.returncode == 0, err
    after = _react_lines(results)
    assert len(after) == len({r["id"] for r in after})  # nothing doubled
    assert all(before[r["id"]] == r for r in after if r["id"] in before)  # nothing rewritten
    assert set(before) <= {r["id"] for r in after}  # nothing lost
    assert {r["index"] for r in after} >= set(range(12))
    new = sum(r["index"] < 12 and r["id"] not in before for r in after)
    assert f"episodes: {new} run now, 12 planned" in out


@pytest.mark.slow
def test_sigint_during_a_dataset_build_says_what_was_written(tmp_path: Path) -> None:
    args = ["dataset", "build", "--out", "ds", "--game", "kayles", "-n", "60000"]
    proc = _popen([*args, "--variant", "misere"], tmp_path)
    seen = ""
    # Wait until records are being found (imports, numba compilation and the solver's
    # tables are done): an interrupt inside a numba compile is out of our hands.
    while not re.search(r"\| *[1-9][0-9]*/60000", seen):
        char = proc.stderr.read(1)
        assert char, f"the build ended early: {seen}"
        seen += char
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, seen + err
    assert "Traceback" not in err
    assert "interrupted: 0 of 1 dataset files written under ds" in err
    assert "run the same command" in err
    # Written whole or not at all: no partial file, no temp file left behind.
    assert not (tmp_path / "ds").exists() or not list((tmp_path / "ds").iterdir())
