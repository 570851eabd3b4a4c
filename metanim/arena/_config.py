"""Typed configs shared by tournaments and evaluations, and agent profiles.

Every config field is one CLI flag (`--field-name`, help from the field's description;
`metanim.cli` makes them), so a flag, a profile key and a config-file key always mean
the same thing. Values are layered: defaults < `--config FILE` < `--profile` /
`--opponent-profile` < flags.
"""

from __future__ import annotations

import json
import tomllib
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from metanim.arena._players import parse_sides
from metanim.arena._preflight import resolve_structured_output
from metanim.llm import (
    DEFAULT_MAX_COMPLETION_TOKENS,
    PROVIDER_KINDS,
    ApiSetting,
    CallOptions,
    ExtraBody,
    StructuredOutputSetting,
)
from metanim.records import SIDES, config_identity, identity_hash
from metanim.util import Folder, PositiveCounts, PositiveFloat, PositiveInt, RoundCount

#: The ready-made profiles, shipped in the package as data (`metanim/profiles/*.toml`), so
#: a name finds them from an installed wheel as from a checkout.
PROFILE_DIR = Path(__file__).resolve().parents[1] / "profiles"


#: The run settings a profile may set for its model (a reasoning model's cap, the API it is
#: served on, a parameter its server refuses).
PROFILE_OPTIONS = (
    "max_completion_tokens", "timeout_s", "reasoning_effort", "omit_params", "provider",
    "api", "stream", "cap_field", "structured_output", "extra_body", "phase_max_tokens",
)  # fmt: skip


