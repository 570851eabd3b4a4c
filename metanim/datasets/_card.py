"""The Hugging Face dataset card of a build (README.md with a YAML header), and `push_to_hub`.

The card is written from the records themselves (sizes, strata, legal-move counts) and
from `DatasetRecord`'s fields (the feature list), so it cannot drift from the files.
"""

from __future__ import annotations

import glob
import json
import statistics
import types
import typing
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from metanim.datasets._schema import SCHEMA_VERSION, STRATA, DatasetRecord
from metanim.util import MissingExtra, Unreachable

#: Fields that hold JSON *strings* in the file (their shapes differ between games).
_JSON_TEXT_FIELDS = ("game_params", "state")
#: The config of a card with several files that holds all of them (the default one).
ALL_CONFIG = "all"


def _dtype(annotation: Any) -> Any:
    """A `datasets` feature description (YAML form) of a field annotation."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if isinstance(annotation, types.UnionType) and type(None) in args and len(args) == 2:
        # An optional field has its value's type (JSON writes null where unset).
        (inner,) = (a for a in args if a is not type(None))
        return _dtype(inner)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {"struct": _features(annotation)}
    if origin is list:
        (item,) = args
        if typing.get_origin(item) is dict:  # chat messages: list of {role, content}
            return {
                "list": [
                    {"name": "content", "dtype": "string"},
                    {"name": "role", "dtype": "string"},
                ]
            }
        return {"sequence": _dtype(item)["dtype"]}
    if annotation is int:
        return {"dtype": "int64"}
    if annotation is bool:
        return {"dtype": "bool"}
    if annotation is float:
        return {"dtype": "float64"}
    # str, Literal[...] of strings, and anything else is text in the file.
    if origin is typing.Literal or annotation is str or isinstance(annotation, types.UnionType):
        return {"dtype": "string"}
    return {"dtype": "string"}


def _features(model: type[BaseModel]) -> list[dict[str, Any]]:
    """The fields of `model` as `datasets` features, in the file's order.

    `DatasetRecord.to_json_line` sorts keys at every level, and `datasets` takes a
    JSONL file's columns (and struct fields) in the order it reads them, so the card
    lists them sorted too: the declared and the inferred Arrow schemas are then equal,
    field order included.
    """
    out = []
    for name, field in sorted(model.model_fields.items()):
        if name in _JSON_TEXT_FIELDS:
            out.append({"name": name, "dtype": "string"})
        else:
            out.append({"name": name, **_dtype(field.annotation)})
    return out


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return label
    return "100K<n<1M" if n < 1_000_000 else "n>1M"


def _yaml(value: Any, indent: int = 0) -> list[str]:
    """A tiny YAML writer for dicts, lists and scalars (JSON scalars are valid YAML)."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict | list) and item:
                lines.append(f"{pad}{key}:")
                lines += _yaml(item, indent + 2)
            else:
                lines.append(f"{pad}{key}: {json.dumps(item)}")
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict | list):
                sub = _yaml(item, indent + 2)
                lines.append(f"{pad}- {sub[0].strip()}")
                lines += sub[1:]
            else:
                lines.append(f"{pad}- {json.dumps(item)}")
    return lines


def _paper_build_text(files: dict[str, list[DatasetRecord]]) -> str:
    """What the paper build is, counted from its records: forced moves, easy NIM, small Chomp."""
    records = [r for rs in files.values() for r in rs]
    forced = sum(1 for r in records if r.features.n_legal_moves == 1)
    nim = [r for r in records if r.game == "nim"]
    nim_easy = sum(1 for r in nim if r.difficulty == "easy")
    chomp = [r for r in records if r.game == "chomp"]
    median = statistics.median(r.features.fullness or 0.0 for r in chomp) if chomp else 0.0
    chomp_hard = sum(1 for r in chomp if r.difficulty == "hard")
    return f"""
## The paper build

This is the seed paper's build (`metanim dataset build --preset paper`), kept as the
paper made it so that its Table 1 stays comparable. It is easy by construction:

- it keeps forced moves: **{forced} of {len(records)}** records have a single legal
  move, so any legal answer is right;
- **{nim_easy} of {len(nim)}** NIM records are labelled `easy` (one heap of 31 with
  takes 1-3 has few critical states, each answered by taking n mod 4);
- its Chomp records on the "2x2 ... 19x19" boards are late-game shapes drawn where the
  solver's table is small: median fullness **{median:.2f}** (the share of the board
  left), and **{chomp_hard}** of {len(chomp)} are labelled `hard`.

The default build (`--preset default`) leaves out forced moves and samples by
difficulty; use it to measure reasoning rather than to reproduce the paper.
"""


