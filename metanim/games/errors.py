"""The errors of reading a position or an answer: a leaf module every layer may raise from.

The game interface (`_base`) and the reply parser (`reply`) both raise these, so they
live below both and neither imports the other for them.
"""

from __future__ import annotations

from typing import ClassVar

from metanim.util import MetaNimError


class InvalidStateError(MetaNimError, ValueError):
    """A value that is not a legal position of the configured game."""


class MoveError(MetaNimError, ValueError):
    """An answer that cannot be played; `reason` says why in one sentence."""

    kind: ClassVar[str] = "move"

    def __init__(self, reason: str, text: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.text = text


class UnparsableMoveError(MoveError):
    """The answer does not name a move at all (wrong format, no number, ...)."""

    kind = "unparsable"


class IllegalMoveError(MoveError):
    """The answer names a well-formed move that the rules forbid here."""

    kind = "illegal"


class SizeLimitError(MetaNimError, ValueError):
    """A state or table is larger than a method can hold; the message names the limit."""


class TruncatedReplyError(UnparsableMoveError):
    """The reply was cut off by the completion cap before a complete answer."""

    kind = "truncated"
