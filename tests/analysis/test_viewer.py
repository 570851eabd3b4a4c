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
from metanim.records import EpisodeRecord, SideTotals, read_log

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


def _log_rows(folder: Path) -> list[dict[str, Any]]:
    (log,) = folder.glob("demo-*.jsonl")
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def _page_data(page: Path) -> Any:
    """The runs a page carries, each call's messages and replies and each decision's
    parameters and extra record restored from the page's table of distinct texts."""
    text = page.read_text()
    packed = re.search(r'<script id="metanim-data" type="text/plain">([^<]*)</script>', text)
    assert packed is not None
    data = json.loads(gzip.decompress(base64.b64decode(packed.group(1))))
    texts = data["texts"]
    for run in data["runs"]:
        for item in run["items"]:
            for move in item["moves"]:
                decision = move.get("decision") or {}
                for key in ("extra", "params") if decision else ():
                    decision[key] = json.loads(texts[decision[key]])
                for call in decision.get("calls") or []:
                    call["messages"] = [
                        {"role": r, "content": texts[k]} for r, k in call["messages"]
                    ]
                    call["texts"] = [texts[k] for k in call["texts"]]
    return data["runs"]


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
    # Every call's messages and replies come back from the page's table of texts.
    assert [run] == json.loads(json.dumps(collect_runs(demo), default=str))
    assert any(
        c["messages"] for e in run["items"] for m in e["moves"] for c in m["decision"]["calls"]
    )
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
        EpisodeRecord(
            id=f"e{k}", seat="first", status="infrastructure_error", setting="nim-31-k3",
            index=k, seed=k, agent="react", opponent="optimal", game="nim", game_params={},
            start_state=None, start_outcome=None, end_reason="infrastructure_error",
            winner=None, plies=0, agent_totals=SideTotals(), opponent_totals=SideTotals(),
        ).line()
        for k in range(3)
    ]  # fmt: skip
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
NEEDS_BROWSER = (
    "needs Debian's chromium and chromium-driver (apt-get install chromium "
    "chromium-driver); .ci/run installs them"
)
GAMES = ["nim-31-k3", "kayles-2rows", "chomp-2x8", "corner-queen", "fibonacci-20"]
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _driver(profile: str) -> Any:
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in (
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={profile}", "--window-size=1280,1800",
    ):  # fmt: skip
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Any:
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip(NEEDS_BROWSER)
    driver = _driver(str(tmp_path_factory.mktemp("chromium")))
    yield driver
    driver.quit()


def _load(driver: Any, page: Path, fragment: str = "") -> float:
    """Open `page` afresh (never a same-document hash change); seconds until it is ready."""
    driver.get("about:blank")
    began = time.perf_counter()
    driver.get(page.as_uri() + fragment)
    while driver.execute_script("return document.body.dataset.ready") != "1":
        assert time.perf_counter() - began < 30, "the page never finished loading"
        assert not driver.execute_script("return document.getElementById('error').textContent")
        time.sleep(0.02)
    return time.perf_counter() - began


def _search(driver: Any, query: str) -> None:
    """Type `query` into the search box and wait until the page has applied it (the
    search waits for typing to pause)."""
    from selenium.webdriver.common.by import By

    box = driver.find_element(By.ID, "f-q")
    box.clear()
    box.send_keys(query)
    began = time.perf_counter()
    while driver.execute_script("return (STATE.q || '') !== arguments[0].trim()", query):
        assert time.perf_counter() - began < 10, "the search was never applied"
        time.sleep(0.02)


def _wait_for(root: Any, css: str) -> list[Any]:
    """The elements under `root` (a driver or an element) matching `css`, once there are
    some: a record's body is drawn on the `toggle` event, which comes after a click."""
    from selenium.webdriver.common.by import By

    began = time.perf_counter()
    while not (found := root.find_elements(By.CSS_SELECTOR, css)):
        assert time.perf_counter() - began < 10, f"nothing matches {css!r}"
        time.sleep(0.02)
    return found


def _no_console_errors(driver: Any) -> None:
    assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []


