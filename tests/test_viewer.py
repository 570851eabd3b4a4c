"""The HTML viewer (`metanim report` writes viewer.html), the plot fixes and board renders.

The browser test drives Debian's Chromium through Selenium and skips, saying why, when
either is missing here; `.ci/run` installs both, so CI runs it.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
import tempfile
import time
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metanim.analysis import render_report
from metanim.analysis.viewer import collect_runs, write_viewer
from metanim.games import make_game

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo-like folder: DReaMAD vs ReAct on Fibonacci Nim, simulated models."""
    from metanim.arena import TournamentConfig, run_tournament

    root = tmp_path_factory.mktemp("demo")
    # From the initial state the opponent, when it moves first, starts where it can win
    # (a longer game with blunders to grade); the arena warns that the seat is losing.
    with pytest.warns(UserWarning, match="starts where it loses"):
        run_tournament(
        TournamentConfig(
            name="demo", games=["fibonacci-20"], method="dreamad",
            model="sim-biased:heuristic=max_take,p=0.8", opponent="react",
            opponent_model="sim-biased:heuristic=max_take,p=0.6", episodes=4,
            seat="alternate", start="initial", seed=0, results_dir=str(root), progress=False,
        )
        )  # fmt: skip
    render_report(root)
    return root


def _log_rows(folder: Path) -> list[dict[str, Any]]:
    (log,) = folder.glob("demo-*.jsonl")
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def _page_data(page: Path) -> Any:
    text = page.read_text()
    packed = re.search(r'<script id="metanim-data" type="text/plain">([^<]*)</script>', text)
    assert packed is not None
    return json.loads(gzip.decompress(base64.b64decode(packed.group(1))))


# ----------------------------------------------------------- grades by brute force
def _brute_winning(game: Any, state: Any) -> set[Any]:
    """Winning moves straight from the rules: a move is winning iff it leaves a lost position."""

    @cache
    def to_move_wins(s: Any) -> bool:
        if game.is_terminal(s):
            return game.misere  # normal play: no move left loses; misère: it wins
        return any(not to_move_wins(game.apply(s, m)) for m in game.legal_moves(s))

    return {m for m in game.legal_moves(state) if not to_move_wins(game.apply(state, m))}


def test_every_move_graded_as_brute_force_says(demo: Path):
    (run,) = collect_runs(demo)
    rows = {r["id"]: r for r in _log_rows(demo)}
    graded = 0
    for episode in run["items"]:
        row = rows[episode["id"]]
        game = make_game(row["game"], **row["game_params"])
        for shown, logged in zip(episode["moves"], row["moves"], strict=True):
            state = game.validate_state(logged["state"])
            winning = _brute_winning(game, state)
            assert sorted(shown["winning"]) == sorted(game.move_text(m) for m in winning)
            move = game.parse_move(logged["move"], state)
            expected = (
                "no winning move" if not winning else "optimal" if move in winning else "losing"
            )
            assert shown["grade"] == expected
            graded += 1
    assert graded == sum(len(r["moves"]) for r in rows.values()) > 0
    grades = {m["grade"] for e in run["items"] for m in e["moves"]}
    assert "losing" in grades and "optimal" in grades  # the fixture exercises both


def test_page_is_self_contained_and_holds_every_record(demo: Path):
    page = demo / "viewer.html"
    text = page.read_text()
    # No network: nothing is fetched from elsewhere (scripts, styles, fonts, images).
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert "@import" not in text and "url(http" not in text
    assert "data:image/png;base64," in text  # the win-rate plot, inlined
    assert "Win rates" in text and "95% CI" in text
    (run,) = _page_data(page)
    assert {e["id"] for e in run["items"]} == {r["id"] for r in _log_rows(demo)}
    assert "dreamad" in run["label"] and "react" in run["label"]


