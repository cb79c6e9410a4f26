"""Typed errors raised while reading input; the validator turns them into diagnostics."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ExitStatus, RRAError

__all__ = ["InputError", "LoadError", "Problem"]


@dataclass(frozen=True)
class Problem:
    """A located problem found while reading a document (e.g. a duplicate key)."""

    code: str
    message: str
    line: int | None = None
    column: int | None = None
    hint: str | None = None
    pointer: str = ""


class LoadError(RRAError):
    """The document cannot be read as a manifest; carries one located problem and, once the
    bytes were decoded, the text (so that a report can show the offending line)."""

    exit_status = ExitStatus.USAGE

    def __init__(self, problem: Problem, text: str | None = None) -> None:
        super().__init__(problem.message)
        self.problem = problem
        self.text = text


class InputError(RRAError):
    """The input cannot be opened at all (missing, not a regular file, no manifest in a directory)."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
