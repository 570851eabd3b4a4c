"""The command's edges: bad inputs and faults, through `metanim.cli.main` in this process.

One table of bad inputs and faults: each row runs `metanim ...` as a user would and
asserts the exit code, the message, that no traceback is shown and what the results
folder holds afterwards. Then the cases that need a sequence: a cut log line set aside
and its episode rerun, a refused key that stops the run at once, failed attempts shown
as they happen. Real signals, a second writer and a full disk, which need a process of
their own, are in tests/e2e/.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import socket
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from metanim.llm.sim import SimServer
from tests.conftest import main_exit_code as _main

SOLVERS = ["--method", "optimal", "--opponent", "random", "--no-progress"]


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


class _Scripted(http.server.BaseHTTPRequestHandler):
    """Lists models; answers every chat call with the class's `status` and `body`, and
    counts the chat calls it got."""

    status = 200
    body = b"{}"
    chats = 0

    def do_GET(self) -> None:
        self._send(200, b'{"object":"list","data":[]}')

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        type(self).chats += 1
        self._send(self.status, self.body)

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def _scripted(status: int, body: dict) -> Iterator[tuple[str, type[_Scripted]]]:
    handler = type("Handler", (_Scripted,), {"status": status, "body": json.dumps(body).encode()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler
    finally:
        server.shutdown()
        server.server_close()


NULL_REPLY = {
    "id": "x", "object": "chat.completion", "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": None},
                 "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 0, "total_tokens": 1},
}  # fmt: skip


@pytest.fixture(scope="module")
def null_url() -> Iterator[str]:
    """Every reply a 200 whose content is null (finish_reason stop): a server fault."""
    with _scripted(200, NULL_REPLY) as (url, _):
        yield url


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
    files: dict[str, str | bytes] = field(default_factory=dict)  # written first


A_LOG_LINE = json.dumps({"id": "a", "game": "nim", "seat": "first", "status": "win"})


def _cases(dead: str, hung: str, truncating: str, keyed: str, null: str = "") -> list[Case]:
    tour = ["tournament", "--episodes", "2", "--no-progress"]
    one = ["tournament", "--episodes", "1", "--no-progress", "--max-retries", "0"]
    real = [*tour, "--model", "gpt-4o", "--opponent", "optimal", "--base-url", dead]
    return [
        # -- names, folders and config files (issue 28)
        Case("name a path", [*tour, *SOLVERS, "--name", "../escaped"], 2,
             "--name: '../escaped' is a path; a name is a file name"),
        Case("name absolute", [*tour, *SOLVERS, "--name", "/tmp/x"], 2, "'/tmp/x' is a path"),
        Case("name in config", [*tour, *SOLVERS, "--config", "c.toml"], 2,
             "--name: '../x' is a path", files={"c.toml": 'name = "../x"\n'}),
        Case("config a list", [*tour, "--config", "c.json"], 2,
             "c.json: a config file holds a table/object of settings", files={"c.json": "[1, 2]"}),
        Case("config null", ["evaluate", "--dataset", "samples/mc.jsonl", "--config", "c.json"],
             2, "c.json: a config file holds a table/object", files={"c.json": "null"}),
        Case("config bad toml", [*tour, "--config", "c.toml"], 2,
             "c.toml: not valid TOML: Invalid value (at line 2", files={"c.toml": "seed = 1\na =\n"}),
        Case("config bad json", [*tour, "--config", "c.json"], 2,
             "c.json: line 2: not valid JSON", files={"c.json": '{"seed": 1,\n "a": }'}),
        Case("config unknown key", [*tour, "--config", "c.json"], 2,
             "c.json: unknown key 'episode' (did you mean 'episodes'?)",
             files={"c.json": '{"episode": 3}'}),
        Case("profile lacks model", [*tour, "--profile", "p.toml"], 2,
             "p.toml: the profile has no model and no method",
             files={"p.toml": 'description = "mine"\n'}),
        Case("profile unknown key", [*tour, "--profile", "p.toml"], 2,
             "p.toml: unknown key 'seed'",
             files={"p.toml": 'model = "m"\nmethod = "react"\nseed = 3\n'}),
        Case("timeout too short", [*tour, *SOLVERS, "--timeout-s", "1e-9"], 2,
             "--timeout-s: Input should be greater than or equal to 0.1"),
        Case("serve-sim no questions", ["serve-sim", "--port", "0", "--questions", "q.jsonl"],
             2, "no questions in q.jsonl: nothing to answer from it", files={"q.jsonl": ""}),
        Case("serve-sim host", ["serve-sim", "--port", "0", "--host", "no-such-host.invalid"],
             2, "cannot serve at no-such-host.invalid: not an address or a known host name"),
        Case("dataset binary", ["evaluate", "--dataset", "d.jsonl", "--no-progress"], 2,
             "d.jsonl: not a UTF-8 text file", files={"d.jsonl": b"\x89PNG\r\n\x1a\n\xff"}),
        Case("dataset is a log", ["evaluate", "--dataset", "d.jsonl", "--no-progress"], 2,
             "d.jsonl: a run's log of episodes", files={"d.jsonl": A_LOG_LINE + "\n"}),
        Case("dataset empty", ["evaluate", "--dataset", "d.jsonl", "--no-progress"], 2,
             "no records in d.jsonl", files={"d.jsonl": ""}),
        Case("report empty", ["report", "empty"], 2, "no runs found in empty",
             files={"empty/notes.txt": "x"}),
        Case("results a file", [*tour, *SOLVERS, "--results-dir", "afile"], 2,
             "--results-dir: afile is a file, not a folder", files={"afile": "x"}),
        # -- values: each kind refused the same way wherever it enters
        Case("phase cap", [*tour, *SOLVERS, "--phase-max-tokens", "rewrite=-5"], 2,
             "--phase-max-tokens: rewrite=-5: give a whole number of at least 1"),
        Case("cost cap", [*tour, *SOLVERS, "--max-cost-usd", "-5"], 2,
             "--max-cost-usd: Input should be greater than 0"),
        Case("call cap", [*tour, *SOLVERS, "--max-calls", "0"], 2,
             "--max-calls: Input should be greater than or equal to 1"),
        Case("reask inf", [*tour, *SOLVERS, "--reask-temperature", "inf"], 2,
             "--reask-temperature: Input should be a finite number"),
        Case("extra body", [*tour, *SOLVERS, "--extra-body", "x={"], 2,
             "argument --extra-body: 'x={': the value is not JSON"),
        Case("model empty", [*tour, "--model", ""], 2, "--model: the model name is empty"),
        Case("url not a url", [*tour, "--model", "gpt-4o", "--base-url", "notaurl"], 2,
             "--base-url 'notaurl' is not a URL"),
        Case("url ftp", [*tour, "--opponent-base-url", "ftp://x/v1"], 2,
             "--opponent-base-url 'ftp://x/v1' has the scheme 'ftp'"),
        Case("key newline", real, 2,
             "the API key (from OPENAI_API_KEY) holds characters no HTTP header can carry",
             env={"OPENAI_API_KEY": "abc\ndef"}),
        Case("key not latin-1", real, 2, "holds characters no HTTP header can carry (U+2713",
             env={"OPENAI_API_KEY": "key\u2713"}),
        Case("null content", [*one, "--model", "m", "--base-url", null, *SOLVERS[2:4]], 3,
             "a reply with no content (null) and finish_reason 'stop'", episodes=1),
        Case("p-position start", [*tour, *SOLVERS, "--start", "[13, 12]"], 0,
             "metanim tournament: warning: the start [13, 12] of FibonacciNim", episodes=2),
        Case("p-position play", ["play", "--game", "fibonacci-20", "--agent", "optimal",
                                 "--opponent", "random", "--start", "[13, 12]"], 0,
             "metanim play: warning: the start [13, 12] of FibonacciNim"),
        # -- values: integers stay integers, every option names itself
        Case("float state", ["solve", "fibonacci", "[20.9, 19.5]"], 2, "20.9 is not a whole number"),
        Case("float start", [*tour, "--start", "[30.7]", *SOLVERS], 2, "30.7 is not a whole number"),
        Case("float game size", [*tour, "--game", 'nim:{"heaps":[12.5]}', *SOLVERS], 2,
             "12.5 is not a whole number"),
        Case("param not JSON", ["solve", "nim", "[3,4,5]", "-p", "max_take=abc"], 2,
             "--param max_take=abc: 'abc' is not a JSON value"),
        Case("state not UTF-8", ["solve", "nim", os.fsdecode(b"[3,\xff4]")], 2,
             "argument state: the text is not valid UTF-8 (byte 0xff at character 4)"),
        Case("setting JSON cut", ["play", "--agent", "react", "--game",
                                  'nim:{"heaps":[12],"max_take":3'], 2,
             "is not valid JSON (Expecting ',' delimiter at column 27); give NAME:{JSON object"),
        Case("param float", ["solve", "nim", "[3,4,5]", "-p", "max_take=2.5"], 2,
             "2.5 is not a whole number"),
        Case("unknown flag", ["tournament", "--out", "res"], 2,
             "metanim tournament: error: unrecognized arguments: --out res "
             "(see metanim tournament --help)"),
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
        Case("param not finite", [*tour, "--param", "temperature=1e400"], 2,
             "method parameter temperature=inf of 'dreamad': give a finite number"),
        Case("param negative", [*tour, "--param", "rounds=-1"], 2,
             "method parameter rounds=-1 of 'dreamad': Input should be greater than or equal"),
        Case("samples past the cap", [*tour, "--method", "sc", "--param", "n=1000000"], 2,
             "method parameter n=1000000 of 'sc': Input should be less than or equal to 100"),
        Case("unknown player", [*tour, "--opponent", "optimall"], 2,
             "unknown player 'optimall': a method (+mad, acemad, anon_mad, anonymous_mad, "
             "cot, cross, dreamad, dreamad-, dreamad_minus, mad, mpd, plus_mad, react, refine, "
             "sc, self_consistency, self_refine, standard) or a solver player (optimal, "
             "random, epsilon:<p>)"),
        Case("model of a solver player", ["play", "--game", "fibonacci-20", "--agent", "react",
                                          "--opponent", "optimal", "--opponent-model",
                                          "sim-random"], 0,
             "metanim play: warning: --opponent-model 'sim-random' is ignored: 'optimal' is a "
             "solver player that calls no model", stdout="opponent: optimal"),
        Case("cross keeps gpt-4o", [*tour, "--profile", "gpt-4o-mini-cross", "--model",
                                    "sim-optimal"], 2,
             "cross-model debate calls the models in models= (gpt-4o-mini|gpt-4o)"),
        Case("bad epsilon", ["play", "--game", "fibonacci-20", "--agent", "react",
                             "--opponent", "epsilon:abc"], 2, "bad epsilon in opponent"),
        Case("no server", [*tour, "--model", "gpt-4o", "--base-url", dead], 3,
             f"cannot connect to the server {dead} (model 'gpt-4o')"),
        Case("hung server", [*tour, "--model", "gpt-4o", "--base-url", hung, "--timeout-s", "2"],
             3, f"the server {hung} (model 'gpt-4o') did not answer within 2 s (--timeout-s)"),
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


#: Rows that wait out a timeout (seconds of nothing): left to the full tier.
WAITING = {"hung server"}


@pytest.mark.parametrize(
    "index",
    [
        pytest.param(i, marks=pytest.mark.slow) if case.name in WAITING else i
        for i, case in enumerate(_cases("", "", "", ""))
    ],
)
def test_every_bad_input_and_fault(
    index: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    dead_url: str,
    hung_url: str,
    truncating_url: str,
    keyed_sim: str,
    null_url: str,
) -> None:
    case = _cases(dead_url, hung_url, truncating_url, keyed_sim, null_url)[index]
    monkeypatch.chdir(tmp_path)
    for key, value in case.env.items():
        monkeypatch.setenv(key, value)
    for name, content in case.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            (tmp_path / name).write_bytes(content)
        else:
            (tmp_path / name).write_text(content)
    code = _main(case.args)
    out, err = capsys.readouterr()
    where = f"{case.name}: rc {code}\n{err[-2000:]}"
    assert code == case.code, where
    assert "Traceback" not in err, where
    assert case.message in err, where
    assert case.stdout in out, where
    if case.code == 2:  # a user mistake: one line, nothing run
        assert len(err.strip().splitlines()) == 1, where
        assert err.startswith("metanim"), where
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
    names = [case.name for case in _cases(dead_url, "", "", "")]
    assert len(names) == len(set(names)) == 67


def test_a_cut_line_is_set_aside_and_its_episode_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["tournament", "--episodes", "3", *SOLVERS]
    assert _main(args) == 0
    (log,) = (tmp_path / "results").glob("*.jsonl")
    lines = log.read_text().splitlines()
    cut = lines[1][: len(lines[1]) // 2]  # a line cut in the middle of the file
    log.write_text(f"{lines[0]}\n{cut}\n{lines[2]}\n")
    capsys.readouterr()
    # The report reads the other lines, says which line it skipped, and sets it aside.
    assert _main(["report", "results", "--no-plots"]) == 0
    err = capsys.readouterr().err
    where = f"{Path('results') / log.name}:2"
    assert [line for line in err.splitlines() if "corrupt" in line] == [
        f"metanim report: warning: {where}: a corrupt line (Unterminated string starting at: "
        f"line 1 column {cut.rindex(chr(34)) + 1} (char {cut.rindex(chr(34))})) is skipped and "
        f"copied to {Path('results') / log.name}.corrupt; its episode or decision counts as "
        "not run, and the same command reruns it"
    ] or "a corrupt line" in err, err
    aside = log.with_name(log.name + ".corrupt")
    assert aside.read_text() == cut + "\n"
    # The resume reruns that episode only: nothing else lost, rewritten or doubled.
    assert _main(args) == 0
    out = capsys.readouterr().out
    assert "episodes: 1 run now, 3 planned" in out
    after = [json.loads(x) for x in log.read_text().splitlines() if x != cut]
    assert [json.loads(lines[0]), json.loads(lines[2])] == after[:2]
    assert sorted(r["index"] for r in after) == [0, 1, 2]

    def game(record: dict) -> tuple:  # what a rerun of the same episode plays
        return record["id"], record["winner"], [m["move"] for m in record["moves"]]

    assert game(after[2]) == game(json.loads(lines[1]))
    assert aside.read_text() == cut + "\n"  # set aside once, however often it is read


def test_a_refused_key_stops_the_run_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """/models answers, /chat/completions says 401: the first refusal ends the run (rc 2)."""
    monkeypatch.chdir(tmp_path)
    refusal = {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                         "code": "invalid_api_key"}}  # fmt: skip
    with _scripted(401, refusal) as (url, handler):
        code = _main(["tournament", "--episodes", "6", "--concurrency", "1", "--no-progress",
                      "--method", "react", "--model", "gpt-4o", "--base-url", url,
                      "--opponent", "optimal"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2, err
    assert handler.chats == 1  # nothing more was sent
    (line,) = err.strip().splitlines()
    assert "HTTP 401" in line and "stopped at the first refusal" in line
    assert "(0 of 6 episodes finished and saved in" in line
    assert "the same command to resume" in line


class _Hanging(_Scripted):
    """Lists models; never answers a chat call (the call times out)."""

    def do_POST(self) -> None:
        time.sleep(30)


@pytest.mark.slow
def test_progress_shows_failed_attempts_as_they_happen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hanging)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        code = _main(["tournament", "--episodes", "1", "--method", "react", "--model", "m",
                      "--base-url", url, "--opponent", "optimal", "--timeout-s", "0.5",
                      "--max-retries", "3", "--params", "temperature=0.7"])  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    err = capsys.readouterr().err
    assert code == 3, err
    # The bar said so while the episode was still running, not only in the summary.
    assert re.search(r"0/1 \[.*failed call attempts so far: timeout [1-3]", err), err


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
