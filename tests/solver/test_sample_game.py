"""`sample_game`: seeded draws from the generated families, in their difficulty bands."""

from __future__ import annotations

import pytest

from metanim.games import Octal, Subtraction
from metanim.solver import sample_game
from metanim.solver.generate import BANDS, certified_period
from tests.oracles import octal_reference


@pytest.mark.slow
@pytest.mark.parametrize("family", ["subtraction", "octal"])
@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_draws_are_seeded_and_inside_their_band(family: str, difficulty: int) -> None:
    band = BANDS[difficulty]
    games = [sample_game(family, seed, difficulty) for seed in range(6)]
    assert games == [sample_game(family, seed, difficulty) for seed in range(6)]
    assert len({g.code for g in games}) >= 3  # fresh rules, not one rule again
    for game in games:
        assert game.num_legal_moves(game.initial_state()) >= 2
        found = certified_period(game.code)
        assert found is not None
        n0, p = found
        assert band.period[0] <= n0 + p <= band.period[1]
        # The period holds on values computed from the definition, well past n0 + p.
        values = octal_reference(game.code, n0 + 3 * p + 40)
        assert all(values[n] == values[n + p] for n in range(n0, len(values) - p))
        if family == "subtraction":
            assert isinstance(game, Subtraction) and max(game.takes) <= band.max_take
            count, low, high = band.heaps
            assert len(game.heaps) == count and all(low <= h <= high for h in game.heaps)
        else:
            assert isinstance(game, Octal)
            assert band.digits[0] <= len(game.code) - 2 <= band.digits[1]
            count, low, high = band.rows
            assert len(game.rows) == count and all(low <= n <= high for n in game.rows)


def test_the_drawn_rule_is_in_the_game_identity() -> None:
    a, b = sample_game("octal", 1, 2), sample_game("octal", 2, 2)
    assert a.params["code"] == a.code and a != b
    assert type(a)(**a.params) == a  # the params rebuild the drawn game exactly
    with pytest.raises(ValueError, match="family"):
        sample_game("chess", 0, 1)
    with pytest.raises(ValueError, match="difficulty"):
        sample_game("octal", 0, 7)