def dataset_card(
    files: dict[str, list[DatasetRecord]], *, seed: int | None = None, preset: str | None = None
) -> str:
    """The README.md of a build: YAML header (configs, features, sizes) and the card text.

    Args:
        files: Records by file stem (e.g. "nim-normal" for nim-normal.jsonl).
        seed: The build seed, named in the text.
        preset: The named build ("paper" adds what that build is, counted from its records).
    """
    total = sum(len(r) for r in files.values())
    features = _features(DatasetRecord)
    # One config per file, and with several files an `all` config over every file, the
    # default: `load_dataset(repo)` without a config name loads the whole build.
    configs: dict[str, Any] = {name: f"{name}.jsonl" for name in files}
    members = dict(files)
    default = next(iter(files), None)
    if len(files) > 1 and ALL_CONFIG not in files:
        configs = {ALL_CONFIG: [f"{name}.jsonl" for name in files], **configs}
        members = {ALL_CONFIG: [r for rs in files.values() for r in rs], **members}
        default = ALL_CONFIG
    header = {
        "license": "mit",
        "pretty_name": "MetaNIM Arena critical states",
        "language": ["en"],
        "task_categories": ["text-generation", "question-answering"],
        "tags": ["games", "reasoning", "combinatorial-game-theory", "impartial-games", "llm-eval"],
        "size_categories": [_size_category(total)],
        "configs": [
            {
                "config_name": name,
                "data_files": [{"split": "test", "path": paths}],
                **({"default": True} if name == default else {}),
            }
            for name, paths in configs.items()
        ],
        "dataset_info": [
            {
                "config_name": name,
                "features": features,
                "splits": [
                    {
                        "name": "test",
                        "num_bytes": sum(len(r.to_json_line().encode()) + 1 for r in records),
                        "num_examples": len(records),
                    }
                ],
            }
            for name, records in members.items()
        ],
    }
    rows = []
    for name, records in files.items():
        strata = Counter(r.features.stratum for r in records)
        legal = [r.features.n_legal_moves for r in records]
        configs = sorted({json.dumps(r.game_params, sort_keys=True) for r in records})
        shown = configs[0] if len(configs) == 1 else f"{len(configs)} configurations"
        rows.append(
            f"| {name} | {len(records)} | {shown} | "
            + " / ".join(str(strata.get(s, 0)) for s in STRATA)
            + f" | {min(legal, default=0)}–{max(legal, default=0)} |"
        )
    versions = sorted({r.input_version for rs in files.values() for r in rs})
    body = f"""
# MetaNIM Arena: critical states of five impartial games

Positions of NIM, Fibonacci NIM, Kayles, Chomp and Corner Queen (normal and misère play)
where the player to move can win and **exactly one move wins** (a *critical state*), so
an answer is right or wrong with no judgement: decision accuracy is exact. Built by
[`metanim`](https://pypi.org/project/metanim-arena/) `dataset build`
(schema `{SCHEMA_VERSION}`{"" if seed is None else f", seed {seed}"}).

## Sizes

{total} records, one config (file) per game and play rule, each a `test` split{
        f"; the default config `{ALL_CONFIG}` holds every file" if ALL_CONFIG in configs else ""
    }.

| config | records | game parameters | strata easy / medium / hard | legal moves |
|---|---|---|---|---|
{chr(10).join(rows)}

## Fields

- `input`: the full prompt to send (`prompt` plus the ReAct Output Format, the seed
  papers' reference method), versioned by `input_version` ({", ".join(versions) or "-"});
- `target`: the unique winning move as canonical text (= `optimal_move`, e.g. `2` or
  `[0, 3]`); `optimal_action` is its flat action id;
- `messages`: chat form, the user's `input` then a reference assistant reply in the
  requested JSON format;
- `prompt` (the game prompt without an output format), `state` and `game_params` (JSON
  strings: their shapes differ between games), `legal_moves`, `grundy`, `features`
  (`n_legal_moves`, `size_left`, `depth`, `max_depth`, `grundy`, `stratum`), `seed`,
  `schema_version`, `content_hash` (sha256 of every other field).

Grade a reply by reading the JSON `action` from it and comparing its canonical text with
`target`; `metanim` does exactly that (`Game.parse_move`, the inspect_ai scorer, the
lm-eval filter).

## How the states were sampled

A seeded sampler per game draws valid, reachable states (numpy Generator seeded by the
build seed and a checksum of the game configuration, so adding a game never changes
another's records); an exact Sprague–Grundy solver keeps the N-positions with exactly
one winning move; records are spread over difficulty strata (`features.stratum`) where
the game has enough states. See `docs/datasets.md` in the project for each game's
sampler.

## Uniqueness guarantee

Every record was solved exactly: the state is an N-position and `target` is its **only**
winning move (every other legal move leaves the opponent a winning position). States
are distinct within a config, ids are unique, and `metanim dataset show FILE --verify`
re-solves every record and checks its hash. No record depends on a model.
{_paper_build_text(files) if preset == "paper" else ""}"""
    return "---\n" + "\n".join(_yaml(header)) + "\n---\n" + body


