"""The debate layouts that methods write and the simulated server reads, in one place.

The methods (`metanim.agents`) format these templates; the simulator (`metanim.llm.sim`)
parses the same templates back with `read_layout`, so the two sides cannot drift apart and
nothing is added to a prompt for the simulator's sake: a real model sees the same text.
The parser is built from the templates themselves (each `{field}` becomes a capture), so a
changed wording changes both sides at once.

The texts are part of the method prompts: change any of them and bump
`metanim.agents.prompts.METHOD_PROMPT_VERSION`.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from functools import cache
from typing import Final

from metanim.llm._types import Message

#: Du et al. (2023) debate round with identities (Choi et al., App. B.1 layout).
DEBATE_UPDATE: Final = (
    "{problem}\n\n"
    "Your previous answer was:\n- {own}\n\n"
    "These are the answers of the other agents:\n{peers}\n\n"
    "Using their reasoning as extra advice, give an updated answer to the task. "
    "Reason briefly step by step first.\n\n{output_format}"
)
DEBATE_PEER: Final = "- {label}: {answer}"
#: How a peer is named in an identity-visible round (1-based).
DEBATE_LABEL: Final = "Agent {index}"

#: Anonymized round (Choi et al., App. B.2): every answer of the last round, the agent's
#: own included and not marked, in random order, with neutral labels only.
ANONYMOUS_UPDATE: Final = (
    "{problem}\n\n"
    "These are the answers that agents gave in the last round:\n{peers}\n\n"
    "Using these answers as extra advice, give an updated answer to the task. "
    "Reason briefly step by step first.\n\n{output_format}"
)
ANONYMOUS_PEER: Final = "- Opinion {index}: {answer}"

#: How an agent's self-generated prompt frames the task it answers.
DREAMAD_AGENT_SYSTEM: Final = "Your own guidance for this decision:\n{optimized_prompt}"

MPD_AFFIRMATIVE: Final = (
    "You are the affirmative side. State your view and your answer.\n{history}\n\n{output_format}"
)
MPD_NEGATIVE: Final = (
    "You are the negative side. You disagree with the affirmative side. Give your reasons "
    "and your answer.\n{history}\n\n{output_format}"
)
#: What a debater is shown as `{history}`: the turns so far, joined by blank lines.
MPD_SHOWN: Final = "Debate so far:\n{turns}"
#: One MPD turn; `side` is "Affirmative" or "Negative".
MPD_TURN: Final = "{side} side (round {round}): {text}"
#: Discriminative mode: may end the debate early (adaptive break).
MPD_JUDGE_DISCRIMINATE: Final = (
    "Debate so far (round {round} of {rounds}):\n{history}\n\n"
    "Does one side clearly have the correct answer already? Reply with a JSON code block "
    "(Liang et al.'s moderator format):\n"
    '```json\n{{"preference": "Yes" or "No" // whether one side is clearly right,\n'
    ' "supported_side": "Affirmative" or "Negative",\n "reasoning": string,\n'
    ' "action": {schema} // the correct answer if "Yes", else null}}\n```'
)
#: Extractive mode after the last round.
MPD_JUDGE_EXTRACT: Final = (
    "The debate is over:\n{history}\n\n"
    "Decide the final answer from the whole debate.\n\n{output_format}"
)

#: Phase 1, argumentation (free text).
ACEMAD_ARGUE: Final = (
    "{problem}\n\nDebate so far:\n{history}\n\n"
    "Give a short argument for the {noun} you believe is correct. Write plain text, no JSON."
)
#: One argument in the AceMAD history (turns joined by blank lines).
ACEMAD_TURN: Final = "{agent} (round {round}): {argument}"
#: Phase 2, private commitment: own belief and a forecast of the peers' average belief.
#: The example holds placeholders, not numbers: a small model copies an example's numbers.
ACEMAD_COMMIT: Final = (
    "Now commit privately. The possible {noun}s are: {options}.\n"
    "1. belief: the probability (0 to 1) you give each {noun}.\n"
    "2. prediction: your forecast of the AVERAGE belief of the OTHER agents in this debate. "
    "If they trust the consensus they may share a common misconception; predict their "
    "likely errors.\n"
    "Reply with a JSON code block, probabilities keyed by {noun}:\n"
    '```json\n{{"belief": {{"<{noun}>": <probability>, ...}}, '
    '"prediction": {{"<{noun}>": <probability>, ...}}}}\n```'
)

#: Cross-model debate (solve, then critique the other's solution and revise).
CROSS_REVISE: Final = (
    "{problem}\n\nYour solution:\n{own}\n\nThe other model's solution:\n{other}\n\n"
    "Check both solutions for correctness, point out any error in either, then defend or "
    "revise your answer with clear reasoning.\n\n{output_format}"
)


# ------------------------------------------------------------------------- reading
@cache
def _pattern(template: str, anchored: bool = True) -> re.Pattern[str]:
    """A regex matching what `template.format(...)` produces; each field is a group.

    Unanchored patterns (item heads) keep each field within one line.
    """
    capture = ".*?" if anchored else "[^\\n]*?"
    parts: list[str] = []
    seen: set[str] = set()
    for literal, name, _, _ in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if name is None:
            continue
        if name in seen:  # a repeated field must repeat its text
            parts.append(f"(?P={name})")
        else:
            seen.add(name)
            parts.append(f"(?P<{name}>{capture})")
    body = "".join(parts)
    return re.compile(f"^{body}$" if anchored else body, re.DOTALL)


@cache
def _literals(template: str) -> tuple[str, ...]:
    """The template's fixed text pieces, longest first."""
    parts = (literal for literal, _, _, _ in string.Formatter().parse(template) if literal)
    return tuple(sorted(parts, key=len, reverse=True))


