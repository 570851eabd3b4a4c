"""Debate methods: MAD (Du et al.), anonymized MAD, DReaMAD and its variants, MPD, cross-model."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from metanim.agents import prompts, schemas
from metanim.agents.base import Context, Method, gather
from metanim.agents.parsing import Parsed, last_object_with
from metanim.agents.single import answer_messages
from metanim.games import MoveError
from metanim.llm._types import ChatModel, Completion, Message

log = logging.getLogger("metanim.agents")


def _clients(client: ChatModel | Sequence[ChatModel], count: int) -> list[ChatModel]:
    pool = [client] if isinstance(client, ChatModel) else list(client)
    if not pool:
        raise ValueError("at least one client is needed")
    return [pool[i % len(pool)] for i in range(count)]


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
    """

    name = "mad"
    param_names = ("agents", "rounds", "temperature")
    anonymous = False

    def __init__(
        self,
        client: ChatModel | Sequence[ChatModel],
        *,
        agents: int = 2,
        rounds: int = 3,
        temperature: float = 0.7,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if agents < 1:
            raise ValueError("agents must be >= 1")
        if rounds < 0:
            raise ValueError("rounds (update rounds after the initial answers) must be >= 0")
        self.agents, self.rounds, self.temperature = agents, rounds, temperature
        self.clients = _clients(client, agents)

    @property
    def models(self) -> list[str]:
        return [c.model for c in self.clients]

    def names(self) -> list[str]:
        return [f"agent_{i + 1}" for i in range(self.agents)]

    async def systems(self, ctx: Context) -> list[str | None]:
        """Per-agent system prompts (DReaMAD puts each agent's own prompt here)."""
        return [None] * self.agents

    async def run(self, ctx: Context) -> Any:
        systems = await self.systems(ctx)
        return await self.debate(ctx, systems)

    async def debate(self, ctx: Context, systems: Sequence[str | None]) -> Any:
        names = self.names()
        replies = await ctx.ask_round(
            [
                (name, client, answer_messages(ctx, "react", system))
                for name, client, system in zip(names, self.clients, systems, strict=True)
            ],
            phase="answer",
            temperature=self.temperature,
        )
        ctx.extra.setdefault("orders", [])
        for rnd in range(1, self.rounds + 1):
            if self.agents > 1 and _consensus(ctx, [r.answer for r in replies]):
                ctx.extra["stopped_early"] = rnd
                break
            texts = [r.text for r in replies]
            messages = [self.update_messages(ctx, i, texts, systems[i]) for i in range(self.agents)]
            replies = await ctx.ask_round(
                list(zip(names, self.clients, messages, strict=True)),
                phase="update",
                round=rnd,
                temperature=self.temperature,
            )
        return ctx.vote([r.answer for r in replies], "majority of the last round")

    def update_messages(
        self, ctx: Context, i: int, texts: Sequence[str], system: str | None
    ) -> list[Message]:
        task = ctx.task
        fmt = prompts.output_format("react", task.action_schema())
        if self.anonymous:
            # Choi et al. App. B.2: all answers, own included and unmarked, shuffled.
            order = list(range(len(texts)))
            ctx.rng.shuffle(order)
            ctx.extra["orders"].append({"agent": self.names()[i], "order": order})
            peers = "\n".join(
                prompts.ANONYMOUS_PEER.format(index=k + 1, answer=texts[j])
                for k, j in enumerate(order)
            )
            content = prompts.ANONYMOUS_UPDATE.format(
                problem=task.prompt(), peers=peers, output_format=fmt
            )
        else:
            peers = "\n".join(
                prompts.DEBATE_PEER.format(label=f"Agent {j + 1}", answer=texts[j])
                for j in range(len(texts))
                if j != i
            )
            content = prompts.DEBATE_UPDATE.format(
                problem=task.prompt(), own=texts[i], peers=peers, output_format=fmt
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


_GAME_KEYS = ("game_definition", "winning_condition", "move_constraints")
_STRATEGY_KEYS = ("state_evaluation", "winning_strategy", "endgame_tactics")


def _fields(completion: Completion, keys: Sequence[str]) -> tuple[dict[str, str], bool]:
    """The string fields of the last JSON object with `keys`; the whole text if there is none.

    A reply cut off by the completion cap is not structured either (its `False` is recorded
    in `extra["elicitation"]["structured"]`), even if a prefix of it happens to parse.
    """
    text = completion.text
    obj = None if completion.truncated else last_object_with(text, *keys)
    if obj is None:
        return {k: text.strip() for k in keys}, False
    return {k: str(obj[k]) for k in keys}, True


class DReaMAD(MAD):
    """DReaMAD (MetaNIM seed, §4): elicit strategy, diversify each agent's prompt, then debate.

    1. Game Situation Reinterpretation and 2. General Strategy Formulation, one call each at
    `elicit_temperature` = 0.1. 3. Perspective Diversification: each agent rewrites the
    initial prompt into its own at `rewrite_temperature` = 0.7. 4. MAD among those agents.
    The self-generated prompt is given as the agent's system message, with the game prompt
    still in the user message, so a rewrite that drops a fact of the state cannot lose it.

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
    )
    # The rewrite is a whole prompt, longer than an answer.
    default_phase_max_tokens = {"rewrite": 1024}  # noqa: RUF012

    def __init__(
        self,
        client: ChatModel | Sequence[ChatModel],
        *,
        agents: int = 2,
        rounds: int = 3,
        temperature: float = 0.7,
        elicit_temperature: float = 0.1,
        rewrite_temperature: float = 0.7,
        variant: str = "full",
        **kwargs: Any,
    ) -> None:
        if variant not in ("full", "minus", "plus_mad"):
            raise ValueError("variant must be 'full', 'minus' or 'plus_mad'")
        if variant == "minus":
            agents, rounds = 1, 0
        super().__init__(client, agents=agents, rounds=rounds, temperature=temperature, **kwargs)
        self.elicit_temperature = elicit_temperature
        self._warned = False
        self.rewrite_temperature = rewrite_temperature
        self.variant = variant
        self.name = {"full": "dreamad", "minus": "dreamad_minus", "plus_mad": "plus_mad"}[variant]  # type: ignore[misc]

    async def systems(self, ctx: Context) -> list[str | None]:
        task, elicitor = ctx.task, self.clients[0]
        problem = task.prompt()
        first, _ = await ctx.chat(
            elicitor,
            [{"role": "user", "content": prompts.DREAMAD_REINTERPRET.format(problem=problem)}],
            agent="elicitor",
            phase="reinterpret",
            temperature=self.elicit_temperature,
            schema=schemas.fields_reply(_GAME_KEYS, max_chars=ctx.chars("reinterpret", 3)),
        )
        game, ok1 = _fields(first, _GAME_KEYS)
        second, _ = await ctx.chat(
            elicitor,
            [
                {
                    "role": "user",
                    "content": prompts.DREAMAD_STRATEGY.format(
                        short_state=task.short_state(), **game
                    ),
                }
            ],
            agent="elicitor",
            phase="strategy",
            temperature=self.elicit_temperature,
            schema=schemas.fields_reply(_STRATEGY_KEYS, max_chars=ctx.chars("strategy", 3)),
        )
        strategy, ok2 = _fields(second, _STRATEGY_KEYS)
        rewrite: list[Message] = [
            {
                "role": "user",
                "content": prompts.DREAMAD_REWRITE.format(
                    problem=problem, game_definition=game["game_definition"], **strategy
                ),
            }
        ]
        writers = 1 if self.variant != "full" else self.agents
        outs = await gather(
            *(
                ctx.chat(
                    self.clients[i],
                    rewrite,
                    agent=self.names()[i] if writers > 1 else "elicitor",
                    phase="rewrite",
                    temperature=self.rewrite_temperature,
                    sample_index=i,
                    # A whole prompt: as long as the rewrite's cap allows.
                    schema=schemas.fields_reply(
                        ("optimized_prompt",), max_chars=ctx.chars("rewrite", scale=4)
                    ),
                )
                for i in range(writers)
            )
        )
        rewritten = [_fields(c, ("optimized_prompt",)) for c, _ in outs]
        own = [fields["optimized_prompt"] for fields, _ in rewritten]
        if writers == 1:
            own = own * self.agents
        ctx.extra["elicitation"] = {
            "game": game,
            "strategy": strategy,
            "prompts": own,
            "structured": [ok1, ok2, *(ok for _, ok in rewritten)],
        }
        if not all(ctx.extra["elicitation"]["structured"]) and not self._warned:
            # Once per method: the flags stay in every decision record.
            self._warned = True
            log.warning(
                "%s: an elicitation step did not return the JSON it asked for (or was cut "
                "off), and its raw text was passed on; see extra['elicitation']['structured'] "
                "in the decision records, and consider --structured-output",
                self.name,
            )
        return [prompts.DREAMAD_AGENT_SYSTEM.format(optimized_prompt=p) for p in own]


class MPD(Method):
    """Multi-persona debate (Liang et al. 2024): affirmative, negative and a judge.

    Each round the affirmative speaks, then the negative (who sees the affirmative), then
    the judge decides whether the correct answer is already clear (discriminative mode);
    "yes" with a legal answer ends the debate (adaptive break). After the last round the
    judge extracts the answer from the whole debate. `level` (0-3) picks the "tit for tat"
    instruction of Liang et al.'s Table 10 (2 is their default).
    """

    name = "mpd"
    param_names = ("level", "rounds", "temperature", "judge_temperature")

    def __init__(
        self,
        client: ChatModel | Sequence[ChatModel],
        *,
        level: int = 2,
        rounds: int = 3,
        temperature: float = 0.7,
        judge_temperature: float = 0.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if level not in (0, 1, 2, 3):
            raise ValueError("level must be 0, 1, 2 or 3")
        if rounds < 1:
            raise ValueError("rounds must be >= 1")
        self.level, self.rounds = level, rounds
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
                                history=f"Debate so far:\n{shown()}", output_format=fmt
                            ),
                        },
                    ],
                    agent=side,
                    phase="argue",
                    round=rnd,
                    temperature=self.temperature,
                )
                answers[side] = reply.answer
                history.append(f"{side.capitalize()} side (round {rnd}): {reply.text}")
            ctx.record_round(answers)
            if rnd < self.rounds:
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
    its own and the other models' solutions, checks both, and defends or revises. Final
    answer: plurality of the revised answers, ties by the seeded rule.
    """

    name = "cross"
    param_names = ("temperature",)

    def __init__(
        self, clients: Sequence[ChatModel], *, temperature: float = 0.0, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        if len(clients) < 2:
            raise ValueError("cross-model debate needs at least two clients")
        self.clients, self.temperature = list(clients), temperature

    @property
    def models(self) -> list[str]:
        return [c.model for c in self.clients]

    async def run(self, ctx: Context) -> Any:
        task = ctx.task
        names = [f"model_{i + 1}" for i in range(len(self.clients))]
        first = await ctx.ask_round(
            [(n, c, answer_messages(ctx, "cot")) for n, c in zip(names, self.clients, strict=True)],
            phase="solve",
            temperature=self.temperature,
        )
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
            temperature=self.temperature,
        )
        return ctx.vote([r.answer for r in second], "majority of the revised answers")
