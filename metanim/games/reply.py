"""The reply contract: the Output Format a prompt asks for, and the one parser that reads replies.

Games own both sides, so every reader of a model's reply (the agents, `Game.parse_move`,
`env.step(text)`, the PettingZoo view, the dataset rows and the inspect/lm-eval
integrations) reads it the same way and raises the same errors.

The parser is a chain of stages (`ReplyStage`, listed in `STAGE_CHAIN`), strict first,
then tolerant; the first stage that yields a value wins:

1. strict: a ```json code block whose object validates as `ActionReply` (pydantic);
2. json_object: the last JSON object in the text that has an "action" key;
3. key: an `action: value` pair written loosely (unquoted keys, as in Table 8's scheme);
4. bare: the whole reply is a bare answer: a number, numbers in brackets or separated by
   commas or spaces, or an option letter.

A stage is added by writing a class with `name`, `reads_truncated` and `extract` and
listing it; `ReplyParser(stages)` runs any such list. The value found is then read by
`Game.move_from_value`, with one number rule for every stage: a move number is an ASCII
decimal integer. `1e2`, `2.0`, `1/2`, full-width `３` and other non-ASCII digits are
unparsable, with that reason; only the JSON stages (strict, json_object) accept a JSON
number with an integral value (`{"action": 2.0}` is 2), because JSON writes numbers
that way. A text value counts only when it *is* numbers ("2", "[0, 3]", "(1, 2)");
"take 2 from heap 1" is unparsable, never heap 2 take 1. A reply cut off by the
completion cap (`finish_reason="length"`) is read only by stages that read truncated
replies (strict), else it raises `TruncatedReplyError`: a truncated reply is its own
status, never read loosely.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final, Protocol

from metanim.games.errors import TruncatedReplyError, UnparsableMoveError

#: Bumped whenever an Output Format text below changes (dataset rows record it).
REPLY_FORMAT_VERSION: Final = "metanim-reply/1"

#: The Output Format sections (MetaNIM Table 8), by style. `{schema}` is the one-line
#: description of the `action` value (`Game.action_schema`). ReAct is the papers'
#: reference method, so dataset rows carry the ReAct form.
OUTPUT_FORMAT: Final[dict[str, str]] = {
    "standard": (
        "#Output Format: Reply with a Markdown code block that starts with ```json and ends "
        "with ```, holding one JSON object:\n"
        '```json\n{{"action": {schema}}}\n```'
    ),
    "react": (
        "#Output Format: Reply with a Markdown code block that starts with ```json and ends "
        "with ```, holding one JSON object:\n"
        '```json\n{{"reasoning": string // why you choose this action,\n'
        ' "action": {schema} // the action your reasoning leads to}}\n```'
    ),
    "cot": (
        "#Output Format: Reply with a Markdown code block that starts with ```json and ends "
        "with ```, holding one JSON object:\n"
        '```json\n{{"reasoning": string // your step-by-step reasoning,\n'
        ' "action": {schema} // the action your reasoning leads to}}\n```\n'
        "Let's think step by step. What is the best choice for you?"
    ),
}


def output_format(style: str, schema: str) -> str:
    """The Output Format section of `style` for an action described by `schema`."""
    if style not in OUTPUT_FORMAT:
        raise ValueError(f"unknown output format {style!r}; choose one of {sorted(OUTPUT_FORMAT)}")
    return OUTPUT_FORMAT[style].format(schema=schema)


def with_format(problem: str, style: str, schema: str) -> str:
    """A problem followed by its Output Format section."""
    return f"{problem}\n{output_format(style, schema)}"


@functools.cache
def _action_reply() -> Any:
    """`ActionReply`, made on first use: a pydantic model costs a tenth of a second of
    pydantic's own imports, which `import metanim` (an env, a solver query) never needs."""
    from pydantic import BaseModel, ConfigDict

    class ActionReply(BaseModel):
        """The strict reply schema: an object with an `action` (and optional reasoning)."""

        model_config = ConfigDict(extra="allow")

        action: Any
        reasoning: str | None = None

    ActionReply.__module__ = __name__
    ActionReply.__qualname__ = "ActionReply"
    return ActionReply


if TYPE_CHECKING:
    from pydantic import BaseModel

    ActionReply: type[BaseModel]


def __getattr__(name: str) -> Any:
    if name == "ActionReply":
        return _action_reply()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
# A number as a model may write one, matched widely (\d is any script's digit, with a
# decimal point, fraction or exponent) so that the number rule can name what is wrong
# with it, instead of reading its leading digits: "1e2" is no 1, "1/2" no 1, "3rd" no 3.
_NUMBER = r"-?\d+(?:[./]\d+)?(?:[eE][-+]?\d+)?(?![0-9A-Za-z_/]|\.\d)"
_KEY = re.compile(
    # The lookbehind keeps "reaction: 5" or "transaction=3" from reading as an action.
    r"""(?<![A-Za-z0-9_])["']?action["']?\s*[:=]\s*(\[[^\]\[]*\]|\([^()]*\)|"""
    + _NUMBER
    + r"""|"[^"]*"|'[^']*'|[A-Za-z]\b)""",
    re.IGNORECASE,
)
_NUMBERS = rf"{_NUMBER}(?:\s*[,\s]\s*{_NUMBER})*"
_BARE = re.compile(
    rf"""^\s*(["']?)({_NUMBERS}|[\[(]\s*{_NUMBERS}\s*[\])]|\(?[A-Za-z]\)?)\1\s*\.?\s*$"""
)


