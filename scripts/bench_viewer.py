"""How fast the HTML viewer loads in headless Chromium, and the screenshot in the docs.

Builds the demo's results folder (`metanim demo`, simulated models, 10 episodes) and a
bigger one (the same demo with `--big` episodes), times `metanim report` writing the
page, then opens each page in Debian's headless Chromium (Selenium, /usr/bin/chromedriver)
and times navigation until the page says it is ready (records unpacked and drawn),
against a blank local page opened in the same browser in the same run.

    python scripts/bench_viewer.py                      # writes its section of docs/benchmarks.md
    python scripts/bench_viewer.py --screenshot docs/img/viewer.png
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import statistics
import sys
import tempfile
import time
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


def screenshot(driver: Any, page: Path, out: Path, width: int = 1000) -> None:
    """The page's first screen (tables, plot, one debate), scaled to `width` pixels."""
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
    ap.add_argument("--big", type=int, default=100, help="episodes of the bigger folder")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--screenshot", type=Path, help="save the demo page's screenshot here")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        blank = root / "blank.html"
        blank.write_text("<!doctype html><title>blank</title><body data-ready='1'></body>")
        folders = {"demo (10 episodes)": (root / "demo", 10)}
        if not args.screenshot:
            folders[f"demo ({args.big} episodes)"] = (root / "big", args.big)
        written = {name: demo(folder, n) for name, (folder, n) in folders.items()}
        driver = browser(str(root / "profile"))
        try:
            if args.screenshot:
                screenshot(driver, root / "demo" / "viewer.html", args.screenshot)
                return
            load(driver, blank)  # warm the browser once
            floor = statistics.median(load(driver, blank) for _ in range(args.repeats))
            rows = []
            for name, (folder, _) in folders.items():
                page = folder / "viewer.html"
                times = [load(driver, page) for _ in range(args.repeats)]
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
    markdown = "\n\n".join(
        [
            "## HTML viewer (`scripts/bench_viewer.py`)",
            f"Machine: {machine()}.",
            "The demo's results folder (`metanim demo`, simulated models) and the same demo "
            "with more episodes. *Write*: `render_report` (tables, plot, page). *Ready*: "
            "headless Chromium, from navigation until the page has unpacked its gzip+base64 "
            f"records and drawn the first {100} items and the example debate, median of "
            f"{args.repeats} loads; *vs blank*: the same over opening a blank local page in "
            f"the same browser ({floor * 1e3:.0f} ms). The machine is shared with other "
            "jobs: between runs the times vary about threefold, the ratio less.",
            table(["folder", "logs (MB)", "page (kB)", "write (s)", "ready (s)", "vs blank"], rows),
        ]
    )
    print(markdown)
    write_section("viewer", markdown)


if __name__ == "__main__":
    main()
