"""Critical-state datasets: N-positions with exactly one winning move, per game and variant.

>>> from metanim.datasets import build
>>> records = build("nim", 3, seed=0, params={"heaps": [31], "max_take": 3})
>>> len(records), records[0].game
(3, 'nim')

See docs/datasets.md for the record layout and the default build.
"""

from __future__ import annotations

from metanim.datasets._build import (
    DEFAULT_SPECS,
    DatasetSpec,
    build,
    build_default,
    critical_states,
    make_record,
    stratum_of,
)
from metanim.datasets._card import dataset_card, push_to_hub, write_card
from metanim.datasets._io import (
    DatasetError,
    load_dataset,
    records_frame,
    state_from_cell,
    verify_record,
    write_jsonl,
)
from metanim.datasets._samplers import CHOMP_MAX_EXTENT_STATES
from metanim.datasets._schema import SCHEMA_VERSION, STRATA, DatasetRecord, Features

__all__ = [
    "CHOMP_MAX_EXTENT_STATES",
    "DEFAULT_SPECS",
    "SCHEMA_VERSION",
    "STRATA",
    "DatasetError",
    "DatasetRecord",
    "DatasetSpec",
    "Features",
    "build",
    "build_default",
    "critical_states",
    "dataset_card",
    "load_dataset",
    "make_record",
    "push_to_hub",
    "records_frame",
    "state_from_cell",
    "stratum_of",
    "verify_record",
    "write_card",
    "write_jsonl",
]
