"""Critical-state datasets: N-positions with exactly one winning move, per game and variant.

>>> from metanim.datasets import build
>>> records = build("nim", 3, seed=0, params={"heaps": [31], "max_take": 3})
>>> len(records), records[0].game
(3, 'nim')

See docs/datasets.md for the record layout and the default build.
"""

from __future__ import annotations

from metanim.datasets._build import (
    BUILD_PRESETS,
    DEFAULT_MIX,
    DEFAULT_SPECS,
    GENERATED_SPECS,
    PAPER_SPECS,
    DatasetSpec,
    build,
    build_default,
    build_paper,
    critical_states,
    make_record,
    play_rule,
    stratum_of,
)
from metanim.datasets._card import dataset_card, dataset_url, push_files, push_to_hub, write_card
from metanim.datasets._io import (
    DatasetError,
    load_dataset,
    records_frame,
    state_from_cell,
    write_jsonl,
)
from metanim.datasets._samplers import CHOMP_MAX_EXTENT_STATES, difficulty_of, sampler_for
from metanim.datasets._schema import (
    DIFFICULTIES,
    SCHEMA_VERSION,
    STRATA,
    DatasetRecord,
    Features,
)
from metanim.datasets._verify import Verification, check_record, verify_record

__all__ = [
    "BUILD_PRESETS",
    "CHOMP_MAX_EXTENT_STATES",
    "DEFAULT_MIX",
    "DEFAULT_SPECS",
    "DIFFICULTIES",
    "GENERATED_SPECS",
    "PAPER_SPECS",
    "SCHEMA_VERSION",
    "STRATA",
    "DatasetError",
    "DatasetRecord",
    "DatasetSpec",
    "Features",
    "Verification",
    "build",
    "build_default",
    "build_paper",
    "check_record",
    "critical_states",
    "dataset_card",
    "dataset_url",
    "difficulty_of",
    "load_dataset",
    "make_record",
    "play_rule",
    "push_files",
    "push_to_hub",
    "records_frame",
    "sampler_for",
    "state_from_cell",
    "stratum_of",
    "verify_record",
    "write_card",
    "write_jsonl",
]
