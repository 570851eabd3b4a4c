"""A path a user gives that cannot be used (a response cache, the simulator's request log,
a model file) is refused in one line when given: never a traceback, never a server that
answers 500 to every request."""

from __future__ import annotations

from pathlib import Path

import pytest

from metanim.cli import main
from metanim.llm import ResponseCache


def test_a_folder_or_another_file_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "notes.db").write_text("not a database, a note\n" * 20)
    with pytest.raises(ValueError, match="is a folder"):
        ResponseCache(tmp_path)
    with pytest.raises(ValueError, match="cannot be used as one"):
        ResponseCache(tmp_path / "notes.db")
    ResponseCache(tmp_path / "new.db")  # a new file is created
    assert (tmp_path / "new.db").stat().st_size > 0


def test_the_cli_answers_in_one_line_with_exit_code_2(tmp_path: Path, capsys) -> None:
    args = ["tournament", "--games", "nim-31-k3", "--episodes", "1", "--no-progress",
            "--results-dir", str(tmp_path / "r"), "--cache", str(tmp_path)]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"the response cache {tmp_path} is a folder" in err


def test_the_simulators_request_log_naming_a_folder_is_refused_at_start(tmp_path: Path) -> None:
    from metanim.llm.sim import SimApp

    with pytest.raises(ValueError, match="is a folder: give a file"):
        SimApp(log_path=tmp_path)


def test_a_file_that_is_no_gguf_model_is_refused_before_llama_cpp_starts(tmp_path: Path) -> None:
    from metanim.llm.local import LocalServer

    text = tmp_path / "notes.gguf"
    text.write_text("a note, not a model\n")
    with pytest.raises(ValueError, match="is not a GGUF model file"):
        LocalServer(text)
    header = tmp_path / "head.gguf"
    header.write_bytes(b"GGUF" + bytes(60))  # the magic only: llama.cpp decides the rest
    assert LocalServer(header).gguf == header
