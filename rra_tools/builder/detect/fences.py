"""The lines of a README with where each stands: outside code blocks, in a shell block, or in
another block. One reader for what ``rra init`` takes from a README (its commands, its ``pip
install`` lines, its requirements sections), so that they agree on where a block starts and ends.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

__all__ = ["OUTSIDE", "SHELL", "OTHER", "SHELL_LANGS", "fenced_lines"]

_FENCE = re.compile(r"^\s*(```|~~~)\s*([A-Za-z]*)")
#: Info strings of a block whose lines are shell commands (none given: most READMEs write none).
SHELL_LANGS = frozenset({"", "bash", "sh", "shell", "console", "zsh"})
OUTSIDE, SHELL, OTHER = "outside", "shell", "other"


def fenced_lines(lines: Sequence[str], shell_langs: frozenset[str] = SHELL_LANGS) -> Iterator[tuple[int, str, str]]:
    """``(index, line, where)`` of every line that is not a fence itself; ``where`` is
    :data:`OUTSIDE`, :data:`SHELL` (a block whose info string is in ``shell_langs``) or
    :data:`OTHER`. A block ends at the same fence that opened it.

    >>> [w for _, _, w in fenced_lines(["a", "```sh", "ls", "```", "~~~py", "x", "~~~", "b"])]
    ['outside', 'shell', 'other', 'outside']
    """
    fence: str | None = None
    where = OUTSIDE
    for index, line in enumerate(lines):
        match = _FENCE.match(line)
        if match is not None and (fence is None or match.group(1) == fence):
            if fence is None:
                fence, where = match.group(1), SHELL if match.group(2).lower() in shell_langs else OTHER
            else:
                fence, where = None, OUTSIDE
            continue
        yield index, line, where