def test_debate_cells_hold_each_rounds_answer(tmp_path: Path):
    """MPD numbers its rounds from 1, DReaMAD from 0: each cell's reasoning must come
    from the sample that gave that round's answer."""
    from metanim.arena.evaluate import EvaluationConfig, run_evaluation
    from metanim.datasets import build, write_jsonl

    data = write_jsonl(
        build("nim", 3, seed=2, params={"heaps": [31], "max_take": 3}), tmp_path / "d.jsonl"
    )
    run_evaluation(
        EvaluationConfig(
            name="e-mpd", dataset=[str(data)], method="mpd", repeats=1,
            model="sim-biased:heuristic=max_take,p=0.5", results_dir=str(tmp_path), progress=False,
        )
    )  # fmt: skip
    (run,) = collect_runs(tmp_path)
    (log,) = tmp_path.glob("e-mpd-*.jsonl")
    correct = {r["id"]: r["correct"] for r in map(json.loads, log.read_text().splitlines())}
    compared = 0
    for item in run["items"]:
        (move,) = item["moves"]
        assert move["grade"] == {True: "optimal", False: "losing"}[correct[item["id"]]]
        decision = move["decision"]
        assert decision["round_numbers"][0] == 1
        for k, answers in enumerate(decision["rounds"]):
            for agent, answer in answers.items():
                assert decision["cells"][f"{k}|{agent}"]["answer"] == answer
                compared += 1
    assert compared >= 3 * 2


def test_big_folder_gets_one_page_per_run(demo: Path, tmp_path: Path):
    folder = tmp_path / "two"
    folder.mkdir()
    for name in ("a", "b"):
        for f in demo.glob("demo-*"):
            (folder / f.name.replace("demo-", f"{name}-")).write_bytes(f.read_bytes())
    report = render_report(folder, write=False)
    pages = write_viewer(report, folder, max_items=5)  # 8 episodes > 5: split
    index, *runs = pages
    assert index == folder / "viewer.html" and len(runs) == 2
    index_text = index.read_text()
    for page in runs:
        assert f"viewer/{page.name}" in index_text
        (run,) = _page_data(page)
        assert len(run["items"]) == 4
    assert _page_data(index) == []
    # One run bigger than a page: cut into parts, every episode on exactly one of them.
    (folder / "viewer" / "stale.html").write_text("old")
    index, *runs = write_viewer(report, folder, max_items=3)
    assert [p.name for p in runs] == [
        f"{stem}-part{n}.html"
        for stem in sorted({p.stem.split("-part")[0] for p in runs})
        for n in (1, 2)
    ]
    assert sorted(len(_page_data(p)[0]["items"]) for p in runs) == [1, 1, 3, 3]
    assert not (folder / "viewer" / "stale.html").exists()


