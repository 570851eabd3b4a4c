"""The kinds of value a user gives, each checked in one place.

A kind is a pydantic `Annotated` type: run configs, agent profiles and method
parameters declare their fields with these, so a value is refused the same way whether
it comes from a flag, a config file or `--param` (pydantic names the field and the rule).
Floats are finite everywhere: `inf` or `nan` is a typo, never a setting.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

from pydantic import AfterValidator, Field

#: A count that must be at least one (episodes, calls, tokens, agents, rounds).
PositiveInt = Annotated[int, Field(ge=1)]
#: A count that may be zero (retries, re-asks).
NonNegativeInt = Annotated[int, Field(ge=0)]
#: The most agents, samples, rounds or re-asks one decision may ask for. Each is a model
#: call or more per decision, so a larger number is a slip (`n=1000000` starts a million
#: calls at once and fills memory), not a setting.
MAX_PER_DECISION = 100
#: Agents or samples of one decision: 1 to `MAX_PER_DECISION`.
AgentCount = Annotated[int, Field(ge=1, le=MAX_PER_DECISION)]
#: Rounds, refinement steps or re-asks of one decision: 0 to `MAX_PER_DECISION`.
RoundCount = Annotated[int, Field(ge=0, le=MAX_PER_DECISION)]
#: A finite number of any sign.
FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
#: A finite amount above zero (seconds, dollars).
PositiveFloat = Annotated[float, Field(gt=0, allow_inf_nan=False)]
#: A sampling temperature: finite and not negative.
Temperature = Annotated[float, Field(ge=0, allow_inf_nan=False)]
#: A probability or a share, 0 to 1.
Probability = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]


def check_file_name(name: str) -> str:
    """`name` if it can name one file inside a folder: not empty, no path separator, no
    `..`, no control character. Raises `ValueError` saying what is wrong."""
    if not name.strip():
        raise ValueError("a name is empty; give a file name such as my-run")
    if "/" in name or "\\" in name or name in (".", ".."):
        raise ValueError(
            f"{name!r} is a path; a name is a file name inside the results folder "
            "(no '/', '\\' or '..'): choose the folder with --results-dir"
        )
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        raise ValueError(f"{name!r} holds control characters; a name is a plain file name")
    return name


#: A run's name: the stem of its files inside the results folder.
FileName = Annotated[str, AfterValidator(check_file_name)]


def check_folder(path: str) -> str:
    """`path` if it can be a folder to write into: not empty, and not an existing file."""
    if not path.strip():
        raise ValueError("the folder is empty; give a path such as results")
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"{path} is a file, not a folder")
    return path


#: A folder results are written into (made when missing).
Folder = Annotated[str, AfterValidator(check_folder)]


def check_positive_values(value: dict[str, Any]) -> dict[str, Any]:
    """A mapping of names to counts (per-phase caps): each a whole number of at least 1."""
    for key, count in value.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"{key}={count!r}: give a whole number of at least 1")
    return value


#: A count per name (`rewrite=1024`), each at least one.
PositiveCounts = Annotated[dict[str, int], AfterValidator(check_positive_values)]
