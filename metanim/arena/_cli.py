"""The arena's subcommands (`metanim evaluate`, `tournament`, `challenging`, `demo`), kept
out of cli.py.

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
from metanim.llm._types import DEFAULT_MAX_COMPLETION_TOKENS, STRUCTURED_OUTPUT_MODES

#: The demo's simulated models: a DReaMAD agent on a model that errs 30% of the time
#: (toward the max take), against a ReAct opponent that errs 60% of the time.
DEMO_MODEL = "sim-biased:heuristic=max_take,p=0.3"
DEMO_OPPONENT_MODEL = "sim-biased:heuristic=max_take,p=0.6"


def tournament_arguments(p: argparse.ArgumentParser) -> None:
    from metanim.arena.tournament import TournamentConfig

    p.add_argument("--profile", help="agent profile (a name in agents/ or a .toml/.json path)")
    p.add_argument("--opponent-profile", help="opponent profile, e.g. gpt-4o-react-opponent")
    add_config_arguments(p, TournamentConfig)
    _renamed_flags(p)


def _renamed_flags(p: argparse.ArgumentParser) -> None:
    # The old budget flag read like a per-call cap; it is refused with the new names.
    p.add_argument("--max-tokens", dest="old_max_tokens", default=None, help=argparse.SUPPRESS)


def _refuse_renamed(args: argparse.Namespace) -> None:
    if getattr(args, "old_max_tokens", None) is not None:
        raise ValueError(
            "--max-tokens was renamed: --budget-tokens is the run's token budget, "
            "--max-completion-tokens the per-call completion cap (default 512)"
        )


def _profiles(args: argparse.Namespace) -> dict[str, Any]:
    base: dict[str, Any] = {}
    if getattr(args, "profile", None):
        base.update(profile_fields(load_profile(args.profile)))
    if getattr(args, "opponent_profile", None):
        base.update(profile_fields(load_profile(args.opponent_profile), prefix="opponent_"))
    return base


def tournament(args: argparse.Namespace) -> int:
    from metanim.arena.tournament import TournamentConfig, run_tournament

    _refuse_renamed(args)
    config = config_from_args(TournamentConfig, args, _profiles(args))
    print(_players_line(config))
    result = run_tournament(config)
    return _print_result(result, "episodes", getattr(args, "argv", None))


def _players_line(config: Any) -> str:
    """Who plays on which model and server, said before the run (no hidden default model)."""
    from metanim.arena._players import sim_url_from_env
    from metanim.arena._policies import is_solver_spec

    def side(method: str, model: str, base_url: str | None, flag: str) -> str:
        if is_solver_spec(method):
            return f"{method} (solver, no model)"
        where = base_url or (
            (sim_url_from_env() or "the simulated server, in-process")
            if model.startswith("sim-")
            else "OPENAI_BASE_URL or the OpenAI API"
        )
        default = "" if model != TournamentConfig.model_fields[flag].default else " (default)"
        return f"{method} on {model}{default} at {where}"

    from metanim.arena.tournament import TournamentConfig

    agent = side(config.method, config.model, config.base_url, "model")
    opponent = side(
        config.opponent, config.opponent_model, config.opponent_base_url, "opponent_model"
    )
    return f"agent: {agent}; opponent: {opponent}"


def _have_matplotlib() -> bool:
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def evaluate_arguments(p: argparse.ArgumentParser) -> None:
    from metanim.arena.evaluate import EvaluationConfig

    p.add_argument("--profile", help="agent profile (a name in agents/ or a .toml/.json path)")
    add_config_arguments(p, EvaluationConfig)
    _renamed_flags(p)


def evaluate(args: argparse.Namespace) -> int:
    from metanim.arena.evaluate import EvaluationConfig, run_evaluation

    _refuse_renamed(args)
    config = config_from_args(EvaluationConfig, args, _profiles(args))
    result = run_evaluation(config)
    return _print_result(result, "decisions", getattr(args, "argv", None))


def challenging_arguments(p: argparse.ArgumentParser) -> None:
    from metanim.arena.challenging import ChallengingConfig

    p.add_argument("--profile", help="agent profile (a name in agents/ or a .toml/.json path)")
    add_config_arguments(p, ChallengingConfig)


def challenging(args: argparse.Namespace) -> int:
    from metanim.arena.challenging import ChallengingConfig, run_challenging

    config = config_from_args(ChallengingConfig, args, _profiles(args))
    result = run_challenging(config)
    _print_result(result.evaluation, "decisions")
    print(result.report())
    return 0


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
    written = [Path(args.results_dir) / "report.md", *folder.pages[:1], *folder.plots]
    print("folder report: " + ", ".join(str(p) for p in written))
    return code


def _print_result(result: Any, unit: str, argv: list[str] | None = None) -> int:
    """A run's report, how much ran and where the files lie; then its exit code.

    A run with items that did not finish also gets a one-screen failure summary on
    stderr: counts by cause, the first message of each, and the command that reruns them.
    """
    import shlex
    import sys

    from metanim.util.edge import EXIT_FAILED, EXIT_OK

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


# ------------------------------------------------------------------ metanim play
def play_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of `metanim play`."""
    p.add_argument("--game", required=True, help="game or preset name, e.g. fibonacci, nim-31-k3")
    p.add_argument("--agent", required=True, help="method spec, e.g. dreamad, mad:agents=3")
    p.add_argument(
        "--model",
        default=DEMO_MODEL,
        help=f"the agent's model, model or model@base_url (default {DEMO_MODEL})",
    )
    p.add_argument(
        "--opponent",
        default="react",
        help="the opponent: a method spec (react, react:MODEL, dreamad, ...) or a solver "
        "player: optimal, random, epsilon:<p> (default react)",
    )
    p.add_argument(
        "--opponent-model",
        default=DEMO_OPPONENT_MODEL,
        help="the opponent's model when --opponent names none "
        f"(default {DEMO_OPPONENT_MODEL}, simulated)",
    )
    p.add_argument(
        "--base-url",
        default=None,
        help="OpenAI-compatible server for both sides (default: sim-* models go to "
        "METANIM_SIM_URL or the simulated server started in-process; other models to "
        "OPENAI_BASE_URL or the OpenAI API)",
    )
    p.add_argument("--seed", type=int, default=0, help="decision seeds derive from it")
    p.add_argument("--start", type=_state_arg, default=None, help="start state as JSON")
    p.add_argument("--second", action="store_true", help="the opponent moves first")
    p.add_argument(
        "--max-reasks", type=int, default=2, help="re-asks after an invalid reply (default 2)"
    )
    p.add_argument(
        "--on-failure",
        choices=("forfeit", "random"),
        default="forfeit",
        help="when every re-ask stays invalid: forfeit, or a seeded random legal move "
        "(recorded as a fallback); default forfeit",
    )
    p.add_argument(
        "--structured-output",
        choices=STRUCTURED_OUTPUT_MODES,
        default="off",
        help="send each reply's JSON Schema (legal moves as an enum); default off",
    )
    p.add_argument(
        "--max-completion-tokens",
        type=int,
        default=DEFAULT_MAX_COMPLETION_TOKENS,
        help=f"completion cap of every call (default {DEFAULT_MAX_COMPLETION_TOKENS})",
    )
    p.add_argument(
        "--extra-body",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="extra request-body field for every call, e.g. cache_prompt=false (repeatable)",
    )


