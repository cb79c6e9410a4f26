"""The one place where a failure becomes a message and an exit status.

Every command runs inside :class:`RRAGroup`: an :class:`~rra_tools.errors.RRAError` that reaches
it is printed as ``error: <message>`` (and ``hint: <hint>`` when it has one) on standard error,
and the command ends with the error's exit status. A module of a missing optional extra
(:mod:`.extras`) and a missing file are reported the same way (exit status 2), and Ctrl-C as
``error: interrupted ...`` with exit status 130. Commands
therefore catch a library error only to add something to it (findings to render, a resource to
close), never just to print it. Anything else that escapes a command is a bug and keeps its
traceback. :func:`as_failure` lives in :mod:`.failure`, without click, for the fast path of
``rra validate`` (:mod:`.main`).
"""

from __future__ import annotations

from typing import Any

import click

from ..errors import RRAError
from .failure import INTERRUPTED, Failure, as_failure

__all__ = ["INTERRUPTED", "Failure", "RRAGroup", "as_failure"]


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
