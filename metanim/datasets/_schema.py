"""The dataset record: one critical state with everything needed to grade an answer."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from metanim.games import Game, make_game

#: Version of the record layout; bump when a field changes meaning.
SCHEMA_VERSION = "metanim-dataset/1"

#: Fields for evaluation harnesses; empty in files built before they existed.
HARNESS_FIELDS = ("input", "input_version", "target", "messages")

Stratum = Literal["easy", "medium", "hard"]
STRATA: tuple[Stratum, ...] = ("easy", "medium", "hard")
Difficulty = Literal["easy", "medium", "hard"]
DIFFICULTIES: tuple[Difficulty, ...] = ("easy", "medium", "hard")


class Features(BaseModel):
    """Difficulty features, the same typed columns for every game (Arrow needs one type)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_legal_moves: int = Field(description="number of legal moves (distractors + 1)")
    size_left: int = Field(
        description="stones (NIM, Fibonacci), standing pins (Kayles), squares (Chomp) "
        "or queen distance row + column to the corner (Corner Queen)"
    )
    depth: int = Field(description="distance-to-end estimate: most moves the game can still last")
    max_depth: int = Field(description="`depth` of the configuration's starting state")
    grundy: int = Field(description="normal-play Grundy value of the state")
    stratum: Stratum = Field(description="depth stratum: terciles of depth / max_depth")
    fullness: float | None = Field(
        default=None, description="size_left as a share of the start position's"
    )


class DatasetRecord(BaseModel):
    """One critical state: an N-position with exactly one winning move.

    `state` and `game_params` are JSON values in memory and JSON *strings* in the
    file, so every game shares one Arrow column type and a file loads unchanged
    with pandas and Hugging Face `datasets` (see docs/datasets.md).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    game: str
    variant: Literal["normal", "misere"]
    game_params: dict[str, Any]
    state: Any
    prompt: str
    prompt_version: str
    legal_moves: list[str]
    optimal_move: str
    optimal_action: int
    grundy: int
    features: Features
    difficulty: Difficulty | None = Field(
        default=None,
        description="easy / medium / hard from legal moves, distance to the end and fullness",
    )
    seed: int
    # Harness-ready fields (inspect_ai, lm-eval, chat fine-tuning): see docs/datasets.md.
    input: str = Field(
        default="",
        description="the full prompt a model answers: `prompt` plus the ReAct Output Format",
    )
    input_version: str = Field(
        default="", description="versions of `input`: game prompt + reply format (ReAct)"
    )
    target: str = Field(default="", description="the unique winning move (= optimal_move)")
    messages: list[dict[str, str]] = Field(
        default_factory=list,
        description="chat form: the user's `input`, then a reference assistant reply",
    )
    schema_version: str = SCHEMA_VERSION
    content_hash: str = ""

    @field_validator("game_params", "state", mode="before")
    @classmethod
    def _parse_json_text(cls, value: Any) -> Any:
        return json.loads(value) if isinstance(value, str) else value

    @field_serializer("game_params", "state")
    def _dump_json_text(self, value: Any) -> str:
        return _canonical_json(value)

    # ------------------------------------------------------------------ helpers
    def make_game(self) -> Game[Any, Any]:
        """The game configuration this record was drawn from."""
        return make_game(self.game, **self.game_params)

    def game_state(self) -> Any:
        """The state as the game's own (validated, immutable) value."""
        return self.make_game().validate_state(self.state)

    def compute_hash(self) -> str:
        """sha256 of the canonical JSON of every field except `content_hash`."""
        body = self.model_dump(mode="json", exclude={"content_hash"})
        # Fields added after schema 1 are left out while unset, so older files still hash.
        if body.get("difficulty") is None:
            body.pop("difficulty", None)
        if body["features"].get("fullness") is None:
            body["features"].pop("fullness", None)
        # Files written before the harness fields existed keep their hashes.
        for name in HARNESS_FIELDS:
            if not body[name]:
                del body[name]
        return hashlib.sha256(_canonical_json(body).encode()).hexdigest()

    def with_hash(self) -> DatasetRecord:
        return self.model_copy(update={"content_hash": self.compute_hash()})

    def to_json_line(self) -> str:
        return json.dumps(self.model_dump(mode="json"), ensure_ascii=False, sort_keys=True)


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