class AgentProfile(BaseModel):
    """A ready configuration of one player: model, server, method and its parameters."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="profile name (the file stem by convention)")
    description: str = Field("", description="what this profile reproduces")
    model: str = Field(description="model name sent to the server, e.g. gpt-4o-mini")
    base_url: str | None = Field(None, description="OpenAI-compatible server URL")
    method: str = Field(description="method spec: react, dreamad, mad, ... or optimal/random")
    params: dict[str, Any] = Field(default_factory=dict, description="method parameters")
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="how this model's calls must be made, as run settings: "
        + ", ".join(PROFILE_OPTIONS)
        + " (flags given on top override them)",
    )

    @field_validator("options")
    @classmethod
    def _known_options(cls, options: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(options) - set(PROFILE_OPTIONS))
        if unknown:
            raise ValueError(
                f"unknown option(s) {unknown}; a profile may set {', '.join(PROFILE_OPTIONS)}"
            )
        return options


#: The shortest --timeout-s taken: below it no server answers in time, and a run would
#: only retry and fail every call.
MIN_TIMEOUT_S = 0.1

OnFailure = typing.Literal["forfeit", "random"]
#: `--provider`: auto, or a profile of `metanim.llm.PROVIDERS`.
ProviderSetting = typing.Literal[
    "auto", "openai", "azure", "deepseek", "vllm", "sglang", "llamacpp", "ollama",
    "anthropic", "gemini", "openrouter", "mistral", "generic", "sim",
]  # fmt: skip
ReasoningEffort = typing.Literal["none", "minimal", "low", "medium", "high", "xhigh"]


class RunConfig(BaseModel):
    """The settings every run shares (tournaments and evaluations): how it is run.

    The fields left bare are reworded per run (episodes or decisions): each subclass
    declares them with its own default and description.
    """

    # Floats are finite everywhere: `inf` or `nan` is a typo, never a setting.
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    seed: int
    concurrency: int
    call_concurrency: int | None = Field(
        None,
        ge=1,
        description="model calls in flight at once, per model and server replica (default: "
        "the server's slot count where it reports one, as llama.cpp's /props; else 8; on "
        "the simulator, as many as --concurrency, at least 64)",
    )
    timeout_s: float | None = Field(
        None,
        ge=MIN_TIMEOUT_S,
        description="seconds of silence a model call may take (streamed: between two pieces "
        "of the reply); default per model: 60 for a chat model, 180 for a reasoning model "
        "that shows its thinking, 600 for one that hides it; a server that does not answer "
        "at all is refused before the first episode",
    )
    max_retries: int
    max_calls: int | None
    budget_tokens: PositiveInt | None = Field(
        None,
        description="budget: stop starting new work after this many tokens in all (the "
        "per-call cap is --max-completion-tokens)",
    )
    max_cost_usd: PositiveFloat | None = Field(
        None,
        description="budget: a hard cap on the dollars spent: a call is sent only if the "
        "worst case of every call in flight still fits (its prompt at the input price, its "
        "cap at the output price), so the spend never exceeds it",
    )
    results_dir: Folder = Field(
        "results", description="folder of the JSONL log, summary and report"
    )
    record_decisions: bool
    cache: str | None = Field(
        None,
        description="a response cache (SQLite file) for deterministic calls (temperature 0); "
        "a rerun answers them from it",
    )
    rerun_failed: bool
    progress: bool = Field(True, description="show a progress bar")
    resend_timeouts: int = Field(
        0,
        ge=0,
        description="send a call that timed out after it was sent again, up to N times (each "
        "resend may be billed: counted, and charged its worst case under --max-cost-usd)",
    )
    provider: ProviderSetting = Field(
        "auto",
        description="the server's kind (auto: from its host, else from what it answers): "
        "which field the cap goes in, how reasoning comes back, what --structured-output "
        "auto sends; " + ", ".join(PROVIDER_KINDS),
    )
    api: ApiSetting = Field(
        "auto",
        description="chat (chat completions), responses (the Responses API), or auto: the "
        "Responses API for the models OpenAI serves only there (o3-pro, the gpt-5 pro and "
        "codex models), else chat",
    )
    stream: bool | None = Field(
        None,
        description="stream replies (default: on, except on the simulator): the timeout then "
        "measures silence, and progress shows tokens arriving",
    )
    cap_field: Literal["auto", "max_tokens", "max_completion_tokens"] = Field(
        "auto",
        description="the request field the completion cap is sent as (auto: the server's: "
        "max_completion_tokens for OpenAI and Azure, max_tokens elsewhere)",
    )
    # ---- how every model call is made: part of the run's identity (see CALL_FIELDS)
    max_completion_tokens: PositiveInt | Literal["auto"] | None = Field(
        "auto",
        description="completion cap of every model call (thinking included); auto: per "
        f"model, {DEFAULT_MAX_COMPLETION_TOKENS} for a chat model, more for a reasoning model "
        "(its thinking counts; the run header says which); a reply cut off by it is recorded "
        "as truncated, never read as an answer",
    )
    reasoning_effort: ReasoningEffort | None = Field(
        None,
        description="reasoning effort asked of a reasoning model (none, minimal, low, medium, "
        "high, xhigh); unset: the server's default",
    )
    omit_params: list[str] = Field(
        default_factory=list,
        description="a request field left out of every call, e.g. seed, or temperature (the "
        "server's default temperature)",
    )
    phase_max_tokens: PositiveCounts = Field(
        default_factory=dict,
        description="completion cap of one method phase, e.g. rewrite=1024 (phases: answer, "
        "update, rewrite, argue, commit, ...)",
    )
    structured_output: StructuredOutputSetting = Field(
        "auto",
        description="send each reply's JSON Schema (legal moves as an enum): auto (json_schema "
        "where the server says it constrains output: llama.cpp, vLLM, SGLang, Ollama; off for "
        "hosted APIs, the simulator, or a server that does not answer), json_schema "
        "(response_format), tools (a forced function call: for servers that ignore "
        "response_format, as Anthropic's endpoint does), guided_json (vLLM body field), "
        "llama_json_schema (llama.cpp body field), or off (the papers' prompts alone)",
    )
    list_moves: bool = Field(
        False,
        description="end each game prompt with its legal moves (#Legal Moves: 1, 2, 3), "
        "recorded as the game prompt version's +listed-moves; off: the papers' prompts",
    )
    top_p: float | None = Field(None, gt=0, le=1, description="nucleus sampling top_p, if set")
    stop: list[str] = Field(default_factory=list, description="stop sequence sent with every call")
    extra_body: ExtraBody = Field(
        default_factory=dict,
        description="extra request-body field for every call, e.g. cache_prompt=false (llama.cpp)",
    )
    max_reasks: RoundCount = Field(
        2, description="re-asks (with feedback) after an invalid or truncated reply"
    )
    reask_temperature: float = Field(
        0.7,
        ge=0,
        description="temperature of a re-ask whose first ask was at 0 (a greedy re-ask repeats itself)",
    )
    reply_max_chars: int = Field(
        300,
        ge=16,
        description="longest reasoning (free text) a reply schema allows, in characters "
        "(structured output only; also kept under the completion cap)",
    )
    keep_going: bool = Field(
        False,
        description="run on when the first 5 decisions to finish are all forfeits (by default "
        "the run stops there with exit code 3 and a hint; an all-forfeit run can be a "
        "measurement)",
    )
    on_failure: OnFailure = Field(
        "forfeit",
        description="when every re-ask stays invalid: forfeit (a loss, counted apart) or random "
        "(a seeded random legal move, recorded as a fallback)",
    )

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, values: Any) -> Any:
        if isinstance(values, dict) and "max_tokens" in values:
            raise ValueError(
                "max_tokens was renamed: use budget_tokens (--budget-tokens) for the run's "
                "token budget, or max_completion_tokens (--max-completion-tokens) for the "
                "per-call completion cap"
            )
        return values

    @model_validator(mode="after")
    def _capped_calls_under_a_cost_cap(self) -> RunConfig:
        # A call's worst case is its prompt plus its cap: without a cap it is unbounded.
        if self.max_cost_usd is not None and self.max_completion_tokens is None:
            raise ValueError(
                "--max-cost-usd needs a completion cap on every call (its worst case is "
                "the cap at the output price): set --max-completion-tokens (or leave it auto)"
            )
        return self

    def call_options(self) -> CallOptions:
        """The `CallOptions` every method of the run starts from.

        Raises:
            ValueError: `structured_output` is still "auto": a run resolves it against its
                servers first (`metanim.arena.resolve_structured_output`).
        """
        if self.structured_output == "auto":
            raise ValueError(
                "structured_output 'auto' is resolved against the servers before a run "
                "(resolve_structured_output); call options need the mode chosen"
            )
        return CallOptions(
            max_tokens=self.max_completion_tokens,
            cap_field=None if self.cap_field == "auto" else self.cap_field,
            reasoning_effort=self.reasoning_effort,
            omit=tuple(self.omit_params),
            top_p=self.top_p,
            stop=list(self.stop) or None,
            extra_body=dict(self.extra_body),
            structured_output=self.structured_output,
        )

    def config_hash(self, sides: Sequence[Any] | None = None, *, as_spelled: bool = False) -> str:
        """The run identity's hash: the suffix of its file names, the key of resume.

        Run settings and amounts (`episodes`, `repeats`, `limit`) are left out; one run
        spelled two ways is one identity (`metanim.records.run_identity`: method aliases,
        defaults written out, parameter order, a game by preset or by parameters, replica
        order). The servers enter normalized (the same command against another server
        starts a new log, a `sim-*` model on the in-process simulated server hashes the
        same on every run). `sides` are the config's parsed `Side`s, when the caller has
        them (they are not parsed again). Structured output "auto" enters as the mode the
        servers take (`resolve_structured_output`), as the run will record it.
        `as_spelled`: the hash of the config as written (`run_identity`), which logs
        written before identities were canonical carry.
        """
        config = self
        if self.structured_output == "auto":
            sides = parse_sides(self) if sides is None else sides
            config, _ = resolve_structured_output(self, sides)
        servers = None
        if sides is not None:
            servers = {
                key: _server(side, as_spelled) for (key, _), side in zip(SIDES, sides, strict=False)
            }
        dumped = config.model_dump(mode="json")
        return identity_hash(config_identity(dumped, servers, as_spelled=as_spelled))

    def log_choice(self, sides: Sequence[Any] | None = None) -> tuple[str, Path, bool]:
        """The run's hash, its JSONL log (`<results_dir>/<name>-<hash>.jsonl`) and whether
        that log is keyed by the config as spelled.

        The canonical hash's log, unless none exists and one keyed by the config's hash as
        spelled (`config_hash(as_spelled=True)`) does: the run resumes into that one, with
        its hash, so its episode and decision ids (derived from the hash) match.
        """
        digest = self.config_hash(sides)
        path = self._log_named(digest)
        if not path.exists():
            spelled = self.config_hash(sides, as_spelled=True)
            if spelled != digest and self._log_named(spelled).exists():
                return spelled, self._log_named(spelled), True
        return digest, path, False

    def _log_named(self, digest: str) -> Path:
        return Path(self.results_dir) / f"{self.name}-{digest}.jsonl"

    @property
    def log_path(self) -> Path:
        """The run's JSONL log (see `log_choice`)."""
        return self.log_choice()[1]

    def method_defaults(self) -> dict[str, Any]:
        """Keyword arguments every method of the run gets (a method spec may override them)."""
        return {
            "options": self.call_options(),
            "phase_max_tokens": dict(self.phase_max_tokens),
            "max_reasks": self.max_reasks,
            "reask_temperature": self.reask_temperature,
            "on_failure": self.on_failure,
            "max_chars": self.reply_max_chars,
        }


