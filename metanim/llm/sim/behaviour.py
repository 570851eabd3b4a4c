"""How a simulated agent decides: move preferences, temperature, debate reading, cue words.

A policy maps what a request shows (the task, the agent's own previous answer, the peers'
answers with or without identity, cue words in its instructions) to *preferences*: the
distribution it samples at the reference temperature T_ref = 0.7, the seed papers'
sampling temperature. A request at temperature T samples from the same preferences
sharpened or flattened as a softmax of log-preferences would be: pi_T(a) is proportional
to pi(a)^(T_ref / T), and T = 0 takes the most preferred answer. So `biased:p=0.8` plays
its heuristic with probability 0.8 at T = 0.7, 0.94 at T = 0.35 and always at T = 0.

Everything here is a pure function of its arguments and the `random.Random` it is given.
"""

from __future__ import annotations

import json
import math
import random
import re
from typing import TYPE_CHECKING, Any

from metanim.llm._types import Message
from metanim.llm.templates import Layout, read_layout

if TYPE_CHECKING:
    from metanim.llm.sim.spec import SimModelSpec
    from metanim.llm.sim.task import Task

#: The temperature at which a policy's parameters hold as stated (seed 000 samples at 0.7).
REFERENCE_TEMPERATURE = 0.7

Prefs = dict[str, float]  # JSON text of an answer -> preference (sums to 1)


def key(answer: Any) -> str:
    return json.dumps(answer)


def at_temperature(prefs: Prefs, temperature: float) -> Prefs:
    """The distribution sampled at `temperature`: pi^(T_ref / T) renormalized; T <= 0: argmax."""
    positive = {k: v for k, v in prefs.items() if v > 0}
    if not positive:
        raise ValueError("preferences need at least one answer with positive weight")
    if temperature <= 0:
        top = max(positive.values())
        best = [k for k, v in positive.items() if v >= top * (1 - 1e-12)]
        return {k: 1 / len(best) for k in best}
    power = REFERENCE_TEMPERATURE / temperature
    # In log space, so tiny preferences at low temperature underflow to 0, never to NaN.
    logs = {k: power * math.log(v) for k, v in positive.items()}
    top = max(logs.values())
    weights = {k: math.exp(v - top) for k, v in logs.items()}
    total = sum(weights.values())
    return {k: w / total for k, w in weights.items()}


def probability_at(p: float, temperature: float) -> float:
    """P(an outcome preferred with probability `p` against one alternative) at `temperature`."""
    return at_temperature({"yes": p, "no": 1 - p}, temperature).get("yes", 0.0)


def sample(prefs: Prefs, temperature: float, rng: random.Random) -> Any:
    """One answer drawn from `prefs` at `temperature` (keys in sorted order, so seeds replay)."""
    dist = at_temperature(prefs, temperature)
    keys = sorted(dist)
    return json.loads(rng.choices(keys, weights=[dist[k] for k in keys])[0])


def mix(*parts: tuple[float, Prefs]) -> Prefs:
    """A weighted mixture of preference tables (weights need not sum to 1)."""
    total = sum(w for w, _ in parts)
    out: Prefs = {}
    for weight, prefs in parts:
        for k, v in prefs.items():
            out[k] = out.get(k, 0.0) + weight * v / total
    return out


def uniform(values: list[Any]) -> Prefs:
    return mix(*((1.0, {key(v): 1.0}) for v in values))


# ----------------------------------------------------------------------- the prior
def prior(spec: SimModelSpec, task: Task, cued: bool) -> Prefs:
    """The agent's own preferences before it reads any debate."""

    def base(name: str) -> Prefs:
        if name == "optimal" and task.correct:
            return uniform(task.correct)
        return uniform(task.candidates)  # random, or a P-position: any legal move

    policy = spec.policy
    if policy in ("optimal", "faulty"):
        prefs = base("optimal")
    elif policy == "random":
        prefs = base("random")
    elif policy == "biased":
        p = spec["cue_p"] if cued and spec["cue_p"] is not None else spec["p"]
        heuristic = {key(task.heuristics[spec["heuristic"]]): 1.0}
        prefs = mix((p, heuristic), (1 - p, base(spec["otherwise"])))
    else:  # conform
        prefs = base(spec["base"])
    if spec["noise"] > 0:
        prefs = mix((1 - spec["noise"], prefs), (spec["noise"], base("random")))
    return {k: v for k, v in prefs.items() if v > 0}


# ------------------------------------------------------------------ reading a debate
_ANSWER = re.compile(
    r"""(?i:"?(?:final[ _]?)?(?:action|answer)"?)\s*[:=]\s*"""
    r"""(\[[^\[\]]*\]|"[^"]*"|-?\d+(?:\.\d+)?|\b[A-Z]\b)"""
)


def answers_in(text: str, task: Task) -> list[Any]:
    """Every legal answer named in `text` as `"action": X` or `answer: X`, in order."""
    found = []
    for match in _ANSWER.finditer(text):
        value = task.normalize(match.group(1))
        if value is not None:
            found.append(value)
    return found


def _last_answer(text: str, task: Task) -> Any:
    found = answers_in(text, task)
    return found[-1] if found else None


