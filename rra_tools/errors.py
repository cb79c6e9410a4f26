"""The one error root of rra-tools and the exit statuses it maps to.

Every error the library raises on purpose derives from :class:`RRAError`, which carries the exit
status the ``rra`` command ends with when the error reaches it. A library user catches
``RRAError`` to catch everything rra-tools raises for a bad input or a failed operation; any
other exception is a bug. This module is the bottom layer: it imports nothing of rra-tools.
"""

from __future__ import annotations

from enum import IntEnum
from typing import ClassVar

__all__ = ["ExitStatus", "RRAError"]


class ExitStatus(IntEnum):
    """Exit statuses of the ``rra`` command, the same for every command.

    >>> int(ExitStatus.FINDINGS), int(ExitStatus.USAGE)
    (1, 2)
    """

    #: Done; nothing at or above the failing severity was found.
    OK = 0
    #: The operation failed (a run, a registry transfer, an integrity check).
    FAILED = 1
    #: Findings at or above ``--fail-on`` (validation), mismatches (``env check``): the same
    #: status as a failed operation, named for what the command checks.
    FINDINGS = 1
    #: A usage error, or an input that cannot be read or used at all.
    USAGE = 2
    #: Stopped, not failed: the command needs a decision nobody has made yet (``rra build``
    #: without an agent) and says what to do next; run it again once that is done.
    STOPPED = 3
    #: Interrupted by the user (Ctrl-C, SIGINT) before the command finished: 128 + SIGINT, as a
    #: shell reports a program that SIGINT ended. The command removed what it had half-made.
    INTERRUPTED = 130


class RRAError(Exception):
    """Root of every error rra-tools raises on purpose.

    ``exit_status`` is the status the CLI ends with (class attribute; subclasses set their
    own); ``hint``, when set, says what to do about it and is printed after the message.

    >>> class Broken(RRAError):
    ...     exit_status = ExitStatus.FAILED
    >>> error = Broken("the thing broke")
    >>> error.describe(), int(error.exit_status), error.hint
    ('the thing broke', 1, None)
    """

    exit_status: ClassVar[ExitStatus] = ExitStatus.USAGE
    hint: str | None = None

    def describe(self) -> str:
        """The message the CLI prints after ``error:`` (the exception's text unless a subclass
        adds, e.g., a rule code)."""
        return str(self)
