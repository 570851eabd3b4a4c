"""How fast the HTML viewer loads in headless Chromium, and the screenshot in the docs.

Builds the demo's results folder (`metanim demo`: DReaMAD vs ReAct on simulated models,
every decision recorded) at each of `--sizes` episodes, times `metanim report` writing
the page, then opens each page in Debian's headless Chromium (Selenium,
/usr/bin/chromedriver) and times navigation until the page says it is ready (records
unpacked, leaderboard and first records drawn), against a blank local page opened in
the same browser in the same run.

    python scripts/bench_viewer.py                      # writes its section of docs/benchmarks.md
    python scripts/bench_viewer.py --screenshot docs/img/viewer.png
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from _bench import machine, table, write_section

FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
)  # fmt: skip


def browser(profile: str, width: int = 1280, height: int = 1700) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    chromedriver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    return webdriver.Chrome(service=Service(chromedriver), options=opts)


def load(driver: Any, page: Path, ready: bool = True) -> float:
    """Seconds from navigation to the page's ready mark (or the load event)."""
    start = time.perf_counter()
    driver.get(page.as_uri())
    while ready and driver.execute_script("return document.body.dataset.ready") != "1":
        if time.perf_counter() - start > 30:
            raise RuntimeError(f"{page} never became ready")
        time.sleep(0.005)
    return time.perf_counter() - start


def demo(folder: Path, episodes: int) -> float:
    """Run the demo into `folder`; return the seconds `metanim report` takes on it."""
    from metanim.analysis import render_report
    from metanim.cli import main

    with contextlib.redirect_stdout(io.StringIO()):
        main(["demo", "--episodes", str(episodes), "--results-dir", str(folder), "--no-progress"])
    start = time.perf_counter()
    render_report(folder)
    return time.perf_counter() - start


def rated_folder(folder: Path) -> None:
    """The demo (10 episodes) with the games that rate its players: each of them, and an
    ε-optimal player, against the optimal and the random player on the same setting,
    from the initial state with seats alternating, so that both players of a pairing
    start on the winning side in turn (docs/ratings.md, Designing games to rate)."""
    from metanim.analysis import render_report
    from metanim.arena import TournamentConfig, run_tournament

    demo(folder, 10)
    common = {
        "games": ["fibonacci-20"], "episodes": 60, "seat": "alternate", "start": "initial",
        "progress": False,
    }  # fmt: skip
    sides = [
        ("dreamad", "sim-biased:heuristic=max_take,p=0.3"),
        ("react", "sim-biased:heuristic=max_take,p=0.6"),
        ("epsilon:0.5", None),
        ("optimal", None),
    ]
    for method, model in sides:
        for opponent in ("optimal", "random"):
            if method == opponent:
                continue
            extra = {"model": model} if model else {}
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # the second seat starts lost
                run_tournament(
                    TournamentConfig(
                        name=f"{method}-vs-{opponent}".replace(":", ""), method=method,
                        opponent=opponent, results_dir=str(folder), **extra, **common,
                    )
                )  # fmt: skip
    render_report(folder)


def screenshot(driver: Any, page: Path, out: Path, width: int = 1000) -> None:
    """The page's first screen (leaderboard, report), scaled to `width` pixels."""
    from PIL import Image

    load(driver, page)
    out.parent.mkdir(parents=True, exist_ok=True)
    raw = page.with_name("screenshot.png")
    driver.save_screenshot(str(raw))
    with Image.open(raw) as img:
        scaled = img.convert("RGB").resize(
            (width, round(img.height * width / img.width)), Image.LANCZOS
        )
    scaled = scaled.quantize(colors=128, method=Image.Quantize.MEDIANCUT)
    scaled.save(out, optimize=True)
    print(f"screenshot: {out} ({out.stat().st_size // 1024} KiB)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--sizes", type=int, nargs="+", default=[100, 2000], help="episodes of each folder"
    )
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--screenshot", type=Path, help="save a rated demo page's screenshot here")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        blank = root / "blank.html"
        blank.write_text("<!doctype html><title>blank</title><body data-ready='1'></body>")
        if args.screenshot:
            rated_folder(root / "rated")
            driver = browser(str(root / "profile"), height=1400)
            try:
                screenshot(driver, root / "rated" / "viewer.html", args.screenshot)
            finally:
                driver.quit()
            return
        folders = {f"demo ({n:,} episodes)": (root / f"demo{n}", n) for n in args.sizes}
        written = {}
        for name, (folder, n) in folders.items():
            written[name] = demo(folder, n)
            print(f"{name}: written in {written[name]:.1f} s", file=sys.stderr)
        driver = browser(str(root / "profile"))
        try:
            load(driver, blank)  # warm the browser once
            floor = statistics.median(load(driver, blank) for _ in range(args.repeats))
            rows = []
            for name, (folder, _) in folders.items():
                page = folder / "viewer.html"
                times = []
                for _ in range(args.repeats):  # each page load beside a blank one
                    load(driver, blank)
                    times.append(load(driver, page))
                logs = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
                if logs:
                    sys.exit(f"console errors on {page}: {logs}")
                size = sum(p.stat().st_size for p in folder.glob("*.jsonl"))
                rows.append(
                    [
                        name,
                        f"{size / 1e6:.2f}",
                        f"{page.stat().st_size / 1e3:.0f}",
                        f"{written[name]:.2f}",
                        f"{statistics.median(times):.3f}",
                        f"{statistics.median(times) / floor:.1f}",
                    ]
                )
        finally:
            driver.quit()
    load_avg = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    markdown = "\n\n".join(
        [
            "## HTML viewer (`scripts/bench_viewer.py`)",
            f"Machine: {machine()}; load average {load_avg} when it ran.",
            "The demo's results folder (`metanim demo`: DReaMAD vs ReAct on simulated models, "
            "every decision recorded) at each size; 2,000 episodes is the most one page holds "
            "(`MAX_ITEMS`; a bigger folder gets one page per run). *Write*: `render_report` "
            "(tables, ratings, plots, page). *Ready*: headless Chromium, from navigation until "
            "the page has unpacked its gzip+base64 records and drawn the leaderboard, the "
            f"first {100} records and the example debate, median of {args.repeats} loads; "
            "*vs blank*: the same over opening a blank local page in the same browser "
            f"({floor * 1e3:.0f} ms). The machine is shared with other jobs: between runs the "
            "times vary about threefold, the ratio less.",
            table(["folder", "logs (MB)", "page (kB)", "write (s)", "ready (s)", "vs blank"], rows),
        ]
    )
    print(markdown)
    write_section("viewer", markdown)


if __name__ == "__main__":
    main()
