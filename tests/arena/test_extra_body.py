"""`--extra-body` adds request fields; it never replaces one the client writes itself."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from metanim.arena import EvaluationConfig, TournamentConfig
from metanim.cli import main

#: What the request carries by the client's own hand: the model, the conversation (chat
#: and Responses), streaming and the sample count.
CLIENT_WRITES = ["model", "messages", "input", "instructions", "stream", "n"]


@pytest.mark.parametrize("field", CLIENT_WRITES)
def test_a_field_the_client_writes_is_refused_by_name(field: str) -> None:
    for config in (TournamentConfig, EvaluationConfig):
        with pytest.raises(ValidationError, match=f"{field} is a field the client sets itself"):
            config(
                extra_body={field: "x"}, dataset=["d.jsonl"]
            ) if config is EvaluationConfig else config(extra_body={field: "x"})


def test_another_field_is_sent_as_given() -> None:
    config = TournamentConfig(extra_body={"cache_prompt": False, "top_k": 5})
    assert config.extra_body == {"cache_prompt": False, "top_k": 5}


def test_the_cli_refuses_it_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["tournament", "--episodes", "1", "--extra-body", "messages=[]", "--dry-run"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "--extra-body: messages is a field the client sets itself" in err
