"""Single-model prompting methods: Standard, ReAct, zero-shot CoT, Self-Consistency, Self-Refine."""

from __future__ import annotations

from typing import Any, ClassVar

from metanim.agents import prompts, schemas
from metanim.agents.base import Context, Method, gather
from metanim.agents.elicit import check_placement, elicit_prompts, framing
from metanim.llm import ChatModel, Message
from metanim.util import AgentCount, RoundCount, Temperature


def answer_messages(
    ctx: Context, style: str, system: str | None = None, problem: str | None = None
) -> list[Message]:
    """The game/question prompt (or `problem`, an elicited prompt that replaces it) plus
    the Output Format section of `style`."""
    task = ctx.task
    messages: list[Message] = [] if system is None else [{"role": "system", "content": system}]
    content = prompts.with_format(problem or task.prompt(), style, task.action_schema())
    return [*messages, {"role": "user", "content": content}]


async def _elicited(
    ctx: Context, client: ChatModel, elicit: bool, placement: str, style: str
) -> list[Message]:
    """The answer messages, after DReaMAD's elicitation stage when `elicit` (seed 000
    Table 12's "+ DReaMAD(−)" rows), its prompt placed by `placement`."""
    if not elicit:
        return answer_messages(ctx, style)
    (own,) = await elicit_prompts(ctx, client, [("elicitor", client)])
    return answer_messages(ctx, style, *framing(ctx, own, placement))


class Prompting(Method):
    """One call in a fixed Output Format style (MetaNIM Table 8), re-asked on failure."""

    name: ClassVar[str] = "standard"
    style: ClassVar[str] = "standard"
    param_names: ClassVar[tuple[str, ...]] = ("temperature",)

    def __init__(self, client: ChatModel, *, temperature: Temperature = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.client = client
        self.temperature = temperature

    @property
    def models(self) -> list[str]:
        return [self.client.model]

    async def run(self, ctx: Context) -> Any:
        reply = await ctx.ask(
            self.client,
            answer_messages(ctx, self.style),
            agent="agent",
            phase="answer",
            temperature=self.temperature,
            # Standard asks for the action alone; ReAct and CoT for reasoning first.
            schema=schemas.action_reply(
                ctx.task, reasoning=self.style != "standard", max_chars=ctx.chars("answer")
            )
            if ctx.structured
            else None,
        )
        answer = reply.answer
        ctx.record_round({"agent": answer})
        return answer


class Standard(Prompting):
    """Standard prompting: the answer alone, as JSON (MetaNIM Table 8)."""

    name = "standard"
    style = "standard"


class ReAct(Prompting):
    """ReAct as used in MetaNIM (Table 8): reasoning, then the action, in one JSON object."""

    name = "react"
    style = "react"


class CoT(Prompting):
    """Zero-shot chain of thought (Kojima et al. 2022): ReAct's format plus "think step by step"."""

    name = "cot"
    style = "cot"


class SelfConsistency(Method):
    """Self-Consistency (Wang et al. 2023): n independent CoT samples, plurality vote.

    `elicit=True` first runs DReaMAD's strategic prior knowledge elicitation and every
    sample answers its optimized prompt (seed 000 Table 12); `placement` as in
    `metanim.agents.elicit` (default: the optimized prompt replaces the initial one).

    Each sample is its own call with its own `sample_index`, so response caches keep them
    apart (docs/architecture.md, "What a run never does"). Ties go to the seeded rule.
    """

    name = "self_consistency"
    param_names = ("n", "temperature", "elicit", "placement")

    def __init__(
        self,
        client: ChatModel,
        *,
        n: AgentCount = 5,
        temperature: Temperature = 0.7,
        elicit: bool = False,
        placement: str = "replace",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if n < 1:
            raise ValueError("n must be >= 1")
        self.client, self.n, self.temperature = client, n, temperature
        self.elicit = bool(elicit)
        self.placement = check_placement(placement)

    @property
    def models(self) -> list[str]:
        return [self.client.model]

    async def run(self, ctx: Context) -> Any:
        messages = await _elicited(ctx, self.client, self.elicit, self.placement, "cot")
        results = await gather(
            *(
                ctx.ask(
                    self.client,
                    messages,
                    agent=f"sample_{i + 1}",
                    phase="answer",
                    temperature=self.temperature,
                    sample_index=i,
                )
                for i in range(self.n)
            )
        )
        answers = [reply.answer for reply in results]
        ctx.record_round({f"sample_{i + 1}": a for i, a in enumerate(answers)})
        return ctx.vote(answers, "majority of samples")


class SelfRefine(Method):
    """Self-Refine (Madaan et al. 2023): answer, then `iterations` rounds of feedback and refinement.

    MetaNIM applies three refinement steps; `elicit=True` first runs DReaMAD's elicitation
    and answers (and refines) on its optimized prompt (seed 000 Table 12; `placement` as in
    `metanim.agents.elicit`). The final answer is the last valid one. When
    the last step stays invalid (after its re-asks) and an earlier answer is used, the
    decision records it: `extra["fell_back_to_iteration"]` is that answer's step (0 = the
    initial answer), and `extra["invalid_steps"]` lists every step that stayed invalid.
    """

    name = "self_refine"
    param_names = ("iterations", "temperature", "elicit", "placement")

    def __init__(
        self,
        client: ChatModel,
        *,
        iterations: RoundCount = 3,
        temperature: Temperature = 0.0,
        elicit: bool = False,
        placement: str = "replace",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if iterations < 0:
            raise ValueError("iterations must be >= 0")
        self.client, self.iterations, self.temperature = client, iterations, temperature
        self.elicit = bool(elicit)
        self.placement = check_placement(placement)

    @property
    def models(self) -> list[str]:
        return [self.client.model]

    async def run(self, ctx: Context) -> Any:
        task = ctx.task
        messages = await _elicited(ctx, self.client, self.elicit, self.placement, "react")
        reply = await ctx.ask(
            self.client, messages, agent="agent", phase="answer", temperature=self.temperature
        )
        answer, text = reply.answer, reply.text
        ctx.record_round({"agent": answer})
        best, best_step = answer, 0
        invalid = [] if answer is not None else [0]
        fmt = prompts.output_format("react", task.action_schema())
        for it in range(1, self.iterations + 1):
            messages = [
                *messages,
                {"role": "assistant", "content": text},
                {"role": "user", "content": prompts.REFINE_FEEDBACK.format(noun=task.noun)},
            ]
            feedback, _ = await ctx.chat(
                self.client,
                messages,
                agent="agent",
                phase="feedback",
                round=it,
                temperature=self.temperature,
            )
            messages = [
                *messages,
                {"role": "assistant", "content": feedback.text},
                {"role": "user", "content": prompts.REFINE_REVISE.format(output_format=fmt)},
            ]
            reply = await ctx.ask(
                self.client,
                messages,
                agent="agent",
                phase="refine",
                round=it,
                temperature=self.temperature,
            )
            answer, text = reply.answer, reply.text
            ctx.record_round({"agent": answer})
            if answer is not None:
                best, best_step = answer, it
            else:
                invalid.append(it)
        if invalid:
            ctx.extra["invalid_steps"] = invalid
        if answer is None and best is not None:
            # The final step failed: say so rather than report a plain "ok".
            ctx.extra["fell_back_to_iteration"] = best_step
        return best
