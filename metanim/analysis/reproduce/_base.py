"""What every artifact shares: its declaration and registry, the options, who plays, how a
run is made and checked, paired comparisons, win tables and plots.

An artifact is one declaration (`artifact(...)` on the function that makes it): its name,
the paper it reproduces, the options it reads, its default simulated agents (a
`Hypothesis`) and the function that runs the protocol and renders the table. Declaring it
registers it in `ARTIFACTS`, which `metanim reproduce` reads for its choices, its help
and its runs.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from metanim.analysis.plots import grouped_bars, need_pyplot
from metanim.arena import (
    EvaluationConfig,
    TournamentConfig,
    parse_setting,
    run_evaluation,
    run_tournament,
)
from metanim.datasets import DEFAULT_SPECS, build, write_jsonl
from metanim.games.settings import canonical_key
from metanim.llm import (
    ApiSetting,
    ExtraBody,
    InfrastructureError,
    ModelSpec,
    StructuredOutputSetting,
    check_base_url,
)
from metanim.llm.sim import check_simulated
from metanim.records import iter_log, latest, md
from metanim.records import pct as _pct
from metanim.stats import (
    majority_verdict,
    mcnemar_exact,
    paired_item_difference,
    tango_interval,
    wilson_interval,
)
from metanim.util import Folder, PositiveInt

#: Seed 000's sampling temperature: every answer call of a compared method samples at it.
SAMPLING_T = 0.7
#: Agents of the seed 004 artifacts (and the size `--agent-models` must name).
AGENTS_N = 5


# ------------------------------------------------------------------ the options
class ReproduceOptions(BaseModel):
    """What every artifact shares; the defaults follow the seed papers' protocols."""

    # A misspelt key in a config file is refused, and no float is inf or nan.
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    out: Folder = Field("reproduce", description="output folder")
    model: str | None = Field(
        None,
        description="the model under test, every role (default: the artifact's simulated "
        "agents, printed under its output)",
    )
    model_b: str | None = Field(None, description="table5: the second model")
    bias_model: str | None = Field(None, description="identity-bias: the debating model")
    opponent_model: str | None = Field(None, description="the opponent's model (tournaments)")
    truth_holder_model: str | None = Field(
        None, description="seed 004 artifacts: the truth-holder's model (crowd: --model)"
    )
    agent_models: str | None = Field(
        None,
        description="seed 004 artifacts: one model per agent, a|b|c|d|e (crowd first, "
        "truth-holder last)",
    )
    base_url: str | None = Field(None, description="server of every model (default: simulated)")
    # ---- the model options of `tournament` and `evaluate`, for every run of an artifact
    max_completion_tokens: PositiveInt | Literal["auto"] | None = Field(
        "auto",
        description="completion cap of every call (auto: per model, larger for a reasoning model)",
    )
    omit_params: list[str] = Field(
        default_factory=list,
        description="a request field left out of every call: temperature runs at the "
        "server's default temperature, seed sends none",
    )
    timeout_s: float | None = Field(
        None, gt=0, description="seconds of silence a call may take (default: per model)"
    )
    structured_output: StructuredOutputSetting = Field(
        "auto", description="how each reply's schema is sent (see `metanim tournament --help`)"
    )
    extra_body: ExtraBody = Field(
        default_factory=dict, description="extra request-body field for every call"
    )
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh"] | None = Field(
        None, description="reasoning effort asked of a reasoning model"
    )
    provider: str = Field("auto", description="the server's kind (auto: detected)")
    api: ApiSetting = Field("auto", description="chat, responses, or auto")
    cap_field: Literal["auto", "max_tokens", "max_completion_tokens"] = Field(
        "auto", description="the request field the cap is sent as"
    )
    episodes: int = Field(50, ge=1, description="episodes per setting (seed 000: 50)")
    repeats: int = Field(5, ge=1, description="passes over a dataset (R)")
    samples: int = Field(20, ge=1, description="entrenchment: samples for p0 and debates per state")
    items: int | None = Field(None, ge=1, description="use only the first N items per dataset")
    datasets: list[str] = Field(
        default_factory=list,
        description="dataset files (states or questions) instead of the default build's "
        "(figure3, figure7-right, identity-bias, table5, and the seed 004 artifacts' source)",
    )
    peers: int | None = Field(
        None,
        ge=1,
        description="identity-bias: each agent sees k peers (default 1, seed 003 Table 1)",
    )
    seed: int = Field(0, description="base seed")
    progress: bool = Field(True, description="progress bars")

    @field_validator("base_url")
    @classmethod
    def _url(cls, url: str | None) -> str | None:
        return None if url is None else check_base_url(url, source="URL")

    @field_validator("model", "model_b", "bias_model", "opponent_model", "truth_holder_model")
    @classmethod
    def _model(cls, text: str | None) -> str | None:
        if text is not None:
            _check_model(text)
        return text

    @field_validator("agent_models")
    @classmethod
    def _agent_models(cls, text: str | None) -> str | None:
        if text is None:
            return None
        models = [m.strip() for m in text.split("|") if m.strip()]
        if len(models) != AGENTS_N:
            raise ValueError(
                f"names {len(models)} model(s); give one per agent, {AGENTS_N} in all "
                "(a|b|c|d|e: crowd first, truth-holder last), or --model for the crowd and "
                "--truth-holder-model"
            )
        for model in models:
            _check_model(model)
        return text


