"""The command registry: every `metanim` subcommand registers here with `@command`.

A leaf of the CLI package, so that each command's module registers its own commands
without importing the package face (`metanim.cli`), which imports those modules.
`metanim --help` lists the commands in the order their modules are imported, then the
order they are defined in.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

Handler = Callable[[argparse.Namespace], int | None]
Arguments = Callable[[argparse.ArgumentParser], None]


@dataclass(frozen=True)
class Command:
    """One subcommand: its name, one-line help, its flags and what runs it."""

    name: str
    help: str
    arguments: Arguments
    handler: Handler


COMMANDS: list[Command] = []


def command(name: str, help: str, arguments: Arguments) -> Callable[[Handler], Handler]:
    """Register a subcommand: `arguments` adds its flags, the decorated function runs it."""

    def register(handler: Handler) -> Handler:
        if any(c.name == name for c in COMMANDS):
            raise ValueError(f"the command {name!r} is registered twice")
        COMMANDS.append(Command(name, help, arguments, handler))
        return handler

    return register
