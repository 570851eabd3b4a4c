"""Adapters to tools people already use; nothing in the core imports them.

- `metanim.integrations.inspect_ai`: inspect_ai tasks, scorer and solvers (extra `inspect`),
  registered through the `inspect_ai` entry-point group (`inspect eval metanim/nim`).
- `metanim.integrations.lm_eval`: lm-evaluation-harness task YAMLs (package data) and the
  one answer filter they share (`python -m metanim.integrations.lm_eval --write DIR`).
"""
