"""`metanim reproduce ARTIFACT`: every seed-paper table and figure from one command.

One module per seed paper (`seed000` to `seed004`); each artifact is
one declaration there (`artifact(...)` on the function that runs its protocol and renders
its table: its paper, the options it reads, its default simulated agents), registered in
`ARTIFACTS` as its module is imported below. Adding an artifact is adding a declaration.

Adding a module (another paper, or a study of its own such as a `name-effect` artifact):
write `metanim/analysis/reproduce/<module>.py` that imports what it needs from `._base`
(`artifact`, `Hypothesis`, `Run`, the option groups `DATA`, `ITEMS`, `GAMES`) and
declares its artifacts with `@artifact(...)`, then add its name to the import line
below; `metanim reproduce` lists it, plans it and runs it from the registry, with no
change to the CLI. Its order in that line is its place in `metanim reproduce all`.

Each artifact runs its protocol through the arena (resumable JSONL logs, one run identity
per configuration), then writes `<out>/<artifact>.md` (a Markdown table) and, where the
paper has a figure, `<out>/<artifact>.png`.

With no `--model`, an artifact runs its own simulated agents (its `Hypothesis`): each is
a documented hypothesis about how agents behave, chosen so that the paper's mechanism
*can* appear, never a fit to the paper's numbers. The configuration is printed in words
under every output, and every table caption and plot title says "simulated" and names
the models. `--model`, `--base-url` (and the per-role flags) run the same artifact,
unchanged, on any model. docs/analysis.md lists every artifact with the paper's number
beside the simulated default's.
"""

from __future__ import annotations

from metanim.analysis.reproduce import seed000, seed001, seed002, seed003, seed004  # noqa: F401 - registers

# isort: split
# The studies of this project's own come after the papers' artifacts in `reproduce all`.
from metanim.analysis.reproduce import name_effect  # noqa: F401 - registers
from metanim.analysis.reproduce._base import (
    ARTIFACTS,
    Artifact,
    Flagged,
    Hypothesis,
    ReproduceOptions,
    Run,
    RunFailed,
    artifact,
    plan,
    reproduce,
)

__all__ = [
    "ARTIFACTS",
    "Artifact",
    "Flagged",
    "Hypothesis",
    "ReproduceOptions",
    "Run",
    "RunFailed",
    "artifact",
    "plan",
    "reproduce",
]
