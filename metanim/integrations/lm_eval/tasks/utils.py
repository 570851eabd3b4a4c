"""lm-eval loads `!function utils.canonical_move` from here: the one metanim filter."""

from metanim.integrations.lm_eval.filter import canonical_move

__all__ = ["canonical_move"]