def play_defaults(args: argparse.Namespace) -> dict[str, Any]:
    """The method keyword arguments `metanim play`'s flags set."""
    from metanim.llm._types import CallOptions
    from metanim.util.edge import strict_json

    extra = {}
    for item in args.extra_body:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--extra-body expects KEY=JSON, got {item!r}")
        extra[key.strip()] = strict_json(value, "--extra-body", bare_text=True)
    options = CallOptions(
        max_tokens=args.max_completion_tokens,
        structured_output=args.structured_output,
        extra_body=extra,
    )
    return {"options": options, "max_reasks": args.max_reasks, "on_failure": args.on_failure}


def _state_arg(text: str) -> Any:
    from metanim.util.edge import strict_json

    try:
        return strict_json(text, "--start", bare_text=True)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--start: ")) from None


class _SolverPlayer:
    """A solver player (optimal, random, epsilon:<p>) with `LLMPolicy`'s `act` and `close`."""

    def __init__(self, spec: str) -> None:
        from metanim.envs.opponents import make_opponent

        self.spec = spec.strip().lower()
        self._choose = make_opponent(self.spec)

    def act(self, game: Any, state: Any, *, seed: int) -> Any:
        import numpy as np

        from metanim.agents.base import Decision
        from metanim.envs.opponents import resolve_move

        move = resolve_move(game, state, self._choose(game, state, np.random.default_rng(seed)))
        return Decision(
            method=self.spec, params={}, task={}, seed=seed, status="ok", move=move,
            answer_text=game.move_text(move),
        )  # fmt: skip

    def close(self) -> None:
        pass


