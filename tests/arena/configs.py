"""Small run configs the arena's tests start from: one Nim setting, the sample
multiple-choice file, no progress bar."""

from __future__ import annotations

from metanim.arena import EvaluationConfig, TournamentConfig

QUIET = {"progress": False}


def tournament(**fields) -> TournamentConfig:
    """A one-episode ReAct tournament on Nim (7 stones, take 1-3) against the solver."""
    base = dict(
        games=['nim:{"heaps":[7],"max_take":3}'], method="react", opponent="optimal",
        episodes=1, **QUIET,
    )  # fmt: skip
    return TournamentConfig(**{**base, **fields})


def evaluation(tmp_path, model: str, **fields) -> EvaluationConfig:
    """Two repeats of `model` on the sample multiple-choice questions, one call at a time."""
    base = dict(
        dataset=["samples/mc.jsonl"], method="standard", model=model, repeats=2,
        concurrency=1, results_dir=str(tmp_path), **QUIET,
    )  # fmt: skip
    return EvaluationConfig(**{**base, **fields})
