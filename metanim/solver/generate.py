"""Seeded draws of games from the generated families: a fresh rule per run.

`sample_game(family, seed, difficulty)` draws a rule (a subtraction set, an octal code)
and the sizes, both from `difficulty`; the rule's period is measured by the solver's
octal machinery, so a drawn rule is always one the solver answers exactly. The drawn
game's parameters (its rule among them) are its identity: a run records them.

Difficulty (1, 2 or 3; docs/solver.md, "Generated games"):

| difficulty | subtraction set | octal code | rule's period length n0 + p | sizes |
|---|---|---|---|---|
| 1 | max take <= 4 | 1-2 digits | <= 8 | one heap / row of 8-16 |
| 2 | max take <= 6 | 2-3 digits | 9-30 | two heaps / rows of 6-14 |
| 3 | max take <= 9 | 3-4 digits | 31-400 | three heaps / two rows of 10-20 |

n0 + p is the certified preperiod plus period of the single-heap values (Guy–Smith):
how far a reader must follow the values before they repeat. A drawn game whose start
has fewer than two legal moves is drawn again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from metanim.games import Octal, Subtraction
from metanim.solver import _octal
from metanim.util.seeds import derive_seed


@dataclass(frozen=True)
class _Band:
    max_take: int  # subtraction sets: the largest take
    digits: tuple[int, int]  # octal codes: fewest and most digits
    period: tuple[int, int]  # n0 + p, inclusive
    heaps: tuple[int, int, int]  # subtraction: heaps, smallest, largest
    rows: tuple[int, int, int]  # octal: rows, fewest pins, most pins


BANDS: dict[int, _Band] = {
    1: _Band(4, (1, 2), (1, 8), (1, 8, 16), (1, 8, 16)),
    2: _Band(6, (2, 3), (9, 30), (2, 6, 14), (2, 6, 14)),
    3: _Band(9, (3, 4), (31, 400), (3, 10, 20), (2, 10, 20)),
}
#: Values a drawn rule's period must be certified within (a code with no period found
#: there, Treblecross 0.007 among them, is drawn again).
PERIOD_PROBE = 2048
#: Rules tried before a draw gives up (each try is one seeded draw).
MAX_TRIES = 2000


def certified_period(code: str, probe: int = PERIOD_PROBE) -> tuple[int, int] | None:
    """(n0, p) certified by the Guy–Smith theorem within the first `probe` values, or None.

    The same theorem as `_octal.find_period`, over NumPy slices: for each p, n0 is one
    past the last n with G(n) != G(n + p), certified when 2 n0 + 2 p + t - 1 < probe.
    """
    g = _octal.octal_values(code, probe - 1)
    t = len(_octal.octal_digits(code)) - 1
    top = len(g) - 1
    for p in range(1, top // 2 + 1):
        diff = np.flatnonzero(g[:-p] != g[p:])
        n0 = int(diff[-1]) + 1 if len(diff) else 0
        if 2 * n0 + 2 * p + t - 1 <= top:
            return n0, p
    return None


def _draw_rule(family: str, band: _Band, rng: np.random.Generator) -> Any:
    if family == "subtraction":
        top = int(rng.integers(2, band.max_take + 1))
        others = [k for k in range(1, top) if rng.random() < 0.5]
        return [*others, top]
    t = int(rng.integers(band.digits[0], band.digits[1] + 1))
    digits = [int(rng.integers(0, 8)) for _ in range(t - 1)] + [int(rng.integers(1, 8))]
    return "0." + "".join(map(str, digits))


def sample_game(family: str, seed: int, difficulty: int = 1, *, misere: bool = False) -> Any:
    """A game of `family` ("subtraction" or "octal") drawn from `seed` at `difficulty`.

    The same (family, seed, difficulty) always gives the same game. Raises `ValueError`
    for an unknown family or difficulty.
    """
    if family not in ("subtraction", "octal"):
        raise ValueError(f"family is 'subtraction' or 'octal', got {family!r}")
    if difficulty not in BANDS:
        raise ValueError(f"difficulty is one of {sorted(BANDS)}, got {difficulty!r}")
    band = BANDS[difficulty]
    rng = np.random.default_rng(derive_seed(seed, "sample_game", family, difficulty))
    for _ in range(MAX_TRIES):
        rule = _draw_rule(family, band, rng)
        code = Subtraction(subtraction_set=rule).code if family == "subtraction" else rule
        found = certified_period(code)
        if found is None or not band.period[0] <= sum(found) <= band.period[1]:
            continue
        game: Subtraction | Octal
        if family == "subtraction":
            count, low, high = band.heaps
            heaps = [int(x) for x in rng.integers(low, high + 1, size=count)]
            game = Subtraction(heaps, subtraction_set=rule, misere=misere)
        else:
            count, low, high = band.rows
            rows = [int(x) for x in rng.integers(low, high + 1, size=count)]
            game = Octal(rows, code=rule, misere=misere)
        # A start with one move or none is no game ("0.1" on a row of 15: nothing to play).
        if game.num_legal_moves(game.initial_state()) >= 2:
            return game
    raise ValueError(f"no {family} rule of difficulty {difficulty} found in {MAX_TRIES} draws")
