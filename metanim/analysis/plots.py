"""PNG plots of results (matplotlib, the optional `plots` extra, imported lazily, Agg backend)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from metanim.analysis.debate import entrenchment_curve

#: (low, estimate, high) in [0, 1] per method, per game.
Bars = Mapping[str, Mapping[str, tuple[float, float, float]]]


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("plots need matplotlib: pip install 'metanim-arena[plots]'") from exc
    matplotlib.use("Agg")  # files only: never needs a display
    import matplotlib.pyplot as plt

    return plt


def grouped_bars(
    bars: Bars, path: str | Path, *, title: str, ylabel: str, games: Sequence[str] | None = None
) -> Path:
    """Grouped bars per game, one bar per method, with CI whiskers (seed 000's Figure 6 layout)."""
    plt = _pyplot()
    methods = list(bars)
    games = list(games or sorted({g for per in bars.values() for g in per}))
    width = 0.8 / max(len(methods), 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(games) * max(len(methods), 1) ** 0.5), 4))
    for k, method in enumerate(methods):
        xs, ys, err_lo, err_hi = [], [], [], []
        for g, game in enumerate(games):
            if game not in bars[method]:
                continue
            low, est, high = bars[method][game]
            xs.append(g + (k - (len(methods) - 1) / 2) * width)
            ys.append(100 * est)
            err_lo.append(100 * max(est - low, 0))
            err_hi.append(100 * max(high - est, 0))
        ax.bar(xs, ys, width, label=method, yerr=[err_lo, err_hi], capsize=3)
    ax.set_xticks(range(len(games)), games, rotation=20, ha="right")
    ax.set_ylim(0, 105)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize="small", ncols=min(len(methods), 4))
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def entrenchment_plot(
    points: Sequence[tuple[float, float]], path: str | Path, *, rounds: int = 3, title: str = ""
) -> Path:
    """Observed (p⁽⁰⁾, p⁽ᵗ⁾) against Eq. 1's curve and y = x (seed 000's Figure 3)."""
    plt = _pyplot()
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