def _check_model(text: str) -> None:
    """Refuse, before any work, a model a run would refuse (an empty name, a bad URL, an
    unknown simulated policy)."""
    spec = ModelSpec.parse(text)
    if spec.simulated:
        check_simulated(spec.name)


#: The model options every run of an artifact takes (`tournament` and `evaluate`'s own).
MODEL_OPTIONS = (
    "max_completion_tokens", "omit_params", "timeout_s", "structured_output", "extra_body",
    "reasoning_effort", "provider", "api", "cap_field",
)  # fmt: skip
#: Options every artifact reads; the others are read only by the artifacts that list them.
COMMON_OPTIONS = frozenset({"out", "model", "base_url", "seed", "progress", *MODEL_OPTIONS})
ITEMS = frozenset({"repeats", "items"})  # an evaluation over dataset items
DATA = ITEMS | {"datasets"}  # ... on datasets the caller may give
GAMES = frozenset({"episodes", "opponent_model"})  # a tournament
#: The options whose value is a size, in the order a plan names them.
SIZES = ("episodes", "repeats", "items", "samples")


# ------------------------------------------------------------------ who plays
@dataclass(frozen=True)
class Hypothesis:
    """One artifact's default simulated agents: a model per role, what they assume, and
    which options name each role's model instead.

    `flags[role]` lists the options that name that role's model, the first one given
    winning; a role no option names keeps its simulated model. `role_words` are said
    only where the role plays (`only` drops a role and its words).
    """

    roles: dict[str, str]
    words: tuple[str, ...]
    flags: dict[str, tuple[str, ...]] = field(default_factory=dict)
    role_words: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def only(self, *roles: str) -> Hypothesis:
        """The same hypothesis with only `roles` playing."""
        return Hypothesis(
            {r: m for r, m in self.roles.items() if r in roles},
            self.words,
            {r: f for r, f in self.flags.items() if r in roles},
            {r: w for r, w in self.role_words.items() if r in roles},
        )

    @property
    def all_words(self) -> tuple[str, ...]:
        return (*self.words, *(w for role in self.roles for w in self.role_words.get(role, ())))

    def cast(self, opts: ReproduceOptions) -> Cast:
        """The models of a run: the options given, else the simulated default."""
        roles, chosen = {}, False
        for role, model in self.roles.items():
            given = next(
                (getattr(opts, f) for f in self.flags.get(role, ()) if getattr(opts, f)), None
            )
            roles[role] = given or model
            chosen = chosen or given is not None
        return Cast(roles, None if chosen else self)


