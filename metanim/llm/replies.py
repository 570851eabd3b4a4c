"""Reading a server's reply: the answer, the reasoning kept apart, usage, finish reasons.

The answer is never read from reasoning. What counts as reasoning, per server
(docs/llm.md, "Reply shapes"; each shape reproduced by a fake in
`metanim.llm.sim.provider_kinds`, whose `SOURCES` cite the documentation):

- `reasoning_content` (DeepSeek, llama.cpp, SGLang, vLLM before 0.17) and `reasoning`
  (vLLM 0.17 and later, Ollama, OpenRouter) beside `content`;
- `<think>...</think>` blocks inside `content` (Qwen3 served without a parser), and the
  text before a lone `</think>` (an R1 chat template that opened `<think>` in the prompt,
  so the reply starts inside the thinking), and an unclosed `<think>` to the end (the cap
  cut the thinking);
- `thinking` parts of a list `content` (Mistral's Magistral); its `text` parts are the
  answer;
- a forced function call's arguments (structured output "tools") are the answer.

The same reading serves a whole JSON completion, a stream of chunks (`StreamReply`) and
the Responses API (`responses_reply`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from metanim.llm._types import Usage

_THINK_BLOCK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
_OPEN, _CLOSE = "<think>", "</think>"
#: Fields a reasoning server puts its thinking in, beside `content`.
REASONING_FIELDS = ("reasoning_content", "reasoning")


class BadReply(Exception):
    """A 200 whose body is not a completion (no choices, no content where one is due)."""


def split_reasoning(message: dict[str, Any]) -> tuple[str, str | None]:
    """A reply message's answer text and its thinking, kept apart (see the module).

    A message whose content is null or empty gives the answer "".
    """
    parts: list[str] = []
    for name in REASONING_FIELDS:
        value = message.get(name)
        if isinstance(value, str) and value:
            parts.append(value)
    content = message.get("content")
    if isinstance(content, list):
        text, thinking = _read_parts(content)
        parts.extend(thinking)
    else:
        text = content if isinstance(content, str) else ""
    if _OPEN in text or _CLOSE in text:  # most replies have no tag: fast path
        text, inline = _split_think(text)
        parts.extend(inline)
    return text, ("\n".join(parts) if parts else None)


def _split_think(text: str) -> tuple[str, list[str]]:
    found: list[str] = []
    # The thinking of a template that opened <think> itself: up to the first </think>.
    close = text.find(_CLOSE)
    opened = text.find(_OPEN)
    if close != -1 and (opened == -1 or close < opened):
        found.append(text[:close].strip())
        text = text[close + len(_CLOSE) :]
    blocks = _THINK_BLOCK.findall(text)
    if blocks:
        found.extend(b.strip() for b in blocks)
        text = _THINK_BLOCK.sub("", text)
    if _CLOSE in text:  # a stray closing tag: what precedes it was thought, not answered
        head, _, text = text.rpartition(_CLOSE)
        found.append(head.replace(_OPEN, "").strip())
    if _OPEN in text:  # thinking that never closed
        text, _, tail = text.partition(_OPEN)
        found.append(tail.strip())
    return text.strip(), [f for f in found if f]


def _read_parts(content: list[Any]) -> tuple[str, list[str]]:
    """(answer, thinking) of a list content: `text` parts answer, `thinking` parts think."""
    text: list[str] = []
    thinking: list[str] = []
    for part in content:
        if isinstance(part, str):
            text.append(part)
            continue
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            text.append(part["text"])
        elif kind in ("thinking", "reasoning"):
            inner = part.get("thinking", part.get("text"))
            if isinstance(inner, str):
                thinking.append(inner)
            elif isinstance(inner, list):
                thinking.append("".join(_part_text(p) for p in inner))
    return "".join(text), [t for t in thinking if t]


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and isinstance(part.get("text"), str):
        return str(part["text"])
    return ""


def tool_arguments(message: dict[str, Any]) -> str | None:
    """The arguments of the message's first function call (the answer of structured
    output "tools"), or None."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list) or not calls:
        return None
    function = calls[0].get("function") if isinstance(calls[0], dict) else None
    arguments = function.get("arguments") if isinstance(function, dict) else None
    return arguments if isinstance(arguments, str) else None


