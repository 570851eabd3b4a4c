"""PNG plots of results (matplotlib, the optional `plots` extra, imported lazily, Agg backend)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from metanim.analysis.debate import entrenchment_curve
from metanim.util import MissingExtra

#: (low, estimate, high) in [0, 1] per method, per game.
Bars = Mapping[str, Mapping[str, tuple[float, float, float]]]
#: (low, estimate, high) in [0, 1] per method, per game, per part of its bar (a seat).
Marks = Mapping[str, Mapping[str, Mapping[str, tuple[float, float, float]]]]
#: How each part's mark is drawn on its bar: (marker, offset from the bar's centre as a
#: share of the bar's width).
MARK_STYLE = {"first": ("^", -0.22), "second": ("v", 0.22)}


def need_pyplot() -> Any:
    """matplotlib's pyplot, writing files only; `MissingExtra` without the `plots` extra."""
    try:
        import matplotlib
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtra("plots need matplotlib: pip install 'metanim-arena[plots]'") from exc
    matplotlib.use("Agg")  # files only: never needs a display
    import matplotlib.pyplot as plt

    return plt


def grouped_bars(
    bars: Bars,
    path: str | Path,
    *,
    title: str,
    ylabel: str,
    games: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
    empty: str = "no finished episodes",
    marks: Marks | None = None,
) -> Path:
    """Grouped bars per game, one bar per method, with CI whiskers (seed 000's Figure 6 layout).

    Each bar is labelled with its value, so a 0% bar still shows (as a line on the axis and
    "0%"); a game's bars are centred on its tick whatever number of methods it has; the
    legend (`labels[method]`, e.g. method, model and opponent) sits below the axes, never
    over a bar. With no bar at all the figure says `empty` instead of drawing empty axes.
    `marks` draws parts of a bar on it (a seat's own rate and CI, styled by `MARK_STYLE`:
    ▲ first, ▼ second), so a gap between the parts shows beside the pooled bar.
    """
    plt = need_pyplot()
    methods = [m for m in bars if bars[m]]
    games = list(games or sorted({g for m in methods for g in bars[m]}))
    labels = labels or {}
    if not methods:
        fig, ax = plt.subplots(figsize=(6.0, 2.4))
        ax.set_axis_off()
        ax.set_title(title)
        ax.text(0.5, 0.5, empty, ha="center", va="center", fontsize=13, color="0.35")
        return _save(plt, fig, path)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(games) * max(len(methods), 1) ** 0.5), 4))
    width = 0.8 / len(methods)
    colour = {m: f"C{k % 10}" for k, m in enumerate(methods)}
    drawn: set[str] = set()
    for (method, game), x in bar_positions(bars, games).items():
        low, est, high = bars[method][game]
        ax.bar(
            x,
            100 * est,
            width * 0.95,
            color=colour[method],
            yerr=[[100 * max(est - low, 0)], [100 * max(high - est, 0)]],
            capsize=3,
            label=None if method in drawn else labels.get(method, method),
        )
        drawn.add(method)
        for part, (plow, pest, phigh) in (marks or {}).get(method, {}).get(game, {}).items():
            marker, offset = MARK_STYLE[part]
            ax.errorbar(
                x + offset * width,
                100 * pest,
                yerr=[[100 * max(pest - plow, 0)], [100 * max(phigh - pest, 0)]],
                fmt=marker,
                color="0.1",
                markerfacecolor="white",
                ms=6,
                capsize=2,
                lw=1,
                label=f"{part} seat",
            )
        # A 0% bar has no height: a thick line on the axis in its colour shows it is there.
        ax.plot([x - width * 0.45, x + width * 0.45], [0, 0], color=colour[method], lw=3)
        ax.text(
            x,
            100 * max(high, est) + 1.5,
            f"{100 * est:.0f}%",
            ha="center",
            va="bottom",
            fontsize=8,
            color="0.2",
        )
    tilt = len(games) > 3  # long setting names overlap when many sit side by side
    ax.set_xticks(
        range(len(games)), games, rotation=20 if tilt else 0, ha="right" if tilt else "center"
    )
    ax.set_xlim(-0.6, len(games) - 0.4)
    ax.set_ylim(0, 112)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    # Legend in the methods' order, whichever game first drew each one's bar.
    by_label = dict(zip(*reversed(ax.get_legend_handles_labels()), strict=True))
    names = [labels.get(m, m) for m in methods]
    names += [f"{part} seat" for part in MARK_STYLE if f"{part} seat" in by_label]
    ax.legend(
        [by_label[n] for n in names],
        names,
        fontsize="small",
        loc="upper center",
        bbox_to_anchor=(0.5, -0.12 if len(games) <= 3 else -0.22),
        ncols=1,
        frameon=False,
    )
    return _save(plt, fig, path)


