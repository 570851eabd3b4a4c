"""Where a model's calls go and what they carry: URLs, auth headers, hosted conventions.

One place resolves a model name and base URL into the server to call, read from the same
environment variables as the openai SDK, so the client and a pre-flight check (`GET
/models`) cannot disagree:

- OpenAI-compatible servers: `OPENAI_BASE_URL`, `OPENAI_API_KEY` (an `Authorization:
  Bearer` header), `OPENAI_ORG_ID` and `OPENAI_PROJECT_ID` (the `OpenAI-Organization` and
  `OpenAI-Project` headers).
- Azure OpenAI, selected by a model named `azure:<deployment>`: `AZURE_OPENAI_ENDPOINT`
  (or the model's base URL), `AZURE_OPENAI_API_KEY` (an `api-key` header) and
  `OPENAI_API_VERSION` (the `api-version` query of every request).

The validators (`check_api_key`, `check_base_url`, `check_model`) refuse, with a
`ValueError` naming what is wrong, a value that would otherwise fail later as a
connection error.
"""

from __future__ import annotations

import ipaddress
import os
import urllib.parse
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: A model named `azure:<deployment>` is called on Azure OpenAI.
AZURE_PREFIX = "azure:"

BASE_URL_ENV = "OPENAI_BASE_URL"
API_KEY_ENV = "OPENAI_API_KEY"
ORG_ENV = "OPENAI_ORG_ID"
PROJECT_ENV = "OPENAI_PROJECT_ID"
AZURE_ENDPOINT_ENV = "AZURE_OPENAI_ENDPOINT"
AZURE_API_KEY_ENV = "AZURE_OPENAI_API_KEY"
API_VERSION_ENV = "OPENAI_API_VERSION"
#: A model named `sim-...` is answered by the simulated server.
SIM_PREFIX = "sim-"
#: The key sent to the simulated server (never `OPENAI_API_KEY`).
SIM_KEY_ENV = "METANIM_SIM_API_KEY"

# Local OpenAI-compatible servers ignore the key, but some refuse a request without one.
_NO_KEY = "no-key-set"
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain"})


def key_env(model: str) -> str:
    """The environment variable `model`'s key comes from: the one place every path that
    sends a key reads (a client made, a client unpickled, a run's pre-flight check).

    A simulated model's key is its own (`METANIM_SIM_API_KEY`), never `OPENAI_API_KEY`:
    a simulator is no paid provider and must not receive that key.
    """
    if model.startswith(SIM_PREFIX):
        return SIM_KEY_ENV
    return AZURE_API_KEY_ENV if model.startswith(AZURE_PREFIX) else API_KEY_ENV


def model_api_key(model: str, environ: Mapping[str, str] | None = None) -> str:
    """The key `model`'s calls carry, read from `key_env(model)` when asked, never kept: a
    simulated model without one sends the placeholder "sim"; "" for a real model."""
    env = os.environ if environ is None else environ
    return env.get(key_env(model)) or ("sim" if model.startswith(SIM_PREFIX) else "")


def _bad_header_char(value: str) -> int | None:
    """The index of the first character an HTTP header value cannot carry, if any.

    A field value is visible ASCII, space, tab and obs-text (RFC 9110 5.5); clients send
    it as Latin-1, so anything past U+00FF cannot be sent at all, and a line break would
    end the header.
    """
    for i, ch in enumerate(value):
        code = ord(ch)
        if not (code == 9 or 0x20 <= code <= 0x7E or 0x80 <= code <= 0xFF):
            return i
    return None


def _check_header(value: str, what: str) -> str:
    at = _bad_header_char(value)
    if at is not None:
        # The offending character is named by its code point only: it is not key material
        # a server could accept, and the rest of the value is never shown.
        raise ValueError(
            f"{what} holds characters no HTTP header can carry "
            f"(U+{ord(value[at]):04X} at position {at + 1})"
        )
    return value


def check_api_key(key: str, *, source: str = API_KEY_ENV) -> str:
    """`key`, if an HTTP header can carry it; else a `ValueError` (never quoting the key).

    Args:
        key: the API key ("" is allowed: local servers need none).
        source: where the key came from, named in the message (an environment variable).
    """
    return _check_header(key, f"the API key (from {source})")