@dataclass(frozen=True)
class Cast:
    """The models one artifact runs, per role, and whether they are its simulated default."""

    roles: dict[str, str]
    hypothesis: Hypothesis | None  # None: the caller named the models

    @property
    def simulated(self) -> bool:
        return any(ModelSpec.parse(m).simulated for m in self.roles.values())

    def __getitem__(self, role: str) -> str:
        return self.roles[role]

    def names(self) -> str:
        """The models in a caption: `role: model`, one per distinct model."""
        seen: dict[str, list[str]] = defaultdict(list)
        for role, model in self.roles.items():
            seen[model].append(role)
        return "; ".join(f"{' and '.join(r)}: `{m}`" for m, r in seen.items())

    def caption(self, what: str) -> str:
        """A table caption: simulated or not, and the models."""
        kind = "Simulated agents" if self.simulated else "Models"
        return f"*{what}. {kind}: {self.names()}.*"

    def title(self, what: str) -> str:
        """A plot title: what, then simulated or not and the models (wrapped)."""
        kind = "simulated" if self.simulated else "models"
        models = self.names().replace("`", "")
        return f"{what}\n{kind}: {_wrap(models, 70)}"

    def footer(self, temperatures: Sequence[str] = ()) -> list[str]:
        """The configuration in words, printed under the output."""
        lines = ["", "## Configuration", ""]
        if temperatures:
            lines += [f"Temperatures: {'; '.join(temperatures)}.", ""]
        if self.hypothesis is None:
            lines.append(f"Models given on the command line: {self.names()}.")
            if self.simulated:
                lines.append(
                    "They are simulated (docs/simulated_server.md says what their parameters do)."
                )
            return lines
        words = self.hypothesis.all_words
        lines += [
            "Simulated agents (the artifact's default, a hypothesis about how agents behave "
            "under which the paper's mechanism can appear; not a fit to the paper's numbers; "
            "`--model` and `--base-url` run the same protocol on any model):",
            "",
            *(f"- {w};" for w in words[:-1]),
            f"- {words[-1]}.",
            "",
            f"Models: {self.names()}.",
        ]
        return lines


def _wrap(text: str, width: int) -> str:
    """`text` broken after commas or semicolons into lines of about `width` characters."""
    lines, line = [], ""
    for part in re.split(r"(?<=[,;])", text):
        if line and len(line) + len(part) > width:
            lines.append(line)
            line = part.lstrip()
        else:
            line += part
    return "\n".join([*lines, line])


# ------------------------------------------------------------- the declaration
@dataclass(frozen=True)
class Artifact:
    """One seed-paper table or figure: everything about it in one declaration."""

    name: str
    paper: str
    what: str
    make: Callable[[Run], list[Path]]
    hypothesis: Hypothesis
    #: the options it reads besides COMMON_OPTIONS; another one given is refused, not ignored
    options: frozenset[str] = frozenset()
    #: how to cast it: the hypothesis's own rule unless given (seed 004's one model per agent)
    casting: Callable[[Hypothesis, ReproduceOptions], Cast] | None = None
    #: the runs it makes, where they are fixed in advance: named in its plan (`--dry-run`)
    runs: tuple[str, ...] = ()

    def cast(self, opts: ReproduceOptions) -> Cast:
        if self.casting is not None:
            return self.casting(self.hypothesis, opts)
        return self.hypothesis.cast(opts)

    def check_options(self, opts: ReproduceOptions) -> None:
        unread = sorted(opts.model_fields_set - COMMON_OPTIONS - self.options)
        if unread:
            where = {
                name: [a.name for a in ARTIFACTS.values() if name in a.options] for name in unread
            }
            raise ValueError(
                f"{self.name} does not read "
                + "; ".join(
                    f"--{n.replace('_', '-')} (read by {', '.join(w)})" for n, w in where.items()
                )
            )


#: Every artifact, in the order `metanim reproduce all` runs them.
ARTIFACTS: dict[str, Artifact] = {}


def artifact(
    name: str,
    *,
    paper: str,
    what: str,
    hypothesis: Hypothesis,
    options: frozenset[str] = frozenset(),
    casting: Callable[[Hypothesis, ReproduceOptions], Cast] | None = None,
    runs: Sequence[str] = (),
) -> Callable[[Callable[[Run], list[Path]]], Callable[[Run], list[Path]]]:
    """Declare and register an artifact: the decorated function runs its protocol and
    writes its files (returning their paths)."""

    def register(make: Callable[[Run], list[Path]]) -> Callable[[Run], list[Path]]:
        if name in ARTIFACTS:
            raise ValueError(f"artifact {name!r} is declared twice")
        ARTIFACTS[name] = Artifact(
            name, paper, what, make, hypothesis, options, casting, tuple(runs)
        )
        return make

    return register


