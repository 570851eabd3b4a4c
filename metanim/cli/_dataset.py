"""`metanim dataset build|show`: flags and handlers, kept out of cli.py."""

from __future__ import annotations

import argparse
import errno
import json
import shlex
import time
from collections import Counter
from math import comb, prod
from pathlib import Path
from typing import Any

from metanim.cli._config import kind
from metanim.cli._registry import command
from metanim.util import Interrupted, StorageError, game_params, int_range

_BAR_FROM = 2_000  # builds at least this big show a progress bar


def dataset_arguments(p: argparse.ArgumentParser) -> None:
    from metanim.util import Folder

    sub = p.add_subparsers(dest="dataset_command", required=True)
    b = sub.add_parser(
        "build",
        help="write critical-state JSONL datasets",
        description="Without --game: a named build (--preset default: difficulty mix, no "
        "forced moves; --preset paper: seed paper Table 5 sizes plus Corner Queen; --preset "
        "generated: subtraction sets, octal codes and every game disguised), normal and "
        "misère, one file per game and variant. With --game: one file.",
    )
    b.add_argument(
        "--out", type=kind(Folder), default="datasets", help="output folder (default: datasets)"
    )
    b.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    b.add_argument(
        "--preset",
        choices=["default", "paper", "generated"],
        default="default",
        help="without --game: 'default' (difficulty mix, no forced moves), 'paper' "
        "(seed paper Table 5 sizes, depth terciles) or 'generated' (the generated families "
        "and every game disguised)",
    )
    b.add_argument(
        "--strata",
        choices=["difficulty", "depth"],
        default="difficulty",
        help="with --game: sample by difficulty tier (default) or the paper's depth terciles",
    )
    b.add_argument(
        "--min-legal-moves",
        type=int,
        default=2,
        help="with --game: drop positions with fewer legal moves (default 2: no forced move)",
    )
    b.add_argument("--game", help="game or preset name; omit for the default build")
    b.add_argument(
        "-n", "--n", type=_positive, default=None, help="records (with --game; default 100)"
    )
    b.add_argument(
        "--variant",
        choices=["normal", "misere"],
        default=None,
        help="with --game: the play rule (default: the preset's own, e.g. misère for "
        "kayles-20-misere, else normal); one that contradicts the preset is refused",
    )
    b.add_argument(
        "--param",
        "-p",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="a game parameter, e.g. -p heaps=[31,31,31] -p max_take=null",
    )
    b.add_argument(
        "--square-boards",
        type=int_range,
        metavar="LO-HI",
        help="Chomp: spread records over square boards LO..HI, e.g. 2-19",
    )
    b.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    b.add_argument(
        "--dry-run",
        action="store_true",
        help="check the build and list the files it would write, then stop: nothing is written",
    )
    h = sub.add_parser(
        "push",
        help="upload a build folder to the Hugging Face Hub as a dataset repo",
        description="Uploads the JSONL files and README.md (the dataset card) of a build "
        "folder. Needs huggingface_hub (the `hf` extra) and a token (huggingface-cli login).",
    )
    h.add_argument("folder", help="a build folder holding README.md and JSONL files")
    h.add_argument("repo_id", help="the dataset repo, e.g. your-name/metanim-critical-states")
    h.add_argument("--private", action="store_true", help="create the repo as private")
    h.add_argument(
        "--dry-run",
        action="store_true",
        help="check the folder and print what would be uploaded, where; upload nothing "
        "(needs neither the Hub nor huggingface_hub)",
    )
    s = sub.add_parser("show", help="summarize a dataset file and print records")
    s.add_argument("path", help="a dataset JSONL file")
    s.add_argument(
        "--head", type=_non_negative, default=1, help="records to print in full (default 1)"
    )
    s.add_argument(
        "--verify",
        action="store_true",
        help="check every record with an independent oracle (reference solver or closed "
        "form); exits 2 if any record fails or is not independently verified",
    )
    s.add_argument(
        "--allow-unverified",
        action="store_true",
        help="with --verify: accept records no independent oracle covers (still counted)",
    )


@command(
    "dataset",
    "Build, inspect or publish critical-state datasets (build, show, push)",
    dataset_arguments,
)
def dataset(args: argparse.Namespace) -> int:
    if args.dataset_command == "build":
        return _build(args)
    if args.dataset_command == "push":
        return _push(args)
    return _show(args)