def _server(side: Any, as_listed: bool) -> str | None:
    """A parsed side's server as its identity holds it (`ModelSpec.server_identity`:
    replicas sorted, or `as_listed`), read from the side rather than parsed again."""
    return None if side.model is None else side.model.server_identity(as_listed=as_listed)


def load_config_file(path: str | Path, model: type[BaseModel] | None = None) -> dict[str, Any]:
    """A TOML or JSON file holding one table/object, as a dict; with `model`, a key that
    is none of its fields is refused here, named with the file (not as a flag).

    Raises:
        ValueError: one line naming the file, and the line and what was expected where
            the file is not valid TOML/JSON, not text, or not a table/object, or the
            key `model` has no field for.
    """
    path = Path(path)
    if path.suffix not in (".toml", ".json"):
        raise ValueError(f"{path}: a config or profile is a .toml or .json file")
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark first is dropped
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file (a config is TOML or JSON)") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: line {exc.lineno}: not valid JSON: {exc.msg}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(
            f"{path}: a config file holds a table/object of settings (name = value), "
            f"not {type(data).__name__ if data is not None else 'null'}"
        )
    if model is not None:
        unknown = [key for key in data if key not in model.model_fields]
        if unknown:
            raise ValueError(f"{path}: {_unknown_keys(unknown, model.model_fields)}")
    return data


