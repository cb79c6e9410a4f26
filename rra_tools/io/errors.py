"""Typed errors raised while reading input; the validator turns them into diagnostics."""

from __future__ import annotations

from ..errors import ExitStatus, RRAError
from ..plain import Frozen

__all__ = ["IOLayerError", "InputError", "LoadError", "Problem"]


class IOLayerError(RRAError):
    """Base of every error the io layer (reading input safely: the readers, paths, links, schemas,
    the run journal, diffs) raises on purpose: catch it to catch them all.

    It sets no exit status: each error keeps its own (the root's unless it sets one). Named for
    its layer so that it takes no name a caller already catches for a narrower failure. The whole
    tree is drawn in :mod:`rra_tools.errors`.
    """


class Problem(Frozen):
    """A located problem found while reading a document (e.g. a duplicate key)."""

    __slots__ = ("code", "message", "line", "column", "hint", "pointer")

    def __init__(self, code: str, message: str, line: int | None = None, column: int | None = None,
                 hint: str | None = None, pointer: str = "") -> None:
        self.code, self.message, self.line, self.column, self.hint, self.pointer = (
            code, message, line, column, hint, pointer)


class LoadError(IOLayerError):
    """The document cannot be read as a manifest; carries one located problem and, once the
    bytes were decoded, the text (so that a report can show the offending line)."""

    exit_status = ExitStatus.USAGE

    def __init__(self, problem: Problem, text: str | None = None) -> None:
        super().__init__(problem.message)
        self.problem = problem
        self.text = text


class InputError(IOLayerError):
    """The input cannot be opened at all (missing, not a regular file, no manifest in a directory)."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
