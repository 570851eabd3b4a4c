"""`dataset push` that reaches no Hub: one line, exit code 3, nothing uploaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from metanim.cli import main


def test_a_push_that_reaches_no_hub_says_so_and_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hub = pytest.importorskip("huggingface_hub")

    def offline(self, *args, **kwargs):
        raise ConnectionError("[Errno -2] Name or service not known")  # an OSError

    monkeypatch.setattr(hub.HfApi, "create_repo", offline)
    assert main(["dataset", "build", "--game", "nim", "-n", "2", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["dataset", "push", str(tmp_path), "me/nim"]) == 3
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "cannot reach the Hugging Face Hub" in err and "nothing was uploaded" in err


def test_a_push_of_no_folder_names_the_folder(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("huggingface_hub")
    assert main(["dataset", "push", "no/such/folder", "me/nim"]) == 2
    assert "no dataset folder at no/such/folder" in capsys.readouterr().err
