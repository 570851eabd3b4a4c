"""`metanim serve-sim` and `metanim serve-local`: the servers a run can talk to."""

from __future__ import annotations

import argparse
import os

from metanim.cli._registry import command
from metanim.util import port


# ------------------------------------------------------------------------ serve-sim
def _serve_sim_args(p: argparse.ArgumentParser) -> None:
    from metanim.llm.sim.provider_kinds import BEHAVIOURS

    p.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback)")
    p.add_argument("--port", type=port, default=8000, help="port, 0..65535 (0 picks a free one)")
    p.add_argument("--seed", type=int, default=0, help="seed of fault draws and unseeded samples")
    p.add_argument(
        "--log", default=None, metavar="FILE", help="append the request log to this JSONL file"
    )
    p.add_argument(
        "--api-key-env",
        default=None,
        metavar="VAR",
        help="require the key held in this environment variable (default: accept any key)",
    )
    p.add_argument(
        "--questions",
        action="append",
        default=[],
        metavar="FILE",
        help="a question file the models answer (repeatable; looked up by question text)",
    )
    p.add_argument(
        "--session",
        type=int,
        default=0,
        help="which run of a resumed job this serves (faults are drawn afresh per session)",
    )
    p.add_argument(
        "--provider",
        default=None,
        choices=sorted(BEHAVIOURS),
        help="answer as this provider does: its cap field, refusals and error bodies, "
        "reasoning fields, streaming (docs/llm.md, 'Provider conformance')",
    )


@command(
    "serve-sim", "Run the simulated OpenAI-compatible server (models are policies)", _serve_sim_args
)
def _serve_sim(args: argparse.Namespace) -> int:
    api_key = os.environ.get(args.api_key_env) if args.api_key_env else None
    if args.api_key_env and not api_key:
        raise ValueError(f"environment variable {args.api_key_env} is not set")
    from metanim.datasets.questions import resolve_path
    from metanim.llm.sim import serve  # here: the server imports aiohttp
    from metanim.llm.sim.providers import BEHAVIOURS, ProviderApp

    questions = [str(resolve_path(p)) for p in args.questions]
    app, banner = None, ""
    if args.provider is not None:
        behaviour = BEHAVIOURS[args.provider]
        app = ProviderApp(
            behaviour, api_key=api_key, seed=args.seed, log_path=args.log,
            questions=questions, session=args.session,
        )  # fmt: skip
        banner = f", as the fake {args.provider!r} provider (models: {', '.join(behaviour.models)})"
    serve(
        args.host,
        args.port,
        api_key=api_key,
        seed=args.seed,
        log_path=args.log,
        questions=questions,
        session=args.session,
        app=app,
        banner=banner,
    )
    return 0


# ------------------------------------------------------------------ serve-local
def _serve_local_args(p: argparse.ArgumentParser) -> None:
    from metanim.llm.local import serve_local_arguments

    serve_local_arguments(p)


@command(
    "serve-local",
    "Serve a GGUF model with llama.cpp on 127.0.0.1 (needs the [local] extra; 1 thread)",
    _serve_local_args,
)
def _serve_local(args: argparse.Namespace) -> int:
    from metanim.llm.local import serve_local

    return serve_local(args)
