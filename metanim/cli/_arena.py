"""The commands that play or decide: `metanim tournament`, `evaluate`, `challenging`,
`play` and `demo`.

Flags map one-to-one onto `TournamentConfig` / `EvaluationConfig` fields; a profile
(`--profile <name>`, shipped in `metanim/profiles/`) fills the agent's model, server,
method and parameters, and flags given on top override it. `play` takes a tournament's flags (one setting, one
episode) and prints each move as it is made. The arena loads where a command uses it.
"""

from __future__ import annotations

import argparse
import importlib.util
import shlex
import sys
from pathlib import Path
from typing import Any

from metanim.cli._config import add_config_arguments, config_from_args
from metanim.cli._registry import command
from metanim.util import EXIT_FAILED, EXIT_OK

PROFILE_HELP = "agent profile: a name shipped in metanim/profiles/, or a .toml/.json path"


def _demo_models() -> tuple[str, str]:
    """The demo's simulated models: a DReaMAD agent on a model that errs 30% of the time
    (toward the max take), against a ReAct opponent that errs 60% of the time."""
    from metanim.arena import TournamentConfig

    fields = TournamentConfig.model_fields
    return fields["model"].default, fields["opponent_model"].default


def tournament_arguments(p: argparse.ArgumentParser) -> None:
    from metanim.arena import TournamentConfig

    p.add_argument("--profile", help=PROFILE_HELP)
    p.add_argument("--opponent-profile", help="opponent profile, e.g. gpt-4o-react-opponent")
    add_config_arguments(p, TournamentConfig)
    _renamed_flags(p)
    _dry_run_flag(p)


def _dry_run_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="parse, check and plan the run, then stop: nothing is sent or written",
    )


def _renamed_flags(p: argparse.ArgumentParser) -> None:
    # A budget flag that reads like a per-call cap is refused, naming the two flags meant.
    p.add_argument("--max-tokens", dest="old_max_tokens", default=None, help=argparse.SUPPRESS)


def _refuse_renamed(args: argparse.Namespace) -> None:
    if getattr(args, "old_max_tokens", None) is not None:
        raise ValueError(
            "--max-tokens was renamed: --budget-tokens is the run's token budget, "
            "--max-completion-tokens the per-call completion cap (default 512)"
        )


def _profiles(args: argparse.Namespace) -> dict[str, Any]:
    from metanim.arena import load_profile, merge_profiles, profile_fields

    fields = []
    if getattr(args, "profile", None):
        fields.append(profile_fields(load_profile(args.profile)))
    if getattr(args, "opponent_profile", None):
        fields.append(profile_fields(load_profile(args.opponent_profile), prefix="opponent_"))
    return merge_profiles(*fields)


@command(
    "tournament",
    "Method vs opponent over E episodes per game setting (resumable)",
    tournament_arguments,
)
def tournament(args: argparse.Namespace) -> int:
    from metanim.arena import TournamentConfig, run_tournament

    _refuse_renamed(args)
    config = config_from_args(TournamentConfig, args, _profiles(args))
    if args.dry_run:
        return _dry_run(config)
    result = run_tournament(config, announce=print)
    return _print_result(result, "episodes", args.argv)


def evaluate_arguments(p: argparse.ArgumentParser) -> None:
    from metanim.arena import EvaluationConfig

    p.add_argument("--profile", help=PROFILE_HELP)
    add_config_arguments(p, EvaluationConfig)
    _renamed_flags(p)
    _dry_run_flag(p)


@command(
    "evaluate",
    "Decision accuracy of a method on critical-state datasets or question files, R repeats",
    evaluate_arguments,
)
def evaluate(args: argparse.Namespace) -> int:
    from metanim.arena import EvaluationConfig, run_evaluation

    _refuse_renamed(args)
    config = config_from_args(EvaluationConfig, args, _profiles(args))
    if args.dry_run:
        return _dry_run(config)
    result = run_evaluation(config, announce=print)
    return _print_result(result, "decisions", args.argv)


def challenging_arguments(p: argparse.ArgumentParser) -> None:
    from metanim.arena import ChallengingConfig

    p.add_argument("--profile", help=PROFILE_HELP)
    add_config_arguments(p, ChallengingConfig)
    _dry_run_flag(p)


