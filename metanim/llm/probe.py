"""Which structured-output mode a server takes: what `--structured-output auto` resolves to.

A reply schema helps only where the server turns it into constrained decoding; a hosted
API runs the papers' prompts unchanged, and a server that may not know `response_format`
is sent nothing. So `auto` asks the server what it is, once, before a run:

- llama.cpp answers `GET /props` (its `default_generation_settings`) and lists its
  models as `owned_by: "llamacpp"`; vLLM and SGLang list theirs as `owned_by: "vllm"` /
  `"sglang"`. All three constrain output to a JSON Schema sent as `response_format`
  (`json_schema`).
- The OpenAI API and Azure OpenAI deployments are hosted APIs: `off`, with no request.
- Anything else, and a probe that fails or times out: `off`.

The answer is kept per server for the life of the process, so a run's identity and its
header ask the same question once.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from metanim.llm._types import StructuredOutput
from metanim.llm.target import ServerTarget

#: How long `auto` waits for a server's listing or `/props` before it decides `off`.
PROBE_TIMEOUT_S = 5.0
#: `owned_by` values the servers that constrain output give their own models (each
#: verified in the server's source: vLLM's and SGLang's `ModelCard`, llama.cpp's
#: model listing).
_CONSTRAINING_OWNERS = {"llamacpp": "llama.cpp", "vllm": "vLLM", "sglang": "SGLang"}
#: Hosts of hosted APIs: never probed, never sent a schema by `auto`.
_HOSTED = ("api.openai.com",)
_AGENT = "metanim-probe"


@dataclass(frozen=True)
class StructuredChoice:
    """What `auto` chose for one server, and why (said in a run's header)."""

    mode: StructuredOutput
    reason: str

    @property
    def constrains(self) -> bool:
        return self.mode != "off"


_CHOICES: dict[tuple[str, ...], StructuredChoice] = {}
_LOCK = threading.Lock()


def structured_output_for(
    target: ServerTarget, *, timeout_s: float = PROBE_TIMEOUT_S
) -> StructuredChoice:
    """The structured-output mode `auto` gives the server of `target` (see the module).

    Every replica must constrain output for the schema to be sent; the first that does not
    names the reason. Never raises: a server that cannot be asked gets `off`.
    """
    if target.azure:
        return StructuredChoice("off", "Azure OpenAI is a hosted API")
    key = tuple(target.base_urls)
    with _LOCK:
        known = _CHOICES.get(key)
    if known is not None:
        return known
    choice = StructuredChoice("off", "no server")
    for url in target.base_urls:
        choice = _probe(target, url, timeout_s)
        if not choice.constrains:
            break
    with _LOCK:
        _CHOICES[key] = choice
    return choice


def forget_probes() -> None:
    """Drop every remembered answer (a test that restarts a server on the same URL)."""
    with _LOCK:
        _CHOICES.clear()


def _probe(target: ServerTarget, url: str, timeout_s: float) -> StructuredChoice:
    host = urllib.parse.urlsplit(url).hostname or ""
    if host in _HOSTED or host.endswith(tuple("." + h for h in _HOSTED)):
        return StructuredChoice("off", f"{host} is a hosted API")
    listing = _get_json(target.models_url(url), target.headers, timeout_s)
    if listing is _FAILED:
        return StructuredChoice("off", f"{url} did not answer the probe (GET /models)")
    owners = {
        str(m.get("owned_by", "")).lower()
        for m in (listing.get("data") or [] if isinstance(listing, dict) else [])
        if isinstance(m, dict)
    }
    for owner, name in _CONSTRAINING_OWNERS.items():
        if owner in owners:
            return StructuredChoice("json_schema", f"{name} at {url} constrains output")
    # An older llama.cpp lists its models without `owned_by`; its /props says what it is.
    root = url[: -len("/v1")] if url.endswith("/v1") else url
    props = _get_json(f"{root}/props", target.headers, timeout_s)
    if isinstance(props, dict) and "default_generation_settings" in props:
        return StructuredChoice("json_schema", f"llama.cpp at {url} constrains output")
    return StructuredChoice(
        "off", f"{url} does not say it constrains output (not llama.cpp, vLLM or SGLang)"
    )


_FAILED: Any = object()


def _get_json(url: str, headers: dict[str, str], timeout_s: float) -> Any:
    """The JSON body of `GET url`, None for a non-JSON or error answer, `_FAILED` when
    nothing answered (refused, timed out)."""
    request = urllib.request.Request(url, headers={**headers, "User-Agent": _AGENT})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        exc.close()
        return None
    except ValueError:  # not JSON
        return None
    except Exception:  # refused, reset, timed out, not HTTP: the probe failed
        return _FAILED
