"""The `Method` interface, the `Decision` record and the per-decision context.

A method maps a task (a game position or a question) to one answer and a complete,
serializable record of how it got there: every call with its messages and temperature,
every sampled answer with its parsed action, each agent's answer per round, tie-breaks,
usage, cost and latency, and the counts of unparsable and illegal answers
(docs/architecture.md, "The flow of one decision" and "What a run never does").
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from metanim.agents import prompts, schemas
from metanim.agents.parsing import Parsed, parse_reply
from metanim.agents.tasks import GameTask, Task, as_task, sorted_answers
from metanim.games import PROMPT_VERSION, Game
from metanim.llm import (
    AUTO,
    DEFAULT_MAX_COMPLETION_TOKENS,
    CallOptions,
    ChatModel,
    Completion,
    InfrastructureError,
    Message,
    Usage,
)
from metanim.util import PositiveInt, RoundCount, Temperature, derive_seed

Status = Literal["ok", "forfeit", "fallback", "infrastructure_error"]
OnFailure = Literal["forfeit", "random"]


class Counts(BaseModel):
    """What a decision cost and how its replies failed: the counters every record carries.

    One decision has them (`Decision.counts`), a move record copies them, a player's
    totals and a run's usage add them up (`+`, `Counts.total`): the fields are named here
    once.
    """

    model_config = ConfigDict(frozen=True)

    illegal: int = 0  # replies that named a forbidden answer
    unparsable: int = 0  # replies that named no answer
    truncated: int = 0  # replies cut off by the completion cap
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0  # the decision's wall time (its calls' waits for a slot included)
    call_latency_s: float = 0.0  # summed over its calls: request sent to response received
    queue_s: float = 0.0  # summed over its calls: call made to request sent (slot waits)
    reasoning_tokens: int = 0  # of completion_tokens, spent thinking (as servers report it)
    unpriced_calls: int = 0  # calls whose cost is unknown (no price; the server bills)
    # Under structured output: the replies to calls that sent a reply schema (truncated
    # ones aside), and those of them that broke it (`schemas.keeps_to`). A constraining
    # server cannot write a reply that breaks its schema, so a break is the server's
    # defect; the reply is still read and scored as the model's answer (docs/llm.md).
    schema_replies: int = 0
    schema_violations: int = 0

    @classmethod
    def of(cls, decision: Any) -> Counts:
        """The counters of a method's decision record: a `Decision`, or any record with its
        fields (`illegal`, `unparsable`, `truncated`, `calls`, `usage`, `cost_usd`,
        `latency_s`; `samples` for the schema counts)."""
        calls = decision.calls
        replies, violations = schema_counts(calls, getattr(decision, "samples", ()))
        return cls(
            illegal=int(decision.illegal),
            unparsable=int(decision.unparsable),
            truncated=int(getattr(decision, "truncated", 0)),
            calls=len(calls),
            prompt_tokens=int(decision.usage.prompt_tokens),
            completion_tokens=int(decision.usage.completion_tokens),
            cost_usd=float(decision.cost_usd),
            latency_s=float(decision.latency_s),
            call_latency_s=float(sum(getattr(c, "latency_s", 0.0) for c in calls)),
            queue_s=float(sum(getattr(c, "queue_s", 0.0) for c in calls)),
            reasoning_tokens=int(getattr(decision.usage, "reasoning_tokens", 0)),
            unpriced_calls=sum(not getattr(c, "priced", True) for c in calls),
            schema_replies=replies,
            schema_violations=violations,
        )

    @classmethod
    def total(cls, items: Iterable[Counts], **fields: Any) -> Any:
        """A `cls` holding the sums of `items`' counters, plus `fields`."""
        sums = dict.fromkeys(Counts.model_fields, 0)
        for item in items:
            for name in sums:
                sums[name] += getattr(item, name)
        return cls(**sums, **fields)