def _push(args: argparse.Namespace) -> int:
    from metanim.datasets import dataset_url, push_files, push_to_hub

    if args.dry_run:
        files = push_files(args.folder)
        names = ", ".join(p.name for p in files)
        kind = "private" if args.private else "public"
        print(f"dry run: {len(files)} files of {args.folder} to {dataset_url(args.repo_id)} "
              f"({kind}): {names}; nothing was sent")  # fmt: skip
        return 0
    print(push_to_hub(args.folder, args.repo_id, private=args.private))
    return 0


def _build(args: argparse.Namespace) -> int:
    from metanim.datasets import (
        BUILD_PRESETS,
        DatasetSpec,
        build,
        play_rule,
        write_card,
        write_jsonl,
    )

    if not args.game:
        given = [f for f, v in (("-n", args.n), ("--param", args.param), ("--variant",
                 args.variant), ("--square-boards", args.square_boards)) if v]  # fmt: skip
        if given:
            raise ValueError(
                f"{', '.join(given)}: only with --game (one file); the default build has fixed sizes"
            )
    if args.square_boards and args.game and not args.game.startswith("chomp"):
        raise ValueError(f"--square-boards is for Chomp, not {args.game}")
    if args.game:
        params = game_params(args.param)
        specs = [
            DatasetSpec(
                game=args.game,
                params=params,
                n=args.n or 100,
                # The flags given and the preset's own rule; a contradiction is refused here.
                variant=play_rule(args.game, params, args.variant),
                square_boards=args.square_boards,
                strata=args.strata,
                min_legal_moves=args.min_legal_moves,
            )
        ]
        _refuse_unreachable(specs[0])
    else:
        specs = list(BUILD_PRESETS[args.preset])
    total = sum(s.n for s in specs)
    if args.dry_run:
        names = ", ".join(f"{s.name}.jsonl ({s.n})" for s in specs)
        print(f"dry run: {total} records in {len(specs)} files under {args.out}: {names}; "
              "nothing was written")  # fmt: skip
        return 0
    from tqdm.auto import tqdm  # here: only a build draws a bar

    bar = None
    if total >= _BAR_FROM and not args.no_progress:
        bar = tqdm(total=total, unit="rec", desc="critical states found")
    start = time.perf_counter()
    out = Path(args.out)
    written: list[Path] = []
    files = {}
    try:
        for spec in specs:
            records = build(spec, seed=args.seed, progress=bar.update if bar else None)
            path = write_jsonl(records, out / f"{spec.name}.jsonl")
            written.append(path)
            files[spec.name] = records
            line = f"{path}: {len(records)} records"
            # Above the bar, which stays on the last line (tqdm.write moves it down).
            tqdm.write(line) if bar is not None else print(line)
        # The Hugging Face dataset card of what this build wrote (`metanim dataset push`).
        card = write_card(out, files, seed=args.seed, preset=None if args.game else args.preset)
    except KeyboardInterrupt:
        raise Interrupted(
            f"{len(written)} of {len(specs)} dataset files written under {out}; the file "
            "being built was not (files are written whole); run the same command to build "
            "it again (the same seed gives the same records)"
        ) from None
    except OSError as exc:
        if exc.errno not in _STORAGE_ERRNOS:
            raise  # a folder the user cannot write to: their mistake (exit 2)
        raise StorageError(
            f"cannot write {exc.filename or out}: {exc.strerror or exc}; {len(written)} of "
            f"{len(specs)} dataset files written under {out} (each file whole or not at all); "
            "make room, then rerun: metanim " + shlex.join(args.argv)
        ) from None
    finally:
        if bar is not None:
            bar.close()
    print(f"{card}: dataset card")
    elapsed = time.perf_counter() - start
    print(f"{total} records in {elapsed:.1f} s ({total / elapsed:,.0f} records/s) under {out}")
    return 0


