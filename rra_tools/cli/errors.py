"""The one place where a failure becomes a message and an exit status.

Every command runs inside :class:`RRAGroup`: an :class:`~rra_tools.errors.RRAError` that reaches
it is printed as ``error: <message>`` (and ``hint: <hint>`` when it has one) on standard error,
and the command ends with the error's exit status. A module of a missing optional extra
(:mod:`.extras`) and a missing file are reported the same way (exit status 2), and Ctrl-C as
``error: interrupted ...`` with exit status 130. Commands
therefore catch a library error only to add something to it (findings to render, a resource to
close), never just to print it. Anything else that escapes a command is a bug and keeps its
traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import click

from ..errors import ExitStatus, RRAError
from .extras import extra_for, missing_extra_message

__all__ = ["Failure", "RRAGroup", "as_failure"]


@dataclass(frozen=True)
class Failure:
    """What the CLI prints for a failure, and the status it exits with."""

    message: str
    exit_status: ExitStatus
    hint: str | None = None

    def lines(self) -> list[str]:
        """``error: <message>``, then ``hint: <hint>`` when there is one."""
        return [f"error: {self.message}", *([f"hint: {self.hint}"] if self.hint else [])]


def as_failure(exc: BaseException) -> Failure | None:
    """The failure to report for ``exc``, or None when ``exc`` is a bug (keep its traceback).

    >>> as_failure(RRAError("'x.yaml' is not a manifest"))
    Failure(message="'x.yaml' is not a manifest", exit_status=<ExitStatus.USAGE: 2>, hint=None)
    >>> as_failure(KeyError("bug")) is None
    True
    """
    if isinstance(exc, RRAError):
        return Failure(exc.describe(), exc.exit_status, exc.hint)
    if isinstance(exc, ImportError):
        # A lazily imported module of an optional extra; any other failed import is a bug.
        found = extra_for(exc)
        return None if found is None else Failure(missing_extra_message(*found), ExitStatus.USAGE)
    if isinstance(exc, FileNotFoundError):
        return Failure(f"{exc.filename or exc}: no such file or directory", ExitStatus.USAGE)
    return None


#: What any command stopped by Ctrl-C reports, unless it reports more itself.
INTERRUPTED = Failure("interrupted (Ctrl-C) before the command finished", ExitStatus.INTERRUPTED)


class RRAGroup(click.Group):
    """The ``rra`` group: maps the errors of every command and subcommand through :func:`as_failure`."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; report a user-caused failure as ``error:`` and exit with its status."""
        try:
            return super().invoke(ctx)
        except (RRAError, ImportError, FileNotFoundError) as exc:
            failure = as_failure(exc)
            if failure is None:
                raise
            for line in failure.lines():
                click.echo(line, err=True)
            ctx.exit(failure.exit_status)
        except KeyboardInterrupt:
            # Ctrl-C in a command that does not handle it itself (rra review and rra run do):
            # one line and 130, as for rra review, rather than click's "Aborted!" and status 1,
            # which rra validate uses for findings. Files are written atomically, so nothing
            # half-written is left.
            click.echo(INTERRUPTED.lines()[0], err=True)
            ctx.exit(INTERRUPTED.exit_status)
