"""What only a fresh interpreter shows: gymnasium's module prefix imports metanim, an
append log left open neither keeps the process alive nor loses a line, and the client
closes its aiohttp sessions across event loops (under -X dev, which reports a leak)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from metanim.records import read_records


def test_module_prefix_works_in_a_fresh_interpreter() -> None:
    code = (
        "import gymnasium as gym; import sys\n"
        "env = gym.make('metanim:MetaNIM/Fibonacci-v0')\n"
        "obs, info = env.reset(seed=0)\n"
        "assert obs.shape == (2,), obs\n"
        "print('metanim' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_a_log_left_open_neither_keeps_the_process_alive_nor_loses_a_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = (
        "import asyncio, sys\n"
        "from metanim.records import AppendLog\n"
        "async def main():\n"
        "    log = AppendLog(sys.argv[1])\n"
        "    await log.submit({'id': 1})\n"
        "    log.submit({'id': 2})  # never awaited, never closed\n"
        "asyncio.run(main())\n"
    )
    path = tmp_path / "log.jsonl"
    done = subprocess.run([sys.executable, "-c", script, str(path)], timeout=60)
    assert done.returncode == 0
    assert [r["id"] for r in read_records(path)] == [1, 2]


_SESSIONS_SCRIPT = textwrap.dedent(
    """
    import asyncio, gc, sys, warnings
    warnings.simplefilter("always")
    import aiohttp
    from metanim.llm import OpenAIChatClient
    from metanim.llm.sim import SimServer

    MESSAGES = [{"role": "user", "content": "hi"}]
    with SimServer() as server:
        # The simple way: several asyncio.run calls (a notebook), then drop the client.
        client = OpenAIChatClient("sim-optimal", base_url=server.base_url, api_key="k")
        texts = [asyncio.run(client.chat(MESSAGES, seed=i)).text for i in range(3)]
        del client
        gc.collect()

        async def managed():
            async with OpenAIChatClient("sim-optimal", base_url=server.base_url) as c:
                await c.chat(MESSAGES)
                await c.aclose()
                await c.chat(MESSAGES)  # reopens after aclose()

        asyncio.run(managed())

        async def dropped_while_the_loop_runs():
            c = OpenAIChatClient("sim-optimal", base_url=server.base_url)
            await c.chat(MESSAGES)
            cyclic = OpenAIChatClient("sim-optimal", base_url=server.base_url)
            await cyclic.chat(MESSAGES)
            cyclic.me = cyclic  # freed by the cycle collector, not by its count
            del c, cyclic
            gc.collect()
            await asyncio.sleep(0.1)  # the loop closes the dropped client's session

        asyncio.run(dropped_while_the_loop_runs())
        gc.collect()
        print("calls", len(texts), flush=True)
        print("--control--", file=sys.stderr, flush=True)

        async def leak():  # a bare session left open: the warning this test looks for
            session = aiohttp.ClientSession()
            async with session.get(server.base_url + "/models") as response:
                await response.read()

        asyncio.run(leak())
        gc.collect()
    """
)


def test_client_closes_its_sessions_when_used_across_event_loops():
    run = subprocess.run(
        [sys.executable, "-X", "dev", "-c", _SESSIONS_SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "calls 3" in run.stdout
    ours, _, control = run.stderr.partition("--control--")
    leaks = (
        "Unclosed client session",
        "Unclosed connector",
        "unclosed transport",
        "unclosed <socket",
    )
    assert not [w for w in leaks if w in ours], ours
    assert "Unclosed client session" in control  # the capture sees a leak when there is one