# --------------------------------------------------------------------------- plots
def test_plot_with_no_finished_episode_says_so_without_warnings(tmp_path: Path):
    pytest.importorskip("matplotlib")
    folder = tmp_path / "failed"
    folder.mkdir()
    lines = [
        {"id": f"e{k}", "seat": "first", "status": "infrastructure_error", "setting": "nim-31-k3"}
        for k in range(3)
    ]
    (folder / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = render_report(folder)
    (row,) = report.win_rates
    assert row.finished == 0 and row.failed == 3
    assert [Path(p).name for p in report.plots] == ["win_rates.png"]


def _orange_row_groups(path: Path) -> int:
    import matplotlib.image as mpimg

    img = (mpimg.imread(path)[:, :, :3] * 255).astype(int)
    orange = np.all(np.abs(img - np.array([255, 127, 14])) < 12, axis=2)  # matplotlib's C1
    rows = np.flatnonzero(orange.any(axis=1))
    return 0 if not rows.size else 1 + int(np.sum(np.diff(rows) > 1))


def test_zero_bar_is_drawn(tmp_path: Path):
    pytest.importorskip("matplotlib")
    from metanim.analysis.plots import grouped_bars

    bars = {"a": {"g": (0.5, 0.8, 0.9)}, "b": {"g": (0.0, 0.0, 0.3)}}
    path = grouped_bars(bars, tmp_path / "z.png", title="t", ylabel="%")
    # b's colour shows twice: its legend patch and the 0% mark on the axis.
    assert _orange_row_groups(path) == 2


def test_bars_sit_on_their_ticks():
    from metanim.analysis.plots import bar_positions

    bars = {"a": {"g0": (0, 0.5, 1), "g1": (0, 0.5, 1)}, "b": {"g0": (0, 0.5, 1)}}
    pos = bar_positions(bars, ["g0", "g1"])
    # Two methods share g0's slot around x = 0 (width 0.8 / 2 each); g1 has one bar, at 1.
    assert pos == {("a", "g0"): -0.2, ("b", "g0"): 0.2, ("a", "g1"): 1.0}


# --------------------------------------------------------------------------- board
def test_kayles_missing_slot_differs_from_knocked_down_pin():
    from metanim.envs import _render

    game = make_game("kayles", rows=[5, 6])
    state = game.validate_state(["01111", "111111"])
    row0 = _render.ansi(game, state, "x").splitlines()[1]
    assert row0 == ".#### "  # knocked-down pin ".", no sixth slot " "
    image = _render.rgb(game, state)
    c = _render.CELL
    knocked, missing = image[c // 2, c // 2], image[c // 2, 5 * c + c // 2]
    assert tuple(knocked) != tuple(missing)


# ------------------------------------------------------------------------- browser
def _driver(profile: str) -> Any:
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in (
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={profile}", "--window-size=1400,1800",
    ):  # fmt: skip
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)


@pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER),
    reason="needs Debian's chromium and chromium-driver (apt-get install chromium "
    "chromium-driver); .ci/run installs them",
)
def test_page_in_headless_chromium(demo: Path, tmp_path: Path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    rows = _log_rows(demo)
    with tempfile.TemporaryDirectory() as profile:
        driver = _driver(profile)
        try:
            began = time.perf_counter()
            driver.get((demo / "viewer.html").as_uri())
            while driver.execute_script("return document.body.dataset.ready") != "1":
                assert time.perf_counter() - began < 30, "the page never finished loading"
                time.sleep(0.02)
            loaded = time.perf_counter() - began
            own = driver.execute_script("return window.metanimReadyMs") / 1000
            print(
                f"viewer.html ready {loaded:.2f} s after navigation ({own:.2f} s by the page's clock)"
            )

            # The summary table with its CI, and the plot decoded as an image.
            summary = driver.find_element(By.CSS_SELECTOR, "#summary table.summary").text
            assert "dreamad" in summary and "fibonacci-20" in summary and "[" in summary
            img = driver.find_element(By.CSS_SELECTOR, "#plots img")
            assert driver.execute_script("return arguments[0].naturalWidth", img) > 100

            # One debate transcript open on arrival: rounds x 2 agents, answers shown.
            grid = driver.find_element(By.CSS_SELECTOR, "details.dec[open] table.grid")
            heads = [h.text for h in grid.find_elements(By.CSS_SELECTOR, "thead th")]
            assert heads == ["round", "agent_1", "agent_2", "answers this round"]
            assert grid.find_elements(By.CSS_SELECTOR, "td .ans")
            grades = [b.text for b in driver.find_elements(By.CSS_SELECTOR, "table.moves .badge")]
            assert grades and set(grades) <= {"optimal", "losing", "no winning move"}
            driver.save_screenshot(str(tmp_path / "viewer.png"))

            # Filters: outcome "loss" shows exactly the lost episodes of the log.
            items = driver.find_elements(By.CSS_SELECTOR, "details.item")
            assert len(items) == len(rows)
            Select(driver.find_element(By.ID, "f-outcome")).select_by_value("loss")
            shown = driver.find_elements(By.CSS_SELECTOR, "details.item")
            losses = sum(r["status"] == "loss" for r in rows)
            assert 0 < losses < len(rows) and len(shown) == losses
            assert all(s.find_element(By.CSS_SELECTOR, ".badge").text == "loss" for s in shown)
            # A closed episode opens on a click and lists its graded moves.
            shown[0].find_element(By.TAG_NAME, "summary").click()
            assert shown[0].find_elements(By.CSS_SELECTOR, "table.moves tbody tr")
            # Grade "losing" by ReAct: only episodes where ReAct made a losing move.
            Select(driver.find_element(By.ID, "f-outcome")).select_by_value("")
            Select(driver.find_element(By.ID, "f-method")).select_by_value("react")
            Select(driver.find_element(By.ID, "f-grade")).select_by_value("losing")
            # Counted from the arena's own per-move verdict in the log.
            react_blunders = sum(
                any(
                    m["actor"] == "opponent" and m["position"] == "N" and m["optimal"] is False
                    for m in r["moves"]
                )
                for r in rows
            )
            count = driver.find_element(By.ID, "count").text
            assert count.startswith(f"showing {react_blunders} of {react_blunders} ")
            assert react_blunders > 0

            severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
            assert severe == []
        finally:
            driver.quit()
