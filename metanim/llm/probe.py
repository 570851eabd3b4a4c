"""Which kind of server a model is on, asked once: the provider profile and what
`--structured-output auto` sends there.

Hosted APIs are known by their host, without a request (`metanim.llm.providers.HOSTS`;
Azure by its target). Any other server is asked once, before a run:

- its `GET /models` listing: `owned_by` names vLLM, SGLang, llama.cpp, DeepSeek, Mistral,
  Gemini or OpenAI (`providers.OWNERS`); an Anthropic listing has `display_name`s, an
  OpenRouter one `pricing`;
- then `GET /props` (an older llama.cpp lists its models without `owned_by`; its /props
  has `default_generation_settings`) and `GET /api/version` (Ollama answers
  `{"version": ...}`).

Anything else, and a probe that fails or times out, is `generic`. A schema is sent by
`auto` only where the server constrains output to it (llama.cpp, vLLM, SGLang, Ollama):
a hosted API runs the papers' prompts unchanged.

The answer is kept per server for the life of the process, so a run's identity, its
header and its clients ask the same question once.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from metanim.llm._types import StructuredOutput
from metanim.llm.providers import HOSTS, OWNERS, PROVIDERS, Provider
from metanim.llm.target import ServerTarget
from metanim.util import interruptible

#: How long a probe waits for a server's listing, /api/version or /props.
PROBE_TIMEOUT_S = 5.0
_AGENT = "metanim-probe"
#: The names the run header gives the servers that constrain output.
_LABELS = {"llamacpp": "llama.cpp", "vllm": "vLLM", "sglang": "SGLang", "ollama": "Ollama"}


@dataclass(frozen=True)
class Detected:
    """The provider profile of one server, and how it was found (said in a run header)."""

    provider: Provider
    reason: str
    url: str = ""
    #: What the probe read on the way (the client's server check reuses it): the model
    #: names the server lists (None: it was not asked or did not list), its slot count.
    models: tuple[str, ...] | None = None
    slots: int | None = None
    probed: bool = False  # found by asking the server (not by its host or by name)

    @property
    def kind(self) -> str:
        return self.provider.kind


@dataclass(frozen=True)
class StructuredChoice:
    """What `auto` chose for one server, and why (said in a run's header)."""

    mode: StructuredOutput
    reason: str

    @property
    def constrains(self) -> bool:
        return self.mode != "off"


_DETECTED: dict[tuple[str, ...], list[Detected]] = {}
_LOCK = threading.Lock()


def detect_provider(target: ServerTarget, *, timeout_s: float = PROBE_TIMEOUT_S) -> Detected:
    """The profile of the server of `target` (its first replica: replicas serve one model
    on one kind of server). Never raises: a server that cannot be asked is `generic`."""
    return _detect_all(target, timeout_s)[0]


def _detect_all(target: ServerTarget, timeout_s: float) -> list[Detected]:
    if target.azure:
        return [Detected(PROVIDERS["azure"], "an Azure OpenAI deployment", target.base_urls[0])]
    key = tuple(target.base_urls)
    with _LOCK:
        known = _DETECTED.get(key)
    if known is not None:
        return known
    found = [_probe(target, url, timeout_s) for url in target.base_urls]
    with _LOCK:
        _DETECTED[key] = found
    return found


def structured_output_for(
    target: ServerTarget, *, timeout_s: float = PROBE_TIMEOUT_S
) -> StructuredChoice:
    """The structured-output mode `auto` gives the server of `target` (see the module).

    Every replica must constrain output for the schema to be sent; the first that does not
    names the reason. Never raises: a server that cannot be asked gets `off`.
    """
    choice = StructuredChoice("off", "no server")
    for detected in _detect_all(target, timeout_s):
        mode = detected.provider.structured_auto
        label = _LABELS.get(detected.kind)
        if mode != "off" and label is not None:
            choice = StructuredChoice(mode, f"{label} at {detected.url} constrains output")
            continue
        if detected.reason.endswith("is a hosted API") or target.azure:
            return StructuredChoice("off", detected.reason)
        if "did not answer" in detected.reason:
            return StructuredChoice("off", detected.reason)
        return StructuredChoice(
            "off",
            f"{detected.url} does not say it constrains output (not llama.cpp, vLLM, SGLang "
            f"or Ollama: {detected.reason})",
        )
    return choice


def forget_probes() -> None:
    """Drop every remembered answer (a test that restarts a server on the same URL)."""
    with _LOCK:
        _DETECTED.clear()


def _probe(target: ServerTarget, url: str, timeout_s: float) -> Detected:
    host = (urllib.parse.urlsplit(url).hostname or "").lower()
    for known, kind in HOSTS.items():
        if host == known or host.endswith("." + known):
            return Detected(PROVIDERS[kind], f"{host} is a hosted API", url)
    listing = _get_json(target.models_url(url), target.headers, timeout_s)
    if listing is _FAILED:
        return Detected(
            PROVIDERS["generic"], f"{url} did not answer the probe (GET /models)", url,
            probed=True,
        )  # fmt: skip
    entries = [
        m
        for m in (listing.get("data") or [] if isinstance(listing, dict) else [])
        if isinstance(m, dict)
    ]
    models = tuple(str(m["id"]) for m in entries if "id" in m) if entries else None
    root = url[: -len("/v1")] if url.endswith("/v1") else url

    def found(kind: str, reason: str, props: Any = None) -> Detected:
        if kind == "llamacpp" and props is None:
            props = _get_json(f"{root}/props", target.headers, timeout_s)
        slots = props.get("total_slots") if isinstance(props, dict) else None
        slots = slots if isinstance(slots, int) and slots > 0 else None
        return Detected(PROVIDERS[kind], reason, url, models, slots, probed=True)

    owners = {str(m.get("owned_by", "")).lower() for m in entries} - {""}
    for owner in sorted(owners):
        kind = OWNERS.get(owner)
        if kind is not None:
            return found(kind, f"its models are owned_by {owner!r}")
    if entries and all("display_name" in m for m in entries):
        return found("anthropic", "its model listing is Anthropic's")
    if entries and all("pricing" in m for m in entries):
        return found("openrouter", "its model listing is OpenRouter's")
    props = _get_json(f"{root}/props", target.headers, timeout_s)
    if isinstance(props, dict) and "default_generation_settings" in props:
        return found("llamacpp", "its /props is llama.cpp's", props)
    version = _get_json(f"{root}/api/version", target.headers, timeout_s)
    if isinstance(version, dict) and "version" in version:
        return found("ollama", "it answers Ollama's /api/version")
    return found("generic", "nothing it answered names a known server", props)


_FAILED: Any = object()

#: The requests a probe sends while `requests_sent` listens (None: nobody listens).
_SENT: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("_SENT", default=None)


@contextlib.contextmanager
def requests_sent() -> Iterator[list[str]]:
    """The requests the probes send inside the block ("GET <url>", in order), so that a
    plan (`--dry-run`) can say exactly what it sent."""
    sent: list[str] = []
    token = _SENT.set(sent)
    try:
        yield sent
    finally:
        _SENT.reset(token)


def _get_json(url: str, headers: dict[str, str], timeout_s: float) -> Any:
    """The JSON body of `GET url`, None for a non-JSON or error answer, `_FAILED` when
    nothing answered (refused, timed out)."""
    request = urllib.request.Request(url, headers={**headers, "User-Agent": _AGENT})
    sent = _SENT.get()
    if sent is not None:
        sent.append(f"GET {url}")
    try:
        with interruptible(), urllib.request.urlopen(request, timeout=timeout_s) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        exc.close()
        return None
    except ValueError:  # not JSON
        return None
    except Exception:  # refused, reset, timed out, not HTTP: the probe failed
        return _FAILED
