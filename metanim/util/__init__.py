"""What every layer may use: exit codes and strict value parsing at the edge, stable seeds.

The bottom of the package's layer order: it imports no other `metanim` package. The kinds
of user-given value (`PositiveInt`, `Temperature`, `FileName`, ...) are checked here. Two
submodules are imported by name where they are needed: `metanim.util.fastjson` (orjson
with the standard library's rules) and `metanim.util.aio` (the event loop and collector
settings runs use).
"""

from typing import TYPE_CHECKING

from metanim.util.edge import (
    EXIT_CODES,
    EXIT_CODES_HELP,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    STOP_SIGNALS,
    Interrupted,
    MetaNimError,
    MissingExtra,
    StorageError,
    Unreachable,
    deprecated_aliases,
    game_params,
    int_range,
    interruptible,
    port,
    strict_json,
)
from metanim.util.lazy import lazy_exports
from metanim.util.seeds import derive_seed

if TYPE_CHECKING:
    from metanim.util.values import (
        MAX_PER_DECISION,
        AgentCount,
        FileName,
        FiniteFloat,
        Folder,
        NonNegativeInt,
        PositiveCounts,
        PositiveFloat,
        PositiveInt,
        Probability,
        RoundCount,
        Temperature,
        check_file_name,
        check_folder,
    )

# The value kinds load on first use: they are pydantic types, which `import metanim`
# (games, envs) never needs.
_VALUE_KINDS = (
    "MAX_PER_DECISION",
    "AgentCount",
    "FileName",
    "FiniteFloat",
    "Folder",
    "NonNegativeInt",
    "PositiveCounts",
    "PositiveFloat",
    "PositiveInt",
    "Probability",
    "RoundCount",
    "Temperature",
    "check_file_name",
    "check_folder",
)
__getattr__, __dir__ = lazy_exports(__name__, {"values": _VALUE_KINDS})

__all__ = [
    "EXIT_CODES",
    "EXIT_CODES_HELP",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "MAX_PER_DECISION",
    "STOP_SIGNALS",
    "AgentCount",
    "FileName",
    "FiniteFloat",
    "Folder",
    "Interrupted",
    "MetaNimError",
    "MissingExtra",
    "NonNegativeInt",
    "PositiveCounts",
    "PositiveFloat",
    "PositiveInt",
    "Probability",
    "RoundCount",
    "StorageError",
    "Temperature",
    "Unreachable",
    "check_file_name",
    "check_folder",
    "deprecated_aliases",
    "derive_seed",
    "game_params",
    "int_range",
    "interruptible",
    "port",
    "strict_json",
]
