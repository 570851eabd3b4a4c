"""A fixed corpus of chat-completions requests and what the simulated server answered.

The prompts (tests/data/sim_prompts.json.gz) are message lists captured from the request
log of small tournaments and evaluations (every method layout, games and questions); the
requests around them vary the model spec, temperature, n, seed, server seed and session,
repeat bodies (attempt counts, bursts) and add malformed ones. `replay` answers them in
order on fresh `SimApp`s; tests/llm/test_sim_identity.py compares that with
tests/data/sim_golden.json.gz, recorded from the code before the server was optimised
(the 12 answers to DReaMAD's strategy request, 12 of 814, were recorded again when the
simulator began to answer that request with a strategy; a script compared both files and
found no other difference):

    PYTHONPATH=/path/to/reference/checkout python tests/sim_golden.py --write
"""

from __future__ import annotations

import asyncio
import gzip
import json
import random
import sys
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
PROMPTS = DATA / "sim_prompts.json.gz"
GOLDEN = DATA / "sim_golden.json.gz"

MODELS = (
    "sim-optimal",
    "sim-random",
    "sim-biased:heuristic=max_take,p=0.8",
    "sim-biased:heuristic=min_take,p=0.6,read=consensus",
    "sim-biased:heuristic=first,p=0.7,noise=0.2",
    "sim-biased:heuristic=last,p=0.5,cue=pattern,insight=0.5",
    "sim-conform:self=1,peer=2",
    "sim-conform:self=1,peer=3,base=random",
    "sim-optimal:predict=crowd,conf=0.6",
    "sim-optimal:predict=self",
    "sim-faulty:malformed=0.3,illegal=0.2,http429=0.3,http500=0.1",
    "sim-faulty:malformed=0.5",
    "sim-random:quota=0.2,illegal=0.4",
)
CUE_MODELS = (
    "sim-optimal:cue=pattern,insight=0.5",
    "sim-biased:heuristic=max_take,p=0.8,cue=winning,cue_p=1.0,insight=1.0",
)
TEMPERATURES = (0.0, 0.7, None, 1.3, 0.1)
SEEDS = (None, None, 7, 12345, -3, "s", 2.5, 2**70, True, [1, 2])
ODD_TEXT = 'Ünïcödé ✓ "quoted" \\back\\ \u2028 \x00\t tab 😀 {"action": 3}'


def _prompts() -> list[list[dict[str, Any]]]:
    return json.loads(gzip.decompress(PROMPTS.read_bytes()))


def _questions() -> list[str]:
    import metanim

    samples = Path(metanim.__file__).resolve().parent / "samples"
    return [str(samples / name) for name in ("mc.jsonl", "gsm8k.jsonl", "math.jsonl")]


def _body(messages: list[Any], rng: random.Random, model: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model or rng.choice(MODELS), "messages": messages}
    temperature = rng.choice(TEMPERATURES)
    if temperature is not None or rng.random() < 0.5:
        body["temperature"] = temperature
    if rng.random() < 0.3:
        body["n"] = 3
    seed = rng.choice(SEEDS)
    if seed is not None or rng.random() < 0.5:
        body["seed"] = seed
    if rng.random() < 0.2:
        body["max_tokens"] = 256
    return body


def _raw(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False).encode()


