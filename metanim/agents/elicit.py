"""Strategic Prior Knowledge Elicitation (DReaMAD, seed 000 §4), as a stage any method can use.

DReaMAD's first half: (1) game situation reinterpretation and (2) general strategy
formulation at a low temperature, then (3) each writer rewrites the initial prompt into
its own optimized prompt. It returns the optimized prompts, and `framing` places one
for an answer call, so MAD (DReaMAD), Self-Refine and Self-Consistency (seed 000 Table 12:
"+ SPKE") compose with it the same way.

Placement (`PLACEMENTS`): `replace` (default) plays the refined prompt in place of the
initial prompt, as seed 000 §4.2 and Table 8 describe ("refine the initial game prompt");
`system` keeps the initial prompt in the user message and gives the refined one as a
system message, so a rewrite that drops a fact of the state cannot lose it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from metanim.agents import prompts, schemas
from metanim.agents.base import Context, gather
from metanim.games.reply import last_object_with
from metanim.llm import ChatModel, Completion, Message

log = logging.getLogger(__name__)

_GAME_KEYS = ("game_definition", "winning_condition", "move_constraints")
_STRATEGY_KEYS = ("state_evaluation", "winning_strategy", "endgame_tactics")
# Warn once per process that an elicitation step came back unstructured.
_warned: set[str] = set()


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


#: Where an elicited prompt goes: in place of the initial prompt, or beside it as a system message.
PLACEMENTS = ("replace", "system")


def check_placement(placement: str) -> str:
    """`placement` if it is one of `PLACEMENTS`; a `ValueError` naming them otherwise."""
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {PLACEMENTS}, got {placement!r}")
    return placement


def framing(ctx: Context, prompt: str, placement: str) -> tuple[str | None, str]:
    """(system message or None, the problem text) of an answer call with elicited `prompt`."""
    if placement == "system":
        return prompts.DREAMAD_AGENT_SYSTEM.format(optimized_prompt=prompt), ctx.task.prompt()
    return None, prompt


async def elicit_prompts(
    ctx: Context,
    elicitor: ChatModel,
    writers: Sequence[tuple[str, ChatModel]],
    *,
    elicit_temperature: float = 0.1,
    rewrite_temperature: float = 0.7,
) -> list[str]:
    """Elicit once with `elicitor`, then one rewrite per (agent name, client) in `writers`.

    Returns one optimized prompt per writer (place it with `framing`); records the
    stages in `ctx.extra["elicitation"]`.
    """
    task = ctx.task
    problem = task.prompt()
    first, _ = await ctx.chat(
        elicitor,
        [{"role": "user", "content": prompts.DREAMAD_REINTERPRET.format(problem=problem)}],
        agent="elicitor",
        phase="reinterpret",
        temperature=elicit_temperature,
        schema=schemas.fields_reply(_GAME_KEYS, max_chars=ctx.chars("reinterpret", 3)),
    )
    game, ok1 = _fields(first, _GAME_KEYS)
    second, _ = await ctx.chat(
        elicitor,
        [
            {
                "role": "user",
                "content": prompts.DREAMAD_STRATEGY.format(short_state=task.short_state(), **game),
            }
        ],
        agent="elicitor",
        phase="strategy",
        temperature=elicit_temperature,
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
    outs: list[Any] = await gather(
        *(
            ctx.chat(
                client,
                rewrite,
                agent=name,
                phase="rewrite",
                temperature=rewrite_temperature,
                sample_index=i,
                # A whole prompt: as long as the rewrite's cap allows.
                schema=schemas.fields_reply(
                    ("optimized_prompt",), max_chars=ctx.chars("rewrite", scale=4)
                ),
            )
            for i, (name, client) in enumerate(writers)
        )
    )
    rewritten = [_fields(c, ("optimized_prompt",)) for c, _ in outs]
    own = [fields["optimized_prompt"] for fields, _ in rewritten]
    ctx.extra["elicitation"] = {
        "game": game,
        "strategy": strategy,
        "prompts": own,
        "structured": [ok1, ok2, *(ok for _, ok in rewritten)],
    }
    if not all(ctx.extra["elicitation"]["structured"]) and not _warned:
        # Once: the flags stay in every decision record.
        _warned.add("elicitation")
        log.warning(
            "an elicitation step did not return the JSON it asked for (or was cut off), "
            "and its raw text was passed on; see extra['elicitation']['structured'] in the "
            "decision records, and consider --structured-output"
        )
    return own