@pytest.fixture(scope="module")
def rich(demo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every game drawn, anchors to rate, a 3-agent debate and a 2-agent one, two
    evaluations of one dataset (accuracy, paired test, difficulty, debate dynamics)."""
    from metanim.arena import TournamentConfig, run_tournament
    from metanim.arena.evaluate import EvaluationConfig, run_evaluation
    from metanim.datasets import build, write_jsonl

    root = tmp_path_factory.mktemp("rich")
    for f in demo.glob("demo-*"):
        shutil.copy(f, root / f.name)
    common = {"results_dir": str(root), "progress": False, "seed": 0}
    for name, a, b in [("anchors", "optimal", "random"), ("eps-opt", "epsilon:0.5", "optimal"),
                       ("eps-rand", "epsilon:0.5", "random")]:  # fmt: skip
        run_tournament(
            TournamentConfig(
                name=name, games=GAMES, method=a, opponent=b, episodes=4, seat="alternate", **common
            )
        )
    data = write_jsonl(
        build("nim", 4, seed=2, params={"heaps": [31], "max_take": 3}), root / "d.jsonl"
    )
    for name, method in [("e-mad", "mad:agents=3"), ("e-std", "standard")]:
        run_evaluation(
            EvaluationConfig(
                name=name, dataset=[str(data)], method=method, repeats=2,
                model="sim-biased:heuristic=max_take,p=0.5", **common,
            )
        )  # fmt: skip
    render_report(root)
    return root


def _lines(folder: Path) -> list[str]:
    """Each record of the folder's logs as its JSON, its decision records (replies and
    all, from the transcripts) included."""
    return [
        record.model_dump_json() for log in folder.glob("*.jsonl") if log.name != "d.jsonl"
        for record in read_log(log)
    ]  # fmt: skip


@pytest.mark.slow
@pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason=NEEDS_BROWSER)
def test_page_in_headless_chromium(demo: Path, browser: Any, tmp_path: Path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    driver = browser
    rows = _log_rows(demo)
    loaded = _load(driver, demo / "viewer.html")
    own = driver.execute_script("return window.metanimReadyMs") / 1000
    print(f"viewer.html ready {loaded:.2f} s after navigation ({own:.2f} s by the page's clock)")

    # The report's tables with their CIs, and the plot decoded as an image.
    summary = driver.find_element(By.CSS_SELECTOR, "#report table.summary").text
    assert "dreamad" in summary and "fibonacci-20" in summary and "[" in summary
    img = driver.find_element(By.CSS_SELECTOR, "#report img")
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
    assert _wait_for(shown[0], "table.moves tbody tr")
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
    _no_console_errors(driver)


def _md_blocks(text: str) -> tuple[list[list[str]], list[list[str]]]:
    """The numbers of each Markdown table row, and of each other line, in order."""
    rows, lines = [], []
    for line in text.splitlines():
        found = NUMBER.findall(line)
        if not found or re.fullmatch(r"\|?(\s*:?-+:?\s*\|)+\s*", line):
            continue
        (rows if line.lstrip().startswith("|") else lines).append(found)
    return rows, lines


@pytest.mark.slow
@pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason=NEEDS_BROWSER)
def test_every_report_number_is_on_the_page(rich: Path, browser: Any):
    """Parse report.md (and each run's own report) and the page: every table row's
    numbers are one row of the page, every other line's numbers one block of it."""
    _load(browser, rich / "viewer.html")
    page_rows = browser.execute_script(
        "return [...document.querySelectorAll('#report tr, #runreports tr')]"
        ".map((tr) => [...tr.cells].map((c) => c.textContent).join(' | '))"
    )
    page_blocks = browser.execute_script(
        "return [...document.querySelectorAll('#report :is(p, li, h1, h2, h3, figcaption), "
        "#runreports :is(p, li, h1, h2, h3)')].map((e) => e.textContent)"
    )
    row_numbers = [NUMBER.findall(r) for r in page_rows]
    block_numbers = [NUMBER.findall(b) for b in page_blocks]
    reports = [rich / "report.md", *sorted(rich.glob("*.report.md"))]
    checked = 0
    for report in reports:
        rows, lines = _md_blocks(report.read_text())
        for numbers in rows:
            assert numbers in row_numbers, (report.name, numbers)
        for numbers in lines:
            assert numbers in block_numbers, (report.name, numbers)
        checked += sum(map(len, rows + lines))
    text = (rich / "report.md").read_text()
    for section in ("## Ratings", "## Decision accuracy", "## Paired comparisons", "## Debate dynamics", "## Runs"):  # fmt: skip
        assert section in text  # the fixture exercises each section the check covers
    assert checked > 500
    _no_console_errors(browser)


@pytest.mark.slow
@pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason=NEEDS_BROWSER)
def test_search_finds_moves_and_replies(rich: Path, browser: Any):
    from selenium.webdriver.common.by import By

    lines = [line.lower() for line in _lines(rich)]
    _load(browser, rich / "viewer.html")
    for query, expected in [
        ("policy biased", sum("policy biased" in line for line in lines)),
        (
            "Policy   BIASED fibonacci",
            sum("policy biased" in line and '"fibonacci"' in line for line in lines),
        ),
        ("no such words anywhere", 0),
    ]:
        _search(browser, query)
        count = browser.find_element(By.ID, "count").text
        assert count.startswith(f"showing {min(expected, 100)} of {expected} "), (query, count)
    assert 0 < sum("policy biased" in line for line in lines) < len(lines)
    # The words are marked in an opened record.
    _search(browser, "policy biased")
    first = browser.find_element(By.CSS_SELECTOR, "details.item summary")
    first.click()
    (dec, *_) = _wait_for(browser, "details.item[open] details.dec summary")
    dec.click()
    _wait_for(browser, "details.item[open] .dbody[data-done]")
    marks = browser.find_elements(By.CSS_SELECTOR, "details.item[open] mark")
    assert marks and {m.get_attribute("textContent").lower() for m in marks} == {"policy", "biased"}
    _no_console_errors(browser)


