"""`metanim solve GAME STATE`: a state's Grundy value, outcome and winning moves."""

from __future__ import annotations

import argparse
import json
from typing import Any

from metanim.cli._registry import command
from metanim.solver import solve_state
from metanim.util import game_params, strict_json

#: How a state is typed (the argument's help, and what a refused one is told to give).
STATE_FORMS = 'the state as JSON, e.g. "[31]", "[20, 19]", \'["1111"]\''


def _state_arg(text: str) -> Any:
    # A state's numbers are whole: "[20.9]" is refused, never truncated to [20].
    try:
        return strict_json(text, "state", bare_text=True, forms=STATE_FORMS)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("state: ")) from None


def _solve_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "game",
        help="nim, fibonacci, kayles, chomp, corner_queen, subtraction (-p "
        "subtraction_set=[1,3,4]), octal (-p code=0.07), or a preset name",
    )
    p.add_argument("state", type=_state_arg, help=STATE_FORMS)
    p.add_argument(
        "--misere",
        action="store_true",
        default=None,
        help="misère play (the last mover loses); a preset keeps its own play rule "
        "(nim-31-k3 is normal, nim-31-k3-misere misère) and refuses a flag that contradicts it",
    )
    p.add_argument(
        "--param",
        "-p",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="a game parameter, e.g. -p max_take=4 (sizes not given are read from the state; "
        "see docs/solver.md)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (schema metanim-solve/1) instead of text",
    )


@command("solve", "Grundy value, outcome and winning moves of a state", _solve_args)
def _solve(args: argparse.Namespace) -> int:
    params = game_params(args.param)
    if args.misere is not None:  # only a flag the user gave joins the parameters
        if params.get("misere", True) is not True:
            raise ValueError("--misere contradicts -p misere=false")
        params["misere"] = True
    solution = solve_state(args.game, args.state, **params)
    print(json.dumps(solution.to_json()) if args.json else solution.text())
    return 0
