"""Reading and comparing open (numeric or math) answers with Hugging Face's `math-verify`.

`parse_math` turns a reply's answer value (a JSON number, a plain number, LaTeX, or a
sentence ending in one) into a `MathAnswer`: the extracted text and the SymPy value
`math-verify` compares. `equivalent` says whether two answers are the same
mathematical object (`\\frac{3}{4}` = 0.75, `\\sqrt{12}` = `2\\sqrt{3}`, `10^{3}` =
1000). A value from which nothing can be read raises `UnparsableMoveError`, so an
unreadable reply is never graded as a wrong number.

`math-verify` (and SymPy under it) is an optional extra (`pip install 'metanim-arena[math]'`),
imported on first use.
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from metanim.games import UnparsableMoveError
from metanim.util import MissingExtra

#: A number alone: optional sign, thousands grouped by commas (1,200), decimals,
#: scientific notation (1.5e3). "1,2" is not one: it is read as LaTeX (a list).
_PLAIN_NUMBER = re.compile(r"^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?$")
#: Prose: a word of three letters that is not a LaTeX command (\frac, \sqrt).
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")
_MATH_MODE = ("$", "\\boxed", "\\(", "\\[", "\\fbox")


def _math_verify() -> Any:
    try:
        import math_verify  # the optional `math` extra
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise MissingExtra(
            "grading numeric and math answers needs math-verify: "
            "pip install 'metanim-arena[math]' (or pip install math-verify)"
        ) from exc
    return math_verify


def _timeout() -> int | None:
    # math-verify bounds SymPy with signal.alarm, which only the main thread may use.
    return 5 if threading.current_thread() is threading.main_thread() else None


@dataclass(frozen=True)
class MathAnswer:
    """An open answer: the text it was read as, and what `math-verify` parsed from it."""

    text: str
    parsed: list[Any] = field(compare=False, hash=False, repr=False)

    @property
    def value(self) -> Any:
        """The SymPy object (or string) `math-verify` compares."""
        return self.parsed[0]

    @property
    def key(self) -> Any:
        """A vote key: numbers by value (0.75 and 3/4 vote together), others by SymPy form."""
        value = self.value
        if getattr(value, "is_number", False):
            try:
                number = complex(value)
            except (TypeError, ValueError):
                return str(value)
            if number.imag == 0 and math.isfinite(number.real):
                return round(number.real, 9) + 0.0
        return str(value)


def _plain_number(text: str) -> str | None:
    """The canonical decimal text of a plain number (commas dropped, exponent applied)."""
    if not text or not any(c.isdigit() for c in text) or not _PLAIN_NUMBER.match(text):
        return None
    try:
        number = Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None
    if not number.is_finite():
        return None
    out = format(number.normalize(), "f")
    return out if out != "-0" else "0"


def parse_math(value: Any) -> MathAnswer:
    """Read an open answer from a reply's value.

    Raises:
        UnparsableMoveError: no number or expression can be read from `value`.
    """
    if isinstance(value, bool) or value is None:
        raise UnparsableMoveError(f"expected a number or an expression, got {value!r}", str(value))
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise UnparsableMoveError(f"expected a finite number, got {value!r}", str(value))
        text = _plain_number(repr(value).replace("+", "")) or repr(value)
        return _parsed(text, f"${text}$", latex_only=True, raw=str(value))
    if not isinstance(value, str):
        raise UnparsableMoveError(
            f"expected a number or an expression, got {type(value).__name__}", str(value)
        )
    text = value.strip().strip("\"'").strip().rstrip(".").strip()
    if not text:
        raise UnparsableMoveError("the answer is empty", value)
    plain = _plain_number(text)
    if plain is not None:
        return _parsed(plain, f"${plain}$", latex_only=True, raw=value)
    if any(mark in text for mark in _MATH_MODE) or _WORD.search(text):
        # Math mode or a sentence: let math-verify find the (last, boxed first) answer.
        return _parsed(None, text, latex_only=False, raw=value)
    try:
        return _parsed(None, f"${text}$", latex_only=True, raw=value)
    except UnparsableMoveError:
        return _parsed(None, text, latex_only=False, raw=value)


def _parsed(text: str | None, source: str, *, latex_only: bool, raw: str) -> MathAnswer:
    mv = _math_verify()
    configs = [mv.LatexExtractionConfig()]
    if not latex_only:
        configs.append(mv.ExprExtractionConfig())
    try:
        result = mv.parse(source, extraction_config=configs, parsing_timeout=_timeout())
    except Exception:  # math-verify reports its own failures as an empty list; be safe
        result = []
    if len(result) < 2:
        raise UnparsableMoveError(f"no number or expression could be read from {raw!r}", raw)
    return MathAnswer(text if text is not None else str(result[1]), list(result))


def equivalent(gold: MathAnswer, answer: MathAnswer) -> bool:
    """Whether `answer` is the same mathematical object as `gold` (math-verify's `verify`).

    Equal vote keys (the same number, or the same SymPy form) answer at once: `verify`
    costs tens of milliseconds where SymPy has to simplify.
    """
    if gold.key == answer.key:
        return True
    mv = _math_verify()
    try:
        return bool(mv.verify(gold.parsed, answer.parsed, timeout_seconds=_timeout()))
    except Exception:  # a comparison SymPy cannot decide (or a timeout) is not a match
        return False
