"""What a simulated model answers: find the task in the prompt, pick an answer by policy,
and write it in the JSON shape the prompt asks for.

A task is either a MetaNIM game (recovered from the real game prompt with
`metanim.games.game_from_prompt`) or a question of the answer key the server was given
(`metanim.llm.sim.questions.AnswerKey`, looked up by the question's text: nothing
about the answer travels in the prompt).
How a policy turns what a request shows into an answer (preferences, temperature, debate
layouts, cue words, AceMAD reports) is in `metanim.llm.sim.behaviour`. Everything here is
a pure function of its arguments and the `random.Random` it is given (solved positions
are memoized).
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import random
import re
from dataclasses import dataclass
from typing import Any

from metanim.games import Game, InvalidStateError, MoveError, check_listable, game_from_prompt
from metanim.llm._types import Message
from metanim.llm.sim import behaviour
from metanim.llm.sim.behaviour import Shown, answers_in  # noqa: F401 - public
from metanim.llm.sim.questions import AnswerKey, KeyEntry
from metanim.llm.sim.spec import SimModelSpec
from metanim.llm.sim.task import Task, move_value
from metanim.llm.templates import Layout
from metanim.solver import winning_moves


# ---------------------------------------------------------------------------- tasks
def _size(game: Game[Any, Any], state: Any) -> int:
    """How much game is left, for the take-size heuristics (smaller = more was taken)."""
    if game.name == "fibonacci":
        return int(state[0])
    if game.name == "corner_queen":
        height = game.info.params["height"]
        return (height - 1 - state[0]) + state[1]
    if game.name == "nim":
        return sum(state)  # heaps may pass int64 (the solver has a closed form for them)
    return int(game.observation(state).sum())


def game_task(game: Game[Any, Any], state: Any) -> Task:
    """The task of a game position (cached: a debate asks about one position many times)."""
    key = json.dumps([game.name, game.params, game.to_json(state)], sort_keys=True)
    task = _TASKS.get(key)
    if task is None:
        task = _TASKS[key] = _game_task(game, state)
        if len(_TASKS) > 4096:  # bounded, so memory stays flat over long runs
            _TASKS.pop(next(iter(_TASKS)))
    return task


_TASKS: dict[str, Task] = {}


def _game_task(game: Game[Any, Any], state: Any) -> Task:
    moves = game.legal_moves(state)
    values = [move_value(game, m) for m in moves]
    by_size = sorted(
        zip(moves, values, strict=True), key=lambda mv: _size(game, game.child(state, mv[0]))
    )
    illegal = None
    legal_ids = {game.action_id(m) for m in moves}
    for action in range(game.info.num_actions):
        if action not in legal_ids:
            illegal = move_value(game, game.move_from_action(action))
            break
    if illegal is None:  # every action is legal here: name one outside the action space
        illegal = -1 if isinstance(values[0], int) else [-1, -1]
    return Task(
        kind="game",
        candidates=values,
        correct=[move_value(game, m) for m in winning_moves(game, state)],
        game=game,
        state=state,
        heuristics={
            "max_take": by_size[0][1],
            "min_take": by_size[-1][1],
            "first": values[0],
            "last": values[-1],
        },
        illegal_value=illegal,
    )


def question_task(entry: KeyEntry) -> Task:
    """The task of a known question: its options (or answers around the gold one) and the gold."""
    candidates, correct = entry.candidates_and_correct
    if entry.labels is not None:
        illegal: Any = "Z" if "Z" not in candidates else "none"
    else:
        illegal = "not a number"
    wrong = [c for c in candidates if c != correct]
    return Task(
        kind="question",
        candidates=candidates,
        correct=[correct],
        heuristics={
            "first": candidates[0],
            "last": candidates[-1],
            "max_take": wrong[0] if wrong else correct,
            "min_take": wrong[-1] if wrong else correct,
        },
        illegal_value=illegal,
        question=entry.question,
    )


def find_task(messages: list[Message], questions: AnswerKey | None = None) -> Task | None:
    """The game or known question in the latest message that holds one (system included)."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            continue
        text = str(message.get("content") or "")
        entry = questions.find(text) if questions is not None else None
        if entry is not None:
            return question_task(entry)
        task = _prompt_task(text)
        if task is not None:
            return task
    return None


@functools.lru_cache(maxsize=1024)
def _prompt_task(text: str) -> Task | None:
    """The task of the game position a prompt shows, or None (cached by text: a request
    asks for it twice, and retries and debate rounds resend the same prompt)."""
    try:
        game, state = game_from_prompt(text)
    except (InvalidStateError, MoveError, ValueError, KeyError):
        return None
    check_listable(game, "the simulator")  # its answers are drawn from the legal moves
    return game_task(game, state) if game.legal_moves(state) else None