# ------------------------------------------------------------------------ running
class RunFailed(InfrastructureError):
    """A run of an artifact did not finish: the server's own error, and exit code 3."""


class Flagged(InfrastructureError):
    """An artifact's table rests on decisions that mostly gave no answer (exit code 3)."""


def model_options(opts: ReproduceOptions) -> dict[str, Any]:
    """The model options given (the run's own defaults stand for those not given)."""
    return {k: getattr(opts, k) for k in MODEL_OPTIONS if k in opts.model_fields_set}


@dataclass
class Run:
    """One artifact being made: its options, its models, its folder and what it noted."""

    artifact: Artifact
    opts: ReproduceOptions
    cast: Cast
    #: The remedies of the runs whose decisions mostly gave no answer, flagged under the
    #: table: a table of forfeits or truncations is not a measurement of the method.
    hints: list[str] = field(default_factory=list)
    #: The smallest effect the artifact's sizes detect, said under its table (`power`).
    power_note: str | None = None

    def power(self, n: int, unit: str) -> None:
        """Say under the table the smallest difference between two rates that `n` units
        per compared arm detect (`detectable_difference`), so a flat result reads as
        "not detected at this size", never as "absent"."""
        if n < 1:
            return
        mde = detectable_difference(n)
        self.power_note = (
            f"Power: with {n} {unit} per compared arm, a difference of {100 * mde:.0f} "
            "points between two rates near 50% is detected 80% of the time (two-sided 5% "
            "test; a smaller one, or one near 0% or 100%, needs more); a difference below "
            "that which this table does not show is not detected at this size, not absent."
        )

    def items(self, paths: Sequence[Path]) -> int:
        """The fewest items any of `paths` gives a run (`--items` caps each)."""
        counts = [
            sum(1 for line in Path(p).read_text(encoding="utf-8").splitlines() if line.strip())
            for p in paths
        ]
        fewest = min(counts) if counts else 0
        return min(fewest, self.opts.items) if self.opts.items else fewest

    @property
    def folder(self) -> Path:
        path = Path(self.opts.out) / self.artifact.name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def dataset(self, game: str) -> Path:
        """The default build's normal-play file of `game` (seed 000 Table 5 sizes), cached."""
        path = Path(self.opts.out) / "data" / f"{game}-normal.jsonl"
        if not path.exists():
            spec = next(s for s in DEFAULT_SPECS if s.game == game and s.variant == "normal")
            write_jsonl(build(spec, seed=self.opts.seed), path)
        return path

    def data(self, *games: str) -> list[Path]:
        """The given dataset files, else the default build's files of `games`."""
        if self.opts.datasets:
            return [Path(p) for p in self.opts.datasets]
        return [self.dataset(g) for g in games]

    def checked(self, result: Any, name: str) -> Path:
        """A finished run's log; a run that did not finish stops the artifact with the
        first error its server gave (`RunFailed`); one whose decisions mostly gave no
        answer is noted for the flag under the table."""
        if not result.complete:
            if not result.failures:  # a stop rule fired after every item had started
                raise RunFailed(f"run {name!r}: {result.stopped}", kind="run_failed")
            cause, (count, first) = next(iter(result.failures.items()))
            raise RunFailed(
                f"run {name!r}: {count} of {result.planned} did not finish ({cause}): {first}",
                kind="run_failed",
            )
        if result.hint:
            self.hints.append(f"{name}: {result.hint}")
        return Path(result.log_path)

    def evaluate(
        self, name: str, method: str, datasets: list[Path], *,
        params: dict[str, Any] | None = None, model: str, repeats: int | None = None,
        seed: int | None = None,
    ) -> Path:  # fmt: skip
        """Evaluate `method` on `datasets`; `seed` (default: the run's) gives a run of its
        own draws, independent of another run of the same configuration."""
        opts = self.opts
        config = EvaluationConfig(
            name=name, dataset=[str(d) for d in datasets], method=method, params=params or {},
            model=model, base_url=opts.base_url, repeats=repeats or opts.repeats,
            limit=opts.items, seed=opts.seed if seed is None else seed,
            results_dir=str(self.folder), progress=opts.progress, **model_options(opts),
        )  # fmt: skip
        return self.checked(run_evaluation(config), name)

    def tournament(
        self, name: str, method: str, games: list[str], *, params: dict[str, Any] | None = None
    ) -> Path:
        opts, cast = self.opts, self.cast
        config = TournamentConfig(
            name=name, games=games, method=method, params=params or {}, model=cast["agent"],
            base_url=opts.base_url, opponent="react", opponent_model=cast["opponent"],
            opponent_base_url=opts.base_url, opponent_params={"temperature": SAMPLING_T},
            episodes=opts.episodes, start="random_n", seed=opts.seed,
            results_dir=str(self.folder), progress=opts.progress, **model_options(opts),
        )  # fmt: skip
        return self.checked(run_tournament(config), name)

    def header(self) -> list[str]:
        artifact, opts, cast = self.artifact, self.opts, self.cast
        kind = "simulated agents" if cast.simulated else "models"
        return [
            f"# {artifact.paper}: {artifact.what} ({kind})",
            "",
            f"Command: `{command_line(artifact.name, opts)}`; seed {opts.seed}. "
            + ("Simulated agents" if cast.simulated else "Models")
            + f": {cast.names()} (configuration at the end).",
            "",
        ]

    def write(self, lines: list[str], name: str | None = None) -> Path:
        """`<out>/<name>.md` (the artifact's name by default), the power line (`power`)
        before its configuration."""
        if self.power_note is not None:
            at = lines.index("## Configuration") - 1 if "## Configuration" in lines else len(lines)
            lines = [*lines[:at], "", self.power_note, *lines[at:]]
        path = Path(self.opts.out) / f"{name or self.artifact.name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    def image(self, name: str | None = None) -> Path:
        """Where the artifact's plot goes: `<out>/<name>.png`."""
        return Path(self.opts.out) / f"{name or self.artifact.name}.png"


