"""Recovery: run the methods over simulated agents with known parameters and measure them.

Each function configures simulated models (`metanim.llm.sim`) whose behaviour is known
in closed form, runs the real methods in-process (`SimChatModel`: the simulator's own
request handler, without HTTP), and returns what the analysis of `metanim.analysis.debate`
measures. `tests/analysis/test_recovery.py` asserts the measurements hold the configured truth
within their intervals; `scripts/recovery.py` runs larger versions for docs/analysis.md.

Positions: NIM (take 1-3) with 4k+1 stones, where the only winning move takes 1 and the
`max_take` heuristic takes 3, so a `biased` agent with `otherwise=optimal` gives exactly
two answers (the heuristic with probability p at T = 0.7); and Fibonacci Nim at 20 stones
(19 legal moves) where a random first answer almost always starts a disagreement.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from metanim.agents import MAD, AceMAD, AnonymousMAD, Decision, DReaMAD, Method
from metanim.analysis.debate import DebateTrace, IdentityBias, Rate, conformity_obstinacy
from metanim.games import Game, make_game
from metanim.llm.sim import SimApp, SimChatModel
from metanim.stats import Summary, mean_ci

#: NIM positions with one winning move (take 1) that the max_take heuristic (take 3) misses.
NIM = make_game("nim-31-k3")
NIM_STATES: tuple[tuple[int], ...] = tuple((n,) for n in (5, 9, 13, 17, 21, 25, 29))
#: A position with many legal moves, for debates that start in disagreement.
FIB = make_game("fibonacci-20")
FIB_STATE = (20, 19)


def models(app: SimApp, *names: str) -> list[SimChatModel]:
    """In-process clients sharing one simulator (one log, one attempt count)."""
    return [SimChatModel(name, app) for name in names]


async def _decide_all(
    method: Method, jobs: Sequence[tuple[Game[Any, Any], Any, int]], concurrency: int = 64
) -> list[Decision]:
    semaphore = asyncio.Semaphore(concurrency)

    async def one(game: Game[Any, Any], state: Any, seed: int) -> Decision:
        async with semaphore:
            return await method.decide(game, state, seed=seed)

    return await asyncio.gather(*(one(*job) for job in jobs))


def decide_all(method: Method, jobs: Sequence[tuple[Game[Any, Any], Any, int]]) -> list[Decision]:
    """Every (game, state, seed) decided by `method`, in order."""
    return asyncio.run(_decide_all(method, jobs))


def _app(seed: int) -> SimApp:
    return SimApp(seed=seed, log_limit=16)  # nothing here reads the log


def trace(decision: Decision, correct: Sequence[str] = (), anonymized: bool = False) -> DebateTrace:
    """The `DebateTrace` of a debate decision (every round, every agent)."""
    agents = list(dict.fromkeys(a for r in decision.rounds for a in r))
    return DebateTrace(
        agents=agents,
        answers=[[r.get(a) for r in decision.rounds] for a in agents],
        correct=list(correct),
        anonymized=anonymized,
    )


# --------------------------------------------------------------------------- p(0)
def heuristic_share(model: str, samples: int, temperature: float = 0.7, seed: int = 0) -> Rate:
    """How often `model` names the max_take answer (take 3) on the NIM positions."""
    client = SimChatModel(model, _app(seed))

    async def go() -> list[str]:
        texts: list[str] = []
        per = -(-samples // len(NIM_STATES))
        for k, state in enumerate(NIM_STATES):
            prompt = NIM.prompt(state) + '\n```json\n{"reasoning": "...", "action": 1}\n```'
            done = await client.chat(
                [{"role": "user", "content": prompt}],
                temperature=temperature,
                n=per,
                seed=seed * 1000 + k,
            )
            texts.extend(done.texts)
        return texts[:samples]

    texts = asyncio.run(go())
    hits = sum('"action": 3}' in t for t in texts)
    return Rate(hits=hits, n=len(texts))


# ------------------------------------------------------------------- entrenchment
@dataclass
class Entrenchment:
    """The share of heuristic answers per round: `shares[t][k]` over debate k's agents."""

    p: float
    agents: int
    shares: list[list[float]] = field(default_factory=list)

    def observed(self, t: int, level: float = 0.95) -> Summary:
        """p⁽ᵗ⁾ with a t-interval over debates (the unit: agents of one debate correlate)."""
        return mean_ci(self.shares[t], level)


def entrenchment(
    p: float, agents: int = 2, debates: int = 400, rounds: int = 3, seed: int = 0
) -> Entrenchment:
    """MAD without the consensus stop among homogeneous `biased:p,read=consensus` agents.

    Each agent keeps its answer when a peer drawn at random shares it and otherwise
    answers afresh from its prior: the process seed 000's Eq. 1 describes.
    """
    model = f"sim-biased:heuristic=max_take,p={p},otherwise=optimal,read=consensus"
    method = MAD(models(_app(seed), model), agents=agents, rounds=rounds, consensus_stop=False)
    jobs = [(NIM, NIM_STATES[k % len(NIM_STATES)], seed * 100_000 + k) for k in range(debates)]
    decisions = decide_all(method, jobs)
    shares = [
        [sum(a == "3" for a in d.rounds[t].values()) / agents for d in decisions]
        for t in range(rounds + 1)
    ]
    return Entrenchment(p=p, agents=agents, shares=shares)