@command(
    "challenging",
    "Seed 004's challenging subset: items a baseline answers right in < 40% of 5 runs at T = 0.7",
    challenging_arguments,
)
def challenging(args: argparse.Namespace) -> int:
    from metanim.arena import ChallengingConfig, run_challenging

    config = config_from_args(ChallengingConfig, args, _profiles(args))
    if args.dry_run:
        return _dry_run(config)
    result = run_challenging(config, announce=print)
    _print_result(result.evaluation, "decisions")
    print(result.report())
    return 0


# ------------------------------------------------------------------ metanim play
def play_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of `metanim play`: a tournament's, for one setting and one episode."""
    from metanim.arena import TournamentConfig

    p.add_argument("--game", required=True, help="game or preset name, e.g. fibonacci, nim-31-k3")
    p.add_argument(
        "--agent", required=True, dest="method", help="method spec, e.g. dreamad, mad:agents=3"
    )
    p.add_argument("--second", action="store_true", help="the opponent moves first (seat second)")
    add_config_arguments(
        p,
        TournamentConfig,
        skip=("name", "games", "method", "episodes", "seat", "concurrency", "results_dir",
              "record_decisions", "rerun_failed", "progress", "max_calls", "budget_tokens",
              "max_cost_usd", "cache", "keep_going"),
    )  # fmt: skip
    _dry_run_flag(p)


@command(
    "play",
    "Play one game between two methods; each move graded by the solver",
    play_arguments,
)
def play(args: argparse.Namespace) -> int:
    """The graded transcript, each move as it is made; exit code 3 if a model could not
    be reached."""
    from metanim.arena import (
        TournamentConfig,
        format_end,
        format_move,
        parse_setting,
        plan_run,
        play_game,
        play_hint,
    )

    args.games = [args.game]
    args.seat = "second" if args.second else None
    config = config_from_args(TournamentConfig, args, {"name": "play"})
    if args.dry_run:
        players = " vs ".join(plan_run(config.model_copy(update={"episodes": 1})).players)
        print(f"dry run: one game of {args.game} ({players}); nothing was sent or written")
        return EXIT_OK
    _, game = parse_setting(args.game)
    record = play_game(
        config,
        on_move=lambda move: print(format_move(game, move), flush=True),
        announce=lambda header: print(f"{header}\n{game.title} {game.params}", flush=True),
    )
    print(format_end(game, record))
    hint = play_hint(config, record)
    if hint:
        print(f"hint: {hint}", file=sys.stderr)
    if record.status in ("infrastructure_error", "error"):
        print(f"metanim play: error: {(record.error or '').splitlines()[0]}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


# ------------------------------------------------------------------ metanim demo
#: The run settings `demo` takes as flags besides its own (the rest of its tournament is
#: fixed): how every call is made, what the prompts list, and the budget that bounds a
#: demo on a real server.
DEMO_RUN_FLAGS = (
    "structured_output", "max_completion_tokens", "phase_max_tokens", "reply_max_chars",
    "max_reasks", "max_calls", "budget_tokens", "keep_going", "timeout_s", "call_concurrency",
    "list_moves",
)  # fmt: skip


def demo_arguments(p: argparse.ArgumentParser) -> None:
    from metanim.arena import TournamentConfig

    model, _ = _demo_models()
    p.add_argument(
        "--base-url",
        help="the agent's OpenAI-compatible server (default: the simulated one, in-process)",
    )
    p.add_argument("--model", help=f"the agent's model (default {model})")
    p.add_argument(
        "--opponent-model", help="the opponent's model (default: --model, or the simulated one)"
    )
    p.add_argument(
        "--opponent-base-url",
        help="the opponent's server (default: --base-url when the opponent plays --model)",
    )
    p.add_argument("--episodes", type=int, default=10, help="episodes (default 10)")
    p.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    p.add_argument("--results-dir", default="results/demo", help="where the log and report go")
    p.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=True, help="progress bar"
    )
    add_config_arguments(
        p,
        TournamentConfig,
        skip=tuple(n for n in TournamentConfig.model_fields if n not in DEMO_RUN_FLAGS),
    )
    _dry_run_flag(p)