# ------------------------------------------------------------------------ replying
_COLON = re.compile(r"\s*:")


_TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"?|[{}]', re.DOTALL)


def template_keys(text: str) -> list[str]:
    """Top-level keys of the last `{...}` block in `text` that has any (the asked format)."""
    return list(_template_keys(text))


@functools.lru_cache(maxsize=1024)
def _template_keys(text: str) -> tuple[str, ...]:
    """`template_keys`, cached by text (the same Output Format comes with every prompt)."""
    blocks: list[list[str]] = []
    keys: list[str] = []
    depth = 0
    # Only strings and braces matter; the regex skips everything else in C.
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if token == "{":
            depth += 1
            if depth == 1:
                keys = []
        elif token == "}":
            if depth > 0:
                depth -= 1
                if depth == 0 and keys:
                    blocks.append(keys)
        elif depth == 1 and _COLON.match(text, match.end()):
            key = match.group(1)
            if key not in keys:
                keys.append(key)
    return tuple(blocks[-1]) if blocks else ()


def _norm(key: str) -> str:
    return re.sub(r"[_\-]+", " ", key.strip().lower())


def _is_answer_key(key: str) -> bool:
    k = _norm(key)
    return k in ("action", "move", "choice", "decision") or k.endswith(" action") or "answer" in k


def _text(task: Task | None, answer_text: str) -> str:
    if task is None or task.game is None:
        return f"My answer is {answer_text}."
    return f"In {task.game.title}, from this position I choose {answer_text}."


@dataclass
class Reading:
    """What one request shows and how the policy answered it (for writing the reply)."""

    task: Task | None
    answer: Any
    shown: Shown | None
    cued: bool
    temperature: float
    rng: random.Random
    #: The cue sentence this reply carries, drawn once: a reply is one text, so its
    #: strategy fields carry the insight together or not at all.
    hint: str | None = None
    drawn: bool = False

    def insight(self, spec: SimModelSpec) -> str | None:
        if not self.drawn:
            self.hint = behaviour.insight(spec, self.cued, self.temperature, self.rng)
            self.drawn = True
        return self.hint


_NO_TASK = "I cannot find a game or question in the prompt."


def _strategic(key: str) -> bool:
    """A strategy field of DReaMAD's elicitation (what `field_value` writes advice into)."""
    k = _norm(key)
    return "strategy" in k or "tactic" in k or "evaluation" in k


def _cue_in(spec: SimModelSpec, messages: list[Message]) -> bool:
    """Whether a request with no position in view already carries the agent's cue word
    (in what the method or an agent wrote: every non-assistant message)."""
    pattern = re.compile(rf"\b{re.escape(spec['cue'])}\b", re.IGNORECASE)
    return any(
        pattern.search(str(m.get("content") or ""))
        for m in messages
        if m.get("role") != "assistant"
    )


def _strategy_text(spec: SimModelSpec, r: Reading) -> str:
    hint = r.insight(spec)
    return "Leave the opponent a losing position." + (f" {hint}" if hint else "")


def field_value(key: str, spec: SimModelSpec, r: Reading) -> Any:
    """What a reply puts under `key` of the asked JSON object."""
    k = _norm(key)
    task, answer = r.task, r.answer
    answer_text = json.dumps(answer)
    game = task.game if task is not None else None
    shown = r.shown.all if r.shown is not None else []
    if "prompt" in k:
        # DReaMAD's optimized prompt is played from next, so it must still hold the game.
        hint = r.insight(spec)
        extra = f"\n{hint}" if hint else ""
        if game is not None:
            return (
                f"{game.prompt(task.state)}\nThink about which positions are losing for the "
                f"opponent.{extra}"
            )
        # The question itself stays: the rewrite may be played in place of the prompt.
        question = task.question if task is not None else ""
        return f"{question}\nAnswer the question carefully.{extra}".lstrip()
    if task is not None and ("belief" in k or "distribution" in k or "probabilit" in k):
        return _rounded(behaviour.belief(task, answer, shown, spec["conf"]))
    if task is not None and ("peer" in k or "predict" in k):
        return _rounded(behaviour.prediction(spec, task, answer, shown))
    if _is_answer_key(key):
        return answer
    if "confidence" in k:
        return spec["conf"]
    if "preference" in k:
        peers = r.shown.peers if r.shown is not None else []
        return "Yes" if answer in peers else "No"
    if "side" in k:
        return "Affirmative"
    if game is not None:
        rules = game.rules_text()
        if "definition" in k:
            return f"{game.title}. {rules}"
        if ("winning" in k and "condition" in k) or "objective" in k or "goal" in k:
            return rules.split("\n")[0].removeprefix("#Objective:").strip()
        if "constraint" in k or "rule" in k:
            return rules.split("\n")[-1].removeprefix("#Game Rule:").strip()
    if "strategy" in k or "tactic" in k or "evaluation" in k:
        hint = r.insight(spec)
        return f"Leave the opponent a losing position; here that means {answer_text}." + (
            f" {hint}" if hint else ""
        )
    text = _text(task, answer_text) + f" (policy {spec.policy})"
    if spec["spread"] and r.cued:  # the argument names the cue it was given (no draw)
        text += f" {behaviour.insight(spec, True, r.temperature, r.rng)}"
    return text