def fields(template: str, text: str) -> dict[str, str] | None:
    """The field values of `text` if it is `template` formatted, else None."""
    # A text lacking one of the template's fixed pieces cannot match: a substring test
    # is far cheaper than the lazy regex failing over a long prompt (the simulator reads
    # every request through up to nine templates).
    if not all(piece in text for piece in _literals(template)):
        return None
    match = _pattern(template).match(text)
    return None if match is None else match.groupdict()


def items(template: str, block: str, sep: str = "\n") -> list[dict[str, str]]:
    """Split a block of `template` items (joined by `sep`) into their fields.

    An item starts where the template's text up to its last field matches at the start
    of a line; its last field runs to the next item, so multi-line answers stay whole.
    """
    head, _, _ = template.rpartition("{")
    last = template[len(head) + 1 : template.index("}", len(head))]
    starts = [
        m.start()
        for m in _pattern(head, anchored=False).finditer(block)
        if m.start() == 0 or block[: m.start()].endswith(sep)
    ]
    out = []
    for k, start in enumerate(starts):
        end = starts[k + 1] - len(sep) if k + 1 < len(starts) else len(block)
        chunk = block[start:end]
        match = _pattern(head, anchored=False).match(chunk)
        if match is None:  # pragma: no cover - the starts were found by this pattern
            continue
        out.append({**match.groupdict(), last: chunk[match.end() :]})
    return out


@dataclass
class Layout:
    """What one request shows an agent of the debate it is in.

    Attributes:
        kind: `single` (a plain question), `history` (its own earlier replies in the chat,
            e.g. Self-Refine or a re-ask), `mad`, `anonymous`, `mpd` (a debater),
            `judge` (MPD's moderator), `acemad_argue`, `acemad_commit` or `cross`.
        own: the agent's own previous answers (texts, oldest first) where it can tell them.
        peers: the texts of other agents' latest answers where identity is visible.
        opinions: answers shown without identity (anonymized MAD, AceMAD's history): the
            agent's own may be among them and cannot be told apart.
        problem: the task text the layout wraps (the game prompt), when it has one.
    """

    kind: str = "single"
    own: list[str] = field(default_factory=list)
    peers: list[str] = field(default_factory=list)
    opinions: list[str] = field(default_factory=list)
    problem: str | None = None

    @property
    def identity_visible(self) -> bool:
        return self.kind not in ("anonymous", "acemad_argue", "acemad_commit")


def _mpd_turns(history: str) -> list[dict[str, str]]:
    return items(MPD_TURN, history, sep="\n\n")


def read_layout(messages: list[Message]) -> Layout:
    """Which layout `messages` follow and what they show (the inverse of the methods' prompts)."""
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not users:
        return Layout()
    last_index = users[-1]
    last = str(messages[last_index].get("content") or "")
    earlier_own = [
        str(m.get("content") or "") for m in messages[:last_index] if m.get("role") == "assistant"
    ]
    if (f := fields(DEBATE_UPDATE, last)) is not None:
        peers = [p["answer"] for p in items(DEBATE_PEER, f["peers"])]
        return Layout("mad", own=[f["own"]], peers=peers, problem=f["problem"])
    if (f := fields(ANONYMOUS_UPDATE, last)) is not None:
        opinions = [p["answer"] for p in items(ANONYMOUS_PEER, f["peers"])]
        return Layout("anonymous", opinions=opinions, problem=f["problem"])
    if (f := fields(CROSS_REVISE, last)) is not None:
        return Layout("cross", own=[f["own"]], peers=[f["other"]], problem=f["problem"])
    if (f := fields(ACEMAD_COMMIT, last)) is not None:
        argue = next(
            (
                fields(ACEMAD_ARGUE, str(messages[i].get("content") or ""))
                for i in reversed(users[:-1])
            ),
            None,
        )
        opinions = _acemad_latest(argue["history"]) if argue else []
        problem = argue["problem"] if argue else None
        return Layout("acemad_commit", own=earlier_own[-1:], opinions=opinions, problem=problem)
    if (f := fields(ACEMAD_ARGUE, last)) is not None:
        return Layout("acemad_argue", opinions=_acemad_latest(f["history"]), problem=f["problem"])
    for template, side in ((MPD_AFFIRMATIVE, "Affirmative"), (MPD_NEGATIVE, "Negative")):
        if (f := fields(template, last)) is not None:
            shown = fields(MPD_SHOWN, f["history"])
            turns = _mpd_turns(shown["turns"]) if shown else []
            own = [t["text"] for t in turns if t["side"] == side]
            others = [t["text"] for t in turns if t["side"] != side]
            return Layout("mpd", own=own, peers=others[-1:])
    for template in (MPD_JUDGE_DISCRIMINATE, MPD_JUDGE_EXTRACT):
        if (f := fields(template, last)) is not None:
            turns = _mpd_turns(f["history"])
            latest: dict[str, str] = {}
            for turn in turns:
                latest[turn["side"]] = turn["text"]
            return Layout("judge", peers=list(latest.values()))
    if earlier_own:
        return Layout("history", own=earlier_own)
    return Layout()


def _acemad_latest(history: str) -> list[str]:
    """The arguments of the latest round in an AceMAD history."""
    turns = items(ACEMAD_TURN, history, sep="\n\n")
    if not turns:
        return []
    latest = max(int(t["round"]) for t in turns if t["round"].isdigit())
    return [t["argument"] for t in turns if t["round"] == str(latest)]
