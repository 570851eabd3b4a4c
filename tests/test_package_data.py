"""The wheel carries the package's data: the agent profiles load by name from an
installed copy, outside any checkout (`metanim/profiles/*.toml`, pyproject's package data)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


def _wheel(tmp_path: Path) -> Path:
    """A wheel built from a copy of the sources (the build writes nothing in the checkout)."""
    src = tmp_path / "src"
    junk = shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc", "*.pyc")
    shutil.copytree(ROOT / "metanim", src / "metanim", ignore=junk)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    out = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(out), str(src)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = out.glob("*.whl")
    return wheel


def test_an_installed_wheel_finds_every_profile_by_name(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    # Listed from the source folder, not from the code that reads the profiles.
    shipped = {p.name for p in (ROOT / "metanim" / "profiles").glob("*.toml")}
    assert "gpt-4o-mini-dreamad.toml" in shipped
    with zipfile.ZipFile(wheel) as zf:
        inside = {Path(n).name for n in zf.namelist() if n.startswith("metanim/profiles/")}
    assert inside == shipped

    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
         str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    # The installed copy comes first on the path (the checkout's editable finder comes
    # after every path entry); run from a folder that holds no profile.
    env = {**os.environ, "PYTHONPATH": str(site)}
    where = subprocess.run(
        [sys.executable, "-c", "import metanim; print(metanim.__file__)"],
        capture_output=True, text=True, cwd=tmp_path, env=env, check=True,
    )  # fmt: skip
    assert Path(where.stdout.strip()).is_relative_to(site)
    done = subprocess.run(
        [sys.executable, "-m", "metanim", "tournament", "--profile", "gpt-4o-mini-dreamad",
         "--dry-run", "--results-dir", str(tmp_path / "results")],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "dreamad@gpt-4o-mini" in done.stdout
    assert not (tmp_path / "results").exists()  # a dry run writes nothing