def check_base_url(url: str, *, source: str = "base URL") -> str:
    """`url` without its trailing "/", if it is an http(s) URL a client can call.

    An endpoint URL (`.../v1/chat/completions`) is trimmed to its base URL, with a
    warning.

    Raises:
        ValueError: naming `source` (a flag or an environment variable) and what is wrong:
            not a URL, a scheme other than http/https, no host, a bad port, a query or
            fragment (the client appends paths to a base URL).
    """
    text = url.strip()
    example = "e.g. http://127.0.0.1:8000/v1 or https://api.openai.com/v1"
    if not text:
        raise ValueError(f"{source} is empty ({example})")
    try:
        parts = urllib.parse.urlsplit(text)
        port_ok = parts.port is None or parts.port > 0
    except ValueError as exc:
        raise ValueError(f"{source} {url!r} is not a valid URL: {exc} ({example})") from None
    if not parts.scheme or not parts.netloc:
        raise ValueError(f"{source} {url!r} is not a URL: it needs http:// or https:// ({example})")
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError(
            f"{source} {url!r} has the scheme {parts.scheme!r}; a model server is called "
            f"over http:// or https:// ({example})"
        )
    if not parts.hostname:
        raise ValueError(f"{source} {url!r} names no host ({example})")
    if not port_ok:
        raise ValueError(f"{source} {url!r} has port 0 ({example})")
    if parts.query or parts.fragment or text.endswith(("?", "#")):
        raise ValueError(
            f"{source} {url!r} holds a query or fragment; give the URL the paths "
            f"/chat/completions and /models are appended to ({example})"
        )
    if any(ch.isspace() for ch in text) or _bad_header_char(text) is not None:
        raise ValueError(f"{source} {url!r} holds spaces or control characters")
    base = text.rstrip("/")
    if base.lower().endswith(ENDPOINT):
        # The endpoint's own URL (the form lm-evaluation-harness's `base_url` takes): the
        # client appends the endpoint to a base URL, so the endpoint is trimmed, once said.
        base = base[: -len(ENDPOINT)].rstrip("/")
        warnings.warn(
            f"{source} {url!r} is the endpoint's URL; calling the base URL {base!r} "
            f"(the client appends {ENDPOINT})",
            stacklevel=2,
        )
    return base


#: The endpoint the client appends to a base URL.
ENDPOINT = "/chat/completions"


def check_model(model: str) -> str:
    """`model`, if it names a model (not empty, no surrounding spaces); else a `ValueError`."""
    if not isinstance(model, str) or not model.strip():
        raise ValueError("the model name is empty: name the model the server serves")
    if model != model.strip():
        raise ValueError(f"the model name {model!r} has spaces around it")
    if model.startswith(AZURE_PREFIX) and not model[len(AZURE_PREFIX) :].strip():
        raise ValueError(f"the model {model!r} names no Azure deployment (azure:<deployment>)")
    return model


def is_loopback(url: str) -> bool:
    """Whether `url` points at this machine (127.0.0.0/8, ::1, localhost)."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if host in _LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def split_base_urls(base_url: str | Sequence[str] | None, *, source: str = "base URL") -> list[str]:
    """The replica URLs of a `base_url` (a list, or one string joined by "|"), each checked.

    None: `OPENAI_BASE_URL`, else the OpenAI API.
    """
    if base_url is None:
        env = os.environ.get(BASE_URL_ENV)
        if env:
            base_url, source = env, BASE_URL_ENV
        else:
            return [DEFAULT_BASE_URL]
    urls = base_url.split("|") if isinstance(base_url, str) else list(base_url)
    urls = [u for u in urls if u and u.strip()]
    if not urls:
        raise ValueError(f"{source} names no server")
    return [check_base_url(u, source=source) for u in urls]


def auth_headers(
    api_key: str | None = None,
    *,
    azure: bool = False,
    organization: str | None = None,
    project: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The headers that authenticate a request, as the openai SDK sends them.

    Args:
        api_key: the key; None reads `OPENAI_API_KEY` (`AZURE_OPENAI_API_KEY` for Azure).
            An empty key is sent as a placeholder (local servers need none).
        azure: send the key as Azure's `api-key` header instead of `Authorization: Bearer`.
        organization: `OpenAI-Organization`; None reads `OPENAI_ORG_ID` (unset: not sent).
        project: `OpenAI-Project`; None reads `OPENAI_PROJECT_ID` (unset: not sent).
        environ: where the environment variables are read (default `os.environ`).

    Raises:
        ValueError: a key, organization or project that no HTTP header can carry.

    The returned dict holds the key: send it, never log or store it.
    """
    env = os.environ if environ is None else environ
    key_env = AZURE_API_KEY_ENV if azure else API_KEY_ENV
    source = "the api_key argument"
    if api_key is None:
        api_key, source = env.get(key_env) or "", key_env
    check_api_key(api_key, source=source)
    headers = {"api-key": api_key} if azure else {"Authorization": f"Bearer {api_key or _NO_KEY}"}
    org = organization if organization is not None else env.get(ORG_ENV)
    proj = project if project is not None else env.get(PROJECT_ENV)
    if org:
        headers["OpenAI-Organization"] = _check_header(org, f"the organization ({ORG_ENV})")
    if proj:
        headers["OpenAI-Project"] = _check_header(proj, f"the project ({PROJECT_ENV})")
    return headers