# ------------------------------------------------------------------ identity bias
@dataclass
class IdentityRecovery:
    vanilla: IdentityBias
    anonymized: IdentityBias

    @property
    def ibc(self) -> float:
        return self.vanilla.gap - self.anonymized.gap


def identity_bias(
    self_weight: float, peer_weight: float, debates: int = 200, rounds: int = 3, seed: int = 0
) -> IdentityRecovery:
    """Conformity and obstinacy of `conform:self,peer` agents in MAD and anonymized MAD.

    Two agents, first answers uniformly random over Fibonacci Nim's 19 moves, no stop.
    Identity visible: P(keep own | disagreement) = self / (self + peer). Anonymized: the
    agent cannot tell its own answer, so both opinions weigh the same (1/2).
    """
    model = f"sim-conform:self={self_weight},peer={peer_weight},base=random"
    out = []
    for cls in (MAD, AnonymousMAD):
        method = cls(models(_app(seed), model), agents=2, rounds=rounds, consensus_stop=False)
        jobs = [(FIB, FIB_STATE, seed * 100_000 + k) for k in range(debates)]
        traces = [trace(d, anonymized=cls is AnonymousMAD) for d in decide_all(method, jobs)]
        out.append(conformity_obstinacy(traces))
    return IdentityRecovery(vanilla=out[0], anonymized=out[1])


# ------------------------------------------------------------------------- AceMAD
@dataclass
class AceMADRecovery:
    items: int
    #: the truth-holder's weight after each round, averaged over the items
    truth_weight: list[float]
    acemad: Rate
    majority: Rate


CROWD = "sim-biased:heuristic=max_take,p=0.9,otherwise=optimal,predict=self"
TRUTH_HOLDER = "sim-optimal:predict=crowd,heuristic=max_take"


def acemad(
    items: int = 40,
    crowd: str = CROWD,
    truth_holder: str = TRUTH_HOLDER,
    agents: int = 5,
    seed: int = 0,
) -> AceMADRecovery:
    """AceMAD with a crowd that shares one misconception and one truth-holder.

    The crowd (T = 0.1) plays the max_take heuristic and predicts that everyone agrees
    with it (false consensus); the truth-holder plays the winning move and predicts the
    crowd's belief. The majority vote of the first round's answers is the baseline.
    """
    app = _app(seed)
    clients = models(app, *([crowd] * (agents - 1)), truth_holder)
    method = AceMAD(clients, agents=agents, rounds=3)
    jobs = [(NIM, NIM_STATES[k % len(NIM_STATES)], seed * 100_000 + k) for k in range(items)]
    decisions = decide_all(method, jobs)
    weights = [0.0, 0.0, 0.0]
    hits = majority_hits = 0
    for d in decisions:
        info = d.extra["acemad"]
        names = list(info["roles"])
        truth = next(n for n in names if info["roles"][n] == "truth_holder")
        for r, rnd in enumerate(info["rounds"]):
            weights[r] += rnd["weights"][truth] / len(decisions)
        hits += d.answer_text == "1"
        first = [a for a in d.rounds[0].values() if a is not None]
        majority_hits += bool(first) and max(set(first), key=first.count) == "1"
    return AceMADRecovery(
        items=items,
        truth_weight=weights,
        acemad=Rate(hits=hits, n=items),
        majority=Rate(hits=majority_hits, n=items),
    )


# --------------------------------------------------------------------- prompt cues
@dataclass
class CueRecovery:
    """Which agents' self-generated prompts carried the cue, and what they answered."""

    variant: str
    both_cued: Rate  # debates where every agent's prompt has the cue
    cued: Rate  # agents whose prompt has the cue
    heuristic_when_cued: Rate
    heuristic_when_not: Rate


def cue(
    variant: str, debates: int = 150, insight: float = 0.3, seed: int = 0, cue_word: str = "modulo"
) -> CueRecovery:
    """DReaMAD (`full`: one rewrite per agent) or (+)MAD (`plus_mad`: one shared rewrite).

    The model plays the heuristic with p = 0.9 unless its instructions carry the cue
    (then cue_p = 0.1); each rewrite it writes carries the cue with probability `insight`.
    """
    model = f"sim-biased:p=0.9,cue={cue_word},cue_p=0.1,insight={insight}"
    method = DReaMAD(models(_app(seed), model), agents=2, rounds=0, variant=variant)
    jobs = [(NIM, NIM_STATES[k % len(NIM_STATES)], seed * 100_000 + k) for k in range(debates)]
    decisions = decide_all(method, jobs)
    both = cued_n = 0
    when = {True: [0, 0], False: [0, 0]}
    for d in decisions:
        flags = [cue_word in p for p in d.extra["elicitation"]["prompts"]]
        both += all(flags)
        cued_n += sum(flags)
        for flag, answer in zip(flags, d.rounds[0].values(), strict=True):
            when[flag][0] += answer == "3"
            when[flag][1] += 1
    return CueRecovery(
        variant=variant,
        both_cued=Rate(hits=both, n=debates),
        cued=Rate(hits=cued_n, n=2 * debates),
        heuristic_when_cued=Rate(hits=when[True][0], n=when[True][1]),
        heuristic_when_not=Rate(hits=when[False][0], n=when[False][1]),
    )