@pytest.mark.slow
@pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason=NEEDS_BROWSER)
def test_sorting_tables_and_records(rich: Path, browser: Any):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    _load(browser, rich / "viewer.html")

    def column(table: Any, k: int) -> list[float]:
        cells = [r.find_elements(By.TAG_NAME, "td")[k] for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")]  # fmt: skip
        return [float(NUMBER.findall(c.get_attribute("textContent"))[0]) for c in cells]

    # A report table (win rates): by win rate, high to low, then low to high.
    table = browser.find_element(By.CSS_SELECTOR, "#report table.summary")
    heads = table.find_elements(By.CSS_SELECTOR, "thead th")
    k = [h.text for h in heads].index("win rate")
    heads[k].click()
    values = column(table, k)
    assert values == sorted(values, reverse=True) and len(set(values)) > 1
    heads[k].click()
    assert column(table, k) == sorted(values)

    # The leaderboard: by rating, then by episodes.
    board = browser.find_element(By.ID, "lb-table")
    heads = board.find_elements(By.CSS_SELECTOR, "thead th")
    names = [h.text for h in heads]
    heads[names.index("rating")].click()
    ratings = column(board, names.index("rating"))
    assert ratings == sorted(ratings, reverse=True) and ratings[0] == 2000
    heads[names.index("rating")].click()
    assert column(board, names.index("rating")) == sorted(ratings)

    # Records: nim episodes by plies, most first (against the logs' own counts).
    Select(browser.find_element(By.ID, "f-game")).select_by_value("nim-31-k3")
    Select(browser.find_element(By.ID, "f-sort")).select_by_value("plies")
    browser.find_element(By.ID, "f-dir").click()
    shown = [
        int(re.search(r"(\d+) pl(y|ies)", s.text).group(1))
        for s in browser.find_elements(By.CSS_SELECTOR, "details.item > summary")
    ]
    logged = [json.loads(line)["plies"] for line in _lines(rich) if '"setting":"nim-31-k3"' in line]
    assert shown == sorted(logged, reverse=True) and len(set(shown)) > 1
    _no_console_errors(browser)


@pytest.mark.slow
@pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason=NEEDS_BROWSER)
def test_view_survives_the_address(rich: Path, browser: Any):
    """Filters, search, sort, the open record and the leaderboard's table go into the
    URL's hash; opening that URL afresh restores the same view."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page = rich / "viewer.html"
    _load(browser, page)
    Select(browser.find_element(By.ID, "lb-scope")).select_by_value("kayles-2rows")
    Select(browser.find_element(By.ID, "f-outcome")).select_by_value("win")
    Select(browser.find_element(By.ID, "f-sort")).select_by_value("plies")
    browser.find_element(By.ID, "f-dir").click()
    _search(browser, "kayles")
    items = browser.find_elements(By.CSS_SELECTOR, "details.item")
    items[1].find_element(By.TAG_NAME, "summary").click()
    opened = items[1].get_attribute("data-key")

    def view() -> dict[str, Any]:
        return {
            "controls": {
                k: browser.find_element(By.ID, k).get_attribute("value")
                for k in ("f-q", "f-outcome", "f-sort", "f-game", "lb-scope")
            },
            "dir": browser.find_element(By.ID, "f-dir").text,
            "count": browser.find_element(By.ID, "count").text,
            "order": [
                e.get_attribute("data-key")
                for e in browser.find_elements(By.CSS_SELECTOR, "details.item")
            ],
            "open": [
                e.get_attribute("data-key")
                for e in browser.find_elements(By.CSS_SELECTOR, "details.item[open]")
            ],
            "facts": browser.find_element(By.ID, "lb-facts").text,
        }

    before = view()
    fragment = browser.execute_script("return location.hash")
    for part in ("q=kayles", "outcome=win", "sort=plies", "dir=desc", "scope=kayles-2rows"):
        assert part in fragment
    assert before["open"] == [opened]
    assert before["controls"]["f-outcome"] == "win" and "kayles" in before["facts"]
    _load(browser, page, fragment)
    assert view() == before
    # A changed address (a pasted link, back) changes the view in place.
    browser.execute_script("location.hash = 'game=chomp-2x8'")
    began = time.perf_counter()
    while browser.find_element(By.ID, "f-game").get_attribute("value") != "chomp-2x8":
        assert time.perf_counter() - began < 10, "the changed address was not applied"
        time.sleep(0.02)
    assert browser.find_element(By.ID, "f-q").get_attribute("value") == ""
    chomp = sum('"setting":"chomp-2x8"' in line for line in _lines(rich))
    assert browser.find_element(By.ID, "count").text.startswith(f"showing {chomp} of {chomp} ")
    _no_console_errors(browser)


@pytest.mark.slow
@pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason=NEEDS_BROWSER)
@pytest.mark.parametrize("setting", GAMES)
def test_a_board_is_drawn_per_game(rich: Path, browser: Any, setting: str):
    """Each move's board is an SVG of its game: the move played highlighted, and one
    green mark per winning move (counted here by brute force from the rules)."""
    from selenium.webdriver.common.by import By

    from metanim.games import PRESETS

    _load(browser, rich / "viewer.html", f"#game={setting}&sort=plies&dir=desc")
    item = browser.find_element(By.CSS_SELECTOR, "details.item")
    if item.get_attribute("open") is None:
        item.find_element(By.TAG_NAME, "summary").click()
    key = item.get_attribute("data-key").split("~", 1)[1]
    (line,) = [json.loads(x) for x in _lines(rich) if f'"id":"{key}"' in x]
    name, params = PRESETS[setting]
    game = make_game(name, **params)
    boards = _wait_for(item, "td.state svg.board")
    assert len(boards) == len(line["moves"]) > 1
    assert {b.get_attribute("data-game") for b in boards} == {name}
    for svg, move in zip(boards, line["moves"], strict=True):
        winning = _brute_winning(game, game.validate_state(move["state"]))
        assert len(svg.find_elements(By.CSS_SELECTOR, ".win-mark")) == len(winning)
        assert svg.find_elements(By.CSS_SELECTOR, ".mv-hl, .mv-ring")
    _no_console_errors(browser)


@pytest.mark.slow
@pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason=NEEDS_BROWSER)
def test_boards_past_the_limits_are_described_not_drawn(rich: Path, browser: Any):
    from metanim.analysis.viewer import BOARD_LIMITS

    _load(browser, rich / "viewer.html")
    stones, cells = BOARD_LIMITS["stones"], BOARD_LIMITS["cells"]
    drawn = browser.execute_script(
        """const [s, c] = arguments;
        const side = Math.floor(Math.sqrt(c));
        return [BOARDS.nim({}, [s, 1], null, []), BOARDS.nim({}, [s + 1], null, []),
          BOARDS.fibonacci({}, [s, 2], null, []), BOARDS.fibonacci({}, [s + 1, 2], null, []),
          BOARDS.kayles({}, ["1".repeat(s)], null, []), BOARDS.kayles({}, ["1".repeat(s + 1)], null, []),
          BOARDS.chomp({cols: side}, Array(side).fill(side), null, []),
          BOARDS.chomp({cols: side + 1}, Array(side).fill(side + 1), null, []),
          BOARDS.corner_queen({height: side, width: side}, [0, side - 1], null, []),
          BOARDS.corner_queen({height: side + 1, width: side}, [0, side - 1], null, [])]
          .map((svg) => svg !== null);""",
        stones,
        cells,
    )
    assert drawn == [True, False] * 5
    _no_console_errors(browser)


@pytest.mark.slow
@pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason=NEEDS_BROWSER)
def test_two_runs_side_by_side(rich: Path, browser: Any):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    (a,) = [p.stem for p in rich.glob("eps-opt-*.jsonl")]
    (b,) = [p.stem for p in rich.glob("eps-rand-*.jsonl")]
    _load(browser, rich / "viewer.html")
    Select(browser.find_element(By.ID, "f-run")).select_by_value(a)
    Select(browser.find_element(By.ID, "f-vs")).select_by_value(b)
    head, *pairs = browser.find_elements(By.CSS_SELECTOR, "#items > .pair")
    labels = head.find_elements(By.CSS_SELECTOR, ".pairhead")
    assert "vs optimal" in labels[0].text and "vs random" in labels[1].text
    assert len(pairs) == len(GAMES) * 4
    for pair in pairs:
        left, right = (
            side.find_element(By.CSS_SELECTOR, "summary b").text
            + re.search(r"#\d+", side.text).group(0)
            for side in pair.find_elements(By.CSS_SELECTOR, ".side")
        )
        assert left == right  # the same setting and episode index, run against run
    assert browser.find_element(By.ID, "count").text.startswith(f"showing {len(pairs)} of {len(pairs)} pairs")  # fmt: skip
    assert f"vs={b}" in browser.execute_script("return location.hash")
    _no_console_errors(browser)


@pytest.mark.slow
@pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason=NEEDS_BROWSER)
def test_tables_stay_inside_their_cards_at_1280px(rich: Path, browser: Any):
    (mad,) = [p.stem for p in rich.glob("e-mad-*.jsonl")]
    browser.set_window_size(1280, 1800)
    _load(browser, rich / "viewer.html", f"#run={mad}")
    # The 3-agent debate is open on arrival (the first record's first debate).
    heads = browser.execute_script(
        "return [...document.querySelectorAll('details.dec[open] table.grid thead th')].map((h) => h.textContent)"
    )
    assert heads == ["round", "agent_1", "agent_2", "agent_3", "answers this round"]
    assert browser.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth"
    )
    overflow = browser.execute_script(
        """return [...document.querySelectorAll('table')].filter((t) => t.getClientRects().length)
          .map((t) => { const wrap = t.closest('.tablewrap') || t, card = t.closest('section');
            return [t.id || t.className, wrap.getBoundingClientRect().right - card.getBoundingClientRect().right]; })
          .filter(([, over]) => over > 1)"""
    )
    assert overflow == []
    # The debate grid wraps its text rather than scrolling.
    assert browser.execute_script(
        "const g = document.querySelector('details.dec[open] table.grid'); "
        "return g.getBoundingClientRect().width <= g.parentElement.clientWidth + 1"
    )
    _no_console_errors(browser)