def schema_counts(calls: Sequence[Any], samples: Iterable[Any]) -> tuple[int, int]:
    """(replies to calls that sent a reply schema, replies that broke it) of one decision.

    A truncated reply (cut at the completion cap) is counted as truncated, not here.
    """
    replies = violations = 0
    for sample in samples:
        if sample.error == "truncated" or not 0 <= sample.call < len(calls):
            continue
        schema = (getattr(calls[sample.call], "options", None) or {}).get("schema")
        if schema is None:
            continue
        replies += 1
        violations += not schemas.keeps_to(schema, sample.text)
    return replies, violations


class CallRecord(BaseModel):
    """One chat call: who made it, in which phase and round, with what, and what came back."""

    model_config = ConfigDict(frozen=True)

    index: int
    agent: str
    phase: str
    round: int
    attempt: int
    model: str
    temperature: float
    seed: int | None
    sample_index: int
    messages: list[Message]
    texts: list[str]
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_s: float = 0.0  # request sent to response received, retries included
    queue_s: float = 0.0  # call made to request sent (waiting for a concurrency slot)
    cached: bool = False
    # What the request asked beyond messages and temperature (cap, top_p, stop, extra body,
    # structured-output mode and the schema sent), and how the server answered.
    options: dict[str, Any] = Field(default_factory=dict)
    finish_reasons: list[str | None] = Field(default_factory=list)
    retries: int = 0  # failed transport attempts before the answer (resent requests)
    attempt_errors: list[dict[str, Any]] = Field(default_factory=list)
    reasoning: list[str | None] = Field(default_factory=list)  # a reasoning model's thinking
    endpoint: str | None = None  # the replica that answered
    # False: the model has no price and its server bills, so `cost_usd` is unknown (0.0
    # stands for "not counted", never for "free").
    priced: bool = True
    # What went on the wire where servers differ: the cap's field and value, the
    # temperature sent (None: the server's default), streaming, the API, and what was
    # adapted after the server refused a field (`Completion.sent`).
    sent: dict[str, Any] = Field(default_factory=dict)
    server_s: float | None = None  # the server's own busy time, where it reports one


class Sample(BaseModel):
    """One sampled answer and how it parsed."""

    model_config = ConfigDict(frozen=True)

    call: int  # index into Decision.calls
    agent: str
    phase: str
    round: int
    attempt: int
    text: str
    stage: str | None
    answer: Any = None  # JSON value of the parsed answer
    answer_text: str | None = None
    action_id: Any = None  # the vote key (a game's action id, an option letter, a number)
    # None, "unparsable", "illegal" or "truncated" (cut off by the completion cap: never
    # read as an answer, however much of it came through)
    error: str | None = None
    reason: str | None = None
    payload: dict[str, Any] | None = None  # judge verdicts, AceMAD belief/prediction reports


class TieBreak(BaseModel):
    """A recorded vote: the counts, the tied candidates and the seeded choice."""

    model_config = ConfigDict(frozen=True)

    context: str
    counts: dict[str, float]
    candidates: list[str]
    chosen: str
    rule: str = "uniform among the tied answers, sorted by action id, from the decision seed"


class Decision(BaseModel):
    """A method's decision on one task, with everything needed to analyse it."""

    model_config = ConfigDict(frozen=True)

    method: str
    params: dict[str, Any]
    prompt_version: str = prompts.METHOD_PROMPT_VERSION
    game_prompt_version: str = PROMPT_VERSION
    task: dict[str, Any]
    seed: int
    status: Status
    # The chosen answer as a Python value (a game move), or None; never serialised:
    # `answer` is its JSON form.
    move: Any = Field(None, exclude=True)
    answer: Any = None  # its JSON value
    answer_text: str | None = None
    action_id: Any = None
    unparsable: int = 0  # replies that named no answer (every attempt counted)
    illegal: int = 0  # replies that named a forbidden answer
    # Replies cut off by the completion cap (finish_reason "length"), in every phase:
    # an answer's and a free-text phase's (an argument, feedback, an elicitation step).
    truncated: int = 0
    # The same, per phase ("argue": 3): where the cap bit.
    truncated_phases: dict[str, int] = Field(default_factory=dict)
    # Why a forfeit or fallback happened: the last invalid reply's kind (unparsable,
    # illegal, truncated), so a format failure is never mistaken for a bad move.
    failure: str | None = None
    # Tokens spent on replies that were invalid (re-asked or forfeited).
    invalid_usage: Usage = Field(default_factory=Usage)
    failed_agents: int = 0  # agent turns that stayed invalid after all re-asks
    calls: list[CallRecord] = Field(default_factory=list)
    samples: list[Sample] = Field(default_factory=list)
    rounds: list[dict[str, str | None]] = Field(default_factory=list)  # agent -> answer text
    tie_breaks: list[TieBreak] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_s: float = 0.0  # wall time of the whole decision
    error: str | None = None

    @property
    def messages(self) -> dict[str, list[Message]]:
        """All messages per agent, in call order (each call's prompt, then its reply)."""
        out: dict[str, list[Message]] = {}
        for call in self.calls:
            out.setdefault(call.agent, []).extend(call.messages)
            out[call.agent].append({"role": "assistant", "content": call.texts[0]})
        return out

    @property
    def n_calls(self) -> int:
        return len(self.calls)

    @property
    def counts(self) -> Counts:
        """The decision's counters, as move records and totals carry them."""
        return Counts.of(self)


