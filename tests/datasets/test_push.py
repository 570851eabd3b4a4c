"""`dataset push`: what it uploads (the files `push_files` lists, as huggingface_hub's own
filter picks them), and a push that reaches no Hub: one line, exit code 3, nothing uploaded."""

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


def test_push_to_hub_uploads_exactly_the_files_push_files_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = pytest.importorskip("huggingface_hub")
    from huggingface_hub.utils import filter_repo_objects

    from metanim.datasets import push_files, push_to_hub

    for name in ("README.md", "nim-normal.jsonl", "odd[1].jsonl", "notes.txt", "old/a.jsonl"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("{}\n")
    calls: dict[str, dict[str, object]] = {}

    class Api:  # records what would go to the Hub
        def create_repo(self, repo_id: str, **kwargs: object) -> None:
            calls["create"] = {"repo_id": repo_id, **kwargs}

        def upload_folder(self, **kwargs: object) -> None:
            calls["upload"] = kwargs

    monkeypatch.setattr(hub, "HfApi", Api)
    url = push_to_hub(tmp_path, "me/data", private=True)
    assert url == "https://huggingface.co/datasets/me/data"
    assert calls["create"] == {"repo_id": "me/data", "repo_type": "dataset", "private": True,
                               "exist_ok": True}  # fmt: skip
    # huggingface_hub's own filter over the folder picks what the dry run lists.
    every = [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()]
    picked = sorted(filter_repo_objects(every, allow_patterns=calls["upload"]["allow_patterns"]))
    assert picked == ["README.md", "nim-normal.jsonl", "odd[1].jsonl"]
    assert [p.name for p in push_files(tmp_path)] == picked
