"""Every flag of every command that plans work, fuzzed through `--dry-run`.

Each example gives one flag (or two) a value drawn from the awkward ones (negative, zero,
huge, NaN, infinite, empty, unicode, control characters, paths, broken JSON) and runs the
command in this process with `--dry-run`: the answer is a plan (exit 0) or one line on
stderr (exit 2), never a traceback, and nothing is written. The examples are derandomized:
the same ones run every time.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metanim.cli import build_parser, main
from tests.loopback import RecordingServer, playing

#: A results folder for report and ratings to find (one episode line is a log).
RESULTS = Path(tempfile.mkdtemp()) / "results"
RESULTS.mkdir()
(RESULTS / "t.jsonl").write_text('{"id": "a", "seat": "first", "status": "win"}\n')

#: A build folder for `dataset push` to plan (its card and one JSONL file).
BUILT = Path(tempfile.mkdtemp()) / "built"
BUILT.mkdir()
(BUILT / "README.md").write_text("a card")
(BUILT / "nim-normal.jsonl").write_text("{}\n")

#: What each command needs before any flag (a required argument, a subcommand).
BASE = {
    "play": ["--game", "nim-31-k3", "--agent", "react"],
    "evaluate": ["--dataset", "samples/mc.jsonl"],
    "challenging": ["--dataset", "samples/mc.jsonl"],
    "tournament": [],
    "demo": [],
    "dataset build": [],
    "dataset push": [str(BUILT), "someone/metanim"],
    "report": [str(RESULTS)],
    "ratings": [str(RESULTS)],
    "reproduce": ["table1"],
}
#: Commands that only read and answer (nothing to plan or write): fuzzed as they run.
QUERIES = {"solve": ["nim", "[3, 4]"], "dataset show": ["samples/mc.jsonl"]}

VALUES = [
    "-1", "0", "1", "2", "-5", "99999999999999999999", "1e400", "0.5", "-0.5", "nan", "inf",
    "-inf", "", " ", "é", "\U0001f600", "\n", "a\x00b", "../x", "/tmp", "a/b", ".", "x=1",
    "x=", "=1", "x={", "x=nan", "[1,2]", "{}", "null", "true", "sim-optimal", "optimal",
    "react", "mad:agents=0", "sim-biased:p=2", "http://", "ftp://x", "nim:{}", "[0, 0]",
]  # fmt: skip


def _commands() -> dict[str, argparse.ArgumentParser]:
    """Every command and subcommand, by its words ("tournament", "dataset build")."""
    out = {}
    pending = [("", build_parser())]
    while pending:
        words, parser = pending.pop()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    pending.append((f"{words} {name}".strip(), sub))
        if words:
            out[words] = parser
    return out


def _flags(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        a
        for a in parser._actions
        if a.option_strings and a.dest not in ("help", "dry_run") and a.help != argparse.SUPPRESS
    ]


COMMANDS = _commands()
PLANNING = {name: p for name, p in COMMANDS.items() if "--dry-run" in p._option_string_actions}


def test_every_command_plans_with_a_dry_run_or_only_reads() -> None:
    """Each command but the servers is fuzzed."""
    assert set(PLANNING) == set(BASE)
    left = {n for n in COMMANDS if not n.startswith("serve-") and n != "dataset"}
    assert left == set(BASE) | set(QUERIES)


def _args(action: argparse.Action, value: str) -> list[str]:
    flag = max(action.option_strings, key=len)  # the long form
    if action.nargs == 0:  # store_true, --x/--no-x
        return [flag]
    return [flag, value]


@st.composite
def _case(draw: st.DrawFn) -> list[str]:
    command = draw(st.sampled_from(sorted({**BASE, **QUERIES})))
    actions = _flags(COMMANDS[command])
    chosen = draw(st.lists(st.sampled_from(actions), min_size=1, max_size=2, unique=True))
    argv = [*command.split(), *{**BASE, **QUERIES}[command]]
    for action in chosen:
        argv += _args(action, draw(st.sampled_from(VALUES)))
    return [*argv, "--dry-run"] if command in BASE else argv


@pytest.mark.slow
@settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(argv=_case())
def test_a_dry_run_plans_or_says_one_line(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own exit (--help, a bad choice)
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in out + err, argv
    if code == 2:
        assert len(err.strip().splitlines()) == 1, (argv, err)
    elif "--dry-run" in argv:
        assert out.startswith("dry run:") or "usage:" in out, (argv, out)
    assert not list(tmp_path.iterdir()), (argv, list(tmp_path.iterdir()))  # nothing written


@pytest.mark.usefixtures("fresh_probes")
def test_a_dry_run_states_every_request_it_sent(tmp_path, run_metanim) -> None:
    # The server's own record of what reached it is the reference.
    with RecordingServer(playing()) as server:
        base = ["tournament", "--game", "nim-31-k3", "--method", "react", "--opponent",
                "optimal", "--model", "m", "--base-url", server.url() + "/v1", "--dry-run",
                "--results-dir", str(tmp_path)]  # fmt: skip
        asked = run_metanim(*base)
        received = [f"{r['method']} {server.url()}{r['path']}" for r in server.requests]
        server.requests.clear()
        quiet = run_metanim(*base, "--structured-output", "off")
        assert not server.requests  # a mode given: nothing to ask
    assert asked.returncode == quiet.returncode == 0, asked.stderr + quiet.stderr
    assert received and f"sent only {', '.join(received)} (" in asked.stdout
    assert "nothing was sent or written" not in asked.stdout
    assert "nothing was sent or written" in quiet.stdout
    assert not list(tmp_path.iterdir())


def test_a_dataset_push_dry_run_lists_the_upload_and_needs_no_hub(
    tmp_path, run_metanim, monkeypatch
) -> None:
    folder = tmp_path / "build"
    assert run_metanim("dataset", "build", "--game", "nim", "-n", "3", "--out", str(folder),
                       "--no-progress").returncode == 0  # fmt: skip
    (folder / "notes.txt").write_text("not part of a dataset")
    (folder / "old").mkdir()
    (folder / "old" / "nim-normal.jsonl").write_text("{}\n")
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # no Hub client: nothing sent
    done = run_metanim("dataset", "push", str(folder), "me/data", "--private", "--dry-run")
    assert done.returncode == 0, done.stderr
    # The card and the JSONL files beside it, listed here from the folder itself.
    expected = sorted(["README.md", *(p.name for p in folder.glob("*.jsonl"))])
    assert expected == ["README.md", "nim-normal.jsonl"]
    assert done.stdout == (
        f"dry run: 2 files of {folder} to https://huggingface.co/datasets/me/data (private): "
        f"{', '.join(expected)}; nothing was sent\n"
    )
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before
    missing = run_metanim("dataset", "push", str(tmp_path / "none"), "me/data", "--dry-run")
    assert missing.returncode == 2
    assert "no dataset folder" in missing.stderr
