"""Coverage of `paired_item_difference` at R = 1, 3 and 5 repeats per item, against a
paired bootstrap over items (docs/analysis.md, "Paired differences at R > 1").

Each replicate draws `ITEMS` items from a population (per item, A's and B's accuracies
p_A ~ U(0.1, 0.9) and p_B = clip(p_A − δ), δ ~ N(DELTA, 0.15)), then R Bernoulli repeats
of each method on each, and asks whether the 95% interval holds the population mean of
p_A − p_B (computed here by Monte Carlo over 10⁶ items). Seeded; run outside the suite:

    .venv/bin/python scripts/coverage_paired_items.py [--reps 2000]
"""

from __future__ import annotations

import argparse

import numpy as np

from metanim.stats import paired_item_difference, tango_interval

ITEMS, DELTA, SEED = 40, 0.1, 20261127


def population(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    p_a = rng.uniform(0.1, 0.9, n)
    p_b = np.clip(p_a - rng.normal(DELTA, 0.15, n), 0.0, 1.0)
    return p_a, p_b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--boot", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(SEED)
    big_a, big_b = population(rng, 1_000_000)
    truth = float((big_a - big_b).mean())
    print(f"items {ITEMS}, replicates {args.reps}, seed {SEED}, true difference {truth:+.4f}")
    print(
        "| R | coverage | mean width | bootstrap coverage | bootstrap mean width | width ratio "
        "| unscaled Tango coverage | unscaled width |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for repeats in (1, 3, 5):
        hits = boot_hits = plain_hits = 0
        widths, boot_widths, plain_widths = [], [], []
        for _ in range(args.reps):
            p_a, p_b = population(rng, ITEMS)
            a = rng.random((ITEMS, repeats)) < p_a[:, None]
            b = rng.random((ITEMS, repeats)) < p_b[:, None]
            ci = paired_item_difference(
                {k: list(a[k]) for k in range(ITEMS)}, {k: list(b[k]) for k in range(ITEMS)}
            )
            hits += ci.low <= truth <= ci.high
            widths.append(ci.high - ci.low)
            d = a.mean(axis=1) - b.mean(axis=1)
            # Tango on the fractional discordance as it is, without the effective items.
            plain = tango_interval(float(d[d > 0].sum()), float(-d[d < 0].sum()), ITEMS)
            plain_hits += plain.low <= truth <= plain.high
            plain_widths.append(plain.high - plain.low)
            means = d[rng.integers(0, ITEMS, (args.boot, ITEMS))].mean(axis=1)
            low, high = np.percentile(means, [2.5, 97.5])
            boot_hits += low <= truth <= high
            boot_widths.append(high - low)
        w, bw = float(np.mean(widths)), float(np.mean(boot_widths))
        print(
            f"| {repeats} | {hits / args.reps:.3f} | {w:.3f} | {boot_hits / args.reps:.3f} "
            f"| {bw:.3f} | {w / bw:.2f} | {plain_hits / args.reps:.3f} "
            f"| {float(np.mean(plain_widths)):.3f} |"
        )


if __name__ == "__main__":
    main()
