"""A package face whose names load on first use (PEP 562), so importing the package, or
one light module of it, does not import its heavy modules (numba, scipy, aiohttp).

    __getattr__, __dir__ = lazy_exports(__name__, {"env": ["ImpartialGameEnv"], ...})

with the same names imported under `typing.TYPE_CHECKING` for type checkers.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`: each name in `exports[module]` is read
    from `package.module` when first asked for, then kept in the package's namespace."""
    where = {name: module for module, names in exports.items() for name in names}
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
