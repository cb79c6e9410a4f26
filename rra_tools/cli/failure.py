"""What the CLI prints for a failure and the status it exits with, without click: the click
group (:class:`~.errors.RRAGroup`) and the fast path of ``rra validate`` (:mod:`.main`) report
through the same :func:`as_failure`."""

from __future__ import annotations

from ..errors import ExitStatus, RRAError
from ..plain import Frozen
from .extras import extra_for, missing_extra_message

__all__ = ["INTERRUPTED", "Failure", "as_failure"]


class Failure(Frozen):
    """What the CLI prints for a failure, and the status it exits with."""

    __slots__ = ("message", "exit_status", "hint")

    def __init__(self, message: str, exit_status: ExitStatus, hint: str | None = None) -> None:
        self.message, self.exit_status, self.hint = message, exit_status, hint

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