def read_usage(usage: dict[str, Any] | None) -> Usage:
    """`Usage` from a chat completion's or a Responses object's usage."""
    usage = usage or {}
    prompt = usage.get("prompt_tokens", usage.get("input_tokens"))
    completion = usage.get("completion_tokens", usage.get("output_tokens"))
    details = usage.get("completion_tokens_details") or usage.get("output_tokens_details") or {}
    cached = usage.get("prompt_tokens_details") or usage.get("input_tokens_details") or {}
    return Usage(
        prompt_tokens=_count("prompt_tokens", prompt),
        completion_tokens=_count("completion_tokens", completion),
        reasoning_tokens=_count("reasoning_tokens", (details or {}).get("reasoning_tokens")),
        cached_tokens=_count("cached_tokens", (cached or {}).get("cached_tokens")),
    )


#: More tokens than any model's context holds: a count past it is a server's fault.
MAX_USAGE_TOKENS = 100_000_000


def _count(name: str, value: Any) -> int:
    """One usage count (absent: 0).

    Raises:
        BadReply: a count that is not a whole number from 0 to `MAX_USAGE_TOKENS`: the
            server's fault, named, never summed into a run's token budget or cost.
    """
    if value is None:
        return 0
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not whole or not 0 <= value <= MAX_USAGE_TOKENS:
        raise BadReply(
            f"the server reported usage {name}={value!r}: a token count is a whole "
            f"number from 0 to {MAX_USAGE_TOKENS:,}"
        )
    return int(value)


def reported_cost(usage: dict[str, Any] | None) -> float | None:
    """The dollars a server says the call cost (OpenRouter's `usage.cost`), if it says."""
    cost = (usage or {}).get("cost")
    return float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None


@dataclass
class Reply:
    """One completion, read: a text per choice (the answer), its thinking, finish reasons."""

    texts: list[str]
    usage: Usage
    finish_reasons: list[str | None]
    reasoning: list[str | None]
    #: llama.cpp's per-request `timings` (prompt_ms, predicted_ms, ...), when sent
    timings: dict[str, Any] | None = None
    cost_usd: float | None = None  # what the server says the call cost, if it says
    errors: list[dict[str, Any]] = field(default_factory=list)


#: Finish reasons under which a null `message.content` is an answer of no text.
_EMPTY_OK = frozenset({"length", "content_filter", "tool_calls"})


def read_choice(message: dict[str, Any], finish: str | None) -> tuple[str, str | None]:
    """(answer, thinking) of one choice.

    Raises:
        BadReply: content null with neither thinking nor a function call, though the reply
            ended on its own: the server's fault, not the model's answer. With thinking
            and no answer it is the model's failure to answer (text ""), never the server's.
    """
    arguments = tool_arguments(message)
    text, thought = split_reasoning(message)
    if arguments is not None:
        return arguments, thought
    if message.get("content") is None and thought is None and finish not in _EMPTY_OK:
        raise BadReply(f"a reply with no content (null) and finish_reason {finish!r}")
    return text, thought


def completion_reply(body: dict[str, Any]) -> Reply:
    """A chat completion's JSON body, read."""
    choices = body.get("choices")
    if not choices:
        raise BadReply("the server returned no choices")
    texts, reasoning, finish = [], [], []
    for choice in choices:
        reason = choice.get("finish_reason")
        text, thought = read_choice(choice["message"], reason)
        texts.append(text)
        reasoning.append(thought)
        finish.append(reason)
    timings = body.get("timings")
    usage = body.get("usage")
    return Reply(
        texts, read_usage(usage), finish, reasoning,
        timings if isinstance(timings, dict) else None, reported_cost(usage),
    )  # fmt: skip