class Shown:
    """The answers a request shows, read through its layout."""

    def __init__(self, layout: Layout, task: Task) -> None:
        self.layout = layout
        self.own = _last_answer(layout.own[-1], task) if layout.own else None
        self.peers = [a for a in (_last_answer(t, task) for t in layout.peers) if a is not None]
        self.opinions = [
            a for a in (_last_answer(t, task) for t in layout.opinions) if a is not None
        ]

    @property
    def all(self) -> list[Any]:
        """Every answer shown, own included (AceMAD's history is all opinions)."""
        own = [] if self.own is None else [self.own]
        return own + self.peers + self.opinions


def debate_prefs(
    spec: SimModelSpec, task: Task, shown: Shown, base: Prefs, rng: random.Random
) -> Prefs:
    """Preferences after reading the debate (the prior where the request shows none).

    `conform`: where identity is visible, the own previous answer has weight `self` and each
    peer answer weight `peer` (an own answer that named nothing legal spreads its weight
    over the prior); where it is not (anonymized opinions), every opinion weighs the same,
    since the agent cannot tell its own. `read=consensus` (any policy): compare the own
    answer with one peer's drawn at random (anonymized: two opinions drawn at random);
    if they agree keep it, else answer from the prior, as Eq. 1 of seed 000 models a debate.
    """
    layout = shown.layout
    if spec.policy == "conform":
        if layout.identity_visible:
            if not layout.own and not shown.peers:
                return base
            own = base if shown.own is None else {key(shown.own): 1.0}
            parts = [(spec["self"], own)] if layout.own else []
            parts += [(spec["peer"], {key(a): 1.0}) for a in shown.peers]
            if not parts or sum(w for w, _ in parts) <= 0:
                return own
            return mix(*parts)
        return uniform(shown.opinions) if shown.opinions else base
    if spec["read"] == "consensus":
        if layout.identity_visible and layout.kind != "history":
            if shown.own is None or not shown.peers:
                return base
            pair = (shown.own, rng.choice(shown.peers))
        elif len(shown.opinions) >= 2:
            first, second = rng.sample(range(len(shown.opinions)), 2)
            pair = (shown.opinions[first], shown.opinions[second])
        else:
            return base
        return {key(pair[0]): 1.0} if pair[0] == pair[1] else base
    return base


# ------------------------------------------------------------------------ cue words
def cue_present(spec: SimModelSpec, task: Task, messages: list[Message], layout: Layout) -> bool:
    """Whether the agent's instructions carry its cue word.

    Only what the method or the agent wrote counts: the game prompt, the game's name and
    the answers quoted from the debate are taken out before looking (with
    `cue_in_prompt=1` the game prompt stays, so the game's name can cue); with `spread=1` the
    peers' answers (and anonymized opinions) stay, so an argument naming the cue cues its
    reader.
    """
    cue = spec["cue"]
    if not cue:
        return False
    removed = [*layout.own] if spec["spread"] else [*layout.own, *layout.peers, *layout.opinions]
    if task.game is not None and not spec["cue_in_prompt"]:
        removed += [task.game.prompt(task.state), task.game.title]
    for message in messages:
        if message.get("role") == "assistant":
            continue
        text = str(message.get("content") or "")
        for part in removed:
            if part:
                text = text.replace(part, " ")
        if re.search(rf"\b{re.escape(cue)}\b", text, re.IGNORECASE):
            return True
    return False


def insight(spec: SimModelSpec, cued: bool, temperature: float, rng: random.Random) -> str | None:
    """The cue sentence a self-generated text (strategy, rewritten prompt) carries, or None.

    A text keeps a cue its request already carried; otherwise it gains one with
    probability `insight` at T = 0.7, rescaled to the request's temperature.
    """
    if not spec["cue"]:
        return None
    if not cued and rng.random() >= probability_at(spec["insight"], temperature):
        return None
    return f"Reason about it through {spec['cue']}: that is where the winning pattern is."


# ----------------------------------------------------------------- AceMAD reports
def belief(task: Task, answer: Any, shown: list[Any], conf: float) -> Prefs:
    """`conf` on the answer, the rest spread over the other answers the debate showed
    (over the other legal answers before anything was shown)."""
    others = list(dict.fromkeys(key(a) for a in shown if a != answer))
    if not others:
        others = [key(c) for c in task.candidates if c != answer]
    if not others:
        return {key(answer): 1.0}
    out = {key(answer): conf}
    for other in others:
        out[other] = out.get(other, 0.0) + (1 - conf) / len(others)
    return out


def prediction(spec: SimModelSpec, task: Task, answer: Any, shown: list[Any]) -> Prefs:
    """The forecast of the peers' average belief.

    `predict=debate` (default): the beliefs the answers shown in the debate imply (its own
    belief before anything was shown). `predict=self`: false consensus, every peer holds
    the agent's answer. `predict=crowd`: a truth-holder that anticipates the crowd's
    error: the belief of an agent holding the `heuristic` answer.
    """
    conf = spec["conf"]
    mode = spec["predict"]
    if mode == "self":
        return {key(answer): 1.0}
    if mode == "crowd":
        return belief(task, task.heuristics[spec["heuristic"]], shown, conf)
    if not shown:
        return belief(task, answer, shown, conf)
    return mix(*((1.0, belief(task, a, shown, conf)) for a in shown))


def read(messages: list[Message], task: Task, layout: Layout | None = None) -> Shown:
    """The layout of `messages` (`layout` if already read) and the answers it shows."""
    return Shown(layout if layout is not None else read_layout(messages), task)