def _unknown_keys(keys: Sequence[str], known: typing.Iterable[str]) -> str:
    """Keys a settings file holds that no field takes, with the nearest field's name."""
    import difflib

    named = ", ".join(repr(key) for key in keys)
    near = difflib.get_close_matches(keys[0], list(known), n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return f"unknown key{'s' if len(keys) > 1 else ''} {named}{hint}"


def load_profile(name_or_path: str | Path) -> AgentProfile:
    """A profile by path (a .toml or .json file of one's own), or by name from the
    profiles shipped in the package (`PROFILE_DIR`)."""
    path = Path(name_or_path)
    if not path.exists():
        shipped = PROFILE_DIR / f"{name_or_path}.toml"
        if not shipped.is_file():
            known = sorted(p.stem for p in PROFILE_DIR.glob("*.toml"))
            raise ValueError(f"no profile {str(name_or_path)!r}; known profiles: {known}")
        path = shipped
    data = load_config_file(path, AgentProfile)
    data.setdefault("name", path.stem)
    missing = [key for key in ("model", "method") if key not in data]
    if missing:
        raise ValueError(
            f"{path}: the profile has no {' and no '.join(missing)} (a profile names the "
            "model it calls and the method it plays)"
        )
    try:
        return AgentProfile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise ValueError(f"{path}: {where}: {first['msg'].removeprefix('Value error, ')}") from None


def profile_fields(profile: AgentProfile, prefix: str = "") -> dict[str, Any]:
    """The config fields a profile sets (`prefix` "opponent_" for the opponent side); its
    `options` are run settings, shared by both sides (`merge_profiles` refuses two profiles
    that set one differently)."""
    out: dict[str, Any] = {
        f"{prefix}model": profile.model,
        f"{prefix}params": dict(profile.params),
        ("opponent" if prefix else "method"): profile.method,
        **profile.options,
    }
    if profile.base_url is not None:
        out[f"{prefix}base_url"] = profile.base_url
    return out


def merge_profiles(*fields: dict[str, Any]) -> dict[str, Any]:
    """The config fields of several profiles; two that set one run setting differently
    are refused, naming it (a run has one setting of each)."""
    out: dict[str, Any] = {}
    for each in fields:
        for name, value in each.items():
            if name in PROFILE_OPTIONS and name in out and out[name] != value:
                raise ValueError(
                    f"the profiles set {name} differently ({out[name]!r} and {value!r}); "
                    f"give --{name.replace('_', '-')} to choose"
                )
            out[name] = value
    return out