def bar_positions(bars: Bars, games: Sequence[str]) -> dict[tuple[str, str], float]:
    """The x of each (method, game) bar: game g's tick is at x = g, and only the methods
    with a bar in that game share its slot, so a lone bar sits on its tick."""
    methods = [m for m in bars if bars[m]]
    width = 0.8 / max(len(methods), 1)
    out = {}
    for g, game in enumerate(games):
        present = [m for m in methods if game in bars[m]]
        for k, method in enumerate(present):
            out[(method, game)] = g + (k - (len(present) - 1) / 2) * width
    return out


def _save(plt: Any, fig: Any, path: str | Path) -> Path:
    path = Path(path)
    # bbox_inches="tight" keeps the legend below the axes inside the image.
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def entrenchment_plot(
    points: Sequence[tuple[float, float]], path: str | Path, *, rounds: int = 3, title: str = ""
) -> Path:
    """Observed (p⁽⁰⁾, p⁽ᵗ⁾) against Eq. 1's curve and y = x (seed 000's Figure 3)."""
    plt = need_pyplot()
    grid = [i / 100 for i in range(101)]
    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    ax.plot(grid, [entrenchment_curve(p, rounds)[-1] for p in grid], label=f"Eq. 1, t = {rounds}")
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", label="y = x")
    if points:
        ax.scatter(
            [p for p, _ in points], [q for _, q in points], s=18, color="C3", label="observed"
        )
    ax.set_xlabel("p⁽⁰⁾ (independent samples)")
    ax.set_ylabel(f"p⁽{rounds}⁾ (after debate)")
    ax.set_title(title or "Belief entrenchment")
    ax.legend(fontsize="small")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


#: Marker and colour of a rated player by kind (anchor, calibration, player).
_KIND_STYLE = {"anchor": ("s", "0.25"), "calibration": ("D", "C2"), "player": ("o", "C0")}


def rating_plot(
    rows: Sequence[tuple[str, str, float, float, float]], path: str | Path, *, title: str
) -> Path:
    """Each player's rating with its 95% interval, best on top; anchors and ε-optimal
    calibration points marked apart, the anchors' ratings (random 1000, optimal 2000) as
    dashed lines. `rows`: (label, kind, rating, low, high); players without a rating are
    left out."""
    plt = need_pyplot()
    rows = [r for r in rows if r[2] == r[2]]
    rows = sorted(rows, key=lambda r: r[2])
    fig, ax = plt.subplots(figsize=(7.5, 0.9 + 0.42 * max(len(rows), 1)))
    for x, name in ((1000, "random"), (2000, "optimal")):
        ax.axvline(x, color="0.6", linestyle="--", lw=1, zorder=0)
        ax.text(x, len(rows) - 0.35, name, ha="center", va="bottom", fontsize=8, color="0.35")
    seen: set[str] = set()
    for y, (_, kind, rating, low, high) in enumerate(rows):
        marker, colour = _KIND_STYLE.get(kind, _KIND_STYLE["player"])
        ax.errorbar(
            rating,
            y,
            xerr=[[max(rating - low, 0)], [max(high - rating, 0)]],
            fmt=marker,
            color=colour,
            capsize=3,
            ms=6,
            label=None
            if kind in seen
            else {"calibration": "ε-optimal (calibration)"}.get(kind, kind),
        )
        seen.add(kind)
        ax.text(high + 12, y, f"{rating:.0f}", va="center", fontsize=8, color="0.2")
    lows = [min(r[3], r[2]) for r in rows] + [1000]
    highs = [max(r[4], r[2]) for r in rows] + [2000]
    ax.set_xlim(min(lows) - 60, max(highs) + 110)  # room for the value beside each bar
    ax.set_yticks(range(len(rows)), [r[0] for r in rows], fontsize=8)
    ax.set_ylim(-0.6, len(rows) - 0.1)
    ax.set_xlabel("rating (random = 1000, optimal = 2000; 95% bootstrap CI)")
    ax.set_title(title)
    ax.legend(fontsize="small", loc="lower right")
    return _save(plt, fig, path)
