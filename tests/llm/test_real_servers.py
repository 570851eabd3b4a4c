"""What a real server does that the simulator does not: a completion cap that cuts replies,
a listing of models, a slot count, a rejected reply schema, slow greedy requests, replicas.

A tiny scripted OpenAI-compatible server (aiohttp, loopback) plays the real server; each
test scripts its replies and reads back the requests it received.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from aiohttp import web

from metanim.agents import ReAct
from metanim.agents.base import Context
from metanim.agents.schemas import action_reply
from metanim.agents.tasks import as_task
from metanim.games import PRESETS, make_game
from metanim.llm import InfrastructureError, OpenAIChatClient
from metanim.llm._types import CallOptions
from metanim.llm.client import split_reasoning

NIM7 = make_game("nim", heaps=[7], max_take=3)

Handler = Callable[[dict[str, Any], int], Any]


class FakeServer:
    """An OpenAI-compatible server whose replies come from `handler(body, call_number)`.

    The handler returns (text, finish_reason), or an int HTTP status for an error, or a
    float to sleep that many seconds before answering "late". `/v1/models` lists `listed`;
    `/props` reports `slots` (absent when None).
    """

    def __init__(self, handler: Handler, *, listed=("real-model",), slots: int | None = 2):
        self.handler, self.listed, self.slots = handler, list(listed), slots
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            out = self.handler(body, len(self.requests) - 1)
            if isinstance(out, float):
                await asyncio.sleep(out)
                out = ('{"action": 1}', "stop")
            if isinstance(out, int):
                message = "json_schema: unsupported schema" if out == 400 else "error"
                return web.json_response({"error": {"message": message}}, status=out)
            await asyncio.sleep(0.01)
            text, finish = out
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if isinstance(finish, tuple):  # (finish_reason, reasoning_content)
                finish, message["reasoning_content"] = finish
            return web.json_response(
                {
                    "id": "x",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 7, "total_tokens": 17},
                }
            )
        finally:
            self.in_flight -= 1

    async def _models(self, request: web.Request) -> web.Response:
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "x"} for m in self.listed]
        return web.json_response({"object": "list", "data": data})

    async def _props(self, request: web.Request) -> web.Response:
        if self.slots is None:
            return web.json_response({"error": "not found"}, status=404)
        return web.json_response({"total_slots": self.slots})

    def __enter__(self) -> FakeServer:
        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            app = web.Application()
            app.router.add_post("/v1/chat/completions", self._chat)
            app.router.add_get("/v1/models", self._models)
            app.router.add_get("/props", self._props)
            runner = web.AppRunner(app)
            loop.run_until_complete(runner.setup())
            site = web.TCPSite(runner, "127.0.0.1", 0)
            loop.run_until_complete(site.start())
            self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            self._ready.set()
            loop.run_forever()
            loop.run_until_complete(runner.cleanup())

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


@pytest.fixture
def fake() -> Iterator[Callable[..., FakeServer]]:
    servers: list[FakeServer] = []

    def start(handler: Handler, **kwargs: Any) -> FakeServer:
        server = FakeServer(handler, **kwargs).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__()


def client(server: FakeServer, **kwargs: Any) -> OpenAIChatClient:
    kwargs.setdefault("backoff_s", 0.001)
    kwargs.setdefault("backoff_max_s", 0.002)
    return OpenAIChatClient(kwargs.pop("model", "real-model"), base_url=server.base_url, **kwargs)


def decide(method: Any, game: Any = NIM7, state: Any = None) -> Any:
    state = game.initial_state() if state is None else state
    return asyncio.run(method.decide(game, state, seed=3))


# ------------------------------------------------------------ schemas of the games
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_action_enum_is_exactly_the_legal_moves(preset):
    # Every enum member parses back to a distinct legal move, and every legal move is in
    # it: the schema neither forbids a legal move nor allows an illegal one.
    game = make_game(preset)
    state = game.initial_state()
    enum = game.action_json_schema(state)["enum"]
    parsed = [game.parse_move(json.loads(json.dumps(v)), state) for v in enum]
    assert sorted(map(game.action_id, parsed)) == sorted(
        map(game.action_id, game.legal_moves(state))
    )
    assert len(set(map(game.action_id, parsed))) == len(enum)


def test_reply_schema_holds_the_method_keys_and_caps_reasoning():
    task = as_task(NIM7, NIM7.initial_state())
    schema = action_reply(task, max_chars=40)
    assert schema["required"] == ["reasoning", "action"]
    assert schema["properties"]["action"] == {"enum": [1, 2, 3]}
    assert schema["properties"]["reasoning"]["maxLength"] == 40
    assert schema["additionalProperties"] is False
    # Under a small completion cap the reasoning shrinks so a conforming reply fits.
    ctx = Context(task, 0, 0, options=CallOptions(max_tokens=100))
    assert ctx.chars("answer") == 100 - 32


# ------------------------------------------------------------ options reach requests
def test_every_call_carries_the_cap_and_the_options(fake):
    server = fake(lambda body, i: ('{"reasoning": "r", "action": 3}', "stop"))
    options = CallOptions(
        max_tokens=77,
        top_p=0.9,
        stop=["</s>"],
        extra_body={"cache_prompt": False},
        structured_output="json_schema",
    )
    decision = decide(ReAct(client(server), options=options))
    assert decision.status == "ok" and decision.move == (0, 3)
    (body,) = server.requests
    assert body["max_tokens"] == 77 and body["top_p"] == 0.9 and body["stop"] == ["</s>"]
    assert body["cache_prompt"] is False
    sent = body["response_format"]["json_schema"]["schema"]
    assert sent["properties"]["action"] == {"enum": [1, 2, 3]}
    # The call record says what was sent and how the server ended the reply.
    call = decision.calls[0]
    assert call.options["schema"] == sent and call.options["max_tokens"] == 77
    assert call.finish_reasons == ["stop"] and call.retries == 0


@pytest.mark.parametrize(
    ("mode", "field"), [("guided_json", "guided_json"), ("llama_json_schema", "json_schema")]
)
def test_body_forms_of_structured_output(fake, mode, field):
    server = fake(lambda body, i: ('{"reasoning": "r", "action": 1}', "stop"))
    decide(ReAct(client(server), options=CallOptions(structured_output=mode)))
    (body,) = server.requests
    assert "response_format" not in body
    assert body[field]["properties"]["action"] == {"enum": [1, 2, 3]}


def test_structured_output_off_sends_no_schema_but_the_default_cap(fake):
    server = fake(lambda body, i: ('{"action": 1}', "stop"))
    decide(ReAct(client(server)))
    (body,) = server.requests
    assert body["max_tokens"] == 512
    assert not {"response_format", "guided_json", "json_schema"} & set(body)


# ------------------------------------------------------------ bad inputs
def test_truncated_reply_is_its_own_status_never_a_move(fake):
    # The cut-off text holds a readable action; it must not be read as one.
    server = fake(lambda body, i: ('{"action": 2, "reasoning": "because', "length"))
    decision = decide(ReAct(client(server), max_reasks=1))
    assert decision.status == "forfeit" and decision.move is None
    assert decision.truncated == 2 and decision.unparsable == 0
    assert decision.failure == "truncated"
    assert [s.error for s in decision.samples] == ["truncated", "truncated"]
    assert decision.invalid_usage.completion_tokens == 14
    # The re-ask says why and asks for less.
    assert "cut off" in server.requests[1]["messages"][-1]["content"]


def test_rejected_schema_is_one_clear_error_without_retries(fake):
    server = fake(lambda body, i: 400)
    method = ReAct(client(server), options=CallOptions(structured_output="json_schema"))
    with pytest.raises(InfrastructureError, match=r"structured output 'json_schema'") as info:
        decide(method)
    assert info.value.kind == "unsupported_parameter" and len(server.requests) == 1
    assert "--structured-output off" in str(info.value)


def test_unknown_model_on_a_listing_server_warns(fake, caplog):
    server = fake(lambda body, i: ('{"action": 1}', "stop"), listed=["smollm2"])
    with caplog.at_level(logging.WARNING, logger="metanim.llm"):
        asyncio.run(client(server, model="gpt-4o").chat([{"role": "user", "content": "hi"}]))
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("'gpt-4o' is not listed" in m and "'smollm2'" in m for m in warned)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="metanim.llm"):
        asyncio.run(client(server, model="smollm2").chat([{"role": "user", "content": "hi"}]))
    assert not [r for r in caplog.records if "not listed" in r.getMessage()]


@pytest.mark.slow
def test_a_request_that_timed_out_after_it_was_sent_is_not_resent_unless_asked(fake):
    # It may run to the end and be billed: greedy or sampled, it is sent once...
    for temperature in (0.0, 0.7):
        server = fake(lambda body, i: 2.0)
        c = client(server, timeout_s=0.3, max_retries=4)
        with pytest.raises(InfrastructureError) as info:
            asyncio.run(c.chat([{"role": "user", "content": "hi"}], temperature=temperature))
        assert info.value.kind == "timeout" and len(server.requests) == 1
    # ... unless resends are asked for: each one counted.
    sampled = fake(lambda body, i: 2.0)
    with pytest.raises(InfrastructureError) as info:
        asyncio.run(
            client(sampled, timeout_s=0.3, max_retries=4, resend_timeouts=2).chat(
                [{"role": "user", "content": "hi"}], temperature=0.7
            )
        )
    assert len(sampled.requests) == 3 and info.value.attempts == 3


def test_a_reask_changes_seed_and_temperature(fake):
    replies = iter(["no json here", '{"action": 2}'])
    server = fake(lambda body, i: (next(replies), "stop"))
    decision = decide(ReAct(client(server), reask_temperature=0.6))
    assert decision.status == "ok" and decision.unparsable == 1
    first, second = server.requests
    assert first["temperature"] == 0 and second["temperature"] == 0.6
    assert first["seed"] != second["seed"]
    assert decision.calls[1].temperature == 0.6


# ------------------------------------------------------------ concurrency and replicas
def test_concurrency_follows_the_servers_slot_count(fake):
    server = fake(lambda body, i: 0.2, slots=2)
    c = client(server, max_concurrency=None)

    async def burst() -> None:
        await asyncio.gather(*(c.chat([{"role": "user", "content": str(k)}]) for k in range(6)))

    asyncio.run(burst())
    assert server.max_in_flight == 2 and c.server_slots == {server.base_url: 2}


def test_replicas_share_the_load_and_the_results_do_not_depend_on_them(fake):
    def handler(body: dict[str, Any], i: int) -> tuple[str, str]:
        return json.dumps({"action": 1 + body["seed"] % 3}), "stop"

    a, b = fake(handler, slots=None), fake(handler, slots=None)
    both = OpenAIChatClient("real-model", base_url=f"{a.base_url}|{b.base_url}", max_concurrency=2)
    one = OpenAIChatClient("real-model", base_url=a.base_url, max_concurrency=4)

    async def burst(c: OpenAIChatClient) -> list[str]:
        calls = [c.chat([{"role": "user", "content": "q"}], seed=k) for k in range(8)]
        return [r.text for r in await asyncio.gather(*calls)]

    spread = asyncio.run(burst(both))
    assert len(a.requests) > 0 and len(b.requests) > 0
    assert max(a.max_in_flight, b.max_in_flight) <= 2
    assert spread == asyncio.run(burst(one))


# ------------------------------------------------------------ reasoning models
@pytest.mark.parametrize(
    ("content", "reasoning", "answer", "thought"),
    [
        ('<think>take 3 leaves 4</think>\n{"action": 3}', None, '{"action": 3}', "take 3 leaves 4"),
        ('{"action": 3}', "hmm, 7 mod 4 = 3", '{"action": 3}', "hmm, 7 mod 4 = 3"),
        ('<think>never closed {"action": 1}', None, "", 'never closed {"action": 1}'),
        ('{"action": 2}', None, '{"action": 2}', None),
    ],
)
def test_reasoning_is_kept_apart_from_the_answer(content, reasoning, answer, thought):
    message = {"content": content, **({"reasoning_content": reasoning} if reasoning else {})}
    assert split_reasoning(message) == (answer, thought)


def test_thinking_model_reply_is_parsed_from_its_answer(fake):
    # The thinking names another action; only the answer after it counts.
    server = fake(
        lambda body, i: ('{"action": 3}', ("stop", 'maybe {"action": 1}? no: 7 mod 4 = 3'))
    )
    decision = decide(ReAct(client(server)))
    assert decision.move == (0, 3)
    assert decision.calls[0].reasoning == ['maybe {"action": 1}? no: 7 mod 4 = 3']


def test_run_config_rejects_the_old_budget_name():
    from metanim.arena.tournament import TournamentConfig

    with pytest.raises(ValueError, match="budget_tokens"):
        TournamentConfig(max_tokens=1000)
    a = TournamentConfig()
    assert a.config_hash() != TournamentConfig(structured_output="json_schema").config_hash()
    assert a.config_hash() != TournamentConfig(max_completion_tokens=256).config_hash()
    assert a.config_hash() == TournamentConfig(budget_tokens=10).config_hash()


# ------------------------------------------------------------ the flags, end to end
def test_tournament_flags_reach_every_call_and_name_the_policy(sim_server, tmp_path):
    from metanim import cli

    sim_server.reset_log()
    code = cli.main(
        [
            "tournament", "--name", "flags", "--game", "nim-31-k3", "--method", "react",
            "--model", "sim-faulty:malformed=1", "--base-url", sim_server.base_url,
            "--opponent", "optimal", "--episodes", "2", "--max-reasks", "1",
            "--on-failure", "random", "--max-completion-tokens", "77",
            "--structured-output", "json_schema", "--results-dir", str(tmp_path),
            "--no-progress", "--keep-going",
        ]
    )  # fmt: skip
    # Every decision falls back: --keep-going plays the episodes out (without it the run
    # stops after five; tests/arena/test_forfeits.py).
    assert code == 0
    log = sim_server.log
    assert log and all(r["max_tokens"] == 77 for r in log)
    (summary,) = tmp_path.glob("flags-*.summary.json")
    agent = json.loads(summary.read_text())["groups"][0]["agent"]
    # Every reply is malformed: two asks per decision, then a recorded random fallback.
    assert agent["fallbacks"] == agent["moves"] > 0 and agent["forfeits"] == 0
    assert agent["unparsable"] == 2 * agent["moves"]
    (report,) = tmp_path.glob("flags-*.report.md")
    assert "on_failure=`random`" in report.read_text()


def test_play_takes_the_failure_policy_and_reasks(capsys):
    from metanim import cli

    code = cli.main(
        [
            "play", "--game", "nim-31-k3", "--agent", "react", "--model", "sim-faulty:malformed=1",
            "--opponent", "react:sim-optimal", "--max-reasks", "0", "--on-failure", "forfeit",
        ]
    )  # fmt: skip
    captured = capsys.readouterr()
    out = captured.out
    assert code == 0 and "agent forfeited" in out and "unparsable=1 " in out
    # The one model decision forfeited: the game ends with what helps.
    assert "hint: 1 of 1 decisions gave no answer: most replies named no answer" in captured.err


def test_folder_report_shows_forfeits_apart_from_losses_by_play(sim_server, tmp_path):
    from metanim.analysis.report import render_report
    from metanim.arena.tournament import TournamentConfig, run_tournament

    run_tournament(
        TournamentConfig(
            name="forfeits",
            games=["nim-31-k3"],
            method="react",
            model="sim-faulty:malformed=1",
            base_url=sim_server.base_url,
            opponent="optimal",
            episodes=3,
            max_reasks=0,
            # Three forfeits, fewer than the five that stop a run: all three are played.
            keep_going=False,
            results_dir=str(tmp_path),
            progress=False,
        )
    )
    report = render_report(tmp_path, plots=False)
    (row,) = report.win_rates
    # Every reply is malformed: every episode is lost on the first move, by forfeit.
    assert row.finished == 3 and row.wins == 0 and row.forfeit_losses == 3
    lines = report.markdown.splitlines()
    header = next(line for line in lines if line.startswith("| run | game | seat |"))
    pooled = next(line for line in lines if line.startswith("| react") and "| all |" in line)
    cells = dict(zip(header.split(" | "), pooled.split(" | "), strict=True))
    assert cells["losses play/forfeit"] == "0/3" and cells["on_failure"] == "forfeit"


def test_old_budget_flag_is_refused_with_both_new_names(capsys):
    from metanim import cli

    assert cli.main(["tournament", "--max-tokens", "100"]) == 2
    err = capsys.readouterr().err
    assert "--budget-tokens" in err and "--max-completion-tokens" in err


# ------------------------------------------------------------ every method, every phase
def _conforming(schema: dict[str, Any] | None) -> Any:
    """A value that follows `schema` (first enum member, short strings, 0.5 for numbers)."""
    if schema is None:
        return "free text"
    if "enum" in schema:
        return schema["enum"][-1]
    if "anyOf" in schema:
        return _conforming(schema["anyOf"][0])
    if schema.get("type") == "object":
        return {k: _conforming(v) for k, v in schema["properties"].items()}
    if schema.get("type") == "number":
        return 0.5
    return "short"


def _schema_server(body: dict[str, Any], i: int) -> tuple[str, str]:
    sent = body.get("response_format", {}).get("json_schema", {}).get("schema")
    if sent is None:
        return "A plain argument without JSON.", "stop"
    return json.dumps(_conforming(sent)), "stop"


#: The phases that ask for free text (no schema): Self-Refine's critique, AceMAD's argument.
FREE_TEXT = {"self_refine": {"feedback"}, "acemad": {"argue"}}


@pytest.mark.parametrize(
    "spec",
    ["standard", "react", "cot", "sc:n=2", "self_refine:iterations=1", "mad:rounds=1",
     "dreamad:rounds=1", "mpd:rounds=2", "acemad:agents=2,rounds=1"],
)  # fmt: skip
def test_every_structured_phase_of_every_method_sends_its_schema(fake, spec):
    from metanim.agents.registry import build_method

    server = fake(_schema_server)
    c = client(server)
    options = CallOptions(structured_output="json_schema")
    method = build_method(
        spec, "real-model", client_factory=lambda _: c, defaults={"options": options}
    )
    decision = decide(method)
    assert decision.status == "ok" and decision.unparsable == decision.illegal == 0
    assert len(server.requests) == len(decision.calls)
    for call in decision.calls:
        schema = call.options.get("schema")
        free = FREE_TEXT.get(method.name, set())
        assert (schema is not None) == (call.phase not in free), call.phase
    sent = [
        b["response_format"]["json_schema"]["schema"]
        for b in server.requests
        if "response_format" in b
    ]
    assert sent == [c.options["schema"] for c in decision.calls if c.options.get("schema")]
    if spec.startswith("dreamad"):
        assert all(decision.extra["elicitation"]["structured"])


def test_a_parameterised_simulator_name_is_not_warned_about(sim_server, caplog):
    # The simulator lists one parameterisation per policy; any other is served too.
    c = OpenAIChatClient("sim-faulty:malformed=1", base_url=sim_server.base_url)
    with caplog.at_level(logging.WARNING, logger="metanim.llm"):
        asyncio.run(c.chat([{"role": "user", "content": "hi"}]))
    assert not [r for r in caplog.records if "not listed" in r.getMessage()]