def fenced_objects(text: str) -> list[dict[str, Any]]:
    """JSON objects inside ``` code blocks, in order."""
    out = []
    for block in _FENCE.findall(text):
        try:
            value = json.loads(block.strip())
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object that decodes anywhere in `text`, in order."""
    decoder = json.JSONDecoder()
    out, index = [], 0
    while True:
        start = text.find("{", index)
        if start < 0:
            return out
        try:
            value, end = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, ValueError):
            index = start + 1
            continue
        if isinstance(value, dict):
            out.append(value)
        index = end


def last_object_with(text: str, *keys: str) -> dict[str, Any] | None:
    """The last JSON object (fenced first, then anywhere) that has all `keys`."""
    for candidates in (fenced_objects(text), json_objects(text)):
        for obj in reversed(candidates):
            if all(k in obj for k in keys):
                return obj
    return None


# ------------------------------------------------------------------------ the chain


@dataclass(frozen=True)
class Reply:
    """A model's whole reply, as every stage sees it."""

    text: str
    finish_reason: str | None = None

    @property
    def truncated(self) -> bool:
        """Cut off by the completion cap: only stages that read truncated replies run."""
        return self.finish_reason == "length"


@dataclass(frozen=True)
class Found:
    """The raw action value a stage found (it may be None: `{"action": null}`)."""

    value: Any


class ReplyStage(Protocol):
    """One way of finding the action value in a reply (game_arena's `TextParser` shape)."""

    #: The name recorded with each parsed reply (`Parsed.stage`).
    name: str
    #: Whether the stage may read a reply cut off by the completion cap.
    reads_truncated: bool

    def extract(self, reply: Reply) -> Found | None:
        """The action value this stage finds in `reply`, or None to pass it on."""
        ...


class StrictStage:
    """A ```json code block whose object validates as `ActionReply` (the last one wins)."""

    name: ClassVar[str] = "strict"
    reads_truncated: ClassVar[bool] = True  # a complete, validated block is an answer

    def extract(self, reply: Reply) -> Found | None:
        from pydantic import ValidationError

        model = _action_reply()
        for obj in reversed(fenced_objects(reply.text)):
            try:
                return Found(model.model_validate(obj).action)
            except ValidationError:
                continue
        return None


class JsonObjectStage:
    """The last JSON object anywhere in the text that has an "action" key."""

    name: ClassVar[str] = "json_object"
    reads_truncated: ClassVar[bool] = False

    def extract(self, reply: Reply) -> Found | None:
        for obj in reversed(json_objects(reply.text)):
            if "action" in obj:
                return Found(obj["action"])
        return None


class KeyStage:
    """An `action: value` pair written loosely (the last one wins); the value as text."""

    name: ClassVar[str] = "key"
    reads_truncated: ClassVar[bool] = False

    def extract(self, reply: Reply) -> Found | None:
        matches = _KEY.findall(reply.text)
        if not matches:
            return None
        raw = matches[-1].strip()
        return Found(raw[1:-1] if raw[:1] in "\"'" else raw)


class BareStage:
    """The whole reply (backticks aside) is a bare answer; the value as text."""

    name: ClassVar[str] = "bare"
    reads_truncated: ClassVar[bool] = False

    def extract(self, reply: Reply) -> Found | None:
        bare = _BARE.match(reply.text.replace("`", ""))
        return None if bare is None else Found(bare.group(2))


class ReplyParser:
    """Runs stages in order; the first that finds a value wins (a chained parser).

    Args:
        stages: The stages, strict first. A truncated reply reaching a stage that does
            not read truncated replies raises `TruncatedReplyError` there.
    """

    def __init__(self, stages: Sequence[ReplyStage]) -> None:
        self.stages = tuple(stages)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(stage.name for stage in self.stages)

    def extract(self, text: str, *, finish_reason: str | None = None) -> tuple[Any, str]:
        """The raw action value in a reply and the name of the stage that found it."""
        reply = Reply(text, finish_reason)
        for stage in self.stages:
            if reply.truncated and not stage.reads_truncated:
                raise TruncatedReplyError(
                    "the reply was cut off by the completion cap (finish_reason 'length') "
                    "before a complete JSON code block with an action",
                    text[:200],
                )
            found = stage.extract(reply)
            if found is not None:
                return found.value, stage.name
        raise UnparsableMoveError(
            'no JSON object with an "action" field, and no bare answer, was found', text[:200]
        )


#: The stages every reader uses, in order: add a stage by listing it here.
STAGE_CHAIN: Final[tuple[ReplyStage, ...]] = (
    StrictStage(),
    JsonObjectStage(),
    KeyStage(),
    BareStage(),
)
#: The one parser (`Game.parse_move`, the agents and the envs all read through it).
REPLY_PARSER: Final = ReplyParser(STAGE_CHAIN)
STAGES: Final = REPLY_PARSER.names


def extract_action(text: str, *, finish_reason: str | None = None) -> tuple[Any, str]:
    """The raw action value in a reply and the stage that found it (`REPLY_PARSER`).

    Args:
        text: The model's whole reply.
        finish_reason: The server's finish reason, when known; "length" (cut off by the
            completion cap) allows only the stages that read truncated replies (strict).

    Raises:
        TruncatedReplyError: a reply cut off by the cap holds no complete strict answer.
        UnparsableMoveError: no stage found an action.
    """
    return REPLY_PARSER.extract(text, finish_reason=finish_reason)


__all__ = [
    "OUTPUT_FORMAT",
    "REPLY_FORMAT_VERSION",
    "REPLY_PARSER",
    "STAGES",
    "STAGE_CHAIN",
    "ActionReply",
    "BareStage",
    "Found",
    "JsonObjectStage",
    "KeyStage",
    "Reply",
    "ReplyParser",
    "ReplyStage",
    "StrictStage",
    "TruncatedReplyError",
    "extract_action",
    "fenced_objects",
    "json_objects",
    "last_object_with",
    "output_format",
    "with_format",
]
