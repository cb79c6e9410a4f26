"""The ``command`` adapter: a reproducer that is a shell command of the operator's own (a script,
a wrapper around some other agent, a person's program).

Nothing is installed and nothing is routed beyond what every cell gets (the proxy's base URLs
and dummy keys); the command runs with ``sh -c`` in the workspace and reads the task from the
``RRA_BENCH_*`` variables (docs/bench.md). It keeps no transcript but its standard output and
error, and it reports its usage, if at all, in its submission's ``usage`` (which the evaluator
then compares with the metered usage, as for any reproducer).
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import Adapter, AgentCell, Launch, Shell

__all__ = ["ADAPTER", "Command"]


@dataclass(frozen=True)
class Command(Adapter):
    """A task set's ``command``, run as it is."""

    def argv(self, cell: AgentCell) -> list[str | Shell]:
        """Not a program of its own: the command is the task set's."""
        return []

    def command_launch(self, command: str) -> Launch:
        """The command itself, nothing added."""
        return Launch(command=command)


ADAPTER = Command(name="command", summary="your own shell command (a task set's 'command'); nothing installed",
                  installer="none")