def _rounded(dist: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 4) for k, v in dist.items()}


_MALFORMED = (
    'I think the best move is to take some. ```json\n{"reasoning": "take',
    "Let me think about this carefully. The answer depends on the position.",
    '```json\n{"reasoning": "unsure", "action": }\n```',
)


def reply(
    spec: SimModelSpec,
    messages: list[Message],
    rng: random.Random,
    temperature: float,
    questions: AnswerKey | None = None,
    fault_rng: random.Random | None = None,
    layout: Layout | None = None,
) -> tuple[str, Any, str | None]:
    """One choice's text, the answer it names (None if malformed) and its fault, if any.

    `rng` draws the answer (from the request's seed, as a real model samples); `fault_rng`
    draws the answer faults (from the server seed, the request and its attempt index, so
    a resent request can come out differently). It defaults to `rng`. `layout` is
    `read_layout(messages)` when the caller has it already.
    """
    return Prompt(messages, questions, layout).reply(spec, rng, temperature, fault_rng)


#: Models, temperatures and answers a `Prompt` keeps what it worked out for (then forgets).
_PER_PROMPT = 256


class Prompt:
    """What one request's messages show, read once for any number of answers.

    The task, the asked JSON keys, the debate's answers and, per model, the cue and the
    preferences are functions of the messages (and the answer key) alone, so a server
    keeps one `Prompt` per distinct message list: retries, samples (n > 1), seats and
    episodes that reach the same position resend the same messages. `reply` then only
    draws; a reply's text, a function of the answer where no cue word can be drawn
    into it, is kept per answer too.
    """

    def __init__(
        self,
        messages: list[Message],
        questions: AnswerKey | None = None,
        layout: Layout | None = None,
    ) -> None:
        self.messages = messages
        self.task = find_task(messages, questions)
        last_user = next(
            (m for m in reversed(messages) if m.get("role") == "user"), {"content": ""}
        )
        self.keys = template_keys(str(last_user.get("content") or "")) or ["reasoning", "action"]
        self.shown = behaviour.read(messages, self.task, layout) if self.task is not None else None
        # Per model name: (cued, the preferences where no draw changes them, or None).
        self._models: dict[str, tuple[bool, behaviour.Prefs | None]] = {}
        # (model name, temperature) -> (answers, cumulative weights) to draw from.
        self._samplers: dict[tuple[str, float], tuple[list[str], list[float]]] = {}
        self._texts: dict[tuple[str, str], str] = {}  # (model name, answer JSON) -> text

    def _model(self, spec: SimModelSpec) -> tuple[bool, behaviour.Prefs | None]:
        known = self._models.get(spec.name)
        if known is None:
            task, shown = self.task, self.shown
            assert task is not None and shown is not None
            cued = behaviour.cue_present(spec, task, self.messages, shown.layout)
            prefs = None
            if spec.policy == "conform" or spec["read"] != "consensus":
                # No draw in `debate_prefs` (only reading by consensus draws a peer).
                base = behaviour.prior(spec, task, cued)
                prefs = behaviour.debate_prefs(spec, task, shown, base, _NO_DRAWS)
            if len(self._models) >= _PER_PROMPT:
                self._models.clear()
            known = self._models[spec.name] = (cued, prefs)
        return known

    def _sampler(
        self, spec: SimModelSpec, prefs: behaviour.Prefs, temperature: float
    ) -> tuple[list[str], list[float]]:
        """`behaviour.sample`'s table, once: the same keys and weights, accumulated as
        `random.choices` accumulates them, so the draw is the same."""
        sampler = self._samplers.get((spec.name, temperature))
        if sampler is None:
            dist = behaviour.at_temperature(prefs, temperature)
            keys = sorted(dist)
            if len(self._samplers) >= _PER_PROMPT:
                self._samplers.clear()
            sampler = self._samplers[spec.name, temperature] = (
                keys,
                list(itertools.accumulate(dist[k] for k in keys)),
            )
        return sampler

    def draws(self, spec: SimModelSpec, temperature: float) -> bool:
        """Whether an answer of `spec` at `temperature` draws from its generator at all.

        Where it does not (one answer possible and no cue sentence to draw), `reply`
        takes `rng=None`: seeding a generator costs more than the rest of a reply.
        """
        if self.task is None:
            # A text the agent writes for itself with no position in view (DReaMAD's
            # strategy step) may still draw its cue sentence.
            return bool(spec["cue"]) and any(_strategic(k) for k in self.keys)
        if spec["cue"]:
            return True  # `insight` may draw
        shown = self.shown
        assert shown is not None
        if shown.layout.kind == "acemad_commit" and shown.own is not None:
            return False
        prefs = self._model(spec)[1]
        if prefs is None:
            return True
        keys, cum = self._sampler(spec, prefs, temperature)
        # One answer, unless its weight is one `random.choices` refuses (a NaN
        # temperature): then the draw raises as it did.
        return len(keys) > 1 or not 0 < cum[-1] < math.inf

    def _choose(self, spec: SimModelSpec, rng: random.Random | None, temperature: float) -> Any:
        """The answer value the policy gives (before answer faults; see `behaviour`), with
        what needs no draw read once."""
        task, shown = self.task, self.shown
        assert task is not None and shown is not None
        if shown.layout.kind == "acemad_commit" and shown.own is not None:
            return shown.own  # a commitment states the answer the agent just argued for
        cued, prefs = self._model(spec)
        if prefs is None:  # a debate read by consensus: the peer is drawn
            assert rng is not None
            base = behaviour.prior(spec, task, cued)
            prefs = behaviour.debate_prefs(spec, task, shown, base, rng)
            return behaviour.sample(prefs, temperature, rng)
        keys, cum = self._sampler(spec, prefs, temperature)
        if rng is None:  # the caller knows no draw can change the answer (`draws`)
            assert len(keys) == 1, "a draw was needed"
            return json.loads(keys[0])
        return json.loads(rng.choices(keys, cum_weights=cum)[0])

    def reply(
        self,
        spec: SimModelSpec,
        rng: random.Random | None,
        temperature: float,
        fault_rng: random.Random | None = None,
    ) -> tuple[str, Any, str | None]:
        """`reply` for these messages (see there); `rng` may be None where `draws` is
        false, if `fault_rng` is given."""
        fault_rng = fault_rng or rng
        assert fault_rng is not None
        task, keys = self.task, self.keys
        if task is None:
            if spec["cue"] and any(_strategic(k) for k in keys):
                # DReaMAD's strategy request shows the game in the agent's own words, not
                # its prompt: a strategy is still written, and carries the cue sentence
                # with the `insight` probability at the request's temperature (kept where
                # the request already carries the cue), as any self-written text does.
                assert rng is not None
                cued = _cue_in(spec, self.messages)
                reading = Reading(None, None, None, cued, temperature, rng)
                obj = {
                    key: _strategy_text(spec, reading) if _strategic(key) else _NO_TASK
                    for key in keys
                }
                return f"```json\n{json.dumps(obj)}\n```", None, None
            obj = {key: _NO_TASK for key in keys}
            return f"```json\n{json.dumps(obj)}\n```", None, "no_task"
        shown = self.shown
        assert shown is not None
        answer = self._choose(spec, rng, temperature)
        fault = None
        if fault_rng.random() < spec["malformed"]:
            return fault_rng.choice(_MALFORMED), None, "malformed"
        if fault_rng.random() < spec["illegal"]:
            answer, fault = task.illegal_value, "illegal"
        answer_text = json.dumps(answer)
        if shown.layout.kind == "acemad_argue":  # plain text was asked for
            return f"{_text(task, answer_text)} My answer: {answer_text}.", answer, fault
        cued = self._model(spec)[0]
        if spec["cue"]:  # a cue sentence may be drawn into the text
            return self._write(spec, answer, answer_text, cued, temperature, rng), answer, fault
        text = self._texts.get((spec.name, answer_text))
        if text is None:
            text = self._write(spec, answer, answer_text, cued, temperature, rng)
            if len(self._texts) >= _PER_PROMPT:
                self._texts.clear()
            self._texts[spec.name, answer_text] = text
        return text, answer, fault

    def _write(
        self,
        spec: SimModelSpec,
        answer: Any,
        answer_text: str,
        cued: bool,
        temperature: float,
        rng: random.Random | None,
    ) -> str:
        # No generator where no cue can be drawn: one that refuses to draw stands in.
        reading = Reading(self.task, answer, self.shown, cued, temperature, rng or _NO_DRAWS)
        obj = {key: field_value(key, spec, reading) for key in self.keys}
        text = (
            f"{_text(self.task, answer_text)}\n```json\n{json.dumps(obj, ensure_ascii=False)}\n```"
        )
        return text


class _NoDraws(random.Random):
    """A generator that refuses to draw: where preferences are read once for all requests,
    a draw would be a bug (it would have to come from each request's own generator)."""

    def random(self) -> float:
        raise AssertionError("no draw expected here")

    def getrandbits(self, k: int) -> int:
        raise AssertionError("no draw expected here")


_NO_DRAWS = _NoDraws(0)