def play(args: argparse.Namespace) -> int:
    """Run `metanim play`: the graded transcript; exit code 3 if a model could not be reached."""
    import sys

    from metanim.agents.policy import LLMPolicy
    from metanim.agents.registry import build_method, make_client, parse_spec
    from metanim.arena._players import sim_server_if_needed, sim_url_from_env
    from metanim.arena._policies import is_solver_spec
    from metanim.arena._preflight import preflight_players, preflight_servers
    from metanim.arena.play import PlayInfrastructureError, format_record, play_game
    from metanim.games import make_game
    from metanim.util.edge import EXIT_FAILED

    game = make_game(args.game)
    if args.start is not None:  # refused before anything is said or started
        state = game.validate_state(args.start)
        if game.is_terminal(state):
            raise ValueError(f"the start state {state} is terminal: nothing to play")

    def split(model: str) -> tuple[str, str | None]:
        name, _, url = model.partition("@")
        return name.strip(), url.strip() or args.base_url

    solver_opponent = is_solver_spec(args.opponent)
    opponent_model = "" if solver_opponent else parse_spec(args.opponent)[1] or args.opponent_model
    players = [(args.agent, *split(args.model), {})]
    if not solver_opponent:
        players.append((args.opponent, *split(opponent_model), {}))
    needed = preflight_players(
        [(m, f"{name}@{url}" if url else name, None, p) for m, name, url, p in players]
    )
    where = (
        args.base_url
        or (needed and (sim_url_from_env() or "the simulated server, started in-process"))
        or "OPENAI_BASE_URL or the OpenAI API"
    )
    opponent_text = args.opponent if solver_opponent else f"{args.opponent} on {opponent_model}"
    print(f"agent: {args.agent} on {args.model}; opponent: {opponent_text}; models on {where}")
    with sim_server_if_needed(needed, seed=args.seed) as sim_url:
        preflight_servers(players, sim_url)

        def client(spec: str) -> Any:
            model, url = split(spec)
            if url is None and model.startswith("sim-"):
                url = sim_url
            return make_client(model if url is None else f"{model}@{url}")

        defaults = play_defaults(args)
        agent = LLMPolicy(
            build_method(args.agent, args.model, client_factory=client, defaults=defaults)
        )
        opponent: Any = (
            _SolverPlayer(args.opponent)
            if solver_opponent
            else LLMPolicy(
                build_method(
                    args.opponent, opponent_model, client_factory=client, defaults=defaults
                )
            )
        )
        try:
            record = play_game(
                game, agent, opponent, seed=args.seed, start=args.start,
                agent_first=not args.second,
            )  # fmt: skip
        except PlayInfrastructureError as exc:
            # Keep the transcript: the moves played so far, then the error.
            print(format_record(exc.record))
            print(f"metanim play: error: {exc}", file=sys.stderr)
            return EXIT_FAILED
        finally:
            agent.close()
            opponent.close()
    print(format_record(record))
    return 0