def detectable_difference(n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """The difference between two rates near 50% that a two-sided test at `alpha` detects
    with probability `power`, with `n` units per arm: (z₁₋α/₂ + z_power)·√(2·¼/n)
    (normal approximation; a paired design on the same units does at least as well)."""
    z = NormalDist().inv_cdf  # the standard normal's quantiles (stdlib: no scipy to load)
    return float((z(1 - alpha / 2) + z(power)) * math.sqrt(0.5 / n))


def command_line(name: str, opts: ReproduceOptions) -> str:
    """The command that reruns it: the options given, as flags (the rest are defaults)."""
    given = opts.model_dump(include=opts.model_fields_set - {"out", "progress"})
    flags = [
        f"--{key.replace('_', '-')} {shlex.quote(str(v))}"
        for key, value in sorted(given.items())
        for v in (value if isinstance(value, list) else [value])
    ]
    return " ".join(["metanim reproduce", name, *flags])


def served(opts: ReproduceOptions, models: Sequence[str]) -> str:
    """A `models=` list (one model per agent), each on `--base-url` unless it names its
    own server: the per-agent models of a debate go where the run's model goes."""
    if opts.base_url is None:
        return "|".join(models)
    return "|".join(m if "@" in m else f"{m}@{opts.base_url}" for m in models)


def log_records(log: Path) -> list[Any]:
    """The last record of each id, typed (decisions joined from the transcripts)."""
    return list(latest(iter_log(log)).values())


def log_rows(log: Path) -> list[dict[str, Any]]:
    """`log_records` in their JSON form: the artifacts read records as JSON."""
    return [r.model_dump(mode="json") for r in log_records(log)]


def interval(est: float, low: float, high: float) -> str:
    return f"{_pct(est)} [{_pct(low)}, {_pct(high)}]"


def signed_pp(x: float) -> str:
    return f"{100 * x:+.1f}"


# --------------------------------------------------------------- paired comparisons
def episode_outcomes(log: Path) -> dict[tuple[Any, ...], bool]:
    """Finished episodes keyed by what pairs them across runs (setting, index, seed, seat,
    start); True for a win."""
    return {
        (r.get("setting"), r.get("index"), r.get("seed"), r.get("seat"),
         json.dumps(r.get("start_state"))): r["status"] == "win"
        for r in log_rows(log)
        if r.get("status") in ("win", "loss")
    }  # fmt: skip


def item_verdicts(log: Path) -> dict[str, list[bool]]:
    out: dict[str, list[bool]] = defaultdict(list)
    for r in log_rows(log):
        if r.get("correct") is not None:
            out[f"{r.get('game')}:{r['record_id']}"].append(bool(r["correct"]))
    return dict(out)


@dataclass
class Paired:
    """Two runs on the same units: the difference, Tango's interval and McNemar's p."""

    a: str
    b: str
    n: int
    only_a: int
    only_b: int
    diff: float
    low: float
    high: float
    p_value: float

    def row(self) -> str:
        return (
            f"| {md(self.a)} | {md(self.b)} | {self.n} | {self.only_a} | {self.only_b} "
            f"| {signed_pp(self.diff)} [{signed_pp(self.low)}, {signed_pp(self.high)}] "
            f"| {self.p_value:.3g} |"
        )


PAIRED_HEAD = [
    "| A | B | pairs | only A | only B | A − B (pp) [95% Tango] | McNemar p |",
    "|---|---|---|---|---|---|---|",
]


def paired_episodes(a: str, log_a: Path, b: str, log_b: Path) -> Paired:
    """A vs B over the episodes both runs finished (same seed, seat and start)."""
    wa, wb = episode_outcomes(log_a), episode_outcomes(log_b)
    keys = [k for k in wa if k in wb]
    x, y = [wa[k] for k in keys], [wb[k] for k in keys]
    test = mcnemar_exact(x, y)
    ci = tango_interval(test.only_a, test.only_b, len(keys))
    return Paired(a, b, len(keys), test.only_a, test.only_b, ci.estimate, ci.low, ci.high,
                  test.p_value)  # fmt: skip


def paired_items(a: str, log_a: Path, b: str, log_b: Path) -> Paired:
    """A vs B over the items both runs graded: McNemar on one verdict per item, Tango's
    interval of the accuracy difference (per-item shares of the repeats)."""
    va, vb = item_verdicts(log_a), item_verdicts(log_b)
    keys = [k for k in va if k in vb]
    test = mcnemar_exact([majority_verdict(va[k]) for k in keys],
                         [majority_verdict(vb[k]) for k in keys])  # fmt: skip
    ci = paired_item_difference(va, vb)
    return Paired(a, b, len(keys), test.only_a, test.only_b, ci.estimate, ci.low, ci.high,
                  test.p_value)  # fmt: skip


def paired_section(cast: Cast, what: str, pairs: list[Paired]) -> list[str]:
    return [
        "",
        cast.caption(f"{what}: paired on the same episodes (same seed, seat and start)"),
        "",
        *PAIRED_HEAD,
        *(p.row() for p in pairs),
    ]


# ------------------------------------------------------------------------ win tables
def _win_cells(records: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in records:
        if r["status"] in ("win", "loss"):
            # By canonical key: a log keyed by its config as spelled counts alike.
            key = canonical_key(r["setting"])
            out[key][0] += r["status"] == "win"
            out[key][1] += 1
    return {k: (w, n) for k, (w, n) in out.items()}


def win_table(
    runs: list[tuple[str, Path]], columns: dict[str, str], *, average: bool
) -> tuple[list[str], dict[str, dict[str, tuple[float, float, float]]]]:
    """Rows: methods; columns: settings; cells: win rate [95% Wilson] (n)."""
    keys = {label: parse_setting(text)[0] for label, text in columns.items()}
    head = ["method", *columns, *(["Average"] if average else [])]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    bars: dict[str, dict[str, tuple[float, float, float]]] = {}
    for label, log in runs:
        cells = _win_cells(log_rows(log))
        row, wins, total = [], 0, 0
        bars[label] = {}
        for col, key in keys.items():
            w, n = cells.get(key, (0, 0))
            ci = wilson_interval(w, n)
            wins, total = wins + w, total + n
            row.append(f"{interval(w / n if n else math.nan, ci.low, ci.high)} (n={n})")
            bars[label][col] = (ci.low, ci.estimate, ci.high)
        if average:
            # Equal episodes per setting: the pooled rate is the average of the settings.
            ci = wilson_interval(wins, total)
            row.append(f"{interval(ci.estimate, ci.low, ci.high)} (n={total})")
            bars[label]["Average"] = (ci.low, ci.estimate, ci.high)
        lines.append(f"| {md(label)} | " + " | ".join(row) + " |")
    return lines, bars


def bars_plot(
    bars: Any, path: Path, title: str, ylabel: str, games: Sequence[str] | None = None
) -> list[Path]:
    try:
        return [grouped_bars(bars, path, title=title, ylabel=ylabel, games=games)]
    except ImportError:  # matplotlib is the optional `plots` extra
        return []


def line_plot(
    series: dict[str, list[tuple[float, float, float, float]]],
    path: Path, *, title: str, xlabel: str, ylabel: str, percent: bool = True,
) -> list[Path]:  # fmt: skip
    """One line per series through (x, low, estimate, high) points, with its band."""
    try:
        plt = need_pyplot()
    except ImportError:  # matplotlib is the optional `plots` extra
        return []
    scale = 100 if percent else 1
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for label, points in series.items():
        xs = [p[0] for p in points]
        ax.plot(xs, [scale * p[2] for p in points], marker="o", label=label)
        ax.fill_between(
            xs, [scale * p[1] for p in points], [scale * p[3] for p in points], alpha=0.2
        )
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if percent:
        ax.set_ylim(0, 105)
    ax.set_title(title, fontsize=9)
    if len(series) > 1:
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return [path]


# ------------------------------------------------------------------ making them
def _names(name: str, opts: ReproduceOptions) -> list[str]:
    if name != "all" and name not in ARTIFACTS:
        raise ValueError(f"unknown artifact {name!r}; choose one of {', '.join(ARTIFACTS)} or all")
    if name != "all":  # "all" passes each option to the artifacts that read it
        ARTIFACTS[name].check_options(opts)
    return list(ARTIFACTS) if name == "all" else [name]


def plan(name: str, opts: ReproduceOptions) -> list[str]:
    """What `reproduce(name, opts)` would run, a line per artifact; refuses what it would."""
    lines = []
    for each in _names(name, opts):
        artifact = ARTIFACTS[each]
        sizes = [
            f"{key}={getattr(opts, key) if getattr(opts, key) is not None else 'all'}"
            for key in SIZES
            if key in artifact.options
        ]
        cast = artifact.cast(opts)
        who = "its simulated agents" if cast.hypothesis else cast.names().replace("`", "")
        runs = f"; runs {', '.join(artifact.runs)}" if artifact.runs else ""
        lines.append(f"{each}: {', '.join([*sizes, who])}{runs}; files into {opts.out}/")
    return lines


def reproduce(
    name: str, opts: ReproduceOptions, announce: Callable[[str], None] | None = None
) -> list[Path]:
    """Run artifact `name` (or "all", one after another); returns the files written.

    `announce` is told each artifact as it starts and each file as it is written, so a
    long "all" shows where it is and an interrupted one has said what it finished.
    """
    names = _names(name, opts)
    paths: list[Path] = []
    flagged: list[str] = []
    for number, each in enumerate(names, start=1):
        artifact = ARTIFACTS[each]
        if announce is not None:
            announce(f"[{number}/{len(names)}] {each}: {artifact.paper}, {artifact.what}")
        run = Run(artifact, opts, artifact.cast(opts))
        try:
            written = artifact.make(run)
        except RunFailed:
            raise
        except InfrastructureError as exc:  # a refusal that stopped a run at once
            raise RunFailed(f"{each}: {exc}", kind="run_failed") from None
        if run.hints:
            _flag(written, run.hints)
            flagged += [f"{each}: {hint}" for hint in run.hints]
        if announce is not None:
            for path in written:
                announce(f"wrote {path}")
        paths += written
    if flagged:
        raise Flagged(
            "the tables rest on decisions that mostly gave no answer (flagged under each "
            "table): " + "; ".join(flagged),
            kind="flagged",
        )
    return paths


def _flag(paths: list[Path], hints: list[str]) -> None:
    """Say under each table written that its cells are mostly forfeits or truncations."""
    note = "\n".join(
        [
            "",
            "**Flagged:** most decisions of these runs gave no answer of their own "
            "(forfeits: cut at the completion cap, or no answer named); the cells do not "
            "measure the method. What helps:",
            "",
            *(f"- {hint}" for hint in hints),
            "",
        ]
    )
    for path in paths:
        if path.suffix == ".md":
            with path.open("a", encoding="utf-8") as f:
                f.write(note)