#: Write errors of the storage, not of the user's choice of folder: a full disk or quota,
#: a file too large, an I/O error (exit code 3, with what was written).
_STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def _refuse_unreachable(spec: Any) -> None:
    """Refuse, before sampling, a size larger than the configuration has states at all.

    A configuration has at most `_state_bound` distinct states, so at most that many
    critical states; asking for more could only end, much later, in the sampler's
    "found only ..." error.
    """
    from metanim.datasets import sampler_for
    from metanim.games import make_game

    if spec.square_boards:
        games = [make_game("chomp", rows=k, cols=k) for k in spec.square_boards]
    else:
        games = [make_game(spec.game, **spec.params)]
    for game in games:  # its size checks, before a state count that could be astronomic
        sampler_for(game)
    bound = sum(_state_bound(g) or 0 for g in games)
    if all(_state_bound(g) is not None for g in games) and spec.n > bound:
        raise ValueError(
            f"-n {spec.n}: {' '.join([spec.game, *map(json.dumps, spec.params.values())])} "
            f"has at most {bound:,} distinct "
            f"states, so fewer than {spec.n:,} critical states; ask for fewer or use a larger "
            "configuration"
        )


def _state_bound(game: Any) -> int | None:
    """An upper bound on the distinct states of a game configuration (None if unknown)."""
    p = game.params
    name = game.name
    if name == "nim":
        return prod(h + 1 for h in p["heaps"])
    if name == "fibonacci":
        return (p["n"] + 1) ** 2  # (stones left, largest take allowed)
    if name == "kayles":
        return prod(2**r for r in p["rows"])
    if name == "chomp":
        return comb(p["rows"] + p["cols"], p["rows"])
    if name == "corner_queen":
        return p["height"] * p["width"]
    return None


def _at_least(minimum: int) -> Any:
    """An argparse type: a whole number of at least `minimum`, with a message that says so."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value}: give {minimum} or more")
        return value

    return parse


_positive = _at_least(1)
_non_negative = _at_least(0)


def _show(args: argparse.Namespace) -> int:
    if args.allow_unverified and not args.verify:
        raise ValueError("--allow-unverified goes with --verify")
    from metanim.datasets import DIFFICULTIES, DatasetError, check_record, load_dataset

    records = load_dataset(args.path)
    games = Counter(f"{r.game}-{r.variant}" for r in records)
    strata = Counter(r.features.stratum for r in records)
    tiers = Counter(r.difficulty or "unlabelled" for r in records)
    print(f"{args.path}: {len(records)} records")
    if args.verify:
        results = [check_record(r) for r in records]
        for record, result in zip(records, results, strict=True):
            if result.status == "failed":
                raise DatasetError(f"{args.path}: {record.id}: {result.detail}")
        by = Counter(v.method for v in results if v.status == "verified")
        unverified = [v for v in results if v.status == "unverified"]
        # Per record: the fields the rules or an oracle confirmed, and those none checked.
        for record, result in zip(records, results, strict=True):
            if result.status == "verified":
                print(
                    f"  {record.id}: confirmed {', '.join(result.confirmed)}; "
                    f"not checked: {', '.join(result.unchecked)}"
                )
            else:
                print(f"  {record.id}: {result.detail}")
        print(
            f"optimal move independently verified: {sum(by.values())} of {len(records)}"
            + (" (" + ", ".join(f"{n} by {m}" for m, n in sorted(by.items())) + ")" if by else "")
        )
        grundy = sum("grundy" in v.confirmed for v in results)
        print(f"grundy confirmed by an oracle: {grundy} of {len(records)}")
        if unverified:
            first = unverified[0].detail.removeprefix("not independently verified: ")
            print(f"not independently verified: {len(unverified)} (first: {first})")
            if not args.allow_unverified:
                first = next(
                    r.id for r, v in zip(records, results, strict=True) if v is unverified[0]
                )
                raise DatasetError(
                    f"{args.path}: {len(unverified)} of {len(records)} records are not "
                    f"independently verified (first: {first}); pass --allow-unverified to "
                    "accept them"
                )
    print("games: " + ", ".join(f"{k} {v}" for k, v in sorted(games.items())))
    print("strata: " + ", ".join(f"{k} {strata.get(k, 0)}" for k in ("easy", "medium", "hard")))
    print("difficulty: " + ", ".join(f"{k} {tiers.get(k, 0)}" for k in DIFFICULTIES))
    for record in records[: args.head]:
        print(json.dumps(record.model_dump(mode="json"), indent=2, ensure_ascii=False))
    return 0
