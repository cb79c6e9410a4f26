"""Lines and columns of offsets into a long text, without splitting it into lines.

The locators (:mod:`.blocklocate`, :mod:`.jsonlocate`) find values by offset; a finding needs
the 1-based line and column. Counting the line breaks before each offset would read the whole
text once per finding (and a one-line JSON text has no line break to stop a backward search);
a list of every line start would cost ~50 ms and 680,000 objects on the 17 MB manifest. This
keeps, for every 16 KiB of text, the number of line breaks before it and where the last of them
is (one pass, ~1,000 entries), so an offset's line and column cost a search of at most 16 KiB.
"""

from __future__ import annotations

__all__ = ["LineIndex"]

# Characters per entry of the tables.
_STRIDE = 1 << 14


class LineIndex:
    """1-based line and column (in characters) of offsets of ``text``, ``\\n`` ending lines."""

    def __init__(self, text: str) -> None:
        self.text = text
        # Per block of _STRIDE characters: line breaks before it, offset of the last one (or -1).
        self._counts: list[int] = []
        self._last: list[int] = []

    def line_start(self, offset: int) -> int:
        """The offset where the line holding ``offset`` starts."""
        if not self._counts:
            self._build()
        block = offset // _STRIDE
        found = self.text.rfind("\n", block * _STRIDE, offset)
        return (found if found >= 0 else self._last[block]) + 1

    def line_col(self, offset: int) -> tuple[int, int]:
        """The 1-based line and column of ``offset`` (the tables are built on first use)."""
        if not self._counts:
            self._build()
        block = offset // _STRIDE
        line = self._counts[block] + self.text.count("\n", block * _STRIDE, offset) + 1
        return line, offset - self.line_start(offset) + 1

    def _build(self) -> None:
        text = self.text
        counts, last = [0], [-1]
        for start in range(0, len(text), _STRIDE):
            end = start + _STRIDE
            counts.append(counts[-1] + text.count("\n", start, end))
            found = text.rfind("\n", start, end)
            last.append(found if found >= 0 else last[-1])
        self._counts, self._last = counts, last
