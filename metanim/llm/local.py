"""A real local model: llama.cpp's OpenAI-compatible server on loopback (`metanim serve-local`).

Uses the optional `xllamacpp` wheel (`pip install 'metanim-arena[local]'`), which runs
llama.cpp's own HTTP server inside this process. The default is one thread and one slot,
so it can share a small machine; `/props` reports the slot count and the client sizes its
concurrency from it. See docs/llm.md ("A real local model") for bigger models and for
vLLM / SGLang.
"""

from __future__ import annotations

import argparse
import json
import shlex
import signal
import socket
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from metanim.util import MissingExtra

#: The environment variable naming a GGUF file for the real-model test (set by .ci/run).
GGUF_ENV = "METANIM_TEST_GGUF"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalServer:
    """llama.cpp's server on 127.0.0.1 serving one GGUF model, started in this process.

    Args:
        gguf: path of the GGUF model file.
        port: TCP port (default: a free one).
        threads: CPU threads for generation and prompt processing (default 1).
        slots: parallel sequences (`n_parallel`); the client reads it from `/props`.
        ctx: context length in tokens for each slot.
        alias: the model name the server answers to (default: the file stem).

    Use as a context manager; `base_url` is the `/v1` URL to give `--base-url`.
    """

    def __init__(
        self,
        gguf: str | Path,
        *,
        port: int | None = None,
        threads: int = 1,
        slots: int = 1,
        ctx: int = 4096,
        alias: str | None = None,
    ) -> None:
        self.gguf = Path(gguf)
        if not self.gguf.is_file():
            raise FileNotFoundError(f"no GGUF model file at {self.gguf}")
        with self.gguf.open("rb") as fh:
            if fh.read(4) != b"GGUF":  # every GGUF file starts with these four bytes
                raise ValueError(f"{self.gguf} is not a GGUF model file (no GGUF header)")
        if threads < 1 or slots < 1 or ctx < 256:
            raise ValueError("threads and slots must be >= 1, ctx >= 256")
        self.port = port or free_port()
        self.threads, self.slots, self.ctx = threads, slots, ctx
        self.alias = alias or self.gguf.stem
        self._server: Any = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout_s: float = 120.0) -> LocalServer:
        try:
            import xllamacpp  # the optional `local` extra
        except ImportError as exc:
            raise MissingExtra(
                "serve-local needs the optional xllamacpp wheel: pip install 'metanim-arena[local]'"
            ) from exc
        params = xllamacpp.CommonParams()
        params.model.path = str(self.gguf)
        params.cpuparams.n_threads = self.threads
        params.cpuparams_batch.n_threads = self.threads
        params.n_parallel = self.slots
        # n_ctx is the whole KV cache, shared by the slots.
        params.n_ctx = self.ctx * self.slots
        params.hostnames = ["127.0.0.1"]
        params.port = self.port
        params.model_alias = [self.alias]
        try:
            self._server = xllamacpp.Server(params)
        except RuntimeError as exc:  # a cut or damaged file: llama.cpp's log says why
            raise ValueError(
                f"llama.cpp could not load {self.gguf} ({exc}); is the file whole? "
                "(its own log above says what it read)"
            ) from None
        self._wait_ready(timeout_s)
        return self

    def _wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        url = f"http://127.0.0.1:{self.port}/health"
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(
                    f"llama.cpp server on port {self.port} not ready in {timeout_s} s"
                )
            time.sleep(0.2)

    def props(self) -> dict[str, Any]:
        """The server's `/props` (slot count, model path, chat template, ...)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/props", timeout=10) as r:
            return json.loads(r.read())

    def stop(self) -> None:
        # Dropping the Server object stops llama.cpp's HTTP loop and frees the model.
        self._server = None

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# ----------------------------------------------------------------- the CLI command
def next_command(server: LocalServer) -> str:
    """A command that plays the served model, ready to paste.

    It names no structured-output mode: `auto` finds llama.cpp and sends each reply's
    schema, so even a small model answers with a legal move.
    """
    return (
        f"metanim play --game nim-31-k3 --agent react --opponent optimal "
        f"--model {shlex.quote(server.alias)} --base-url {server.base_url}"
    )


def serve_local_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--gguf", required=True, help="path of a GGUF model file")
    p.add_argument("--port", type=int, default=8080, help="TCP port on 127.0.0.1 (default 8080)")
    p.add_argument("--threads", type=int, default=1, help="CPU threads (default 1)")
    p.add_argument(
        "--slots", type=int, default=1, help="parallel requests the server runs (default 1)"
    )
    p.add_argument("--ctx", type=int, default=4096, help="context tokens per slot (default 4096)")
    p.add_argument("--alias", help="the model name to serve it as (default: the file stem)")


def serve_local(args: argparse.Namespace) -> int:
    """Run `metanim serve-local` until Ctrl-C or SIGTERM."""
    server = LocalServer(
        args.gguf,
        port=args.port,
        threads=args.threads,
        slots=args.slots,
        ctx=args.ctx,
        alias=args.alias,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with server:
        print(
            f"serving {server.alias!r} from {server.gguf} at {server.base_url} "
            f"({server.threads} thread(s), {server.slots} slot(s)); Ctrl-C stops it",
            flush=True,
        )
        print(f"next, in another shell: {next_command(server)}", flush=True)
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
    return 0