class DecisionInfrastructureError(InfrastructureError):
    """An `InfrastructureError` during a decision; `.decision` holds the partial record."""

    def __init__(self, cause: InfrastructureError, decision: Decision) -> None:
        super().__init__(str(cause), kind=cause.kind)
        self.decision = decision


@dataclass(frozen=True)
class Reply:
    """The outcome of `Context.ask`: the answer (None if invalid), the last text and its parse."""

    answer: Any
    text: str
    parsed: Parsed

    @property
    def ok(self) -> bool:
        return self.parsed.ok


class Context:
    """Everything one decision accumulates; methods make all model calls through it."""

    def __init__(
        self,
        task: Task,
        seed: int,
        max_reasks: int,
        *,
        options: CallOptions | None = None,
        phase_max_tokens: dict[str, int] | None = None,
        reask_temperature: float = 0.7,
        max_chars: int = schemas.DEFAULT_MAX_CHARS,
        given_phase_caps: Collection[str] = (),
        capped: dict[int, tuple[CallOptions, CallOptions]] | None = None,
    ) -> None:
        self.task = task
        self.seed = seed
        self._rng: random.Random | None = None
        self.max_reasks = max_reasks
        self.options = options or CallOptions()
        # `options` with each cap, made once: its record is then dumped once too
        # (`CallOptions.record`), not per call (a method passes one dict for all its
        # decisions).
        self._capped = {} if capped is None else capped
        self.phase_max_tokens = dict(phase_max_tokens or {})
        # Phases whose cap the run gave (the others are the method's defaults, sized for a
        # model that does not think first).
        self.given_phase_caps = frozenset(given_phase_caps)
        self.reask_temperature = reask_temperature
        self.max_chars = max_chars
        self.calls: list[CallRecord] = []
        self.samples: list[Sample] = []
        self.rounds: list[dict[str, str | None]] = []
        self.tie_breaks: list[TieBreak] = []
        self.extra: dict[str, Any] = {}
        self.failed_agents = 0

    @property
    def rng(self) -> random.Random:
        """The decision's generator (tie-breaks, shuffles, fallback), seeded on first use."""
        if self._rng is None:
            self._rng = random.Random(self.seed)
        return self._rng

    async def chat(
        self,
        client: ChatModel,
        messages: list[Message],
        *,
        agent: str,
        phase: str,
        round: int = 0,
        attempt: int = 0,
        temperature: float = 0.0,
        sample_index: int = 0,
        schema: dict[str, Any] | None = None,
    ) -> tuple[Completion, int]:
        """One recorded chat call (seed derived from the decision seed); returns its index.

        The call gets the method's options with this phase's completion cap, and `schema`
        as its reply schema (sent only when structured output is on).
        """
        index = len(self.calls)
        # Reserve the slot now so that concurrent calls keep a deterministic order.
        self.calls.append(None)  # type: ignore[arg-type]
        seed = derive_seed(self.seed, agent, phase, round, attempt, sample_index)
        options = self.call_options(phase, schema, client)
        completion = await client.chat(
            list(messages),
            temperature=temperature,
            seed=seed,
            sample_index=sample_index,
            options=options,
        )
        self.calls[index] = CallRecord(
            index=index,
            agent=agent,
            phase=phase,
            round=round,
            attempt=attempt,
            model=completion.model or client.model,
            temperature=temperature,
            seed=seed,
            sample_index=sample_index,
            messages=list(messages),
            texts=list(completion.texts),
            usage=completion.usage,
            cost_usd=completion.cost_usd,
            latency_s=completion.latency_s,
            queue_s=completion.queue_s,
            cached=completion.cached,
            options=options.record(),
            finish_reasons=list(completion.finish_reasons),
            retries=completion.retries,
            attempt_errors=list(completion.attempt_errors),
            reasoning=list(completion.reasoning),
            endpoint=completion.endpoint,
            priced=completion.priced,
            sent=dict(completion.sent),
            server_s=completion.server_s,
        )
        return completion, index

    @property
    def structured(self) -> bool:
        """Whether calls carry a reply schema (else building one is wasted work)."""
        return self.options.structured_output != "off"

    def chars(self, phase: str, fields: int = 1, scale: int = 1) -> int:
        """The longest free-text field of a reply schema with `fields` such fields.

        `scale` x `max_chars`, lowered so that the fields plus the JSON around them fit
        under the phase's completion cap (a token is at least one character).
        """
        most = scale * self.max_chars
        cap = self.call_options(phase, None).max_tokens
        if cap is None:
            return most
        return max(16, min(most, (int(cap) - 32 * fields) // fields))

    def call_options(
        self, phase: str, schema: dict[str, Any] | None, client: ChatModel | None = None
    ) -> CallOptions:
        """The options of one call: the method's, this phase's cap, and the reply schema.

        A cap of "auto" becomes the model's own default where the client knows it
        (`OpenAIChatClient.defaults`): a reasoning model gets its whole default cap in
        every phase, since its thinking counts in the cap, unless the run gave that phase
        a cap; any other model gets the phase's cap, else 512.
        """
        options = self.options
        cap = options.max_tokens
        if cap == AUTO:
            defaults = getattr(client, "defaults", None) if client is not None else None
            reasoning = bool(getattr(defaults, "reasoning", False))
            if phase in self.phase_max_tokens and (phase in self.given_phase_caps or not reasoning):
                cap = self.phase_max_tokens[phase]
            elif defaults is not None:
                cap = int(defaults.cap)
            else:
                cap = DEFAULT_MAX_COMPLETION_TOKENS
            options = self._with_cap(cap)
        elif phase in self.phase_max_tokens:
            options = self._with_cap(self.phase_max_tokens[phase])
        if options.structured_output != "off":
            options = options.with_(schema=schema)
        return options

    def _with_cap(self, cap: int) -> CallOptions:
        hit = self._capped.get(cap)
        if hit is None or hit[0] is not self.options:  # made from other options
            hit = self._capped[cap] = (self.options, self.options.with_(max_tokens=cap))
        return hit[1]

    def record_sample(
        self, call: int, agent: str, phase: str, round: int, attempt: int, text: str, parsed: Parsed
    ) -> Sample:
        task = self.task
        ok = parsed.answer is not None
        sample = Sample(
            call=call,
            agent=agent,
            phase=phase,
            round=round,
            attempt=attempt,
            text=text,
            stage=parsed.stage,
            answer=task.to_json(parsed.answer) if ok else None,
            answer_text=task.text(parsed.answer) if ok else None,
            action_id=task.key(parsed.answer) if ok else None,
            error=parsed.error,
            reason=parsed.reason,
            payload=parsed.payload,
        )
        self.samples.append(sample)
        return sample

    async def ask(
        self,
        client: ChatModel,
        messages: list[Message],
        *,
        agent: str,
        phase: str,
        round: int = 0,
        temperature: float = 0.0,
        sample_index: int = 0,
        parse: Any = None,
        schema: dict[str, Any] | Literal["action"] | None = "action",
    ) -> Reply:
        """Ask for an answer; re-ask with feedback up to `max_reasks` times.

        Returns the last reply: its parsed answer (None if it stayed invalid) and text.
        An illegal answer, an unparsable one and one cut off by the completion cap get
        different feedback (prompts.FEEDBACK). A re-ask changes more than the feedback: a
        new seed, and at temperature 0 `reask_temperature`, since a greedy model tends to
        repeat its reply word for word. `parse` replaces `parse_reply` for non-action
        replies (AceMAD commitments); `schema` is the reply schema for structured output
        ("action": reasoning and the action, as the ReAct format asks).
        """
        parse = parse or (lambda text: parse_reply(self.task, text))
        if schema == "action":
            schema = (
                schemas.action_reply(self.task, max_chars=self.chars(phase))
                if self.structured
                else None
            )
        conversation = list(messages)
        for attempt in range(self.max_reasks + 1):
            temp = temperature
            if attempt > 0 and temperature == 0:
                temp = self.reask_temperature
            completion, call_index = await self.chat(
                client,
                conversation,
                agent=agent,
                phase=phase,
                round=round,
                attempt=attempt,
                temperature=temp,
                sample_index=sample_index,
                schema=schema,
            )
            text = completion.text
            if completion.truncated:
                cap = self.call_options(phase, None, client).max_tokens
                parsed = Parsed(
                    None,
                    None,
                    None,
                    "truncated",
                    f"the reply was cut off at the completion cap ({cap} tokens)",
                )
            else:
                parsed = parse(text)
            self.record_sample(call_index, agent, phase, round, attempt, text, parsed)
            if parsed.ok:
                return Reply(parsed.answer, text, parsed)
            conversation = [
                *conversation,
                {"role": "assistant", "content": text},
                {"role": "user", "content": self.feedback(parsed)},
            ]
        self.failed_agents += 1
        return Reply(None, text, parsed)

    def feedback(self, parsed: Parsed) -> str:
        task = self.task
        if parsed.error == "truncated":
            return prompts.FEEDBACK["truncated"].format(schema=task.action_schema())
        if parsed.error == "illegal":
            return prompts.FEEDBACK["illegal"].format(
                noun=task.noun, answer=parsed.value, reason=parsed.reason
            )
        return prompts.FEEDBACK["unparsable"].format(
            reason=parsed.reason, schema=task.action_schema()
        )

    def vote(
        self,
        answers: Sequence[Any],
        context: str,
        weights: Sequence[float] | None = None,
        *,
        record: str = "split",
    ) -> Any:
        """Plurality (optionally weighted) over valid answers; ties broken by the seeded rule.

        Returns None if no answer is valid. A vote is recorded when the answers split
        (`record="split"`) or only when the top is tied (`record="tie"`).
        """
        task = self.task
        weights = [1.0] * len(answers) if weights is None else list(weights)
        valid = [(a, w) for a, w in zip(answers, weights, strict=True) if a is not None]
        if not valid:
            return None
        totals: Counter[Hashable] = Counter()
        by_key: dict[Hashable, Any] = {}
        for answer, weight in valid:
            key = task.key(answer)
            totals[key] += weight
            by_key.setdefault(key, answer)
        top = max(totals.values())
        # Exact ties only (up to float noise), so weighted votes are not rounded into ties.
        tied_keys = [k for k, v in totals.items() if abs(v - top) <= 1e-12]
        tied = sorted_answers(task, [by_key[k] for k in tied_keys])
        chosen = tied[0] if len(tied) == 1 else self.rng.choice(tied)
        if len(tied) > 1 or (record == "split" and len(totals) > 1):
            self.tie_breaks.append(
                TieBreak(
                    context=context,
                    counts={task.text(by_key[k]): float(v) for k, v in totals.items()},
                    candidates=[task.text(a) for a in tied],
                    chosen=task.text(chosen),
                )
            )
        return chosen

    async def ask_round(
        self,
        asks: Sequence[tuple[str, ChatModel, list[Message]]],
        *,
        phase: str,
        round: int = 0,
        temperature: float | Sequence[float] = 0.0,
    ) -> list[Reply]:
        """One debate round: every `(agent, client, messages)` asked at once, then recorded.

        `temperature` is one for every agent or one per agent (seed 001's T = 0 vs 0.7 pair).
        """
        temps = (
            [float(temperature)] * len(asks)
            if isinstance(temperature, int | float)
            else [float(t) for t in temperature]
        )
        if len(temps) != len(asks):
            raise ValueError(f"{len(temps)} temperatures for {len(asks)} agents")
        replies: list[Reply] = await gather(
            *(
                self.ask(
                    client,
                    messages,
                    agent=agent,
                    phase=phase,
                    round=round,
                    temperature=temp,
                )
                for (agent, client, messages), temp in zip(asks, temps, strict=True)
            )
        )
        self.record_round({a[0]: r.answer for a, r in zip(asks, replies, strict=True)})
        return replies

    def nothing_to_debate(self, replies: Sequence[Reply], first: str = "round 0") -> bool:
        """Whether every agent stayed invalid in the `first` round (re-asks included).

        A debate of invalid answers only shows the agents each other's failures: the
        method stops there (a forfeit, or the fallback), recorded in `extra["stopped"]`.
        """
        if not replies or any(r.ok for r in replies):
            return False
        self.extra["stopped"] = f"every agent stayed invalid in {first}: nothing to debate"
        return True

    def record_round(self, answers: dict[str, Any]) -> None:
        self.rounds.append(
            {agent: (None if a is None else self.task.text(a)) for agent, a in answers.items()}
        )


class Method:
    """A prompting or debate method: one class each, one interface.

    Subclasses set `name`, keep their parameters as attributes listed in `param_names`
    and implement `run(ctx)`, returning the chosen answer or None.
    """

    name: ClassVar[str] = "method"
    param_names: ClassVar[tuple[str, ...]] = ()

    #: Completion caps of phases that need another than the run's (DReaMAD's rewrite
    #: writes a whole prompt); a run's `phase_max_tokens` wins over these.
    default_phase_max_tokens: ClassVar[dict[str, int]] = {}

    def __init__(
        self,
        *,
        max_reasks: RoundCount = 2,
        on_failure: OnFailure = "forfeit",
        options: CallOptions | dict[str, Any] | None = None,
        phase_max_tokens: dict[str, int] | None = None,
        reask_temperature: Temperature = 0.7,
        max_chars: PositiveInt = schemas.DEFAULT_MAX_CHARS,
    ) -> None:
        if max_reasks < 0:
            raise ValueError("max_reasks must be >= 0")
        if on_failure not in ("forfeit", "random"):
            raise ValueError(f"on_failure must be 'forfeit' or 'random', got {on_failure!r}")
        if max_chars < 1:
            raise ValueError("max_chars must be >= 1")
        self.max_reasks = max_reasks
        self.on_failure = on_failure
        #: Every call's options (cap, top_p, stop, extra body, structured output).
        self.options = options if isinstance(options, CallOptions) else CallOptions(**options or {})
        self.given_phase_caps = frozenset(phase_max_tokens or {})
        self.phase_max_tokens = {**self.default_phase_max_tokens, **(phase_max_tokens or {})}
        self.reask_temperature = reask_temperature
        self.max_chars = max_chars
        # cap -> (`self.options`, it with that cap), shared by its decisions (`Context`).
        self._capped: dict[int, tuple[CallOptions, CallOptions]] = {}

    @property
    def params(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.param_names}
        out.update(max_reasks=self.max_reasks, on_failure=self.on_failure, models=self.models)
        out.update(
            options=self.options.record(),
            phase_max_tokens=self.phase_max_tokens,
            reask_temperature=self.reask_temperature,
            max_chars=self.max_chars,
        )
        return out

    @property
    def models(self) -> list[str]:
        """Model names this method calls."""
        return []

    async def run(self, ctx: Context) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    async def decide(
        self,
        problem: Task | Game[Any, Any] | Any,
        state: Any = None,
        *,
        seed: int | None = None,
        rng: np.random.Generator | None = None,
    ) -> Decision:
        """Decide one task (a `Task`, a `Question`, or a game and a state).

        Args:
            problem: The task, question or game.
            state: The game state (games only).
            seed: Decision seed (call seeds, shuffles, tie-breaks, fallback); else drawn from `rng`.
            rng: Used only to draw a seed when `seed` is None.

        Raises:
            DecisionInfrastructureError: the model could not be reached; never a move.
        """
        task = as_task(problem, state)
        if seed is None:
            seed = int((rng or np.random.default_rng()).integers(2**31))
        ctx = Context(
            task,
            seed,
            self.max_reasks,
            options=self.options,
            phase_max_tokens=self.phase_max_tokens,
            reask_temperature=self.reask_temperature,
            max_chars=self.max_chars,
            given_phase_caps=self.given_phase_caps,
            capped=self._capped,
        )
        start = time.perf_counter()
        try:
            answer = await self.run(ctx)
        except InfrastructureError as exc:
            ctx.calls = [c for c in ctx.calls if c is not None]
            record = self._record(ctx, None, "infrastructure_error", start, error=str(exc))
            raise DecisionInfrastructureError(exc, record) from exc
        status: Status = "ok"
        if answer is None:
            # Listed only for a fallback: a forfeit in a huge position must not list it.
            legal = task.legal_answers() if self.on_failure == "random" else None
            if legal:
                # Fallback is seeded and recorded, never silent
                # (docs/architecture.md, "What a run never does").
                answer = sorted_answers(task, legal)[ctx.rng.randrange(len(legal))]
                status = "fallback"
            else:
                status = "forfeit"
        return self._record(ctx, answer, status, start)

    def _record(
        self, ctx: Context, answer: Any, status: Status, start: float, error: str | None = None
    ) -> Decision:
        task = ctx.task
        calls = [c for c in ctx.calls if c is not None]
        usage = _total_usage(c.usage for c in calls)
        # By the call's own index: a partial record has dropped the calls still in flight.
        by_index = {c.index: c for c in calls}
        invalid_usage = _total_usage(
            by_index[i].usage
            for i in {s.call for s in ctx.samples if s.error is not None}
            if i in by_index
        )
        errors = [s.error for s in ctx.samples if s.error is not None]
        # Every call's cut replies, answers and free text alike (a free-text reply has no
        # sample: its finish reason is the only record of the cut).
        cut: dict[str, int] = {}
        for c in calls:
            n = sum(reason == "length" for reason in c.finish_reasons)
            if n:
                cut[c.phase] = cut.get(c.phase, 0) + n
        return Decision(
            method=self.name,
            params=self.params,
            game_prompt_version=(
                task.prompt_version if isinstance(task, GameTask) else PROMPT_VERSION
            ),
            task=task.describe(),
            seed=ctx.seed,
            status=status,
            move=answer,
            answer=None if answer is None else task.to_json(answer),
            answer_text=None if answer is None else task.text(answer),
            action_id=None if answer is None else task.key(answer),
            unparsable=sum(s.error == "unparsable" for s in ctx.samples),
            illegal=sum(s.error == "illegal" for s in ctx.samples),
            truncated=sum(cut.values()),
            truncated_phases=cut,
            failure=errors[-1] if status in ("forfeit", "fallback") and errors else None,
            invalid_usage=invalid_usage,
            failed_agents=ctx.failed_agents,
            calls=calls,
            samples=ctx.samples,
            rounds=ctx.rounds,
            tie_breaks=ctx.tie_breaks,
            extra=ctx.extra,
            usage=usage,
            cost_usd=sum(c.cost_usd for c in calls),
            latency_s=time.perf_counter() - start,
            error=error,
        )


def _total_usage(usages: Iterable[Usage]) -> Usage:
    """The sum of `usages`, as one `Usage` (not one per addition)."""
    prompt = completion = reasoning = cached = 0
    for usage in usages:
        prompt += usage.prompt_tokens
        completion += usage.completion_tokens
        reasoning += usage.reasoning_tokens
        cached += usage.cached_tokens
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        reasoning_tokens=reasoning,
        cached_tokens=cached,
    )


async def gather(*aws: Any) -> list[Any]:
    """Run the independent calls of one round concurrently and let every one settle.

    If one call fails, its siblings are not orphaned: all of them finish (and are
    recorded in the context, with their usage) before the first error, in argument
    order, is raised. So a partial decision holds every call the server answered, and
    no call keeps spending tokens outside the record and the budget.
    """
    results = await asyncio.gather(*aws, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return list(results)