def write_card(
    folder: str | Path,
    files: dict[str, list[DatasetRecord]],
    *,
    seed: int | None = None,
    preset: str | None = None,
) -> Path:
    """Write `README.md` (the dataset card) into a build folder (see `dataset_card`)."""
    path = Path(folder) / "README.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dataset_card(files, seed=seed, preset=preset), encoding="utf-8")
    return path


def push_files(folder: str | Path) -> list[Path]:
    """The files `push_to_hub` uploads from a build folder: its dataset card (README.md)
    and its JSONL files, in name order. Reads the folder only (no Hub, no network).

    Raises:
        FileNotFoundError: the folder or its README.md is missing.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"no dataset folder at {folder} (metanim dataset build writes one)")
    if not (folder / "README.md").is_file():
        raise FileNotFoundError(f"{folder}/README.md is missing: build the dataset first")
    return sorted([folder / "README.md", *(p for p in folder.glob("*.jsonl") if p.is_file())])


def dataset_url(repo_id: str) -> str:
    """The page of a dataset repo on the Hugging Face Hub."""
    return f"https://huggingface.co/datasets/{repo_id}"


def push_to_hub(folder: str | Path, repo_id: str, *, private: bool = False) -> str:
    """Upload a build folder (`push_files`: JSONL files and README.md) as a Hugging Face
    dataset repo.

    Needs `huggingface_hub` (the `hf` extra) and a token (`huggingface-cli login` or
    `HF_TOKEN`). Returns the repo URL. Each JSONL file is one config, as the card says.
    """
    try:
        from huggingface_hub import HfApi  # the optional `hf` extra
    except ImportError as exc:  # pragma: no cover - optional extra
        raise MissingExtra(
            "push_to_hub needs huggingface_hub: pip install 'metanim-arena[hf]'"
        ) from exc
    folder = Path(folder)
    files = push_files(folder)
    api = HfApi()
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        api.upload_folder(
            folder_path=str(folder),
            repo_id=repo_id,
            repo_type="dataset",
            # Exactly the files push_files lists (a pattern without wildcards is one name).
            allow_patterns=[glob.escape(p.name) for p in files],
        )
    except _transport_errors() as exc:  # no network, DNS, a proxy: nothing reached the Hub
        raise Unreachable(
            f"cannot reach the Hugging Face Hub ({type(exc).__name__}: {exc}); nothing was "
            "uploaded: run the same command again once it can be reached"
        ) from None
    return dataset_url(repo_id)


def _transport_errors() -> tuple[type[BaseException], ...]:
    """The errors of a request that reached no server: httpx's (the Hub client's; its 2.x
    line ships the module as `httpx2`) and OSError (requests', and sockets'); looked up
    only when a request failed."""
    import importlib

    found: list[type[BaseException]] = [OSError]
    for name in ("httpx", "httpx2"):
        try:
            found.append(importlib.import_module(name).TransportError)
        except (ImportError, AttributeError):
            continue
    return tuple(found)
