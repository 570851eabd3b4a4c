"""AceMAD (Algorithm 1 of seed 004): peer prediction, Brier scores, multiplicative weights.

Each round every agent (1) argues in free text given the debate so far, then (2) privately
commits a belief p_i over the answers and a prediction q̂_i of its peers' average belief.
With Q̄₋ᵢ the mean belief of the other agents, the score is S_i = 1 − ‖q̂_i − Q̄₋ᵢ‖², the
weight w_i ← w_i·exp(η·S_i), then normalized. The decision is argmax_y Σ_i w_i² p_i(y)
(squared weights amplify the truth-holders further). 80% "crowd" agents run at T = 0.1, 20%
"truth-holder" agents with a critical-thinking persona at T = 0.6 (App. B.1, App. I).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from metanim.agents import prompts, schemas
from metanim.agents.base import Context, Method, Reply, gather
from metanim.agents.debate import _clients
from metanim.agents.parsing import Parsed
from metanim.games import MoveError, UnparsableMoveError
from metanim.games.reply import last_object_with
from metanim.llm import ChatModel, Message
from metanim.util import AgentCount, Probability, RoundCount, Temperature

Dist = dict[str, float]
#: What the weights follow: the peer prediction (the protocol), the own confidence, nothing.
WEIGHTINGS = ("peer", "self", "uniform")


def brier_score(prediction: Mapping[str, float], peers: Sequence[Mapping[str, float]]) -> float:
    """S = 1 − ‖q̂ − Q̄‖² with Q̄ the mean of `peers` (missing keys count as 0)."""
    keys = set(prediction).union(*peers)
    mean = {k: sum(p.get(k, 0.0) for p in peers) / len(peers) for k in keys}
    return 1.0 - sum((prediction.get(k, 0.0) - mean[k]) ** 2 for k in keys)


def update_weights(weights: Sequence[float], scores: Sequence[float], eta: float) -> list[float]:
    """w ← w·exp(η·S), normalized to sum 1."""
    raw = [w * math.exp(eta * s) for w, s in zip(weights, scores, strict=True)]
    total = sum(raw)
    return [w / total for w in raw]


def aggregate(weights: Sequence[float], beliefs: Sequence[Mapping[str, float] | None]) -> Dist:
    """Σ_i w_i² p_i(y) over the agents with a belief (the quantity Algorithm 1 maximizes)."""
    out: Dist = {}
    for w, belief in zip(weights, beliefs, strict=True):
        if belief is None:
            continue
        for key, p in belief.items():
            out[key] = out.get(key, 0.0) + w * w * p
    return out


def _distribution(ctx: Context, raw: Any, what: str) -> Dist:
    """A normalized distribution keyed by canonical answer text; raises `MoveError`."""
    if not isinstance(raw, dict) or not raw:
        raise UnparsableMoveError(f'"{what}" must be a non-empty object of probabilities')
    dist: Dist = {}
    for key, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise UnparsableMoveError(
                f'"{what}" has a probability that is not a number >= 0: {value!r}'
            )
        answer = ctx.task.parse(key)  # illegal keys raise IllegalMoveError
        text = ctx.task.text(answer)
        dist[text] = dist.get(text, 0.0) + float(value)
    total = sum(dist.values())
    if total <= 0:
        raise UnparsableMoveError(f'the probabilities in "{what}" sum to zero')
    return {k: v / total for k, v in dist.items()}


def _parse_commit(ctx: Context, text: str) -> Parsed:
    obj = last_object_with(text, "belief", "prediction")
    if obj is None:
        return Parsed(
            None, None, None, "unparsable", 'no JSON object with "belief" and "prediction"'
        )
    try:
        belief = _distribution(ctx, obj["belief"], "belief")
        prediction = _distribution(ctx, obj["prediction"], "prediction")
    except MoveError as exc:
        return Parsed("json_object", obj, None, exc.kind, exc.reason)
    payload = {"belief": belief, "prediction": prediction}
    return Parsed("json_object", None, None, None, None, payload)


class AceMAD(Method):
    """AceMAD: debate whose vote is weighted by how well each agent predicts its peers.

    An agent whose commitment stays invalid after the re-asks scores S = 0 that round, is
    left out of its peers' Q̄ and of the final sum (recorded as None).

    `weighting` picks the score behind the weights (seed 004, Fig. 4's ablation): `peer`
    (the protocol: the Brier score of the peer prediction), `self` ("self-belief only":
    the confidence max_y p_i(y) of the agent's own belief, no peer forecast), `uniform`
    (every weight stays 1/N: the aggregate is the plain average of beliefs, standard MAD).
    """

    name = "acemad"
    param_names = (
        "agents",
        "rounds",
        "eta",
        "truth_fraction",
        "crowd_temperature",
        "truth_temperature",
        "weighting",
    )
    # The prompt asks for a short argument, and every later round shows all of them: at
    # the run's 512 tokens each, the third round of 5 agents overflows a 4096-token context.
    default_phase_max_tokens = {"argue": 256}  # noqa: RUF012

    def __init__(
        self,
        client: ChatModel | Sequence[ChatModel],
        *,
        agents: AgentCount = 5,
        rounds: RoundCount = 3,
        eta: float = 2.0,
        truth_fraction: Probability = 0.2,
        crowd_temperature: Temperature = 0.1,
        truth_temperature: Temperature = 0.6,
        weighting: str = "peer",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if agents < 2 or rounds < 1:
            raise ValueError("AceMAD needs agents >= 2 and rounds >= 1")
        if weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}")
        self.weighting = weighting
        self.agents, self.rounds, self.eta = agents, rounds, eta
        self.truth_fraction = truth_fraction
        self.crowd_temperature, self.truth_temperature = crowd_temperature, truth_temperature
        self.clients = _clients(client, agents)
        n_truth = (
            min(agents - 1, max(1, round(truth_fraction * agents))) if truth_fraction > 0 else 0
        )
        #: Roles in agent order: crowd first, truth-holders last.
        self.roles = ["crowd"] * (agents - n_truth) + ["truth_holder"] * n_truth

    @property
    def models(self) -> list[str]:
        return [c.model for c in self.clients]

    def _options(self, ctx: Context) -> str:
        legal = ctx.task.legal_answers()
        if legal is None:
            return "any number"
        return ", ".join(ctx.task.text(a) for a in legal)

    async def run(self, ctx: Context) -> Any:
        task = ctx.task
        names = [f"agent_{i + 1}" for i in range(self.agents)]
        temps = [
            self.truth_temperature if r == "truth_holder" else self.crowd_temperature
            for r in self.roles
        ]
        options = self._options(ctx)
        legal = task.legal_answers()
        commitment = schemas.commitment_reply(
            None if legal is None else [task.text(a) for a in legal]
        )
        weights = [1.0] * self.agents
        history: list[str] = []
        log: list[dict[str, Any]] = []
        answers_by_text: dict[str, Any] = {}
        beliefs: list[Dist | None] = [None] * self.agents
        for rnd in range(1, self.rounds + 1):
            shown = "\n\n".join(history) if history else "(no arguments yet)"

            async def agent_turn(i: int, shown: str = shown, rnd: int = rnd) -> tuple[str, Reply]:
                messages: list[Message] = [
                    {"role": "system", "content": prompts.ACEMAD_PERSONA[self.roles[i]]},
                    {
                        "role": "user",
                        "content": prompts.ACEMAD_ARGUE.format(
                            problem=task.prompt(), history=shown, noun=task.noun
                        ),
                    },
                ]
                argument, _ = await ctx.chat(
                    self.clients[i],
                    messages,
                    agent=names[i],
                    phase="argue",
                    round=rnd,
                    temperature=temps[i],
                )
                commit = [
                    *messages,
                    {"role": "assistant", "content": argument.text},
                    {
                        "role": "user",
                        "content": prompts.ACEMAD_COMMIT.format(noun=task.noun, options=options),
                    },
                ]
                reply = await ctx.ask(
                    self.clients[i],
                    commit,
                    agent=names[i],
                    phase="commit",
                    round=rnd,
                    temperature=temps[i],
                    parse=lambda text: _parse_commit(ctx, text),
                    schema=commitment,
                )
                return argument.text, reply

            turns = await gather(*(agent_turn(i) for i in range(self.agents)))
            history.extend(
                prompts.ACEMAD_TURN.format(agent=names[i], round=rnd, argument=arg)
                for i, (arg, _) in enumerate(turns)
            )
            beliefs = []
            predictions: list[Dist | None] = []
            for _, reply in turns:
                payload = reply.parsed.payload if reply.ok else None
                if payload is None:
                    beliefs.append(None)
                    predictions.append(None)
                    continue
                for key in {**payload["belief"], **payload["prediction"]}:
                    answers_by_text.setdefault(key, task.parse(key))
                beliefs.append(payload["belief"])
                predictions.append(payload["prediction"])
            scores = []
            for i in range(self.agents):
                peers = [b for j, b in enumerate(beliefs) if j != i and b is not None]
                pred, own = predictions[i], beliefs[i]
                if self.weighting == "self":
                    scores.append(max(own.values()) if own else 0.0)
                elif self.weighting == "uniform":
                    scores.append(0.0)
                else:
                    scores.append(brier_score(pred, peers) if pred is not None and peers else 0.0)
            weights = update_weights(
                weights, scores, 0.0 if self.weighting == "uniform" else self.eta
            )
            agent_answers = {}
            for i, belief in enumerate(beliefs):
                agent_answers[names[i]] = (
                    None
                    if belief is None
                    else self._argmax(
                        ctx, belief, answers_by_text, f"belief argmax of {names[i]}, round {rnd}"
                    )
                )
            ctx.record_round(agent_answers)
            stop = rnd == 1 and ctx.nothing_to_debate([r for _, r in turns], "round 1")
            log.append(
                {
                    "round": rnd,
                    "beliefs": dict(zip(names, beliefs, strict=True)),
                    "predictions": dict(zip(names, predictions, strict=True)),
                    "scores": dict(zip(names, scores, strict=True)),
                    "weights": dict(zip(names, weights, strict=True)),
                }
            )
            if stop:
                break
        final = aggregate(weights, beliefs)
        ctx.extra["acemad"] = {
            "roles": dict(zip(names, self.roles, strict=True)),
            "temperatures": dict(zip(names, temps, strict=True)),
            "rounds": log,
            "aggregate": final,
        }
        if not final:
            return None
        return self._argmax(ctx, final, answers_by_text, "argmax of sum w^2 p", record="split")

    @staticmethod
    def _argmax(
        ctx: Context, dist: Dist, answers: Mapping[str, Any], context: str, record: str = "tie"
    ) -> Any:
        keys = sorted(dist)
        return ctx.vote([answers[k] for k in keys], context, [dist[k] for k in keys], record=record)