@command(
    "demo",
    "A short DReaMAD-vs-ReAct tournament on Fibonacci; offline by default",
    demo_arguments,
)
def demo(args: argparse.Namespace) -> int:
    from metanim.analysis import render_report
    from metanim.arena import TournamentConfig, run_tournament

    if args.base_url and not args.model:
        raise ValueError("with --base-url, name the served model with --model")
    demo_model, demo_opponent = _demo_models()
    model = args.model or demo_model
    opponent_model = args.opponent_model or (args.model if args.base_url else demo_opponent)
    # A model and its server are defaulted together: an opponent playing --model plays it
    # where --model is served.
    opponent_url = args.opponent_base_url or (None if args.opponent_model else args.base_url)
    fixed = {
        "name": "demo", "games": ["fibonacci-20"], "method": "dreamad", "model": model,
        "base_url": args.base_url, "opponent": "react", "opponent_model": opponent_model,
        "opponent_base_url": opponent_url, "episodes": args.episodes, "seat": "alternate",
        "seed": args.seed, "results_dir": args.results_dir, "progress": args.progress,
    }  # fmt: skip
    config = config_from_args(TournamentConfig, args, fixed)
    if args.dry_run:
        return _dry_run(config)
    print(
        f"DReaMAD ({model}) vs ReAct ({opponent_model}) on Fibonacci Nim (20), "
        f"{args.episodes} episodes, seats alternating."
    )
    result = run_tournament(config, announce=print)
    code = _print_result(result, "episodes", args.argv)
    # Then the folder report a user would run next: tables, report.md and the plots.
    folder = render_report(args.results_dir, plots=_have_matplotlib())
    written = [Path(args.results_dir) / "report.md", *folder.pages[:1], *folder.plots]
    print("folder report: " + ", ".join(str(p) for p in written))
    return code


def _dry_run(config: Any) -> int:
    from metanim.arena import plan_run

    print(plan_run(config))
    return EXIT_OK


def _have_matplotlib() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def _print_result(result: Any, unit: str, argv: list[str] | None = None) -> int:
    """A run's report, how much ran and where the files lie; then its exit code.

    A run with items that did not finish also gets a one-screen failure summary on
    stderr: counts by cause, the first message of each, and the command that reruns them.
    """
    from metanim.records import summary_terminal

    log_path = result.log_path
    # The terminal's table (100 columns); report.md beside the log has every column.
    print(summary_terminal(result.summary))
    print(f"{unit}: {result.played_now} run now, {result.planned} planned; log {log_path}")
    print(
        f"summary {log_path.with_suffix('.summary.json')}, report {log_path.with_suffix('.report.md')}"
    )
    if result.hint:
        print(f"hint: {result.hint}", file=sys.stderr)
    if result.complete:
        return EXIT_OK
    if not result.failures:
        # The stop rule fired after every planned item had started: they all finished,
        # and the run still stopped for a cause (exit code 3, whatever the timing).
        why = result.stopped.split(":")[0]
        print(
            f"{why}, after all {result.planned} planned {unit} had started: they finished "
            f"and are saved in {log_path}; fix the cause (the hint above), then run again "
            "(--keep-going runs on regardless)",
            file=sys.stderr,
        )
        return EXIT_FAILED
    missing = sum(count for count, _ in result.failures.values())
    lines = [f"{missing} of {result.planned} {unit} did not finish:"]
    for cause, (count, first) in sorted(result.failures.items(), key=lambda kv: -kv[1][0]):
        first = first if len(first) <= 200 else first[:197] + "..."
        lines.append(f"  {count:>6}  {cause}: {first}")
    words = [w for w in (argv or []) if w != "--no-rerun-failed"]
    rerun = "metanim " + shlex.join(words) if words else "the same command"
    if not result.config.rerun_failed:
        rerun += " --rerun-failed"
    lines.append(f"fix the cause, then rerun them (finished {unit} are kept): {rerun}")
    print("\n".join(lines), file=sys.stderr)
    return EXIT_FAILED
