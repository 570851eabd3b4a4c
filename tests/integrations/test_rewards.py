"""Rewards for LLM training: `SolverReward` in TRL's reward-function form, the GRPO
dataset, and a GRPO smoke run of TRL's own `GRPOTrainer` on CPU with a tiny model.

The rewards are checked against independent paths: the plain-Python reference solver
(brute force from the rules) for every legal move of positions of every game, and the
closed form of one-heap NIM (P-positions: n = 0 mod k+1) for the completions that TRL
itself logs. Optional extra `trl`; CI installs it and sets `METANIM_REQUIRE`.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from metanim.datasets import build
from metanim.games import GAMES, make_game
from metanim.games.reply import with_format
from metanim.integrations.rewards import SolverReward, grpo_dataset, grpo_rows
from metanim.solver import ReferenceSolver
from tests.conftest import need

# Every registered game (a family added later too) in its default size, both play rules.
CASES = [(name, variant) for name in GAMES for variant in ("normal", "misere")]


def _reply(text: str) -> list[dict[str, str]]:
    """A completion as TRL passes it for a chat dataset: the assistant turn."""
    return [{"role": "assistant", "content": text}]


def _strict(move_text: str) -> str:
    return f'```json\n{{"reasoning": "...", "action": {move_text}}}\n```'


@pytest.mark.parametrize(("name", "variant"), CASES)
def test_reward_of_every_legal_move_is_the_reference_solvers(name: str, variant: str) -> None:
    """TRL's call form (prompts, completions, dataset columns as keyword lists): 1 for a
    move to a P-position of the brute-force reference solver, 0 for any other legal
    move, the configured values for an illegal move and a reply with no move."""
    records = build(name, 3, seed=1, variant=variant)
    rows = grpo_rows(records)
    reward = SolverReward(illegal=-0.5, unparsable=-2.0)
    for row in rows:
        game = make_game(row["game"], **json.loads(row["game_params"]))
        state = game.validate_state(json.loads(row["state"]))
        reference = ReferenceSolver(game)
        moves = game.legal_moves(state)
        illegal = re.sub(r"\d+", "999", game.move_text(moves[0]))
        texts = [_strict(game.move_text(m)) for m in moves] + [illegal, "no idea"]
        columns = {k: [row[k]] * len(texts) for k in ("game", "game_params", "state")}
        got = reward([row["prompt"]] * len(texts), [_reply(t) for t in texts], **columns)
        wanted = [0.0 if reference.mover_wins(game.child(state, m)) else 1.0 for m in moves]
        assert got == [*wanted, -0.5, -2.0]
        assert sum(wanted) == 1.0  # a critical state: exactly one winning move


def test_format_bonus_is_paid_for_the_output_format_only() -> None:
    game = make_game("nim-31-k3")
    rows = grpo_rows(build("nim-31-k3", 1, seed=0), chat=False)
    state = game.validate_state(json.loads(rows[0]["state"]))
    win = next(
        m
        for m in game.legal_moves(state)
        if not ReferenceSolver(game).mover_wins(game.child(state, m))
    )
    columns = {k: [rows[0][k]] * 3 for k in ("game", "game_params", "state")}
    texts = [_strict(game.move_text(win)), game.move_text(win), "nothing"]
    shaped = SolverReward(format_bonus=0.25)
    assert shaped(["p"] * 3, texts, **columns) == [1.25, 1.0, -1.0]
    assert SolverReward()(["p"] * 3, texts, **columns) == [1.0, 1.0, -1.0]
    assert SolverReward().__name__ == "solver_reward"
    assert shaped.__name__ == "solver_reward_shaped"


def test_grpo_dataset_prompts_are_the_dataset_inputs() -> None:
    need("datasets")
    records = build("kayles-2rows-misere", 4, seed=3, variant="misere")
    data = grpo_dataset(records=records)
    assert data.column_names == ["prompt", "game", "variant", "game_params", "state", "id"]
    for row, record in zip(data, records, strict=True):
        assert row["prompt"] == [{"role": "user", "content": record.input}]
        assert json.loads(row["state"]) == record.state
        assert json.loads(row["game_params"]) == record.game_params
    plain = grpo_dataset("chomp", 2, variant="misere", style="cot", chat=False)
    game = make_game("chomp", **json.loads(plain[0]["game_params"]))
    state = game.validate_state(json.loads(plain[0]["state"]))
    assert plain[0]["prompt"] == with_format(game.prompt(state), "cot", game.action_schema(state))
    assert game.misere


def _tiny_model_and_tokenizer() -> tuple[Any, Any]:
    """A one-layer Llama over a character vocabulary of digits: built here, no download.
    Its random replies are digits, so they are winning, losing, illegal or empty."""
    torch = need("torch")
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2, **{str(d): d + 3 for d in range(10)}}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    core.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        pad_token="<pad>",
        eos_token="<eos>",
        unk_token="<unk>",
        padding_side="left",
    )
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=1,
    )
    return LlamaForCausalLM(config), tokenizer


def _one_heap_nim_reward(prompt: str, completion: str) -> float:
    """The reward by the closed form of one-heap NIM (normal play, take 1..k): the
    P-positions are the heaps divisible by k+1 (Bouton; Berlekamp, Conway and Guy)."""
    heap = int(re.search(r"There (?:are|is) (\d+) items?", prompt).group(1))  # type: ignore[union-attr]
    k = int(re.search(r"take between 1 and (\d+) items", prompt).group(1))  # type: ignore[union-attr]
    text = completion.strip()
    if not text:
        return -1.0  # unparsable
    take = int(text)
    if not 1 <= take <= min(k, heap):
        return -1.0  # illegal
    return 1.0 if (heap - take) % (k + 1) == 0 else 0.0


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::FutureWarning")  # transformers' renamed checkpointing calls
def test_grpo_smoke_run_logs_the_solver_rewards(tmp_path: Any) -> None:
    """A few steps of TRL's GRPOTrainer on CPU; the rewards TRL logs for each completion
    (its `log_completions` parquet files) are the closed-form rewards, and its logged
    per-step mean is their mean."""
    need("trl")
    pd = need("pandas")
    from trl import GRPOConfig, GRPOTrainer

    model, tokenizer = _tiny_model_and_tokenizer()
    data = grpo_dataset("nim", 8, chat=False)  # the build's one-heap NIM, take 1..5
    assert {json.loads(p)["heaps"].__len__() for p in data["game_params"]} == {1}
    steps = 6
    args = GRPOConfig(
        output_dir=str(tmp_path),
        max_steps=steps,
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=2,
        logging_steps=1,
        log_completions=True,
        report_to=[],
        use_cpu=True,
        seed=0,
        save_strategy="no",
        disable_tqdm=True,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=SolverReward(),
        train_dataset=data,
        args=args,
        processing_class=tokenizer,
    )
    trainer.train()
    logged = [h for h in trainer.state.log_history if "rewards/solver_reward/mean" in h]
    assert [h["step"] for h in logged] == list(range(1, steps + 1))
    seen: set[float] = set()
    for entry in logged:
        table = pd.read_parquet(
            tmp_path / "completions" / f"completions_{entry['step']:05d}.parquet"
        )
        wanted = [
            _one_heap_nim_reward(p, c)
            for p, c in zip(table["prompt"], table["completion"], strict=True)
        ]
        assert table["solver_reward"].tolist() == wanted
        assert entry["rewards/solver_reward/mean"] == pytest.approx(sum(wanted) / len(wanted))
        seen.update(wanted)
    assert len(seen) >= 2  # the run saw more than one kind of reply
