"""`metanim reproduce ARTIFACT`: every seed-paper table and figure from one command.

Each artifact runs its protocol through the arena (resumable JSONL logs, one run
identity per configuration), then writes `<out>/<artifact>.md` (a Markdown table) and,
where the paper has a figure, `<out>/<artifact>.png`.

With no `--model`, an artifact runs its own simulated agents (`AGENTS`): each is a
documented hypothesis about how agents behave, chosen so that the paper's mechanism *can*
appear, never a fit to the paper's numbers. The configuration is printed in words under
every output, and every table caption and plot title says "simulated" and names the
models. `--model`, `--base-url` (and the per-role flags) run the same artifact, unchanged,
on any model. docs/analysis.md lists every artifact with the paper's number beside the
simulated default's.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import shlex
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from metanim.analysis.debate import (
    DebateTrace,
    EntrenchmentRow,
    conformity_by_peers,
    conformity_obstinacy,
    entrenchment_curve,
    entrenchment_fit_rows,
    entrenchment_row,
    identity_bias_ci,
)
from metanim.analysis.plots import entrenchment_plot, grouped_bars, need_pyplot
from metanim.analysis.report import (
    accuracy_table,
    cross_sections,
    render_report,
    trace_from_decision,
)
from metanim.arena import (
    ChallengingConfig,
    EvaluationConfig,
    TournamentConfig,
    parse_setting,
    run_challenging,
    run_evaluation,
    run_tournament,
)
from metanim.datasets import DEFAULT_SPECS, build, write_jsonl
from metanim.llm import (
    ApiSetting,
    InfrastructureError,
    ModelSpec,
    StructuredOutputSetting,
    check_base_url,
)
from metanim.llm.sim import check_simulated
from metanim.records import iter_log, latest, md
from metanim.records import pct as _pct
from metanim.stats import (
    MAJORITY_RULE,
    item_accuracy,
    majority_verdict,
    mcnemar_exact,
    paired_item_difference,
    tango_interval,
    wilson_interval,
)
from metanim.util import Folder, PositiveInt

#: The four settings of seed 000's Figure 7 (left) and Table 12: NIM and Fibonacci Nim,
#: normal and misère. Every one starts at a random N-position (`start="random_n"`), so
#: the presets and the JSON settings start alike.
FOUR_SETTINGS = {
    "NIM-N": 'nim:{"heaps":[31],"max_take":3}',
    "NIM-M": 'nim:{"heaps":[31],"max_take":3,"misere":true}',
    "Fib-N": 'fibonacci:{"n":20}',
    "Fib-M": 'fibonacci:{"n":20,"misere":true}',
}
#: Seed 000's sampling temperature: every answer call of a compared method samples at it.
SAMPLING_T = 0.7


# ------------------------------------------------------------------ the simulated agents
@dataclass(frozen=True)
class Hypothesis:
    """One artifact's default simulated agents: a model per role and what they assume."""

    roles: dict[str, str]
    words: tuple[str, ...]


#: Seed 000's agents (Tables 1 and 12, Figures 3, 6 and 7): greedy, swayed by one word
#: that their own elicited texts sometimes carry, and reading a debate by consensus.
SEED000_MODEL = (
    "sim-biased:heuristic=max_take,p=0.7,cue=Grundy,cue_p=0,insight=0.45,read=consensus,spread=1"
)
#: Seed 000's opponent is GPT-4o, the strongest model it tried.
SEED000_OPPONENT = "sim-biased:heuristic=max_take,p=0.1"
SEED000_WORDS = (
    "at T = 0.7 an agent takes the most it may (the greedy heuristic) 70% of the time and "
    "the winning move otherwise; lower temperatures sharpen that preference (T = 0 is always "
    "greedy), higher ones flatten it",
    "a prompt that mentions 'Grundy' makes it play the winning move; a text it writes "
    "itself (an elicited strategy, a rewritten prompt) mentions 'Grundy' with probability "
    "0.45 at T = 0.7 (0.47 at T = 1, 0.43 at T = 0.5, 0.36 at T = 0.25, 0.20 at T = 0.1, "
    "never at T = 0), and keeps it when its request mentions it; nothing else in a "
    "method's prompt changes its play",
    "in a debate it keeps its answer when a peer (drawn at random) gives the same one, and "
    "otherwise answers afresh from its own preferences (the mechanism of seed 000's Eq. 1); "
    "an argument that mentions 'Grundy' cues the agent that reads it (arguments, not "
    "votes, persuade)",
)
#: Seed 004's agents: a crowd sharing one misconception, a truth-holder that models it.
SEED004_CROWD = "sim-biased:heuristic=max_take,p=0.9,otherwise=optimal,predict=self"
SEED004_TRUTH = "sim-optimal:predict=crowd,heuristic=max_take"