class StreamReply:
    """Chat completion chunks (server-sent events) gathered into one completion.

    Content comes as string pieces or as list parts (Mistral), reasoning as delta fields,
    function-call arguments in pieces; the usage rides on the last chunk (with
    `stream_options.include_usage`, or always on some servers). `tokens` counts the
    pieces received, for a progress display.
    """

    def __init__(self) -> None:
        self.choices: dict[int, dict[str, Any]] = {}
        self.usage: dict[str, Any] | None = None
        self.timings: dict[str, Any] | None = None
        self.tokens = 0

    def add(self, chunk: dict[str, Any]) -> None:
        error = chunk.get("error")
        if error:  # an error after the stream began (OpenRouter sends it as an event)
            message = error.get("message") if isinstance(error, dict) else error
            raise BadReply(f"the stream ended in an error: {message}")
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        if isinstance(chunk.get("timings"), dict):
            self.timings = chunk["timings"]
        for choice in chunk.get("choices") or []:
            index = int(choice.get("index", 0))
            state = self.choices.setdefault(
                index,
                {
                    "content": [],
                    "parts": [],
                    "calls": {},
                    "finish": None,
                    **{name: [] for name in REASONING_FIELDS},
                },
            )
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if isinstance(content, str) and content:
                state["content"].append(content)
                self.tokens += 1
            elif isinstance(content, list):
                state["parts"].extend(content)
                self.tokens += 1
            for name in REASONING_FIELDS:
                value = delta.get(name)
                if isinstance(value, str) and value:
                    state[name].append(value)
                    self.tokens += 1
            for call in delta.get("tool_calls") or []:
                slot = state["calls"].setdefault(
                    int(call.get("index", 0)), {"name": "", "args": []}
                )
                function = call.get("function") or {}
                if function.get("name"):
                    slot["name"] = function["name"]
                if function.get("arguments"):
                    slot["args"].append(function["arguments"])
                    self.tokens += 1
            if choice.get("finish_reason"):
                state["finish"] = choice["finish_reason"]

    def reply(self) -> Reply:
        if not self.choices:
            raise BadReply("the stream held no choices")
        texts, reasoning, finish = [], [], []
        for index in sorted(self.choices):
            state = self.choices[index]
            message: dict[str, Any] = {
                name: "".join(state[name]) for name in REASONING_FIELDS if state[name]
            }
            if state["parts"]:
                # String pieces around list parts keep their order as text parts.
                message["content"] = [*state["parts"], *state["content"]]
            else:
                message["content"] = "".join(state["content"]) or None
            if state["calls"]:
                first = state["calls"][min(state["calls"])]
                message["tool_calls"] = [
                    {"function": {"name": first["name"], "arguments": "".join(first["args"])}}
                ]
            text, thought = read_choice(message, state["finish"])
            texts.append(text)
            reasoning.append(thought)
            finish.append(state["finish"])
        return Reply(
            texts, read_usage(self.usage), finish, reasoning, self.timings,
            reported_cost(self.usage),
        )  # fmt: skip


def responses_reply(body: dict[str, Any]) -> Reply:
    """A Responses API object, read: output_text parts are the answer, a function call's
    arguments too; reasoning items' summaries are the thinking; `incomplete` at
    `max_output_tokens` is a cut reply ("length")."""
    if body.get("error"):
        raise BadReply(f"the response failed: {body['error']}")
    text: list[str] = []
    thinking: list[str] = []
    arguments: str | None = None
    for item in body.get("output") or []:
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or []:
                if part.get("type") == "output_text":
                    text.append(str(part.get("text") or ""))
        elif kind == "reasoning":
            for part in item.get("summary") or []:
                if part.get("text"):
                    thinking.append(str(part["text"]))
        elif kind == "function_call" and arguments is None:
            arguments = str(item.get("arguments") or "")
    details = body.get("incomplete_details") or {}
    if body.get("status") == "incomplete":
        reason = "length" if details.get("reason") == "max_output_tokens" else "content_filter"
    else:
        reason = "stop"
    answer = arguments if arguments is not None else "".join(text)
    thought = "\n".join(thinking) if thinking else None
    return Reply([answer], read_usage(body.get("usage")), [reason], [thought])