def plan() -> list[tuple[dict[str, Any], list[bytes]]]:
    """(SimApp keyword arguments, request bodies in order) per server."""
    prompts = _prompts()
    rng = random.Random(15)
    main: list[bytes] = []
    for messages in prompts:
        for _ in range(3):
            main.append(_raw(_body(messages, rng)))
    # Retries: a body resent gets the next attempt's draws (and bursts end).
    game_prompt = next(m for m in prompts if "Nim" in m[-1]["content"])
    for model in ("sim-optimal:burst429=2", "sim-optimal:burst500=1,http429=0.5"):
        raw = _raw({"model": model, "messages": game_prompt, "temperature": 0.7, "seed": 1})
        main += [raw] * 3
    faulty = _raw({"model": MODELS[10], "messages": game_prompt, "n": 3})
    main += [faulty] * 4
    # Odd messages: text the JSON encoders escape, None, missing and non-text content.
    odd = [
        {"role": "system", "content": ODD_TEXT},
        {"role": "user", "content": None},
        {"role": "assistant"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}], "name": "x"},
        {"role": "user", "content": game_prompt[-1]["content"] + ODD_TEXT},
    ]
    for model in MODELS[:4]:
        main.append(_raw(_body(odd, rng, model)))
        main.append(_raw(_body(odd[:2], rng, model)))
    main.append(_raw({"model": "sim-optimal", "messages": []}))
    # Errors: bad bodies, unknown models and policies, n out of range.
    main += [
        b"",
        b"{not json",
        b"[1, 2]",
        _raw({"model": "sim-optimal"}),
        _raw({"model": "sim-optimal", "messages": "hello"}),
        _raw({"model": "sim-optimal", "messages": [{"content": "no role"}]}),
        _raw({"model": "gpt-4o", "messages": game_prompt}),
        _raw({"model": "sim-genius", "messages": game_prompt}),
        _raw({"model": "sim-biased:p=2", "messages": game_prompt}),
        _raw({"model": "sim-optimal", "messages": game_prompt, "n": 0}),
        _raw({"model": "sim-optimal", "messages": game_prompt, "n": 1001}),
        _raw({"model": "sim-faulty:http429=1", "messages": game_prompt, "n": 0}),
        _raw({"model": "sim-optimal", "messages": game_prompt, "temperature": "hot"}),
        _raw({"model": "sim-optimal", "messages": game_prompt, "n": "many"}),
        # Temperatures only the stdlib's JSON reads: one answer, and a draw between several.
        *(
            _raw({"model": m, "messages": game_prompt, "temperature": t})
            .replace(b'"NaN"', b"NaN")
            .replace(b'"Infinity"', b"Infinity")
            for m in ("sim-optimal", "sim-random")
            for t in ("NaN", "Infinity", -1)
        ),
        _raw({"model": "sim-optimal", "messages": game_prompt, "n": 2.7, "seed": 1}),
    ]
    # Cue words: a cue sentence may be drawn into strategies and rewritten prompts, also
    # where only one answer is possible (so nothing else draws).
    for messages in prompts:
        if '"reasoning": "..."' in str(messages[-1].get("content")):
            continue  # the common react format: no text a cue can go into
        for model in CUE_MODELS:
            main.append(_raw({"model": model, "messages": messages, "temperature": 0.7}))
            main.append(_raw({"model": model, "messages": messages, "temperature": 0, "seed": 3}))
    other = [_raw(_body(m, rng)) for m in prompts[::3]]
    bare = [_raw(_body(m, rng)) for m in prompts[1::4]]
    return [
        ({"seed": 0, "questions": _questions()}, main),
        ({"seed": 7, "session": 1, "questions": _questions()}, other),
        ({"seed": 3}, bare),
    ]


def _clean(status: int, body: Any, headers: dict[str, str], record: Any) -> dict[str, Any]:
    """What must not change: all but the reply's id and times and the record's times."""
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if k not in ("id", "created")}
    if record is not None:
        record = {k: v for k, v in record.items() if k not in ("time", "finished")}
    out = {"status": status, "body": body, "headers": dict(headers), "record": record}
    # Through JSON, as the golden file holds it (tuples become lists).
    return json.loads(json.dumps(out, ensure_ascii=False, default=str))


def replay() -> list[list[dict[str, Any]]]:
    """Every planned request answered in order by `SimApp.complete`, cleaned."""
    from metanim.llm.sim import SimApp

    async def answer(app: SimApp, bodies: list[bytes]) -> list[dict[str, Any]]:
        results = []
        for raw in bodies:
            before = len(app.log)
            try:
                status, body, headers = await app.complete(raw)
            except Exception as exc:  # an HTTP 500 from aiohttp itself: the type must stay
                results.append({"raises": type(exc).__name__, "log": len(app.log) - before})
                continue
            log = app.log
            record = log[-1] if len(log) > before else None
            results.append(_clean(status, body, headers, record))
        return results

    return [asyncio.run(answer(SimApp(**kwargs), bodies)) for kwargs, bodies in plan()]


def load() -> list[list[dict[str, Any]]]:
    return json.loads(gzip.decompress(GOLDEN.read_bytes()))


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: PYTHONPATH=REFERENCE python tests/sim_golden.py --write")
    data = json.dumps(replay(), ensure_ascii=False, sort_keys=True).encode()
    GOLDEN.write_bytes(gzip.compress(data, 9, mtime=0))
    print(f"{GOLDEN}: {len(data)} bytes, {GOLDEN.stat().st_size} compressed")
