"""A user-editable price table: US dollars per 1M input, cached input and output tokens.

The defaults ship as `metanim/llm/prices.json`, each entry with the date of the price
list it was copied from and its page; a JSON file of the same shape named by an argument
or by the `METANIM_PRICES` environment variable overrides entries. A model the table does
not price has an unknown cost: `cost` returns None and reports show "unknown", never $0.
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
    """Dollars per one million tokens; `cached_input` where the provider discounts prompt
    tokens served from its cache (None: billed as `input`)."""

    model_config = ConfigDict(frozen=True)

    input: float
    output: float
    cached_input: float | None = None
    as_of: str | None = None  # the date of the price list it was copied from
    source: str | None = None  # that list's page

    def cost(self, usage: Usage) -> float:
        """Dollars for `usage` at these prices (cached prompt tokens at their price)."""
        cached = min(usage.cached_tokens, usage.prompt_tokens) if self.cached_input else 0
        return (
            (usage.prompt_tokens - cached) * self.input
            + cached * (self.cached_input or 0.0)
            + usage.completion_tokens * self.output
        ) / 1e6


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
        sources = data.get("sources", {}) if "models" in data else {}
        out = {}
        for name, entry in models.items():
            if name.startswith("_") or not isinstance(entry, dict):
                continue
            price = Price.model_validate(entry)
            if price.source in sources:
                price = price.model_copy(update={"source": sources[price.source]})
            out[name] = price
        return out

    def lookup(self, model: str) -> Price | None:
        """The price of `model`: an exact entry, else the longest matching prefix; a
        router's `vendor/model` also as the model alone (dots in versions as dashes:
        `anthropic/claude-sonnet-4.5` is `claude-sonnet-4-5`); else None."""
        for name in _names(model):
            if name in self.prices:
                return self.prices[name]
            matches = [known for known in self.prices if self._prefix_of(known, name)]
            if matches:
                return self.prices[max(matches, key=len)]
        return None

    @staticmethod
    def _prefix_of(name: str, model: str) -> bool:
        if not name or not model.startswith(name):
            return False
        if name.endswith("-"):
            return True
        return _SNAPSHOT.fullmatch(model[len(name) :]) is not None

    def is_priced(self, model: str) -> bool:
        """Whether `model` has a price; an unpriced model's cost is unknown, so a cost cap
        cannot be enforced for it (callers with a cap refuse it)."""
        return self.lookup(model) is not None

    def warn_unpriced(self, model: str) -> None:
        """Warn that `model` has no price, once per process and model (so once per run,
        however many clients and tables the run builds)."""
        if model not in _WARNED:
            _WARNED.add(model)
            log.warning(
                "no price for model %r: its cost is unknown (add it to a METANIM_PRICES file)",
                model,
            )

    def cost(self, model: str, usage: Usage) -> float | None:
        """Dollars for `usage` on `model`; None (with one warning) if the model is not listed."""
        price = self.lookup(model)
        if price is None:
            self.warn_unpriced(model)
            return None
        return price.cost(usage)


def _names(model: str) -> list[str]:
    """The names `model` is looked up by, in order (see `PriceTable.lookup`)."""
    names = [model]
    if model.startswith("azure:"):
        return names
    bare = model.rsplit("/", 1)[-1] if "/" in model else model
    for name in (bare, re.sub(r"(?<=\d)\.(?=\d)", "-", bare)):
        if name not in names:
            names.append(name)
    return names