AGENTS: dict[str, Hypothesis] = {
    "seed000": Hypothesis(
        {"agent": SEED000_MODEL, "opponent": SEED000_OPPONENT},
        (
            *SEED000_WORDS,
            "the ReAct opponent (seed 000: GPT-4o) plays the winning move 90% of the time, "
            "the greedy move otherwise",
        ),
    ),
    "identity-bias": Hypothesis(
        {"agent": "sim-conform:self=1,peer=2,base=random"},
        (
            "an agent answers at random at first; when it sees its own previous answer and "
            "a peer's, it keeps its own with weight 1 and takes the peer's with weight 2 "
            "(sycophancy: conformity 2/3 where identity shows)",
            "anonymized, it cannot tell its own answer from the peer's, so both weigh the "
            "same (conformity 1/2): the expected IBC is (2·2/3 − 1) − 0 = +0.33",
        ),
    ),
    "table5": Hypothesis(
        {
            "model_1": "sim-conform:self=1,peer=2,base=random",
            "model_2": "sim-biased:heuristic=max_take,p=0.6,read=consensus",
        },
        (
            "model_1 solves at random, then in its revision weighs the other model's answer "
            "twice its own (at T = 0 it adopts it: persuasion, for better or worse)",
            "model_2 takes the most it may 60% of the time at T = 0.7, so at T = 0 always: "
            "it is right exactly where the greedy move wins, and keeps its answer in revision",
            "so debate turns model_1's chance answers into model_2's: positive corrections "
            "where model_2 is right, negative persuasion where model_1 was right by chance",
        ),
    ),
    "seed004": Hypothesis(
        {"crowd": SEED004_CROWD, "truth_holder": SEED004_TRUTH},
        (
            "four crowd agents share one misconception: at T = 0.1 they take the most they "
            "may (90% at T = 0.7), commit 0.8 of their belief to it and predict that every "
            "peer believes the same (false consensus)",
            "one truth-holder plays the winning move and predicts the crowd's belief (it "
            "anticipates their error: seed 004's second-order cognition)",
            "no agent reads the debate's arguments: only AceMAD's weights can move the answer",
        ),
    ),
}


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
    extra_body: dict[str, Any] = Field(
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
_ITEMS = frozenset({"repeats", "items"})  # an evaluation over dataset items
_DATA = _ITEMS | {"datasets"}  # ... on datasets the caller may give
_GAMES = frozenset({"episodes", "opponent_model"})  # a tournament
_SEED004 = frozenset({"truth_holder_model", "agent_models"})


@dataclass
class Artifact:
    name: str
    paper: str
    what: str
    run: Callable[[ReproduceOptions], list[Path]]
    agents: str  # key of its default simulated agents in AGENTS
    #: the options it reads besides COMMON_OPTIONS; another one given is refused, not ignored
    options: frozenset[str] = frozenset()

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


# ------------------------------------------------------------------------ who plays
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
        lines += [
            "Simulated agents (the artifact's default, a hypothesis about how agents behave "
            "under which the paper's mechanism can appear; not a fit to the paper's numbers; "
            "`--model` and `--base-url` run the same protocol on any model):",
            "",
            *(f"- {w};" for w in self.hypothesis.words[:-1]),
            f"- {self.hypothesis.words[-1]}.",
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


def _cast(opts: ReproduceOptions, key: str, only: Sequence[str] = ()) -> Cast:
    """The models of artifact family `key` (its roles in `only`, if given): the flags
    given, else its simulated default."""
    default = AGENTS[key]
    if only:
        default = Hypothesis(
            {r: m for r, m in default.roles.items() if r in only},
            tuple(w for w in default.words if "opponent" not in w or "opponent" in only),
        )
    given = {
        "agent": opts.model,
        "opponent": opts.opponent_model,
        "model_1": opts.model,
        "model_2": opts.model_b,
        "crowd": opts.model,
        "truth_holder": opts.truth_holder_model or opts.model,
    }
    if key == "identity-bias":
        given["agent"] = opts.bias_model or opts.model
    roles = {role: given.get(role) or model for role, model in default.roles.items()}
    if key == "seed000" and opts.model and not opts.opponent_model:
        roles["opponent"] = opts.model  # a real model plays a real opponent
    chosen = any(given.get(role) for role in default.roles)
    if key == "seed004" and opts.agent_models:
        models = [m.strip() for m in opts.agent_models.split("|") if m.strip()]
        roles = {f"agent_{i + 1}": m for i, m in enumerate(models)}
        chosen = True
    return Cast(roles, None if chosen else default)


# ------------------------------------------------------------------------ running
def _folder(opts: ReproduceOptions, artifact: str) -> Path:
    path = Path(opts.out) / artifact
    path.mkdir(parents=True, exist_ok=True)
    return path


def _dataset(opts: ReproduceOptions, game: str) -> Path:
    """The default build's normal-play file of `game` (seed 000 Table 5 sizes), cached."""
    path = Path(opts.out) / "data" / f"{game}-normal.jsonl"
    if not path.exists():
        spec = next(s for s in DEFAULT_SPECS if s.game == game and s.variant == "normal")
        write_jsonl(build(spec, seed=opts.seed), path)
    return path


def _data(opts: ReproduceOptions, *games: str) -> list[Path]:
    """The given dataset files, else the default build's files of `games`."""
    if opts.datasets:
        return [Path(p) for p in opts.datasets]
    return [_dataset(opts, g) for g in games]


def _model_options(opts: ReproduceOptions) -> dict[str, Any]:
    """The model options given (the run's own defaults stand for those not given)."""
    return {k: getattr(opts, k) for k in MODEL_OPTIONS if k in opts.model_fields_set}


class RunFailed(InfrastructureError):
    """A run of an artifact did not finish: the server's own error, and exit code 3."""


class Flagged(InfrastructureError):
    """An artifact's table rests on decisions that mostly gave no answer (exit code 3)."""


#: The remedies of the runs of the artifact being written (`_checked`), flagged in its
#: table: a table of forfeits or truncations is not a measurement of the method.
_HINTS: list[str] = []


def _checked(result: Any, name: str) -> Path:
    """A finished run's log; a run that did not finish stops the artifact with the first
    error its server gave (`RunFailed`); one whose decisions mostly gave no answer is
    noted for the flag under the table."""
    if not result.complete:
        if not result.failures:  # a stop rule fired after every item had started
            raise RunFailed(f"run {name!r}: {result.stopped}", kind="run_failed")
        cause, (count, first) = next(iter(result.failures.items()))
        raise RunFailed(
            f"run {name!r}: {count} of {result.planned} did not finish ({cause}): {first}",
            kind="run_failed",
        )
    if result.hint:
        _HINTS.append(f"{name}: {result.hint}")
    return Path(result.log_path)


def _evaluate(
    opts: ReproduceOptions, folder: Path, name: str, method: str, datasets: list[Path], *,
    params: dict[str, Any] | None = None, model: str, repeats: int | None = None,
) -> Path:  # fmt: skip
    config = EvaluationConfig(
        name=name, dataset=[str(d) for d in datasets], method=method, params=params or {},
        model=model, base_url=opts.base_url, repeats=repeats or opts.repeats,
        limit=opts.items, seed=opts.seed, results_dir=str(folder), progress=opts.progress,
        **_model_options(opts),
    )  # fmt: skip
    return _checked(run_evaluation(config), name)


def _tournament(
    opts: ReproduceOptions, folder: Path, name: str, method: str, games: list[str], *,
    cast: Cast, params: dict[str, Any] | None = None,
) -> Path:  # fmt: skip
    config = TournamentConfig(
        name=name, games=games, method=method, params=params or {}, model=cast["agent"],
        base_url=opts.base_url, opponent="react", opponent_model=cast["opponent"],
        opponent_base_url=opts.base_url, opponent_params={"temperature": SAMPLING_T},
        episodes=opts.episodes, start="random_n", seed=opts.seed, results_dir=str(folder),
        progress=opts.progress, **_model_options(opts),
    )  # fmt: skip
    return _checked(run_tournament(config), name)


def _records(log: Path) -> list[Any]:
    """The last record of each id, typed (decisions joined from the transcripts)."""
    return list(latest(iter_log(log)).values())


def _rows(log: Path) -> list[dict[str, Any]]:
    """`_records` in their JSON form: the artifacts below read records as JSON."""
    return [r.model_dump(mode="json") for r in _records(log)]


def _write(folder: Path, name: str, lines: list[str]) -> Path:
    path = folder.parent / f"{name}.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _header(artifact: Artifact, opts: ReproduceOptions, cast: Cast) -> list[str]:
    kind = "simulated agents" if cast.simulated else "models"
    return [
        f"# {artifact.paper}: {artifact.what} ({kind})",
        "",
        f"Command: `{_command(artifact.name, opts)}`; seed {opts.seed}. "
        + ("Simulated agents" if cast.simulated else "Models")
        + f": {cast.names()} (configuration at the end).",
        "",
    ]


def _command(name: str, opts: ReproduceOptions) -> str:
    """The command that reruns it: the options given, as flags (the rest are defaults)."""
    given = opts.model_dump(include=opts.model_fields_set - {"out", "progress"})
    flags = [
        f"--{key.replace('_', '-')} {shlex.quote(str(v))}"
        for key, value in sorted(given.items())
        for v in (value if isinstance(value, list) else [value])
    ]
    return " ".join(["metanim reproduce", name, *flags])


def _interval(est: float, low: float, high: float) -> str:
    return f"{_pct(est)} [{_pct(low)}, {_pct(high)}]"


def _signed_pp(x: float) -> str:
    return f"{100 * x:+.1f}"


# --------------------------------------------------------------- paired comparisons
def _episode_outcomes(log: Path) -> dict[tuple[Any, ...], bool]:
    """Finished episodes keyed by what pairs them across runs (setting, index, seed, seat,
    start); True for a win."""
    return {
        (r.get("setting"), r.get("index"), r.get("seed"), r.get("seat"),
         json.dumps(r.get("start_state"))): r["status"] == "win"
        for r in _rows(log)
        if r.get("status") in ("win", "loss")
    }  # fmt: skip


def _item_verdicts(log: Path) -> dict[str, list[bool]]:
    out: dict[str, list[bool]] = defaultdict(list)
    for r in _rows(log):
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
            f"| {_signed_pp(self.diff)} [{_signed_pp(self.low)}, {_signed_pp(self.high)}] "
            f"| {self.p_value:.3g} |"
        )


PAIRED_HEAD = [
    "| A | B | pairs | only A | only B | A − B (pp) [95% Tango] | McNemar p |",
    "|---|---|---|---|---|---|---|",
]


def paired_episodes(a: str, log_a: Path, b: str, log_b: Path) -> Paired:
    """A vs B over the episodes both runs finished (same seed, seat and start)."""
    wa, wb = _episode_outcomes(log_a), _episode_outcomes(log_b)
    keys = [k for k in wa if k in wb]
    x, y = [wa[k] for k in keys], [wb[k] for k in keys]
    test = mcnemar_exact(x, y)
    ci = tango_interval(test.only_a, test.only_b, len(keys))
    return Paired(a, b, len(keys), test.only_a, test.only_b, ci.estimate, ci.low, ci.high,
                  test.p_value)  # fmt: skip


def paired_items(a: str, log_a: Path, b: str, log_b: Path) -> Paired:
    """A vs B over the items both runs graded: McNemar on one verdict per item, Tango's
    interval of the accuracy difference (per-item shares of the repeats)."""
    va, vb = _item_verdicts(log_a), _item_verdicts(log_b)
    keys = [k for k in va if k in vb]
    test = mcnemar_exact([majority_verdict(va[k]) for k in keys],
                         [majority_verdict(vb[k]) for k in keys])  # fmt: skip
    ci = paired_item_difference(va, vb)
    return Paired(a, b, len(keys), test.only_a, test.only_b, ci.estimate, ci.low, ci.high,
                  test.p_value)  # fmt: skip


# ------------------------------------------------------------------------ win tables
def _win_cells(rows: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        if r["status"] in ("win", "loss"):
            out[r["setting"]][0] += r["status"] == "win"
            out[r["setting"]][1] += 1
    return {k: (w, n) for k, (w, n) in out.items()}


def _win_table(
    runs: list[tuple[str, Path]], columns: dict[str, str], *, average: bool
) -> tuple[list[str], dict[str, dict[str, tuple[float, float, float]]]]:
    """Rows: methods; columns: settings; cells: win rate [95% Wilson] (n)."""
    keys = {label: parse_setting(text)[0] for label, text in columns.items()}
    head = ["method", *columns, *(["Average"] if average else [])]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    bars: dict[str, dict[str, tuple[float, float, float]]] = {}
    for label, log in runs:
        cells = _win_cells(_rows(log))
        row, wins, total = [], 0, 0
        bars[label] = {}
        for col, key in keys.items():
            w, n = cells.get(key, (0, 0))
            ci = wilson_interval(w, n)
            wins, total = wins + w, total + n
            row.append(f"{_interval(w / n if n else math.nan, ci.low, ci.high)} (n={n})")
            bars[label][col] = (ci.low, ci.estimate, ci.high)
        if average:
            # Equal episodes per setting: the pooled rate is the average of the settings.
            ci = wilson_interval(wins, total)
            row.append(f"{_interval(ci.estimate, ci.low, ci.high)} (n={total})")
            bars[label]["Average"] = (ci.low, ci.estimate, ci.high)
        lines.append(f"| {md(label)} | " + " | ".join(row) + " |")
    return lines, bars


def _bars(
    bars: Any, path: Path, title: str, ylabel: str, games: Sequence[str] | None = None
) -> list[Path]:
    try:
        return [grouped_bars(bars, path, title=title, ylabel=ylabel, games=games)]
    except ImportError:  # matplotlib is the optional `plots` extra
        return []


def _line_plot(
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


# ---------------------------------------------------------------- seed 000, Table 1
#: Seed 000 Table 1's games, in its column order.
ACCURACY_GAMES = ("nim", "fibonacci", "chomp", "kayles")
TABLE1_METHODS = {"ReAct": "react", "+ CoT": "cot", "DReaMAD(−)": "dreamad_minus"}


def table1(opts: ReproduceOptions) -> list[Path]:
    """ReAct, + CoT and DReaMAD(−) on the four critical-state datasets, every answer
    sampled at T = 0.7, R passes: mean ± std, CI over items, and DReaMAD(−) vs ReAct paired."""
    folder = _folder(opts, "table1")
    cast = _cast(opts, "seed000", only=("agent",))
    data = [_dataset(opts, g) for g in ACCURACY_GAMES]
    logs = {}
    for label, method in TABLE1_METHODS.items():
        params: dict[str, Any] = {"temperature": SAMPLING_T}
        if method == "dreamad_minus":
            params |= {"elicit_temperature": 0.1, "rewrite_temperature": SAMPLING_T}
        logs[label] = _evaluate(
            opts, folder, label.lower().strip("+ ").replace("(−)", "-minus"), method, data,
            params=params, model=cast["agent"],
        )  # fmt: skip
    report = render_report(folder, write=False, plots=False)
    # The paper's rows, in its order, under its names.
    rows = [
        r.model_copy(update={"method": label})
        for label, method in TABLE1_METHODS.items()
        for r in report.accuracy
        if r.decisions and r.method.startswith(f"{method}[")
    ]
    temps = [
        f"every answer call at T = {SAMPLING_T} (seed 000's sampling temperature; the "
        "paper's ReAct rows have a nonzero std, so they were sampled)",
        "DReaMAD(−)'s elicitation at T = 0.1 and its rewrite at T = 0.7 (seed 000 §4)",
    ]
    lines = _header(ARTIFACTS["table1"], opts, cast)
    lines += [
        cast.caption(
            f"Decision accuracy (choosing the unique optimal move), R = {opts.repeats} "
            f"passes; answers at T = {SAMPLING_T}, DReaMAD(−)'s elicitation at T = 0.1 and "
            "rewrite at T = 0.7"
        ),
        "",
        "Cell: mean ± std over the R passes (the paper's numbers), 95% CI over items, "
        "items × R. Columns in the paper's order; Average: mean of the games.",
        "",
        *accuracy_table(rows, games=list(ACCURACY_GAMES)),
        "",
        cast.caption(
            "DReaMAD(−) vs ReAct at equal temperature, paired on items (all games together)"
        ),
        "",
        *PAIRED_HEAD,
        paired_items("DReaMAD(−)", logs["DReaMAD(−)"], "ReAct", logs["ReAct"]).row(),
        paired_items("DReaMAD(−)", logs["DReaMAD(−)"], "+ CoT", logs["+ CoT"]).row(),
        "",
        f"McNemar: {MAJORITY_RULE}. A − B: accuracy difference of per-item means.",
        *cast.footer(temps),
    ]
    out = [_write(folder, "table1", lines)]
    bars: dict[str, dict[str, tuple[float, float, float]]] = defaultdict(dict)
    for r in rows:
        bars[r.method][r.game] = (r.low, r.mean, r.high)
    out += _bars(
        bars, folder.parent / "table1.png",
        cast.title(f"Decision accuracy, T = {SAMPLING_T} (95% CI over items)"), "accuracy (%)",
        games=list(ACCURACY_GAMES),
    )  # fmt: skip
    return out


# ------------------------------------------------------- seed 000, Figure 3 + Table 10
def _eq1_range(hits: int, n: int, rounds: int) -> tuple[float, float]:
    """Eq. 1 after `rounds` steps at the ends of p⁽⁰⁾'s 95% Wilson interval (Eq. 1
    increases with p⁽⁰⁾, so this is the interval of the prediction)."""
    ci = wilson_interval(hits, n)
    return entrenchment_curve(ci.low, rounds)[-1], entrenchment_curve(ci.high, rounds)[-1]


def entrenchment(opts: ReproduceOptions) -> list[Path]:
    """Seed 000 §3 / App. B.1: p⁽⁰⁾ from N samples at T = 0.7, then N two-agent debates
    per state at T = 0.7, 3 full rounds (no consensus stop); Eq. 1 over dominant actions."""
    folder = _folder(opts, "figure3")
    cast = _cast(opts, "seed000", only=("agent",))
    data = _data(opts, "fibonacci")
    n = opts.samples
    p0_log = _evaluate(
        opts, folder, "p0", "react", data, params={"temperature": SAMPLING_T}, repeats=n,
        model=cast["agent"],
    )  # fmt: skip
    mad_log = _evaluate(
        opts, folder, "mad", "mad", data, repeats=n, model=cast["agent"],
        params={"agents": 2, "rounds": 3, "temperature": SAMPLING_T, "consensus_stop": False},
    )  # fmt: skip
    samples: dict[str, list[str | None]] = defaultdict(list)
    optimal: dict[str, str] = {}
    states: dict[str, Any] = {}
    for r in _rows(p0_log):
        samples[r["record_id"]].append(r["answer"] if r["status"] == "ok" else None)
        optimal[r["record_id"]] = r["optimal_move"]
        states[r["record_id"]] = ((r.get("decision") or {}).get("task") or {}).get("state")
    traces: dict[str, list[DebateTrace]] = defaultdict(list)
    for record in _records(mad_log):
        t = trace_from_decision(record)
        if t is not None:
            traces[record.record_id].append(t)
    rows: list[EntrenchmentRow] = []
    for rid in sorted(samples):
        row = entrenchment_row(rid, samples[rid], traces.get(rid, []), optimal[rid])
        if row is not None:
            rows.append(row)
    lines = _header(ARTIFACTS["figure3"], opts, cast)
    lines += [
        f"Protocol: {n} samples at T = {SAMPLING_T} give p⁽⁰⁾; {n} debates per state, 2 "
        f"agents, T = {SAMPLING_T}, 3 rounds with the consensus stop off give p⁽³⁾ (every "
        "agent's final answer). Rows: states whose dominant action is strongly consistent "
        "(p⁽⁰⁾ > 0.5); belief = whether that action is the optimal move. Eq. 1: the "
        "prediction after 3 steps from the measured p⁽⁰⁾; its 95% range: Eq. 1 at the ends "
        "of p⁽⁰⁾'s Wilson interval. p⁽³⁾'s 95% CI: Wilson over the debates (a debate's two "
        "answers are not independent). Consistent: the two intervals overlap. Residual = "
        "observed − predicted.",
        "",
        cast.caption("Belief entrenchment per state (seed 000 Table 10's layout)"),
        "",
        "| state | action | belief | p⁽⁰⁾ [95% CI] | p⁽³⁾ [95% CI] | Eq. 1 [95% range] "
        "| consistent | residual |",
        "|---|---|---|---|---|---|---|---|",
    ]
    within = 0
    for r in sorted(rows, key=lambda r: (r.belief, r.item_id)):
        state = json.dumps(states.get(r.item_id), separators=(",", ":"))
        hits = round(r.p0 * n)
        p0ci = wilson_interval(hits, n)
        debates = len(traces.get(r.item_id, [])) or 1
        ptci = wilson_interval(round(r.pt * debates), debates)
        low, high = _eq1_range(hits, n, 3)
        consistent = ptci.low <= high and low <= ptci.high
        within += consistent
        lines.append(
            f"| {md(state)} | {md(r.action)} | {r.belief} "
            f"| {r.p0:.3f} [{p0ci.low:.3f}, {p0ci.high:.3f}] "
            f"| {r.pt:.3f} [{ptci.low:.3f}, {ptci.high:.3f}] "
            f"| {r.predicted:.3f} [{low:.3f}, {high:.3f}] | {'yes' if consistent else 'no'} "
            f"| {r.residual:+.3f} |"
        )
    if rows:
        fit = entrenchment_fit_rows(rows)
        mean_p0 = sum(r.p0 for r in rows) / len(rows)
        mean_pt = sum(r.pt for r in rows) / len(rows)
        lines += [
            "",
            f"Over {len(rows)} strongly consistent actions: mean p⁽⁰⁾ {mean_p0:.3f}, mean "
            f"p⁽³⁾ {mean_pt:.3f}; mean residual {100 * fit.mean_residual:+.1f}% (seed 000: "
            f"−2.5%); p⁽³⁾ > p⁽⁰⁾ in {fit.strong_rose.hits}/{fit.strong_rose.n}; p⁽³⁾ "
            f"consistent with Eq. 1 in {within}/{len(rows)}. Two debaters that agreed stay "
            "together, so p⁽³⁾ falls short of Eq. 1 (which treats every round's pairs as "
            "independent) by a few points: the paper's negative residual.",
        ]
    else:
        lines += ["", "No state had a strongly consistent action (p⁽⁰⁾ > 0.5)."]
    lines += cast.footer(
        [f"ReAct samples and both debaters at T = {SAMPLING_T} (seed 000 App. B.1)"]
    )
    out = [_write(folder, "figure3", lines)]
    with contextlib.suppress(ImportError):  # matplotlib is the optional `plots` extra
        out.append(
            entrenchment_plot(
                [(r.p0, r.pt) for r in rows], folder.parent / "figure3.png", rounds=3,
                title=cast.title("Belief entrenchment (dominant actions)"),
            )
        )  # fmt: skip
    return out


# ---------------------------------------------------------------- seed 000, Figure 6
FIGURE6_METHODS: dict[str, tuple[str, dict[str, Any]]] = {
    "Standard": ("standard", {"temperature": SAMPLING_T}),
    "ReAct": ("react", {"temperature": SAMPLING_T}),
    "Self-Refine": ("self_refine", {"temperature": SAMPLING_T}),
    "Self-Consistency": ("sc", {"temperature": SAMPLING_T}),
    "MAD": ("mad", {"temperature": SAMPLING_T}),
    "MPD": ("mpd", {"temperature": SAMPLING_T}),
    "DReaMAD": ("dreamad", {"temperature": SAMPLING_T}),
}
FIGURE6_SETTINGS = {
    "NIM": "nim-31-k3",
    "Fibonacci": "fibonacci-20",
    "Kayles": "kayles-20",
    "Chomp": "chomp-5x5",
    "Corner Queen": "corner-queen",
}
TOURNAMENT_TEMPERATURES = (
    f"every method's answers at T = {SAMPLING_T} (seed 000's sampling temperature)",
    "DReaMAD's elicitation at T = 0.1 and rewrites at T = 0.7; MPD's judge at T = 0 (Liang et al.)",
    f"the ReAct opponent at T = {SAMPLING_T}",
)


def _slug(label: str) -> str:
    for a, b in ((" + dreamad(−)", "-elicit"), ("(+)", "plus-"), (" ", "-"), ("(", ""), (")", "")):
        label = label.lower().replace(a, b)
    return label


def _tournaments(
    opts: ReproduceOptions, folder: Path, cast: Cast,
    methods: dict[str, tuple[str, dict[str, Any]]], settings: dict[str, str],
) -> list[tuple[str, Path]]:  # fmt: skip
    """One tournament per labelled method over `settings`, in order."""
    return [
        (label, _tournament(opts, folder, _slug(label), method, list(settings.values()),
                            cast=cast, params=params))
        for label, (method, params) in methods.items()
    ]  # fmt: skip


def figure6(opts: ReproduceOptions) -> list[Path]:
    """Win rate of every self-correction method against a ReAct opponent, per game."""
    folder = _folder(opts, "figure6")
    cast = _cast(opts, "seed000")
    runs = _tournaments(opts, folder, cast, FIGURE6_METHODS, FIGURE6_SETTINGS)
    table, bars = _win_table(runs, FIGURE6_SETTINGS, average=False)
    lines = _header(ARTIFACTS["figure6"], opts, cast)
    lines += [
        cast.caption(
            f"Win rate over {opts.episodes} episodes per game against ReAct, agent first to "
            "move at a random N-position; 95% Wilson CI"
        ),
        "",
        *table,
        *cast.footer(TOURNAMENT_TEMPERATURES),
    ]
    return [
        _write(folder, "figure6", lines),
        *_bars(
            bars, folder.parent / "figure6.png",
            cast.title("Win rate vs a ReAct opponent (95% Wilson CI)"), "win rate (%)",
            games=list(FIGURE6_SETTINGS),
        ),
    ]  # fmt: skip


def _paired_section(cast: Cast, what: str, pairs: list[Paired]) -> list[str]:
    return [
        "",
        cast.caption(f"{what}: paired on the same episodes (same seed, seat and start)"),
        "",
        *PAIRED_HEAD,
        *(p.row() for p in pairs),
    ]


# -------------------------------------------------------- seed 000, Figure 7 (left)
def figure7_left(opts: ReproduceOptions) -> list[Path]:
    """(+)MAD (one shared elicited prompt) vs DReaMAD (one prompt per agent), averaged over
    NIM and Fibonacci, normal and misère."""
    folder = _folder(opts, "figure7-left")
    cast = _cast(opts, "seed000")
    runs = [
        (label, _tournament(opts, folder, name, method, list(FOUR_SETTINGS.values()),
                            cast=cast, params={"temperature": SAMPLING_T}))
        for label, name, method in (("(+)MAD", "plus-mad", "plus_mad"), ("DReaMAD", "dreamad", "dreamad"))
    ]  # fmt: skip
    table, bars = _win_table(runs, FOUR_SETTINGS, average=True)
    lines = _header(ARTIFACTS["figure7-left"], opts, cast)
    lines += [
        cast.caption(
            f"{opts.episodes} episodes per setting, every setting starting at a random "
            "N-position. Average: wins over all episodes (equal per setting), 95% Wilson CI"
        ),
        "",
        *table,
        *_paired_section(cast, "DReaMAD vs (+)MAD over the four settings",
                         [paired_episodes("DReaMAD", runs[1][1], "(+)MAD", runs[0][1])]),
        *cast.footer(TOURNAMENT_TEMPERATURES),
    ]  # fmt: skip
    avg = {"Average win rate": {label: bars[label]["Average"] for label, _ in runs}}
    return [
        _write(folder, "figure7-left", lines),
        *_bars(avg, folder.parent / "figure7-left.png",
               cast.title("Perspective diversification (4 settings)"), "win rate (%)"),
    ]  # fmt: skip


# ------------------------------------------------------- seed 000, Figure 7 (right)
TEMPERATURES = (0.0, 0.25, 0.5, 0.75, 1.0)


def figure7_right(opts: ReproduceOptions) -> list[Path]:
    """DReaMAD's accuracy on the Fibonacci dataset as the elicitation and rewrite
    temperature goes from 0 to 1 (seed 000: 15 runs each, 95% CI)."""
    folder = _folder(opts, "figure7-right")
    cast = _cast(opts, "seed000", only=("agent",))
    data = _data(opts, "fibonacci")
    points = []
    logs = {}
    for t in TEMPERATURES:
        logs[t] = _evaluate(
            opts, folder, f"dreamad-t{t}", "dreamad", data, model=cast["agent"],
            params={"elicit_temperature": t, "rewrite_temperature": t, "temperature": SAMPLING_T},
        )  # fmt: skip
        verdicts: dict[str, list[bool]] = defaultdict(list)
        for r in _rows(logs[t]):
            if r["correct"] is not None:
                verdicts[r["record_id"]].append(bool(r["correct"]))
        points.append((t, item_accuracy(verdicts)))
    lines = _header(ARTIFACTS["figure7-right"], opts, cast)
    lines += [
        cast.caption(
            f"DReaMAD on Fibonacci, {opts.repeats} runs per temperature (seed 000: 15); "
            "95% CI over items"
        ),
        "",
        "| temperature | accuracy (mean ± std) | 95% CI | items × R |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {t} | {_pct(s.mean)} ± {100 * s.std:.1f} | [{_pct(s.low)}, {_pct(s.high)}] "
        f"| {s.items} × {s.repeats} |"
        for t, s in points
    ]
    lo, hi = TEMPERATURES[0], TEMPERATURES[-1]
    lines += [
        "",
        cast.caption(f"T = {hi} vs T = {lo}, paired on items"),
        "",
        *PAIRED_HEAD,
        paired_items(f"T = {hi}", logs[hi], f"T = {lo}", logs[lo]).row(),
        *cast.footer(
            [
                "the elicitation (both steps) and the rewrites at the temperature of the row",
                f"the debate's answers at T = {SAMPLING_T}",
            ]
        ),
    ]
    series = {"DReaMAD": [(t, s.low, s.mean, s.high) for t, s in points]}
    return [
        _write(folder, "figure7-right", lines),
        *_line_plot(
            series, folder.parent / "figure7-right.png",
            title=cast.title("DReaMAD on Fibonacci (95% CI over items)"),
            xlabel="elicitation / rewrite temperature", ylabel="accuracy (%)",
        ),
    ]  # fmt: skip


# --------------------------------------------------------------- seed 000, Table 12
TABLE12_METHODS: dict[str, tuple[str, dict[str, Any]]] = {
    "Self-Refinement": ("self_refine", {"temperature": SAMPLING_T}),
    "Self-Refinement + DReaMAD(−)": ("self_refine", {"temperature": SAMPLING_T, "elicit": True}),
    "Self-Consistency": ("sc", {"temperature": SAMPLING_T}),
    "Self-Consistency + DReaMAD(−)": ("sc", {"temperature": SAMPLING_T, "elicit": True}),
    "MAD": ("mad", {"temperature": SAMPLING_T}),
    "DReaMAD": ("dreamad", {"temperature": SAMPLING_T}),
}
#: The rows seed 000's Table 12 sets against each other.
TABLE12_PAIRS = (
    ("Self-Refinement + DReaMAD(−)", "Self-Refinement"),
    ("Self-Consistency + DReaMAD(−)", "Self-Consistency"),
    ("DReaMAD", "MAD"),
)


def table12(opts: ReproduceOptions) -> list[Path]:
    """Win rates when DReaMAD's elicitation stage is added to Self-Refine and Self-Consistency."""
    folder = _folder(opts, "table12")
    cast = _cast(opts, "seed000")
    runs = _tournaments(opts, folder, cast, TABLE12_METHODS, FOUR_SETTINGS)
    logs = dict(runs)
    table, _ = _win_table(runs, FOUR_SETTINGS, average=True)
    lines = _header(ARTIFACTS["table12"], opts, cast)
    lines += [
        cast.caption(
            f"{opts.episodes} episodes per setting against ReAct; 95% Wilson CI; the "
            "elicited prompt replaces the game prompt (seed 000 §4.2)"
        ),
        "",
        *table,
        *_paired_section(cast, "Each method with the elicitation stage vs without",
                         [paired_episodes(a, logs[a], b, logs[b]) for a, b in TABLE12_PAIRS]),
        *cast.footer(TOURNAMENT_TEMPERATURES),
    ]  # fmt: skip
    return [_write(folder, "table12", lines)]


# ------------------------------------------------------------ seed 003, identity bias
def identity_bias(opts: ReproduceOptions, peers: int | None = None) -> list[Path]:
    """Vanilla vs anonymized MAD on the NIM dataset with seed 003 Table 1's topology
    (5 agents, each seeing one peer, measured at round 1): Conformity, Obstinacy, Δ, IBC
    with a debate-bootstrap CI, and conformity by numbers of disagreeing/agreeing peers
    (seed 003 Eq. 19). `peers=k` widens the topology."""
    folder = _folder(opts, "identity-bias")
    cast = _cast(opts, "identity-bias")
    data = _data(opts, "nim")
    params: dict[str, Any] = {
        "agents": 5, "rounds": 1, "consensus_stop": False, "peers": peers or 1,
        "temperature": SAMPLING_T,
    }  # fmt: skip
    logs = {
        cond: _evaluate(opts, folder, cond, method, data, params=params, model=cast["agent"])
        for cond, method in (("vanilla", "mad"), ("anonymized", "anonymous_mad"))
    }
    traces = {
        cond: [t for t in (trace_from_decision(r) for r in _records(log)) if t is not None]
        for cond, log in logs.items()
    }
    lines = _header(ARTIFACTS["identity-bias"], opts, cast)
    lines += [
        f"MAD parameters: `{json.dumps(params)}` (seed 003 Table 1: 5 agents, one peer "
        "each, the first round of debate).",
        "",
        cast.caption("Conformity and Obstinacy under disagreement, 95% Wilson CI"),
        "",
        "| condition | debates | conformity | obstinacy | Δ |",
        "|---|---|---|---|---|",
    ]
    for cond, items in traces.items():
        b = conformity_obstinacy(items, round=1)
        c, o = b.conformity, b.obstinacy
        lines.append(
            f"| {cond} | {len(items)} | {_interval(c.value, *_ci(c))} "
            f"| {_interval(o.value, *_ci(o))} | {100 * b.gap:+.1f} pp |"
        )
    try:
        ci = identity_bias_ci(traces["vanilla"], traces["anonymized"], round=1)
        lines += [
            "",
            f"IBC = Δ(vanilla) − Δ(anonymized) = {100 * ci.estimate:+.1f} pp, 95% CI "
            f"[{100 * ci.low:+.1f}, {100 * ci.high:+.1f}] (1,000 bootstrap resamples of "
            "debates, round 1).",
        ]
    except ValueError as exc:
        lines += ["", f"IBC: not defined ({exc})."]
    lines += [
        "",
        cast.caption("Conformity by disagreeing (n_D) and agreeing (n_A) peers (Eq. 19)"),
        "",
        "| condition | n_D | n_A | turns | conformity | obstinacy |",
        "|---|---|---|---|---|---|",
    ]
    for cond, items in traces.items():
        for (n_d, n_a), b in conformity_by_peers(items).items():
            lines.append(
                f"| {cond} | {n_d} | {n_a} | {b.conformity.n} | {_pct(b.conformity.value)} "
                f"| {_pct(b.obstinacy.value)} |"
            )
    lines += cast.footer([f"every debater at T = {SAMPLING_T}"])
    return [_write(folder, "identity-bias", lines)]


def _ci(rate: Any) -> tuple[float, float]:
    ci = wilson_interval(rate.hits, rate.n)
    return ci.low, ci.high


# ------------------------------------------------------------------ seed 001, Table 5
def table5(opts: ReproduceOptions) -> list[Path]:
    """Cross-model debate (model_1, model_2) and same-model debate (model_1 at T = 0 and
    T = 0.7) on the NIM and Fibonacci datasets, each model graded before and after, the
    seven outcome categories per dataset, and McNemar against each model alone (seed 001
    Tables 2, 3 and 5)."""
    folder = _folder(opts, "table5")
    cast = _cast(opts, "table5")
    data = _data(opts, "nim", "fibonacci")
    one, two = cast["model_1"], cast["model_2"]
    base = {"temperature": 0.0}
    _evaluate(opts, folder, "cross", "cross", data,
              params={**base, "models": _served(opts, [one, two])}, repeats=1, model=one)  # fmt: skip
    # Seed 001's same-model debate: one model twice, one agent at T = 0 and one at T = 0.7.
    same = {"models": _served(opts, [one, one]), "temperatures": [0.0, 0.7]}
    _evaluate(opts, folder, "same-model", "cross", data, params=same, repeats=1, model=one)
    for name, model in (("single-a", one), ("single-b", two)):
        _evaluate(opts, folder, name, "cot", data, model=model, repeats=1, params=base)
    report = render_report(folder, write=False, plots=False)
    lines = _header(ARTIFACTS["table5"], opts, cast)
    lines += [
        cast.caption(
            "Cross-model debate: model_1 and model_2, both at T = 0; same-model debate: "
            "model_1 twice, at T = 0 and T = 0.7; one column per dataset"
        ),
        "",
        *cross_sections(report.cross),
        "## Single models (CoT, T = 0)",
        "",
        cast.caption("Each model alone"),
        "",
        *accuracy_table([r for r in report.accuracy if "cross" not in r.method]),
        *cast.footer(["both debates' solve and revise calls as stated above; CoT at T = 0"]),
    ]
    return [_write(folder, "table5", lines)]


# ------------------------------------------------------------------- seed 004
#: Seed 004's benchmarks here: the default build's NIM and Fibonacci files, cut to their
#: challenging subsets.
SEED004_GAMES = ("nim", "fibonacci")
AGENTS_N = 5


def _seed004_models(cast: Cast) -> list[str]:
    """One model per agent in AceMAD's role order (crowd first, truth-holder last)."""
    if "crowd" in cast.roles:
        return [cast["crowd"]] * (AGENTS_N - 1) + [cast["truth_holder"]]
    models = list(cast.roles.values())
    return [models[i % len(models)] for i in range(AGENTS_N)]


def _challenging(opts: ReproduceOptions, cast: Cast) -> list[Path]:
    """Seed 004 App. B.2's challenging subsets: items the single agent (the crowd's model,
    Standard prompting) gets right in fewer than 40% of 5 runs at T = 0.7; cached. A game
    with none is left out (its cells read "–"); with none in any game there is nothing to
    compare, which is said rather than run."""
    folder = Path(opts.out) / "data" / "challenging"
    sources = _data(opts, *SEED004_GAMES)
    crowd = _seed004_models(cast)[0]
    config = ChallengingConfig(
        name="single", dataset=[str(p) for p in sources], model=crowd, base_url=opts.base_url,
        limit=opts.items, seed=opts.seed, results_dir=str(folder), progress=opts.progress,
        **_model_options(opts),
    )  # fmt: skip
    result = run_challenging(config)
    _checked(result.evaluation, "single")
    subsets = [Path(result.written[str(p)]) for p in sources]
    kept = [p for p in subsets if p.stat().st_size]
    if not kept:
        raise ValueError(
            f"no challenging items: the single agent ({crowd}, Standard at T = 0.7) answered "
            "every item right in at least 40% of 5 runs, so there is nothing for the seed 004 "
            "methods to correct; give a weaker --model (the crowd's) or more --items"
        )
    return kept


def _acemad_params(
    opts: ReproduceOptions, models: list[str], rounds: int, **extra: Any
) -> dict[str, Any]:
    return {"agents": AGENTS_N, "rounds": rounds, "models": _served(opts, models), **extra}


def _served(opts: ReproduceOptions, models: Sequence[str]) -> str:
    """A `models=` list (one model per agent), each on `--base-url` unless it names its
    own server: the per-agent models of a debate go where the run's model goes."""
    if opts.base_url is None:
        return "|".join(models)
    return "|".join(m if "@" in m else f"{m}@{opts.base_url}" for m in models)


SEED004_TEMPERATURES = (
    "AceMAD: crowd agents at T = 0.1, the truth-holder at T = 0.6 (seed 004 App. B.1)",
    "Majority Voting and MAD: the same five agents at the same temperatures",
    f"Single Agent: Standard prompting at T = {SAMPLING_T}, R passes",
)


def _accuracy_cells(log: Path, games: Sequence[str]) -> tuple[list[str], list[float]]:
    rows = _rows(log)
    cells, means = [], []
    for game in games:
        verdicts: dict[str, list[bool]] = defaultdict(list)
        for r in rows:
            if r.get("game") == game and r.get("correct") is not None:
                verdicts[r["record_id"]].append(bool(r["correct"]))
        if not verdicts:
            cells.append("–")
            continue
        s = item_accuracy(verdicts)
        means.append(s.mean)
        cells.append(f"{_interval(s.mean, s.low, s.high)} ({s.items} items)")
    return cells, means


def acemad_table(opts: ReproduceOptions) -> list[Path]:
    """Seed 004 Table 2 on challenging subsets, N = 5: Single Agent, Majority Voting, MAD
    and AceMAD at T = 2, 3, 5 rounds (Centralized and Sparse MAD are not in the project)."""
    folder = _folder(opts, "acemad")
    cast = _cast(opts, "seed004")
    data = _challenging(opts, cast)
    models = _seed004_models(cast)
    temps = "|".join(["0.1"] * (AGENTS_N - 1) + ["0.6"])
    runs: list[tuple[str, Path | None]] = [
        ("Single Agent", _evaluate(opts, folder, "single", "standard", data, model=models[0],
                                   params={"temperature": SAMPLING_T})),
        ("Majority Voting", _evaluate(
            opts, folder, "majority", "mad", data, model=models[0], repeats=1,
            params={"agents": AGENTS_N, "rounds": 0, "models": _served(opts, models),
                    "temperatures": temps})),
        ("Decentralized MAD", _evaluate(
            opts, folder, "mad", "mad", data, model=models[0], repeats=1,
            params={"agents": AGENTS_N, "rounds": 3, "models": _served(opts, models),
                    "temperatures": temps})),
        ("Centralized MAD", None),
        ("Sparse MAD", None),
    ]  # fmt: skip
    for t in (2, 3, 5):
        runs.append(
            (f"AceMAD (T={t})", _evaluate(opts, folder, f"acemad-t{t}", "acemad", data,
                                          model=models[0], repeats=1,
                                          params=_acemad_params(opts, models, t)))
        )  # fmt: skip
    games = list(SEED004_GAMES)
    lines = _header(ARTIFACTS["acemad"], opts, cast)
    lines += [
        cast.caption(
            f"Accuracy on the challenging subsets (N = {AGENTS_N} agents), 95% CI over items"
        ),
        "",
        "| method | " + " | ".join(games) + " | Average |",
        "|---" * (len(games) + 2) + "|",
    ]
    for label, log in runs:
        if log is None:
            lines.append(f"| {label} | " + " | ".join(["absent"] * len(games)) + " | absent |")
            continue
        cells, means = _accuracy_cells(log, games)
        avg = _pct(sum(means) / len(means)) if len(means) == len(games) else "–"
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {avg} |")
    logs = {label: log for label, log in runs if log is not None}
    lines += [
        "",
        "absent: seed 004's Centralized and Sparse MAD are not implemented in this project.",
        "",
        cast.caption("AceMAD (T=3) vs the baselines, paired on items"),
        "",
        *PAIRED_HEAD,
        *(paired_items("AceMAD (T=3)", logs["AceMAD (T=3)"], b, logs[b]).row()
          for b in ("Majority Voting", "Decentralized MAD")),
        "",
        f"McNemar: {MAJORITY_RULE}.",
        *cast.footer(SEED004_TEMPERATURES),
    ]  # fmt: skip
    return [_write(folder, "acemad", lines)]


ABLATION = {
    "Full protocol": "peer",
    "Self-Belief Only": "self",
    "Uniform Weight (Standard MAD)": "uniform",
}


def acemad_ablation(opts: ReproduceOptions) -> list[Path]:
    """Seed 004 Fig. 4: AceMAD's full protocol vs weights from self-belief only vs uniform
    weights, on the challenging subsets, T = 3 rounds."""
    folder = _folder(opts, "acemad-ablation")
    cast = _cast(opts, "seed004")
    data = _challenging(opts, cast)
    models = _seed004_models(cast)
    logs = {
        label: _evaluate(opts, folder, f"acemad-{w}", "acemad", data, model=models[0],
                         repeats=1, params=_acemad_params(opts, models, 3, weighting=w))
        for label, w in ABLATION.items()
    }  # fmt: skip
    games = list(SEED004_GAMES)
    lines = _header(ARTIFACTS["acemad-ablation"], opts, cast)
    lines += [
        cast.caption("Accuracy on the challenging subsets, T = 3 rounds; 95% CI over items"),
        "",
        "| variant | " + " | ".join(games) + " | Average |",
        "|---" * (len(games) + 2) + "|",
    ]
    bars: dict[str, dict[str, tuple[float, float, float]]] = defaultdict(dict)
    for label, log in logs.items():
        cells, means = _accuracy_cells(log, games)
        avg = _pct(sum(means) / len(means)) if len(means) == len(games) else "–"
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {avg} |")
        for game in games:
            verdicts = {k: v for k, v in _item_verdicts(log).items() if k.startswith(f"{game}:")}
            if verdicts:
                s = item_accuracy(verdicts)
                bars[label][game] = (s.low, s.mean, s.high)
    full = logs["Full protocol"]
    lines += [
        "",
        cast.caption("The full protocol vs each ablation, paired on items"),
        "",
        *PAIRED_HEAD,
        *(paired_items("Full protocol", full, b, logs[b]).row() for b in list(ABLATION)[1:]),
        "",
        "Self-Belief Only: each round's score is the agent's confidence in its own answer "
        "(max of its belief), no peer forecast; Uniform Weight: every weight stays 1/N, so "
        "the decision is the plain average of beliefs.",
        *cast.footer(SEED004_TEMPERATURES[:1]),
    ]
    return [
        _write(folder, "acemad-ablation", lines),
        *_bars(bars, folder.parent / "acemad-ablation.png",
               cast.title("AceMAD ablation (95% CI over items)"), "accuracy (%)", games=games),
    ]  # fmt: skip


def weights(opts: ReproduceOptions) -> list[Path]:
    """AceMAD's per-agent weights round by round (mean over decisions, by role) on the
    challenging subsets: where the crowd is wrong, a truth-holder that predicts the crowd
    gains weight."""
    folder = _folder(opts, "weights")
    cast = _cast(opts, "seed004")
    models = _seed004_models(cast)
    log = _evaluate(opts, folder, "acemad", "acemad", _challenging(opts, cast), repeats=1,
                    model=models[0], params=_acemad_params(opts, models, 3))  # fmt: skip
    by: dict[tuple[str, str, int], list[float]] = defaultdict(list)
    for r in _rows(log):
        ace = ((r.get("decision") or {}).get("extra") or {}).get("acemad") or {}
        roles = ace.get("roles") or {}
        for rnd in ace.get("rounds") or []:
            for agent, w in (rnd.get("weights") or {}).items():
                by[(agent, str(roles.get(agent, "")), int(rnd["round"]))].append(float(w))
    agents = sorted({(a, role) for a, role, _ in by})
    rounds = sorted({r for _, _, r in by})
    lines = _header(ARTIFACTS["weights"], opts, cast)
    lines += [
        cast.caption(
            "Mean weight of each agent after each round over all decisions (weights sum to "
            f"1; 1/N = {1 / AGENTS_N:.2f})"
        ),
        "",
        "| agent | role | model | " + " | ".join(f"round {r}" for r in rounds) + " |",
        "|---|---|---|" + "---|" * len(rounds),
    ]
    for agent, role in agents:
        cells = [by.get((agent, role, r), []) for r in rounds]
        model = models[int(agent.rsplit("_", 1)[-1]) - 1] if agent.startswith("agent_") else "?"
        lines.append(
            f"| {md(agent)} | {md(role)} | `{model}` | "
            + " | ".join(f"{sum(c) / len(c):.3f}" if c else "–" for c in cells)
            + " |"
        )
    lines += cast.footer(SEED004_TEMPERATURES[:1])
    out = [_write(folder, "weights", lines)]
    series = {
        f"{agent} ({role})": [
            (r, math.nan, sum(by[(agent, role, r)]) / len(by[(agent, role, r)]), math.nan)
            for r in rounds
            if by.get((agent, role, r))
        ]
        for agent, role in agents
    }
    out += _line_plot(
        series, folder.parent / "weights.png", title=cast.title("AceMAD weight trajectories"),
        xlabel="round", ylabel="mean weight", percent=False,
    )  # fmt: skip
    return out


ARTIFACTS: dict[str, Artifact] = {
    a.name: a
    for a in (
        Artifact("table1", "Seed 000 Table 1", "decision accuracy with Average", table1, "seed000", _ITEMS),
        Artifact("figure3", "Seed 000 Figure 3 + Table 10", "belief entrenchment", entrenchment, "seed000", _DATA | {"samples"}),
        Artifact("figure6", "Seed 000 Figure 6", "win rates of self-correction methods", figure6, "seed000", _GAMES),
        Artifact("figure7-left", "Seed 000 Figure 7 (left)", "(+)MAD vs DReaMAD over four settings", figure7_left, "seed000", _GAMES),
        Artifact("figure7-right", "Seed 000 Figure 7 (right)", "accuracy vs elicitation temperature", figure7_right, "seed000", _DATA),
        Artifact("table12", "Seed 000 Table 12", "elicitation added to Self-Refine and Self-Consistency", table12, "seed000", _GAMES),
        Artifact("identity-bias", "Seed 003 Table 1", "identity bias (vanilla vs anonymized MAD)", identity_bias, "identity-bias", _DATA | {"bias_model"}),
        Artifact("table5", "Seed 001 Tables 2, 3, 5", "cross-model debate outcomes", table5, "table5", _DATA | {"model_b"}),
        Artifact("acemad", "Seed 004 Table 2", "AceMAD vs baselines on challenging subsets", acemad_table, "seed004", _DATA | _SEED004),
        Artifact("acemad-ablation", "Seed 004 Figure 4", "peer prediction vs self-belief vs uniform weights", acemad_ablation, "seed004", _DATA | _SEED004),
        Artifact("weights", "Seed 004", "AceMAD weight trajectories", weights, "seed004", _DATA | _SEED004),
    )
}  # fmt: skip


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
            for key in ("episodes", "repeats", "items", "samples")
            if key in artifact.options
        ]
        cast = _cast(opts, artifact.agents)
        who = "its simulated agents" if cast.hypothesis else cast.names().replace("`", "")
        lines.append(f"{each}: {', '.join([*sizes, who])}; files into {opts.out}/")
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
        _HINTS.clear()
        try:
            written = artifact.run(opts)
        except RunFailed:
            raise
        except InfrastructureError as exc:  # a refusal that stopped a run at once
            raise RunFailed(f"{each}: {exc}", kind="run_failed") from None
        if _HINTS:
            _flag(written, _HINTS)
            flagged += [f"{each}: {hint}" for hint in _HINTS]
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


__all__ = ["AGENTS", "ARTIFACTS", "Flagged", "ReproduceOptions", "RunFailed", "plan", "reproduce"]
