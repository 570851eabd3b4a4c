"""A path given where another kind is expected is named for what it is, before any work:
a run's log given as a results folder, a folder given as an output file."""

from __future__ import annotations

from pathlib import Path

import pytest

from metanim.cli import main


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("results")
    argv = ["tournament", "--games", "nim-31-k3", "--method", "optimal", "--opponent", "random",
            "--episodes", "2", "--no-progress", "--results-dir", str(folder)]  # fmt: skip
    assert main(argv) == 0
    return folder


@pytest.mark.parametrize("command", ["report", "ratings"])
def test_a_log_given_as_a_results_folder_names_its_folder(results: Path, command, capsys) -> None:
    (log,) = results.glob("tournament-*.jsonl")
    capsys.readouterr()
    assert main([command, str(log), "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"{log} is a run's log: give the folder that holds it ({results})")


def test_a_folder_given_as_the_ratings_json_file_is_refused_first(
    results: Path, tmp_path: Path, capsys
) -> None:
    capsys.readouterr()
    assert main(["ratings", str(results), "--json", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before any table is printed
    assert captured.err.strip().endswith(f"--json {tmp_path} is a folder: give a file name")


def test_a_report_that_cannot_be_written_says_how_to_print_it(
    results: Path, tmp_path: Path, capsys
) -> None:
    import shutil

    folder = tmp_path / "copy"
    shutil.copytree(results, folder)
    (folder / "report.md").unlink(missing_ok=True)
    (folder / "report.md").mkdir()  # a path the report cannot write its file at
    capsys.readouterr()
    assert main(["report", str(folder), "--no-plots"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"metanim report: error: cannot write {folder / 'report.md'}: ")
    assert err.endswith("--no-write --no-plots prints the report and writes nothing")
    assert len(err.splitlines()) == 1
    assert main(["report", str(folder), "--no-write", "--no-plots"]) == 0
