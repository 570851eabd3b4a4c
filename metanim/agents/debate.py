"""Debate methods: MAD (Du et al.), anonymized MAD, DReaMAD and its variants, MPD, cross-model."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from metanim.agents import prompts, schemas
from metanim.agents.base import Context, Method
from metanim.agents.elicit import check_placement, elicit_prompts, framing
from metanim.agents.parsing import Parsed
from metanim.agents.single import answer_messages
from metanim.games import MoveError
from metanim.games.reply import last_object_with
from metanim.llm import ChatModel, Message
from metanim.util import AgentCount, RoundCount, Temperature

log = logging.getLogger("metanim.agents")


def _clients(client: ChatModel | Sequence[ChatModel], count: int) -> list[ChatModel]:
    pool = [client] if isinstance(client, ChatModel) else list(client)
    if not pool:
        raise ValueError("at least one client is needed")
    return [pool[i % len(pool)] for i in range(count)]


def _floats(value: Sequence[float] | str | None, count: int, what: str) -> list[float] | None:
    """Per-agent values from a list or from `a|b|...` (a method spec splits on commas)."""
    if value is None:
        return None
    items = str(value).split("|") if isinstance(value, str) else list(value)
    try:
        out = [float(v) for v in items]
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be numbers (a list or a|b|...), got {value!r}") from None
    if len(out) != count:
        raise ValueError(f"{what} needs one value per agent ({count}), got {value!r}")
    return out


def _consensus(ctx: Context, answers: Sequence[Any]) -> bool:
    if any(a is None for a in answers):
        return False
    return len({ctx.task.key(a) for a in answers}) == 1


class MAD(Method):
    """Multi-agent debate (Du et al. 2023).

    Round 0: every agent answers alone. Each later round: every agent sees its own previous
    answer and the other agents' answers (labelled "Agent k") and updates. `rounds` counts
    the update rounds after round 0 (default 3, as in the MetaNIM seed's §B.1 and Eq. 1,
    which compare p⁽⁰⁾ with p⁽³⁾), so a full debate has `rounds + 1` answer rounds. The
    debate stops early once every agent gives the same valid answer (MetaNIM §5), and the
    final answer is the plurality of the last round with the seeded tie-break. Each round's
    calls run concurrently.

    `consensus_stop=False` runs every round even after agreement (seed 000 §3 measures
    p⁽³⁾ after three full rounds). `peers=k` is a sparse topology (seed 003): agent i sees
    only agents i+1, ..., i+k (mod N), recorded in `extra["peers"]`; default everyone.
    `temperatures` gives each agent its own temperature (a list, or `0|0.7` in a spec).
    """

    name = "mad"
    param_names = ("agents", "rounds", "temperature", "consensus_stop", "peers", "temperatures")
    anonymous = False

    def __init__(
        self,
        client: ChatModel | Sequence[ChatModel],
        *,
        agents: AgentCount = 2,
        rounds: RoundCount = 3,
        temperature: Temperature = 0.7,
        consensus_stop: bool = True,
        peers: AgentCount | None = None,
        temperatures: Sequence[float] | str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if not isinstance(consensus_stop, bool):
            raise ValueError(f"consensus_stop must be true or false, got {consensus_stop!r}")
        if agents < 1:
            raise ValueError("agents must be >= 1")
        if rounds < 0:
            raise ValueError("rounds (update rounds after the initial answers) must be >= 0")
        if peers is not None and not 1 <= peers <= max(agents - 1, 1):
            raise ValueError(f"peers must be between 1 and agents - 1 = {agents - 1}, got {peers}")
        self.agents, self.rounds, self.temperature = agents, rounds, temperature
        self.consensus_stop, self.peers = bool(consensus_stop), peers
        self.temperatures = _floats(temperatures, agents, "temperatures")
        self.clients = _clients(client, agents)

    def _temps(self) -> float | list[float]:
        return self.temperature if self.temperatures is None else self.temperatures

    def peer_indices(self, i: int) -> list[int]:
        """The agents whose previous answers agent i sees (every other agent by default)."""
        if self.peers is None:
            return [j for j in range(self.agents) if j != i]
        return [(i + d) % self.agents for d in range(1, self.peers + 1)]

    @property
    def models(self) -> list[str]:
        return [c.model for c in self.clients]

    def names(self) -> list[str]:
        return [f"agent_{i + 1}" for i in range(self.agents)]

    async def framings(self, ctx: Context) -> list[tuple[str | None, str | None]]:
        """Per agent: (system message, problem text in place of the task's prompt); None
        keeps the default. DReaMAD gives each agent its own prompt here."""
        return [(None, None)] * self.agents

    async def run(self, ctx: Context) -> Any:
        framed = await self.framings(ctx)
        return await self.debate(ctx, [s for s, _ in framed], [p for _, p in framed])

    async def debate(
        self,
        ctx: Context,
        systems: Sequence[str | None],
        problems: Sequence[str | None] | None = None,
    ) -> Any:
        names = self.names()
        problems = list(problems) if problems is not None else [None] * self.agents
        replies = await ctx.ask_round(
            [
                (name, client, answer_messages(ctx, "react", system, problem))
                for name, client, system, problem in zip(
                    names, self.clients, systems, problems, strict=True
                )
            ],
            phase="answer",
            temperature=self._temps(),
        )
        if self.rounds and ctx.nothing_to_debate(replies):
            return None
        ctx.extra.setdefault("orders", [])
        if self.peers is not None:
            ctx.extra["peers"] = {
                names[i]: [names[j] for j in self.peer_indices(i)] for i in range(self.agents)
            }
        for rnd in range(1, self.rounds + 1):
            if (
                self.consensus_stop
                and self.agents > 1
                and _consensus(ctx, [r.answer for r in replies])
            ):
                ctx.extra["stopped_early"] = rnd
                break
            texts = [r.text for r in replies]
            messages = [
                self.update_messages(ctx, i, texts, systems[i], problems[i])
                for i in range(self.agents)
            ]
            replies = await ctx.ask_round(
                list(zip(names, self.clients, messages, strict=True)),
                phase="update",
                round=rnd,
                temperature=self._temps(),
            )
        return ctx.vote([r.answer for r in replies], "majority of the last round")

    def update_messages(
        self,
        ctx: Context,
        i: int,
        texts: Sequence[str],
        system: str | None,
        problem: str | None = None,
    ) -> list[Message]:
        task = ctx.task
        problem = problem or task.prompt()
        fmt = prompts.output_format("react", task.action_schema())
        if self.anonymous:
            # Choi et al. App. B.2: all answers, own included and unmarked, shuffled.
            order = sorted([i, *self.peer_indices(i)])
            ctx.rng.shuffle(order)
            ctx.extra["orders"].append({"agent": self.names()[i], "order": order})
            peers = "\n".join(
                prompts.ANONYMOUS_PEER.format(index=k + 1, answer=texts[j])
                for k, j in enumerate(order)
            )
            content = prompts.ANONYMOUS_UPDATE.format(
                problem=problem, peers=peers, output_format=fmt
            )
        else:
            peers = "\n".join(
                prompts.DEBATE_PEER.format(
                    label=prompts.DEBATE_LABEL.format(index=j + 1), answer=texts[j]
                )
                for j in sorted(self.peer_indices(i))
            )
            content = prompts.DEBATE_UPDATE.format(
                problem=problem, own=texts[i], peers=peers, output_format=fmt
            )
        head: list[Message] = [] if system is None else [{"role": "system", "content": system}]
        return [*head, {"role": "user", "content": content}]


class AnonymousMAD(MAD):
    """MAD without identity markers (Choi et al., App. B.2).

    Each agent sees every answer of the last round, its own included and not marked as its
    own, in a seeded random order that is recorded in `extra["orders"]`.
    """

    name = "anonymous_mad"
    anonymous = True


class DReaMAD(MAD):
    """DReaMAD (MetaNIM seed, §4): elicit strategy, diversify each agent's prompt, then debate.

    1. Game Situation Reinterpretation and 2. General Strategy Formulation, one call each at
    `elicit_temperature` = 0.1. 3. Perspective Diversification: each agent rewrites the
    initial prompt into its own at `rewrite_temperature` = 0.7. 4. MAD among those agents,
    each agent's refined prompt in place of the initial prompt (seed 000 §4.2, Table 8).
    `placement="system"` keeps the initial prompt in the user message and gives the refined
    one as a system message instead (see `metanim.agents.elicit`).

    Variants: `variant="minus"` is DReaMAD(-) (one agent, one answer, no debate);
    `variant="plus_mad"` is (+)MAD (one rewrite shared by every agent).
    """

    name = "dreamad"
    param_names = (
        "agents",
        "rounds",
        "temperature",
        "elicit_temperature",
        "rewrite_temperature",
        "variant",
        "consensus_stop",
        "peers",
        "temperatures",
        "placement",
    )
    # The rewrite is a whole prompt, longer than an answer.
    default_phase_max_tokens = {"rewrite": 1024}  # noqa: RUF012

    def __init__(
        self,
        client: ChatModel | Sequence[ChatModel],
        *,
        agents: AgentCount = 2,
        rounds: RoundCount = 3,
        temperature: Temperature = 0.7,
        elicit_temperature: Temperature = 0.1,
        rewrite_temperature: Temperature = 0.7,
        variant: str = "full",
        placement: str = "replace",
        **kwargs: Any,
    ) -> None:
        check_placement(placement)
        if variant not in ("full", "minus", "plus_mad"):
            raise ValueError("variant must be 'full', 'minus' or 'plus_mad'")
        if variant == "minus":
            agents, rounds = 1, 0
        super().__init__(client, agents=agents, rounds=rounds, temperature=temperature, **kwargs)
        self.elicit_temperature = elicit_temperature
        self.rewrite_temperature = rewrite_temperature
        self.variant, self.placement = variant, placement
        self.name = {"full": "dreamad", "minus": "dreamad_minus", "plus_mad": "plus_mad"}[variant]  # type: ignore[misc]

    async def framings(self, ctx: Context) -> list[tuple[str | None, str | None]]:
        writers = 1 if self.variant != "full" else self.agents
        names = self.names() if writers > 1 else ["elicitor"]
        own = await elicit_prompts(
            ctx,
            self.clients[0],
            [(names[i], self.clients[i]) for i in range(writers)],
            elicit_temperature=self.elicit_temperature,
            rewrite_temperature=self.rewrite_temperature,
        )
        if writers == 1:
            own = own * self.agents
            ctx.extra["elicitation"]["prompts"] *= self.agents
        return [framing(ctx, p, self.placement) for p in own]


class MPD(Method):
    """Multi-persona debate (Liang et al. 2024): affirmative, negative and a judge.

    Each round the affirmative speaks, then the negative (who sees the affirmative), then
    the judge decides whether the correct answer is already clear (discriminative mode);
    "yes" with a legal answer ends the debate (adaptive break). After the last round the
    judge extracts the answer from the whole debate. `level` (0-3) picks the "tit for tat"
    instruction of Liang et al.'s Table 10 (2 is their default). `adaptive_break=False`
    runs every round and asks the judge only to extract (their fixed-iteration ablation).
    """

    name = "mpd"
    param_names = ("level", "rounds", "temperature", "judge_temperature", "adaptive_break")

    def __init__(
        self,
        client: ChatModel | Sequence[ChatModel],
        *,
        level: int = 2,
        rounds: RoundCount = 3,
        temperature: Temperature = 0.7,
        judge_temperature: Temperature = 0.0,
        adaptive_break: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if level not in (0, 1, 2, 3):
            raise ValueError("level must be 0, 1, 2 or 3")
        if rounds < 1:
            raise ValueError("rounds must be >= 1")
        if not isinstance(adaptive_break, bool):
            raise ValueError(f"adaptive_break must be true or false, got {adaptive_break!r}")
        self.level, self.rounds, self.adaptive_break = level, rounds, adaptive_break
        self.temperature, self.judge_temperature = temperature, judge_temperature
        self.affirmative, self.negative, self.judge = _clients(client, 3)

    @property
    def models(self) -> list[str]:
        return [self.affirmative.model, self.negative.model, self.judge.model]

    async def run(self, ctx: Context) -> Any:
        task = ctx.task
        fmt = prompts.output_format("react", task.action_schema())
        meta = prompts.MPD_META.format(level=prompts.TIT_FOR_TAT[self.level], problem=task.prompt())
        judge_system = prompts.MPD_JUDGE_SYSTEM.format(problem=task.prompt())
        history: list[str] = []
        verdicts = []

        def shown() -> str:
            return "\n\n".join(history) if history else "(no arguments yet)"

        for rnd in range(1, self.rounds + 1):
            answers: dict[str, Any] = {}
            for side, client, template in (
                ("affirmative", self.affirmative, prompts.MPD_AFFIRMATIVE),
                ("negative", self.negative, prompts.MPD_NEGATIVE),
            ):
                reply = await ctx.ask(
                    client,
                    [
                        {"role": "system", "content": meta},
                        {
                            "role": "user",
                            "content": template.format(
                                history=prompts.MPD_SHOWN.format(turns=shown()),
                                output_format=fmt,
                            ),
                        },
                    ],
                    agent=side,
                    phase="argue",
                    round=rnd,
                    temperature=self.temperature,
                )
                answers[side] = reply.answer
                history.append(
                    prompts.MPD_TURN.format(side=side.capitalize(), round=rnd, text=reply.text)
                )
            ctx.record_round(answers)
            if rnd == 1 and answers["affirmative"] is None and answers["negative"] is None:
                ctx.extra["stopped"] = "both sides stayed invalid in round 1: nothing to judge"
                return None
            if rnd < self.rounds and self.adaptive_break:
                verdict = await ctx.ask(
                    self.judge,
                    [
                        {"role": "system", "content": judge_system},
                        {
                            "role": "user",
                            "content": prompts.MPD_JUDGE_DISCRIMINATE.format(
                                round=rnd,
                                rounds=self.rounds,
                                history=shown(),
                                schema=task.action_schema(),
                            ),
                        },
                    ],
                    agent="judge",
                    phase="discriminate",
                    round=rnd,
                    temperature=self.judge_temperature,
                    parse=lambda text: _parse_verdict(ctx, text),
                    schema=schemas.verdict_reply(task, max_chars=ctx.chars("discriminate")),
                )
                finished = bool(
                    verdict.ok and verdict.parsed.payload and verdict.parsed.payload["finished"]
                )
                verdicts.append({"round": rnd, "finished": finished})
                if finished:
                    ctx.extra["judge"] = {"verdicts": verdicts, "adaptive_break": rnd}
                    return verdict.answer
        reply = await ctx.ask(
            self.judge,
            [
                {"role": "system", "content": judge_system},
                {
                    "role": "user",
                    "content": prompts.MPD_JUDGE_EXTRACT.format(history=shown(), output_format=fmt),
                },
            ],
            agent="judge",
            phase="extract",
            round=self.rounds,
            temperature=self.judge_temperature,
        )
        ctx.extra["judge"] = {"verdicts": verdicts, "adaptive_break": None}
        return reply.answer


def _parse_verdict(ctx: Context, text: str) -> Parsed:
    """A judge verdict: `preference` Yes/No (or a boolean); if Yes, `action` must be legal."""
    obj = last_object_with(text, "preference")
    flag = None if obj is None else obj["preference"]
    if isinstance(flag, str) and flag.strip().lower()[:3] in ("yes", "no"):
        flag = flag.strip().lower().startswith("yes")
    if not isinstance(flag, bool):
        return Parsed(
            None, None, None, "unparsable", 'no JSON object with "preference": "Yes" or "No"'
        )
    payload = {"finished": flag, "side": obj.get("supported_side")}  # type: ignore[union-attr]
    if not flag:
        return Parsed("json_object", None, None, None, None, payload)
    value = obj.get("action")  # type: ignore[union-attr]
    if value is None:
        return Parsed("json_object", None, None, "unparsable", 'a "Yes" verdict needs an "action"')
    try:
        answer = ctx.task.parse(value)
    except MoveError as exc:
        return Parsed("json_object", value, None, exc.kind, exc.reason)
    return Parsed("json_object", value, answer, None, None, payload)


class CrossModel(Method):
    """Cross-model debate (seed 001): each model solves alone, then critiques and revises once.

    Round 0: every model answers with a step-by-step (CoT) prompt. Round 1: each model sees
    its own and the other models' solutions, checks both, and defends or revises.

    Seed 001 grades each model's revised answer on its own (and "any correct"); it never
    votes between two models. So the answer this method plays (in a game, or as the
    decision's graded answer) is the revised answer of model `play` (1-based; default 1,
    seed 001's primary agent), falling back to the other models' revised answers in order
    if that one stayed invalid (recorded in `extra["played"]`). `play=0` takes the
    plurality of the revised answers instead (with two models a split is a seeded coin
    flip, recorded as a tie-break). `metanim report` grades every model before and after
    from the decision's rounds. `temperatures` gives each model its own temperature
    (seed 001's same-model T = 0 vs T = 0.7 pair).
    """

    name = "cross"
    param_names = ("temperature", "temperatures", "play")

    def __init__(
        self,
        clients: Sequence[ChatModel],
        *,
        temperature: Temperature = 0.0,
        temperatures: Sequence[float] | str | None = None,
        play: int = 1,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if len(clients) < 2:
            raise ValueError("cross-model debate needs at least two clients")
        if not 0 <= play <= len(clients):
            raise ValueError(
                f"play must be 0 (vote) or a model number 1..{len(clients)}, got {play}"
            )
        self.clients, self.temperature = list(clients), temperature
        self.temperatures = _floats(temperatures, len(clients), "temperatures")
        self.play = play

    @property
    def models(self) -> list[str]:
        return [c.model for c in self.clients]

    async def run(self, ctx: Context) -> Any:
        task = ctx.task
        names = [f"model_{i + 1}" for i in range(len(self.clients))]
        temps = self.temperature if self.temperatures is None else self.temperatures
        first = await ctx.ask_round(
            [(n, c, answer_messages(ctx, "cot")) for n, c in zip(names, self.clients, strict=True)],
            phase="solve",
            temperature=temps,
        )
        if ctx.nothing_to_debate(first, "the first solutions"):
            return None
        fmt = prompts.output_format("react", task.action_schema())

        def revise(i: int) -> list[Message]:
            others = "\n\n".join(r.text for j, r in enumerate(first) if j != i)
            content = prompts.CROSS_REVISE.format(
                problem=task.prompt(), own=first[i].text, other=others, output_format=fmt
            )
            return [{"role": "user", "content": content}]

        second = await ctx.ask_round(
            [(n, c, revise(i)) for i, (n, c) in enumerate(zip(names, self.clients, strict=True))],
            phase="revise",
            round=1,
            temperature=temps,
        )
        answers = [r.answer for r in second]
        if self.play == 0:
            return ctx.vote(answers, "majority of the revised answers")
        order = [self.play - 1, *(i for i in range(len(answers)) if i != self.play - 1)]
        chosen = next((i for i in order if answers[i] is not None), None)
        ctx.extra["played"] = None if chosen is None else names[chosen]
        return None if chosen is None else answers[chosen]
