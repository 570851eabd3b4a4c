"""A long wait says what it waits for, on the progress line, while it lasts: a reply that
does not come (against --timeout-s), a server's Retry-After (as capped)."""

from __future__ import annotations

import http.server
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from metanim.llm import client as llm_client


class _Server(http.server.BaseHTTPRequestHandler):
    """Lists models (the pre-flight check passes); a chat call is answered by `chat`."""

    def do_GET(self) -> None:
        self._send(200, {}, b'{"object":"list","data":[]}')

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.chat()

    def chat(self) -> None:
        raise NotImplementedError

    def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _Silent(_Server):
    def chat(self) -> None:
        time.sleep(30)  # never answers within the run's timeout


class _RetryLater(_Server):
    def chat(self) -> None:
        body = b'{"error": {"message": "rate limited", "type": "rate_limit_error"}}'
        self._send(429, {"Retry-After": "3600"}, body)


@contextmanager
def _serving(handler: type[_Server]) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _bar(handler: type[_Server], run_metanim, tmp_path, *flags: str) -> str:
    """stderr (the progress bar) of a one-episode ReAct tournament of model `m` against
    `handler`'s server, which fails it (exit 3)."""
    with _serving(handler) as url:
        result = run_metanim(
            "tournament", "--episodes", "1", "--method", "react", "--model", "m",
            "--base-url", url, "--opponent", "optimal", *flags, cwd=tmp_path,
        )  # fmt: skip
    assert result.returncode == 3, result.stderr
    return result.stderr


@pytest.mark.slow
def test_a_reply_that_does_not_come_is_named_with_its_timeout(tmp_path, run_metanim, monkeypatch):
    monkeypatch.setattr(llm_client, "WAIT_SHOWN_S", 1.0)  # the test's waits are short
    err = _bar(_Silent, run_metanim, tmp_path, "--timeout-s", "3")
    # Said on the bar while the episode was still running (0/1).
    pattern = r"0/1 \[.*1 call\(s\) waiting [1-3] s for a reply \(timeout: 3 s of silence, "
    assert re.search(pattern + r"--timeout-s\)", err), err


@pytest.mark.slow
def test_a_retry_after_wait_is_named_as_the_server_asked(tmp_path, run_metanim, monkeypatch):
    monkeypatch.setattr(llm_client, "WAIT_SHOWN_S", 1.0)
    monkeypatch.setattr(llm_client, "_MAX_RETRY_AFTER_S", 3.0)  # 3600 s asked, 3 s waited
    err = _bar(_RetryLater, run_metanim, tmp_path, "--max-retries", "1")
    pattern = r"0/1 \[.*a call is sent again in [0-3] s: the server asked for 3600 s "
    assert re.search(pattern + r"\(Retry-After; at most 3 s at a time\)", err), err
