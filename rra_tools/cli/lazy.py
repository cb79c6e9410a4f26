"""A click group whose commands are imported only when they are used.

Importing every command module at start-up cost ``rra guide`` (and every other short command)
a few tens of milliseconds of its ~0.2 s: each module pulls in its own helpers, and the one
command that runs needs only its own. :class:`LazyGroup` knows the commands of later layers by
name and by ``"module:attribute"``, and imports a module when click asks for one of its commands:
to run it, to print its help, or to list it in ``rra --help`` (which therefore still imports
them all, and prints exactly what an eager group would).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import click

from .errors import RRAGroup

__all__ = ["LazyGroup"]


class LazyGroup(RRAGroup):
    """:class:`RRAGroup` with commands given as ``{name: "module:attribute"}``, loaded on demand.

    Modules are relative to this package (``"guide_cmd:guide"`` is ``rra_tools.cli.guide_cmd``'s
    ``guide``). Commands defined eagerly (``@group.command``, ``add_command``) sit beside them.
    """

    def __init__(self, *args: Any, lazy_commands: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands: dict[str, str] = dict(lazy_commands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command's name, eager and lazy, sorted as click sorts them."""
        return sorted({*self.commands, *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command called ``cmd_name``, importing its module the first time it is asked for."""
        if cmd_name not in self.commands and cmd_name in self.lazy_commands:
            self.add_command(self.load(cmd_name), cmd_name)
        return self.commands.get(cmd_name)

    def load(self, cmd_name: str) -> click.Command:
        """Import the command registered as ``cmd_name``; a table entry that names no command, or
        names one under another name, is a bug of this package, raised as such."""
        module_name, _, attribute = self.lazy_commands[cmd_name].partition(":")
        module = importlib.import_module(f"{__package__}.{module_name}")
        command = getattr(module, attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{module.__name__}.{attribute} is not a click command")
        if command.name != cmd_name:
            raise ValueError(f"{module.__name__}.{attribute} is named {command.name!r}, registered as {cmd_name!r}")
        return command
