"""Chance baselines as tests: a rate against the rate of guessing.

The one-sided exact binomial test (scipy.stats.binomtest) of item-level outcomes against
a chance rate, and the chance that a guesser is right in a majority of an item's
repeats. What the chance rate of a game or an item is lives above (metanim.records).
"""

from __future__ import annotations

from collections.abc import Sequence

#: The significance level of the test against chance.
ALPHA = 0.05


def majority_chance(p: float, repeats: int) -> float:
    """The chance that a player right with probability `p` per repeat is right in a strict
    majority of `repeats` independent repeats (the item-level outcome of `item_outcomes`)."""
    if repeats <= 1:
        return p
    from scipy.stats import binom  # seconds to import: loaded when a summary needs it

    return float(binom.sf(repeats // 2, repeats, p))


def chance_test(successes: int, trials: int, p0: float | None) -> float | None:
    """One-sided exact binomial p-value of `successes` in `trials` against rate `p0`.

    With items of unequal chance, `p0` is their mean: the count of successes of a
    skill-less player then has at most the binomial's variance, so the test stays valid.
    """
    if p0 is None or trials == 0 or not 0.0 <= p0 <= 1.0:
        return None
    from scipy.stats import binomtest  # seconds to import: loaded when a summary needs it

    return float(binomtest(successes, trials, p0, alternative="greater").pvalue)


def item_outcomes(
    rows: Sequence[tuple[str, bool, float | None]],
) -> tuple[int, int, float | None]:
    """(items right in a strict majority of their repeats, items, the chance of that).

    `rows` holds one (item id, correct, chance of a correct answer) per graded decision.
    The chance is None when any item has none.
    """
    items: dict[str, list[tuple[bool, float | None]]] = {}
    for item, correct, p in rows:
        items.setdefault(item, []).append((correct, p))
    wins = 0
    chances: list[float] = []
    for outcomes in items.values():
        right = sum(c for c, _ in outcomes)
        wins += 2 * right > len(outcomes)
        p = outcomes[0][1]
        if p is None:
            return wins, len(items), None
        chances.append(majority_chance(p, len(outcomes)))
    mean = sum(chances) / len(chances) if chances else None
    return wins, len(items), mean
