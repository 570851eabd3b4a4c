"""Every reply shape a server sends, read right: the answer never comes from reasoning.

Each message below is written as its server documents it (the sources are in
`metanim.llm.sim.provider_kinds.SOURCES`); the expected answer and reasoning are written out by
hand, not taken from the code under test.
"""

from __future__ import annotations

import json

from metanim.llm.client import split_reasoning

DECOY = '```json\n{"reasoning": "first draft", "action": 1}\n```'
ANSWER = '{"reasoning": "take three", "action": 3}'


def test_text_before_a_lone_closing_think_is_reasoning():
    # An R1 template opened <think> in the prompt: the reply starts inside the thinking.
    text, thought = split_reasoning({"content": f"Let me see.\n{DECOY}\nNo.\n</think>\n\n{ANSWER}"})
    assert text == ANSWER
    assert thought is not None and DECOY in thought and "Let me see." in thought


def test_closed_think_blocks_and_an_unclosed_one():
    text, thought = split_reasoning({"content": f"<think>{DECOY}</think>\n{ANSWER}"})
    assert (text, thought) == (ANSWER, DECOY)
    text, thought = split_reasoning({"content": f"<think>still thinking {DECOY}"})
    assert text == "" and thought == f"still thinking {DECOY}"


def test_only_the_text_after_the_last_closing_tag_is_the_answer():
    content = f"<think>a</think> mid {DECOY} </think>{ANSWER}"
    text, thought = split_reasoning({"content": content})
    assert text == ANSWER and DECOY in (thought or "")


def test_reasoning_fields_of_every_server():
    for field in ("reasoning_content", "reasoning"):
        text, thought = split_reasoning({"content": ANSWER, field: DECOY})
        assert (text, thought) == (ANSWER, DECOY), field


def test_mistral_list_content_thinking_parts_are_reasoning_text_parts_the_answer():
    content = [
        {"type": "thinking", "thinking": [{"type": "text", "text": DECOY}]},
        {"type": "text", "text": ANSWER},
    ]
    text, thought = split_reasoning({"content": content})
    assert (text, thought) == (ANSWER, DECOY)
    # A reference chunk carries no text of the answer.
    text, _ = split_reasoning(
        {"content": [{"type": "reference", "reference_ids": [1]}, {"type": "text", "text": "7"}]}
    )
    assert text == "7"


def test_reasoning_without_an_answer_leaves_no_text():
    for content in (None, ""):
        text, thought = split_reasoning({"content": content, "reasoning": DECOY})
        assert text == "" and thought == DECOY


def test_plain_replies_are_untouched():
    assert split_reasoning({"content": ANSWER}) == (ANSWER, None)
    assert json.loads(split_reasoning({"content": ANSWER})[0])["action"] == 3