@dataclass(frozen=True)
class ServerTarget:
    """The server a model's calls go to, resolved once (see `server_target`).

    Attributes:
        model: the name sent in the request body (the deployment, for Azure).
        base_urls: one per replica; the first names the client in records
            (for Azure, `{endpoint}/openai/deployments/{deployment}`).
        query: appended to every request URL ("" or "?api-version=...").
        azure: whether this is an Azure OpenAI deployment.
        headers: the auth headers (they hold the key: never logged, not in `repr`).
        api_key: the key the headers carry ("" when none; not in `repr`).
    """

    model: str
    base_urls: list[str]
    query: str = ""
    azure: bool = False
    headers: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    api_key: str = field(default="", repr=False, compare=False)

    def chat_url(self, base_url: str) -> str:
        """The chat completions URL of one replica."""
        return f"{base_url}/chat/completions{self.query}"

    def models_url(self, base_url: str) -> str:
        """The model listing URL of one replica (Azure: the resource's `/openai/models`)."""
        if self.azure:
            return f"{base_url.rsplit('/deployments/', 1)[0]}/models{self.query}"
        return f"{base_url}/models"

    @property
    def loopback(self) -> bool:
        """Whether every replica is on this machine (a local server: nothing is billed)."""
        return all(is_loopback(url) for url in self.base_urls)


def server_target(
    model: str,
    base_url: str | Sequence[str] | None = None,
    *,
    api_key: str | None = None,
    organization: str | None = None,
    project: str | None = None,
    api_version: str | None = None,
) -> ServerTarget:
    """Resolve where `model`'s calls go and what they carry; reads the environment once.

    `model` `azure:<deployment>` calls Azure OpenAI: `base_url` (else
    `AZURE_OPENAI_ENDPOINT`) is the resource endpoint, the key is sent as `api-key`
    (`api_key`, else `AZURE_OPENAI_API_KEY`), and `api_version` (else
    `OPENAI_API_VERSION`) goes in every request's query. Any other model calls `base_url`
    (else `OPENAI_BASE_URL`, else the OpenAI API) with a Bearer key.

    Raises:
        ValueError: an empty model name, an invalid URL, a key no header can carry, or an
            Azure deployment without an endpoint, key or API version.
    """
    check_model(model)
    if not model.startswith(AZURE_PREFIX):
        urls = split_base_urls(base_url)
        key = api_key if api_key is not None else model_api_key(model)
        source = key_env(model) if api_key is None else "the api_key argument"
        check_api_key(key, source=source)
        headers = auth_headers(key, organization=organization, project=project)
        return ServerTarget(model=model, base_urls=urls, headers=headers, api_key=key)
    deployment = model[len(AZURE_PREFIX) :].strip()
    source = "base URL"
    if base_url is None:
        base_url, source = os.environ.get(AZURE_ENDPOINT_ENV) or "", AZURE_ENDPOINT_ENV
        if not base_url:
            raise ValueError(
                f"the Azure model {model!r} needs an endpoint: set {AZURE_ENDPOINT_ENV} "
                f"(https://<resource>.openai.azure.com) or give {model}@<endpoint>"
            )
    endpoints = split_base_urls(base_url, source=source)
    version = api_version if api_version is not None else os.environ.get(API_VERSION_ENV)
    if not version:
        raise ValueError(
            f"the Azure model {model!r} needs an API version: set {API_VERSION_ENV} "
            "(e.g. 2024-10-21)"
        )
    key = api_key if api_key is not None else model_api_key(model)
    if not key:
        raise ValueError(f"the Azure model {model!r} needs a key: set {AZURE_API_KEY_ENV}")
    check_api_key(key, source=AZURE_API_KEY_ENV if api_key is None else "the api_key argument")
    headers = auth_headers(key, azure=True, organization=organization, project=project)
    path = urllib.parse.quote(deployment, safe="")
    return ServerTarget(
        model=deployment,
        base_urls=[f"{e}/openai/deployments/{path}" for e in endpoints],
        query="?" + urllib.parse.urlencode({"api-version": version}),
        azure=True,
        headers=headers,
        api_key=key,
    )
