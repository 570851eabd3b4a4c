"""The name effect: the same critical states with the game named and disguised.

Seed 000 (Figure 10 and its appendix) shows by example that one word changes an LLM's
play: told the game is "Fibonacci", a model reasons with Fibonacci numbers. This
measures it. For each game, one set of critical states is built once and written twice,
as the named game and as its disguised variant (`disguise=True`: the same states, the
same rules, no name or theory word); each method answers both files through the arena
(`run_evaluation`: resumable logs, one identity per file), and the effect is the paired
difference of accuracy, named − disguised, over the items (Tango's interval, the item as
the unit, `paired_item_difference`).

With no `model`, each game runs its own simulated agent, a documented mechanism rather
than a fit: a biased agent (`sim-biased`) that plays a greedy heuristic with probability
`p`, and with `cue_p` instead when its cue word is in its instructions, the game prompt
counting (`cue_in_prompt=1`); the cue is the game's name (`NAME_CUES`), which only the
named prompt carries. So the simulated effect is expected near p − cue_p times the share
of items the heuristic gets wrong, and zero for a method or game without the cue. With
`model` (and `base_url`) the same protocol measures a real model.

`metanim reproduce name-effect` runs it (the artifact declared at the end of this module).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metanim.analysis.reproduce._base import ITEMS, Hypothesis, Run, artifact, model_options
from metanim.arena import EvaluationConfig, run_evaluation
from metanim.datasets import build, make_record, write_jsonl
from metanim.games import PRESETS, make_game
from metanim.records import DecisionRecord
from metanim.stats import item_accuracy, paired_item_difference

#: The word of each game's named prompt that names it (its Game Role line), the cue of
#: its default simulated agent. A disguised prompt carries none of them.
NAME_CUES: dict[str, str] = {
    "nim": "Nim",
    "fibonacci": "Fibonacci",
    "kayles": "Kayles",
    "chomp": "Chomp",
    "corner_queen": "Corner-Queen",
    "subtraction": "subtraction",
    "octal": "octal",
}

#: The default settings (a preset or `NAME:JSON`, as tournaments take them): the five
#: paper presets and one rule of each generated family.
DEFAULT_GAMES = (
    "nim-31-k3", "fibonacci-20", "kayles-20", "chomp-5x5", "corner-queen",
    'subtraction:{"heaps":[12,15],"subtraction_set":[2,5,6]}',
    'octal:{"rows":[20],"code":"0.07"}',
)  # fmt: skip


def setting_game(setting: str) -> tuple[str, dict[str, Any], str]:
    """A setting's game name, parameters and a short label (its file and run names)."""
    if setting in PRESETS:
        name, params = PRESETS[setting]
        return name, dict(params), setting
    name, sep, raw = setting.partition(":")
    params = json.loads(raw) if sep else {}
    if not isinstance(params, dict):
        raise ValueError(f"game parameters must be a JSON object, got {raw!r}")
    parts = [
        f"{k}={','.join(map(str, v)) if isinstance(v, list) else v}" for k, v in params.items()
    ]
    label = "-".join([name, *parts])
    return name, params, "".join(c if c.isalnum() or c in "-_.=," else "-" for c in label)


def simulated_agent(game_name: str, p: float = 0.7, cue_p: float = 0.1) -> str:
    """The default simulated agent of a game: greedy with probability `p`, `cue_p` when
    the game's name is in its prompt (recall of the known strategy)."""
    cue = NAME_CUES[game_name]
    return f"sim-biased:heuristic=max_take,p={p},cue={cue},cue_p={cue_p},cue_in_prompt=1"


@dataclass(frozen=True)
class NameEffectOptions:
    """What the artifact runs: games (presets or names), methods, items, repeats, model."""

    out: Path
    games: Sequence[str] = DEFAULT_GAMES
    methods: Sequence[str] = ("react", "cot")
    n: int = 12
    repeats: int = 2
    seed: int = 0
    model: str | None = None
    base_url: str | None = None
    run: dict[str, Any] = field(default_factory=dict)  # more EvaluationConfig fields


@dataclass(frozen=True)
class NameEffectRow:
    """One (game, method): accuracy named and disguised, and their paired difference."""

    game: str
    method: str
    model: str
    items: int
    named: float
    disguised: float
    named_ci: tuple[float, float]
    disguised_ci: tuple[float, float]
    difference: float
    difference_ci: tuple[float, float]


def pair_files(options: NameEffectOptions, setting: str) -> tuple[Path, Path]:
    """The named and the disguised dataset of one setting: the same states, written twice."""
    name, params, label = setting_game(setting)
    records = build(name, params=params, n=options.n, seed=options.seed)
    named_game = records[0].make_game()
    shown = make_game(named_game.name, **{**named_game.params, "disguise": True})
    folder = Path(options.out) / "datasets"
    named_path = folder / f"{label}-named.jsonl"
    disguised_path = folder / f"{label}-disguised.jsonl"
    disguised = []
    for i, record in enumerate(records):
        state = named_game.validate_state(record.state)
        move = named_game.legal_moves(state)[record.legal_moves.index(record.optimal_move)]
        disguised.append(
            make_record(shown, state, move, index=i, seed=options.seed, grundy=record.grundy)
        )
    write_jsonl(records, named_path)
    write_jsonl(disguised, disguised_path)
    return named_path, disguised_path


