"""Adapters to tools people already use; nothing in the core imports them.

- `metanim.integrations.inspect_ai`: inspect_ai tasks, scorer and solvers (extra `inspect`),
  registered through the `inspect_ai` entry-point group (`inspect eval metanim/nim`).
- `metanim.integrations.lm_eval`: lm-evaluation-harness task YAMLs (package data) and the
  one answer filter they share (`python -m metanim.integrations.lm_eval --write DIR`).
- `metanim.integrations.open_spiel`: every game as an OpenSpiel Python game
  (`pyspiel.load_game("metanim_nim(misere=True)")`), a solver bot and an MCTS evaluator
  (extra `open-spiel`); game_arena plays them through OpenSpiel (extra `game-arena`).
- `metanim.integrations.textarena`: every game and play rule as a TextArena env
  (`textarena.make("MetaNIM-Nim-v0")`), with solver and random agents (extra `textarena`).
- `metanim.integrations.rewards`: the solver's exact reward and a dataset in the form of
  TRL's `GRPOTrainer` (extra `trl`).
- `metanim.integrations.sb3`: Stable-Baselines3's `VecEnv` over the batched env.

Each adapter registers every game of `metanim.games.GAMES` when imported, so a game
family added there is carried without a change here.
"""
