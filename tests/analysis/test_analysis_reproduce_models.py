"""`metanim reproduce` with real models: the model options of `tournament` and
`evaluate` reach every call; a run that fails shows the server's own error and exits 3;
a table whose cells are mostly forfeits or truncations is flagged and exits 3."""

from __future__ import annotations

from pathlib import Path

import pytest

from metanim.cli import main
from metanim.llm import forget_probes
from metanim.llm.sim.providers import ProviderServer
from metanim.util import EXIT_FAILED, EXIT_OK

pytestmark = pytest.mark.slow


def _reproduce(server: ProviderServer, out: Path, *extra: str) -> int:
    forget_probes()
    return main(
        [
            "reproduce", "table5", "--out", str(out), "--model", "o4-mini",
            "--model-b", "o4-mini", "--base-url", server.base_url, "--items", "2",
            "--no-progress", *extra,
        ]
    )  # fmt: skip


def test_every_model_option_reaches_every_call(tmp_path):
    with ProviderServer("openai-reasoning") as server:
        code = _reproduce(
            server, tmp_path, "--max-completion-tokens", "4096", "--reasoning-effort", "low",
            "--omit-param", "seed", "--timeout-s", "30", "--structured-output", "json_schema",
            "--extra-body", "user=\"metanim\"",
        )  # fmt: skip
        sent = [c["body"] for c in server.handlers.completions]
    assert code == EXIT_OK and sent
    for body in sent:
        assert body["max_completion_tokens"] == 4096 and body["reasoning_effort"] == "low"
        assert "seed" not in body and "temperature" not in body and body["user"] == "metanim"
        assert body["response_format"]["type"] == "json_schema"
    assert "Flagged" not in (tmp_path / "table5.md").read_text()


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        # A refused request field: the server's own words and the flag that changes it.
        (
            ["--cap-field", "max_tokens"],
            ["Unsupported parameter: 'max_tokens' is not supported with this model",
             "--cap-field max_completion_tokens"],
        ),
        # Every reply cut at the cap: the table is flagged, and the hint says what helps.
        (["--max-completion-tokens", "64"], ["raise --max-completion-tokens (now 64)"]),
    ],
)  # fmt: skip
def test_a_failed_or_flagged_run_says_why_and_exits_3(flags, said, tmp_path, capsys):
    with ProviderServer("openai-reasoning") as server:
        code = _reproduce(server, tmp_path, *flags)
    err = capsys.readouterr().err
    assert code == EXIT_FAILED and all(text in err for text in said)
    if "--max-completion-tokens" in flags:
        table = (tmp_path / "table5.md").read_text()
        assert "**Flagged:**" in table and "cut at the 64-token completion cap" in table