def _verdicts(records: Sequence[DecisionRecord]) -> dict[str, list[bool]]:
    out: dict[str, list[bool]] = {}
    for r in records:
        if r.status in ("ok", "forfeit", "fallback"):
            out.setdefault(r.record_id, []).append(bool(r.correct))
    return out


def _accuracy(verdicts: dict[str, list[bool]]) -> tuple[float, tuple[float, float]]:
    """Accuracy over items, its interval on the items (`item_accuracy`): repeats of a
    deterministic agent are one draw, never counted as more items."""
    if not any(verdicts.values()):
        return math.nan, (math.nan, math.nan)
    acc = item_accuracy(verdicts)
    return acc.mean, (acc.low, acc.high)


def run_name_effect(
    options: NameEffectOptions, announce: Callable[[str], None] | None = None
) -> list[NameEffectRow]:
    """Evaluate every (setting, method) on both variants and pair them item by item."""
    rows = []
    for setting in options.games:
        game_name, _, label = setting_game(setting)
        named_path, disguised_path = pair_files(options, setting)
        model = options.model or simulated_agent(game_name)
        for method in options.methods:
            verdicts = {}
            for variant, path in (("named", named_path), ("disguised", disguised_path)):
                config = EvaluationConfig(
                    name=f"name-effect-{label}-{variant}",
                    dataset=[str(path)],
                    method=method,
                    model=model,
                    base_url=options.base_url,
                    repeats=options.repeats,
                    seed=options.seed,
                    results_dir=str(Path(options.out) / "runs"),
                    **{"progress": False, **options.run},
                )
                verdicts[variant] = _verdicts(run_evaluation(config, announce).records)
            named, named_ci = _accuracy(verdicts["named"])
            disguised, disguised_ci = _accuracy(verdicts["disguised"])
            diff = paired_item_difference(verdicts["named"], verdicts["disguised"])
            rows.append(
                NameEffectRow(
                    game=label,
                    method=method,
                    model=model,
                    items=len(set(verdicts["named"]) & set(verdicts["disguised"])),
                    named=named,
                    disguised=disguised,
                    named_ci=named_ci,
                    disguised_ci=disguised_ci,
                    difference=diff.estimate,
                    difference_ci=(diff.low, diff.high),
                )
            )
    return rows


def _pct(x: float) -> str:
    return "–" if x != x else f"{100 * x:.1f}%"


def render_name_effect(rows: Sequence[NameEffectRow], simulated: bool) -> str:
    """The Markdown table: per game and method, accuracy named and disguised with 95%
    intervals over the items (Wilson at the items' effective number), and the paired
    difference with its 95% interval (Tango)."""
    who = "simulated agents (sim-biased, cued by the game's name)" if simulated else "the model"
    lines = [
        f"# The name effect: the same critical states named and disguised, {who}",
        "",
        "| game | method | items | named [95% CI] | disguised [95% CI] "
        "| named − disguised [95% CI, paired] |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.game} | {r.method} | {r.items} "
            f"| {_pct(r.named)} [{_pct(r.named_ci[0])}, {_pct(r.named_ci[1])}] "
            f"| {_pct(r.disguised)} [{_pct(r.disguised_ci[0])}, {_pct(r.disguised_ci[1])}] "
            f"| {_pct(r.difference)} [{_pct(r.difference_ci[0])}, {_pct(r.difference_ci[1])}] |"
        )
    models = sorted({r.model for r in rows})
    lines += ["", "Models: " + "; ".join(f"`{m}`" for m in models)]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ the artifact
NAME_EFFECT = Hypothesis(
    {
        "agent": "sim-biased:heuristic=max_take,p=0.7,cue=<the game's name>,cue_p=0.1,cue_in_prompt=1"
    },
    (
        "each game's agent plays the greedy heuristic (take the most) with probability 0.7, "
        "and with 0.1 when the game's name is in its prompt (`cue_in_prompt=1`): the name "
        "recalls a known strategy; the disguised prompt names no game, so its agent is "
        "never cued",
        "at temperature 0 (the methods' default) each agent makes its likelier choice: "
        "the winning move when cued, the greedy one when not, so the expected difference, "
        "named minus disguised, is the share of items on which the greedy move loses, and "
        "0 for a game whose prompt has no cue",
    ),
    flags={"agent": ("model",)},
)


@artifact(
    "name-effect", paper="Seed 000 Figure 10 (the name effect, measured)",
    what="the same critical states with the game named and disguised",
    hypothesis=NAME_EFFECT, options=ITEMS,
)  # fmt: skip
def name_effect(run: Run) -> list[Path]:
    """Every default setting's critical states, named and disguised, answered by ReAct and
    CoT; accuracy of each with its interval and the paired difference with its own."""
    opts, simulated = run.opts, run.cast.hypothesis is not None
    options = NameEffectOptions(
        out=run.folder,
        n=opts.items or NameEffectOptions.n,
        repeats=opts.repeats,
        seed=opts.seed,
        model=None if simulated else run.cast["agent"],
        base_url=opts.base_url,
        run={"progress": opts.progress, **model_options(opts)},
    )
    rows = run_name_effect(options)
    run.power(min((r.items for r in rows), default=0), "items per game (paired)")
    return [run.write([*run.header(), render_name_effect(rows, simulated), *run.cast.footer()])]
