"""Method prompts as versioned data.

The game prompt (Game Role, Objective, Game Rule, Current State, Task) belongs to the
games layer; everything a method adds (the Output Format section, debate, feedback,
elicitation, judge and report requests) is here, written in the project's own words
after the seeds: DReaMAD/MetaNIM Table 8 (Standard, ReAct, CoT, DReaMAD), Du et al.'s
debate round, the anonymized debate prompt (Choi et al., App. B), Liang et al.'s MPD
meta prompt, "tit for tat" levels (Table 10) and judge, AceMAD's argument and commit
prompts (App. I), and the cross-model solve-critique-revise protocol.

Change any text here and bump `METHOD_PROMPT_VERSION`; every decision records it next
to the games' `PROMPT_VERSION`.
"""

from __future__ import annotations

from typing import Final

from metanim.games import reply as _reply

# The debate layouts are shared with the simulated server, which reads them back; they
# live below both (metanim.llm.templates) and are part of this prompt version.
from metanim.llm.templates import (  # noqa: F401 - re-exported for the methods
    ACEMAD_ARGUE,
    ACEMAD_COMMIT,
    ACEMAD_TURN,
    ANONYMOUS_PEER,
    ANONYMOUS_UPDATE,
    CROSS_REVISE,
    DEBATE_LABEL,
    DEBATE_PEER,
    DEBATE_UPDATE,
    DREAMAD_AGENT_SYSTEM,
    MPD_AFFIRMATIVE,
    MPD_JUDGE_DISCRIMINATE,
    MPD_JUDGE_EXTRACT,
    MPD_NEGATIVE,
    MPD_SHOWN,
    MPD_TURN,
)

#: Bumped whenever any text below changes.
METHOD_PROMPT_VERSION: Final = "metanim-methods/4"

#: The Output Format sections (MetaNIM Table 8) live with the reply parser in the games
#: layer (`metanim.games.reply`): datasets and integrations render the same text.
OUTPUT_FORMAT: Final[dict[str, str]] = _reply.OUTPUT_FORMAT
output_format = _reply.output_format
with_format = _reply.with_format

#: Re-ask wording: distinct for an answer that names no action and one that names a
#: forbidden action, so the model knows which mistake it made (game_arena's "rethink").
FEEDBACK: Final[dict[str, str]] = {
    "unparsable": (
        "Your reply could not be read: {reason}. Answer again, and put your choice in the "
        'JSON code block exactly as the Output Format says: {{"action": {schema}}}.'
    ),
    "illegal": (
        "Your {noun} {answer} is not allowed: {reason}. Choose again, only among the "
        "allowed {noun}s, and answer in the same JSON format."
    ),
    "truncated": (
        "Your reply was cut off by the length limit before it was complete. Answer again, "
        'much more briefly, with the JSON code block of the Output Format: {{"action": {schema}}}.'
    ),
}

#: Self-Refine (Madaan et al. 2023): feedback, then refinement.
REFINE_FEEDBACK: Final = (
    "Review your answer above as a strict critic. Check it against every rule and the goal, "
    "say concretely what is wrong or could be better, and whether another {noun} would be "
    "stronger. Do not give a new answer yet."
)
REFINE_REVISE: Final = (
    "Using that feedback, give your improved answer to the original task.\n\n{output_format}"
)

#: DReaMAD Strategic Prior Knowledge Elicitation, step 1 (Table 8, "Game Situation
#: Reinterpretation"), temperature 0.1.
DREAMAD_REINTERPRET: Final = (
    "Read the problem description below and pull out its essential facts.\n\n"
    "Problem description:\n{problem}\n\n"
    "Reply with a JSON code block of this form:\n"
    '```json\n{{"game_definition": string // what this game or problem is,\n'
    ' "winning_condition": string // what counts as winning or as a correct answer,\n'
    ' "move_constraints": string // which actions are allowed this turn}}\n```'
)
#: Step 2 ("General Strategy Formulation"), temperature 0.1.
DREAMAD_STRATEGY: Final = (
    "From the information below, work out a general strategy that wins this game "
    "(or solves this kind of problem).\n\n"
    "Game: {game_definition}\nWinning condition: {winning_condition}\n"
    "Move constraints: {move_constraints}\nCurrent state: {short_state}\n\n"
    "Reply with a JSON code block of this form:\n"
    '```json\n{{"state_evaluation": string // how to judge a position,\n'
    ' "winning_strategy": string // how to play this turn to win,\n'
    ' "endgame_tactics": string // what to do when the end is near}}\n```'
)
#: Perspective Diversification: each agent rewrites the initial prompt, temperature 0.7.
DREAMAD_REWRITE: Final = (
    "Improve the prompt below so that whoever follows it decides better, using the game "
    "and strategy notes. Keep every fact of the current state.\n\n"
    "Initial prompt:\n{problem}\n\n"
    "Game and strategy notes:\nGame: {game_definition}\n"
    "- State evaluation: {state_evaluation}\n- Winning strategy: {winning_strategy}\n"
    "- Endgame tactics: {endgame_tactics}\n\n"
    "Reply with a JSON code block of this form:\n"
    '```json\n{{"optimized_prompt": string // the improved prompt}}\n```'
)
#: MPD (Liang et al. 2024) meta prompt; `{level}` is one of TIT_FOR_TAT.
MPD_META: Final = (
    "You are a debater. Welcome to the debate. {level} The debate topic is the task "
    "below.\n\n{problem}"
)
#: "Tit for tat" levels 0-3 (Liang et al., Table 10); level 2 is their default.
TIT_FOR_TAT: Final[tuple[str, ...]] = (
    "Both sides must agree fully on every point; every statement must be accepted by both.",
    "Most of the debate should be disagreement, though the sides may agree on minor points.",
    "You need not agree with the other side's every view, because the aim is the correct answer.",
    "Both sides must disagree on every point; there must be no agreement at all.",
)
MPD_JUDGE_SYSTEM: Final = (
    "You are the moderator of a debate between an affirmative and a negative side about "
    "the task below. You judge which answer is correct.\n\n{problem}"
)
#: AceMAD personas (App. I): crowd agents and critical-thinking truth-holders.
ACEMAD_PERSONA: Final[dict[str, str]] = {
    "crowd": "You are a helpful assistant who trusts common knowledge and consensus.",
    "truth_holder": (
        "You are a strict skeptic. You hunt for common misconceptions and logical traps, "
        "and you suspect that the majority may be wrong."
    ),
}
