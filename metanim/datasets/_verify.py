"""Independent verification of dataset records: never the solver under test alone.

A record is *verified* when an independent oracle agrees with it: the plain-Python
`ReferenceSolver` (memoized recursion over the game's rules) where the position is
small enough, or a proven closed form, written out here again from the literature
rather than imported from the solver:

* NIM: Bouton's Nim-sum of h mod (k+1) (h for unbounded takes); misère: Bouton's
  misère rule on those residues (the mover loses iff all are 0 or 1 and an odd number
  are 1, or some is at least 2 and their XOR is 0), for any heaps and max take;
* Fibonacci Nim (normal play): (r, k) is N iff the smallest Zeckendorf part of r
  is at most k (Whinihan 1963);
* Corner Queen / Wythoff: (x, y), x <= y, is P iff x = ⌊(y - x)φ⌋ (Beatty pairs);
  misère: the same for y - x >= 2, and (0, 1), (1, 0), (2, 2) near the corner;
* Chomp with at most two rows in use (normal play): (a, b) is P iff b = a - 1;
* Kayles (normal play): run values from the rules up to 83 pins, then period 12
  from 71 on (Guy & Smith 1956); a position's value is the XOR of its runs.

The generated families (subtraction sets, octal codes) have no closed form written
here: their records are checked by the reference solver over the game's own rules,
while the position allows (`REFERENCE_STATES`).

Misère Kayles, where no closed form is known, is searched over positions as the
multiset of their runs (rows split into independent runs, and equal runs commute),
with the runs a move leaves taken from the game's rules (`MultisetMisereSearch`).

The oracle decides which legal moves (from the game's rules) leave a lost position;
the record must name the only one. A search stops past `REFERENCE_WORK` moves
scanned for one record; a record that no oracle covers is reported as "not
independently verified", never as verified.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, reduce
from math import comb, isqrt
from operator import xor
from typing import Any, Literal

from metanim.datasets._build import harness_fields
from metanim.datasets._schema import DatasetRecord
from metanim.games import (
    Chomp,
    CornerQueen,
    FibonacciNim,
    Game,
    Kayles,
    Nim,
    Octal,
    SizeLimitError,
    Subtraction,
)
from metanim.solver.reference import (
    MultisetMisereSearch,
    ReferenceSolver,
    kayles_run_moves,
    mex,
    partitions_up_to,
)

#: Positions the reference solver may explore for one record (memoized per game).
REFERENCE_STATES = 60_000
#: Moves the misère Kayles search may scan for one record (its memo is kept per game).
REFERENCE_WORK = 200_000
#: Records with more legal moves than this are not enumerated (no oracle).
MAX_ORACLE_MOVES = 200_000

Status = Literal["verified", "failed", "unverified"]


@dataclass(frozen=True)
class Verification:
    """The result of checking one record.

    `status`: "verified" (an independent oracle agrees), "failed" (something does
    not check out; `detail` says what) or "unverified" (no independent oracle
    covers this record: `detail` says why). `method` names the oracle used.
    """

    status: Status
    method: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class _Oracle:
    name: str
    lost: Callable[[Any], bool]  # whether the player to move in a child loses
    grundy: Callable[[Any], int] | None = None  # normal-play value, where known


# ------------------------------------------------------------------ closed forms


def _zeckendorf_smallest(n: int) -> int:
    fibs = [1, 2]
    while fibs[-1] <= n:
        fibs.append(fibs[-1] + fibs[-2])
    smallest = n
    for f in reversed(fibs):
        if f <= n:
            n -= f
            smallest = f
    return smallest


def _beatty_p(x: int, y: int) -> bool:
    x, y = min(x, y), max(x, y)
    k = y - x
    return x == (k + isqrt(5 * k * k)) // 2  # ⌊kφ⌋ exactly


def _wythoff_misere_p(x: int, y: int) -> bool:
    if (x, y) in ((0, 1), (1, 0), (2, 2)):
        return True
    return abs(x - y) >= 2 and _beatty_p(x, y)


@cache
def _kayles_value(n: int) -> int:
    if n >= 84:
        return _kayles_value(71 + (n - 71) % 12)
    for m in range(n):  # fill smaller values first: no deep recursion
        _kayles_value(m)
    return mex(
        {_kayles_value(a) ^ _kayles_value(n - t - a) for t in (1, 2) for a in range(n - t + 1)}
    )


def _kayles_grundy(state: tuple[str, ...]) -> int:
    return reduce(xor, (_kayles_value(len(r)) for row in state for r in row.split("0") if r), 0)


def _closed_form(game: Game[Any, Any], state: Any) -> _Oracle | None:
    if isinstance(game, Nim):
        k = game.max_take or 0

        def nim_value(heaps: tuple[int, ...]) -> int:
            return reduce(xor, (h if k == 0 else h % (k + 1) for h in heaps), 0)

        if not game.misere:
            return _Oracle(
                "closed form (Nim-sum, n mod (k+1))", lambda c: nim_value(c) == 0, nim_value
            )
        if k == 0:

            def bouton_misere(c: tuple[int, ...]) -> bool:
                if max(c) <= 1:
                    return sum(c) % 2 == 1  # all heaps empty: an odd count is impossible
                return nim_value(c) == 0

            return _Oracle("closed form (Bouton's misère rule)", bouton_misere, nim_value)

        def residue_misere(c: tuple[int, ...]) -> bool:
            residues = [h % (k + 1) for h in c]
            if max(residues) <= 1:
                return sum(residues) % 2 == 1
            return nim_value(c) == 0

        return _Oracle("closed form (misère rule on h mod (k+1))", residue_misere, nim_value)
    if isinstance(game, FibonacciNim) and not game.misere:
        return _Oracle(
            "closed form (Zeckendorf)",
            lambda c: c[0] == 0 or _zeckendorf_smallest(c[0]) > c[1],
        )
    if isinstance(game, CornerQueen):
        if game.misere:
            return _Oracle(
                "closed form (misère Beatty pairs)",
                lambda c: _wythoff_misere_p(*game.wythoff(c)),
            )
        return _Oracle("closed form (Beatty pairs)", lambda c: _beatty_p(*game.wythoff(c)))
    if isinstance(game, Chomp) and not game.misere and sum(1 for x in state if x) <= 2:
        return _Oracle(
            "closed form (two-row Chomp)",
            lambda c: (c[1] if len(c) > 1 else 0) == c[0] - 1,
        )
    if isinstance(game, Kayles) and not game.misere:
        return _Oracle(
            "closed form (Kayles values, period 12 after 70)",
            lambda c: _kayles_grundy(c) == 0,
            _kayles_grundy,
        )
    return None


# ------------------------------------------------------------------ reference solver


def _reference_states(game: Game[Any, Any], state: Any) -> int:
    """An upper bound on the positions the reference explores from `state`."""
    if isinstance(game, Nim | Subtraction):
        return reduce(lambda a, h: a * (h + 1), state, 1)
    if isinstance(game, Octal):
        # The reference memoizes on the multiset of groups: at most the partitions of
        # every pin count up to the standing pins.
        return partitions_up_to(sum(row.count("1") for row in state))
    if isinstance(game, FibonacciNim):
        return state[0] * (state[0] + 1) // 2 + 1
    if isinstance(game, Chomp):
        used = sum(1 for x in state if x)
        return comb(used + state[0], used)
    if isinstance(game, CornerQueen):
        x, y = game.wythoff(state)
        return (x + 1) * (y + 1)
    return REFERENCE_STATES + 1


_REFERENCES: dict[Game[Any, Any], ReferenceSolver] = {}


_SEARCHES: dict[Game[Any, Any], MultisetMisereSearch] = {}


def _misere_kayles(game: Kayles) -> _Oracle:
    if game not in _SEARCHES:
        if len(_SEARCHES) > 64:
            _SEARCHES.clear()
        _SEARCHES[game] = MultisetMisereSearch(kayles_run_moves, max_work=REFERENCE_WORK)
    search = _SEARCHES[game]
    search.work = 0  # the budget is per record; what is memoized stays
    return _Oracle("multiset-of-runs search", lambda c: not search.mover_wins(game.state_key(c)))


def _reference(game: Game[Any, Any], state: Any) -> _Oracle | None:
    if isinstance(game, Kayles) and game.misere:
        return _misere_kayles(game)
    if _reference_states(game, state) > REFERENCE_STATES:
        return None
    if game not in _REFERENCES:
        if len(_REFERENCES) > 64:
            _REFERENCES.clear()
        _REFERENCES[game] = ReferenceSolver(game)
    ref = _REFERENCES[game]
    return _Oracle("reference solver", lambda c: not ref.mover_wins(c), ref.grundy)


# ------------------------------------------------------------------------ checks


def check_record(record: DatasetRecord) -> Verification:
    """Check one record against the game's rules and an independent oracle."""
    game = record.make_game()
    state = game.validate_state(record.state)
    legal = game.legal_moves(state)
    texts = [game.move_text(m) for m in legal]
    rule_checks: list[tuple[str, Any, Any]] = [
        ("variant", record.variant, game.info.variant),
        ("prompt", record.prompt, game.prompt(state)),
        ("legal_moves", record.legal_moves, texts),
    ]
    for name, have, want in rule_checks:
        if have != want:
            return Verification("failed", None, f"{name} is {have!r}, the rules give {want!r}")
    if record.optimal_move not in texts:
        return Verification("failed", None, f"optimal_move {record.optimal_move!r} is not legal")
    move = legal[texts.index(record.optimal_move)]
    if record.optimal_action != game.action_id(move):
        return Verification(
            "failed",
            None,
            f"optimal_action is {record.optimal_action}, {record.optimal_move} is action "
            f"{game.action_id(move)}",
        )
    if len(legal) > MAX_ORACLE_MOVES:
        return Verification(
            "unverified", None, f"not independently verified: {len(legal):,} legal moves"
        )
    oracle = _closed_form(game, state) or _reference(game, state)
    if oracle is None:
        return Verification(
            "unverified",
            None,
            "not independently verified: no closed form covers this position and the "
            f"reference solver would explore up to {_reference_states(game, state):,} "
            f"positions (limit {REFERENCE_STATES:,})",
        )
    try:
        winning = [game.move_text(m) for m in legal if oracle.lost(game.child(state, m))]
    except SizeLimitError as exc:
        return Verification("unverified", None, f"not independently verified: {exc}")
    if winning != [record.optimal_move]:
        return Verification(
            "failed",
            oracle.name,
            f"the {oracle.name} finds winning moves {winning}, the record says only "
            f"{record.optimal_move!r}",
        )
    if record.input:  # files built before the harness fields existed have none to check
        for name, want in harness_fields(game, state, move).items():
            if getattr(record, name) != want:
                return Verification(
                    "failed", None, f"{name} does not match the record's state and optimal move"
                )
    if oracle.grundy is not None:
        value = oracle.grundy(state)
        if record.grundy != value:
            return Verification(
                "failed", oracle.name, f"grundy is {record.grundy}, the {oracle.name} says {value}"
            )
    elif not game.misere and record.grundy == 0:
        return Verification("failed", oracle.name, "grundy is 0 at an N-position")
    return Verification("verified", oracle.name, None)


def verify_record(record: DatasetRecord) -> str | None:
    """None when an independent oracle verifies the record; else what is wrong, or
    "not independently verified: ..." when no oracle covers it."""
    result = check_record(record)
    return None if result.status == "verified" else result.detail
