"""The arena's subcommands (`metanim evaluate`, `tournament`, `demo`), kept out of cli.py.

Flags map one-to-one onto `TournamentConfig` / `EvaluationConfig` fields; a profile
(`--profile agents/<name>.toml`) fills the agent's model, server, method and parameters,
and flags given on top override it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from metanim.arena._config import (
    add_config_arguments,
    config_from_args,
    load_profile,
    profile_fields,
)

#: The demo's simulated models: a DReaMAD agent on a model that errs 30% of the time
#: (toward the max take), against a ReAct opponent that errs 60% of the time.
DEMO_MODEL = "sim-biased:heuristic=max_take,p=0.3"
DEMO_OPPONENT_MODEL = "sim-biased:heuristic=max_take,p=0.6"


def tournament_arguments(p: argparse.ArgumentParser) -> None:
    from metanim.arena.tournament import TournamentConfig

    p.add_argument("--profile", help="agent profile (a name in agents/ or a .toml/.json path)")
    p.add_argument("--opponent-profile", help="opponent profile, e.g. gpt-4o-react-opponent")
    add_config_arguments(p, TournamentConfig)


def _profiles(args: argparse.Namespace) -> dict[str, Any]:
    base: dict[str, Any] = {}
    if getattr(args, "profile", None):
        base.update(profile_fields(load_profile(args.profile)))
    if getattr(args, "opponent_profile", None):
        base.update(profile_fields(load_profile(args.opponent_profile), prefix="opponent_"))
    return base


def tournament(args: argparse.Namespace) -> int:
    from metanim.arena.tournament import TournamentConfig, run_tournament

    config = config_from_args(TournamentConfig, args, _profiles(args))
    result = run_tournament(config)
    return _print_result(result, "episodes", getattr(args, "argv", None))


def _have_matplotlib() -> bool:
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def evaluate_arguments(p: argparse.ArgumentParser) -> None:
    from metanim.arena.evaluate import EvaluationConfig

    p.add_argument("--profile", help="agent profile (a name in agents/ or a .toml/.json path)")
    add_config_arguments(p, EvaluationConfig)


def evaluate(args: argparse.Namespace) -> int:
    from metanim.arena.evaluate import EvaluationConfig, run_evaluation

    config = config_from_args(EvaluationConfig, args, _profiles(args))
    result = run_evaluation(config)
    return _print_result(result, "decisions", getattr(args, "argv", None))


def demo_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--base-url", help="a real OpenAI-compatible server (default: simulated, in-process)"
    )
    p.add_argument("--model", help=f"the agent's model (default {DEMO_MODEL})")
    p.add_argument(
        "--opponent-model", help="the opponent's model (default: --model, or the simulated one)"
    )
    p.add_argument("--episodes", type=int, default=10, help="episodes (default 10)")
    p.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    p.add_argument("--results-dir", default="results/demo", help="where the log and report go")
    p.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=True, help="progress bar"
    )


def demo(args: argparse.Namespace) -> int:
    from metanim.arena.tournament import TournamentConfig, run_tournament

    if args.base_url and not args.model:
        raise ValueError("with --base-url, name the served model with --model")
    model = args.model or DEMO_MODEL
    opponent_model = args.opponent_model or (args.model if args.base_url else DEMO_OPPONENT_MODEL)
    config = TournamentConfig(
        name="demo",
        games=["fibonacci-20"],
        method="dreamad",
        model=model,
        base_url=args.base_url,
        opponent="react",
        opponent_model=opponent_model,
        opponent_base_url=args.base_url,
        episodes=args.episodes,
        seat="alternate",
        seed=args.seed,
        results_dir=args.results_dir,
        progress=args.progress,
    )
    where = args.base_url or "the simulated server, started in-process"
    print(
        f"DReaMAD ({model}) vs ReAct ({opponent_model}) on Fibonacci Nim (20), "
        f"{args.episodes} episodes, seats alternating, on {where}."
    )
    result = run_tournament(config)
    code = _print_result(result, "episodes", getattr(args, "argv", None))
    # Then the folder report a user would run next: tables, report.md and the plots.
    from metanim.analysis.report import render_report

    folder = render_report(args.results_dir, plots=_have_matplotlib())
    written = [Path(args.results_dir) / "report.md", *folder.plots]
    print("folder report: " + ", ".join(str(p) for p in written))
    return code


def _print_result(result: Any, unit: str, argv: list[str] | None = None) -> int:
    """A run's report, how much ran and where the files lie; then its exit code.

    A run with items that did not finish also gets a one-screen failure summary on
    stderr: counts by cause, the first message of each, and the command that reruns them.
    """
    import shlex
    import sys

    from metanim._edge import EXIT_FAILED, EXIT_OK

    log_path = result.log_path
    print(result.report)
    print(f"{unit}: {result.played_now} run now, {result.planned} planned; log {log_path}")
    print(
        f"summary {log_path.with_suffix('.summary.json')}, report {log_path.with_suffix('.report.md')}"
    )
    if result.complete:
        return EXIT_OK
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
