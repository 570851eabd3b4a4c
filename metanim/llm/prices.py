"""A user-editable price table: US dollars per 1M input and output tokens, per model.

The defaults ship as `metanim/llm/prices.json`; a JSON file of the same shape named by
an argument or by the `METANIM_PRICES` environment variable overrides entries.
"""

from __future__ import annotations

import json
import logging
import os
import re
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from metanim.llm._types import Usage

log = logging.getLogger("metanim.llm")

#: Environment variable naming a JSON price file that overrides the shipped entries.
PRICES_ENV = "METANIM_PRICES"

# Models already warned about as unpriced, in this process.
_WARNED: set[str] = set()


class Price(BaseModel):
    """Dollars per one million tokens."""

    model_config = ConfigDict(frozen=True)

    input: float
    output: float


#: What may follow a priced name in a model name: a dated snapshot (`-2024-08-06`,
#: `-20240806`, `-0613`). Anything else (`o1-pro` after `o1`) is another model.
_SNAPSHOT = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4})")


class PriceTable:
    """Model name -> `Price`.

    A name matches a model exactly, or as its longest prefix when the rest is a dated
    snapshot suffix (`gpt-4o` prices `gpt-4o-2024-08-06` but not `gpt-4o-search` and
    `o1` does not price `o1-pro`); an entry ending in `-` (e.g. "sim-") is a family
    prefix and prices every model that starts with it.

    Args:
        prices: entries by model name (or family prefix ending in "-", e.g. "sim-").
    """

    def __init__(self, prices: dict[str, Price]) -> None:
        self.prices = dict(prices)

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> PriceTable:
        """The shipped table, updated by `path` (or the file `METANIM_PRICES` names)."""
        shipped = resources.files("metanim.llm").joinpath("prices.json").read_text()
        table = cls._parse(shipped)
        override = path if path is not None else os.environ.get(PRICES_ENV)
        if override:
            table.update(cls._parse(Path(override).read_text()))
        return cls(table)

    @staticmethod
    def _parse(text: str) -> dict[str, Price]:
        data = json.loads(text)
        models = data.get("models", data)
        return {
            name: Price.model_validate(entry)
            for name, entry in models.items()
            if not name.startswith("_")
        }

    def lookup(self, model: str) -> Price | None:
        """The price of `model`: an exact entry, else the longest matching prefix, else None."""
        if model in self.prices:
            return self.prices[model]
        matches = [name for name in self.prices if self._prefix_of(name, model)]
        return self.prices[max(matches, key=len)] if matches else None

    @staticmethod
    def _prefix_of(name: str, model: str) -> bool:
        if not name or not model.startswith(name):
            return False
        if name.endswith("-"):
            return True
        return _SNAPSHOT.fullmatch(model[len(name) :]) is not None

    def is_priced(self, model: str) -> bool:
        """Whether `model` has a price; an unpriced model is counted as $0 by `cost`, so a
        cost cap cannot be enforced for it (callers with a cap should refuse it)."""
        return self.lookup(model) is not None

    def warn_unpriced(self, model: str) -> None:
        """Warn that `model` has no price, once per process and model (so once per run,
        however many clients and tables the run builds)."""
        if model not in _WARNED:
            _WARNED.add(model)
            log.warning("no price for model %r: its cost is counted as 0", model)

    def cost(self, model: str, usage: Usage) -> float:
        """Dollars for `usage` on `model`; 0.0 (with one warning) if the model is not listed."""
        price = self.lookup(model)
        if price is None:
            self.warn_unpriced(model)
            return 0.0
        return (usage.prompt_tokens * price.input + usage.completion_tokens * price.output) / 1e6
