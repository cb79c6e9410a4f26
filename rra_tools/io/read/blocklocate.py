"""Positions of single values in a document the fast block reader read, found in its text.

Why this exists: the fast reader (:mod:`.blockyaml`) records no positions, and until now the
first finding made :meth:`.source.SourceDocument.position` re-read the whole text with the
located reader (libyaml events) and pair the two trees: ~4.5 s on a 17 MB manifest of 10,000
launchers, three times the reading itself, for a single warning. The positions of a few values
are worth a few lines of text each; this module finds them there, touching only what lies on
the way: the keys of each mapping and the entries of each sequence along the pointer.

It answers exactly what the located reader records (1-based lines, columns in characters, the
``(line, column, key_line, key_column)`` of a mapping entry and the ``(line, column)`` of a
sequence item), knowing where libyaml puts the mark of each node shape the block reader
accepts: a scalar or flow sequence at its first character (a quote or ``[``); a block mapping
at its first key and a block sequence at its first dash, past comments and blank lines, the
indentless ``key:`` + ``- x`` included; an empty (null) value right after its ``:`` or ``-``.

It **refuses** (answers None, and the caller re-reads the whole text as before) whenever it is
not sure: a shape that does not agree with the data (a different number of keys or entries
than the data holds, a collection where the data has a scalar or the reverse), a line it does
not read. It is only ever asked about texts the block reader accepted. So correctness never depends on it covering a case;
``tests/unit/test_blocklocate.py`` checks its answers against the located reader's.

How it is fast: the block reader accepts only ``\\n`` line breaks and printable characters, so
each scan is one compiled pattern searched over the text from an offset (a line at a given
indentation, or the next line with content), run in C; offsets become lines through a sparse
table of line counts built once (:mod:`.lineindex`). What a container's scan found (a mapping's keys, a sequence's
entries) is kept, so a thousand findings in one long list scan it once.
"""

from __future__ import annotations

import re
from typing import Any

from .lineindex import LineIndex

__all__ = ["BlockLocator"]

# A mapping key as the block reader reads one: plain, or quoted without escapes (no empty key),
# then the colon and the spaces before the value. Group 1 plain, 2 double-quoted, 3 single, 4
# the colon.
_KEY = re.compile(r"""(?:([A-Za-z0-9_][A-Za-z0-9_./-]*)|"([^"\\\n]+)"|'([^'\n]+)')(:)(?: +|$)""", re.M)
# The next line with content (not blank, not a comment); the match ends at its first character.
_CONTENT = re.compile(r"\n *(?=[^ \n#])")
# The first line with content of the text.
_FIRST = re.compile(r"^ *(?=[^ \n#])", re.M)
# One item of a flow sequence (the block reader's forms, each on one line).
_FLOW_ITEM = re.compile(r""""[^"\\\n]*(?:\\.[^"\\\n]*)*"|'[^'\n]*(?:''[^'\n]*)*'"""
                        r"|(?:[A-Za-z0-9_./~+(]|-[A-Za-z0-9.])(?:[A-Za-z0-9_./~+()= -]*[A-Za-z0-9_./~+()=-])?")
_SPACES = re.compile(" *")
# Between '[' or ',' and the next item of a flow sequence: it may go on on the next line.
_GAP = re.compile(" *(?:\n *)?")
# What a value is written as: a scalar, a one-line flow sequence or {} (at the offset), a block
# mapping (offset of its first key, column), a block sequence (offset of its first dash, column),
# or an empty value (the offset just past its ':' or '-').
_SCALAR, _FLOW, _MAPPING, _SEQUENCE, _EMPTY = range(5)


class BlockLocator:
    """Finds the positions along a pointer in the text of a document the block reader read."""

    def __init__(self, text: str, data: Any) -> None:
        self.text = text
        self.data = data
        self._lines = LineIndex(text)
        # Offset of a mapping's first key -> {key: offset of the key}; offset of a sequence's
        # first dash (or of a flow sequence's '[') -> the offsets of its entries.
        self._keys: dict[int, dict[str, int]] = {}
        self._entries: dict[int, list[int]] = {}
        self._patterns: dict[tuple[bool, int], re.Pattern[str]] = {}
        self._shape: tuple[int, int, int] | None = None

    # -- the answers ---------------------------------------------------------------------------

    def start(self) -> tuple[int, int] | None:
        """Where the document's content starts, as the located reader has it (its first key;
        line 1, column 1 for a sequence), or None when not sure."""
        root = self._root()
        if root is None:
            return None
        kind, offset, _ = root
        if kind == _SEQUENCE:
            return 1, 1
        return self._line_col(offset)

    def position(self, pointer: tuple[str | int, ...]) -> tuple[int, ...] | None:
        """The located reader's position of the value at ``pointer`` (the nearest enclosing one
        if it is absent; the start for the document itself), or None when not sure."""
        shape = self._root()
        if shape is None:
            return None
        start = self.start()
        if start is None:
            return None
        best: tuple[int, ...] = start
        node = self.data
        for part in pointer:
            if isinstance(node, dict):
                if not isinstance(part, str) or part not in node:
                    break
                child = node[part]
                found = self._entry_of_mapping(shape, node, part, child)
            elif isinstance(node, list):
                if not isinstance(part, int) or not 0 <= part < len(node):
                    break
                child = node[part]
                found = self._item_of_sequence(shape, node, part, child)
            else:
                break
            if found is None:
                return None
            best, shape = found
            node = child
        return best

    # -- shapes ---------------------------------------------------------------------------------

    def _root(self) -> tuple[int, int, int] | None:
        """The shape of the whole document: (kind, offset, column)."""
        if self._shape is not None:
            return self._shape
        m = _FIRST.search(self.text)
        if m is None:
            return None
        offset = m.end()
        column = offset - m.start()
        if self._is_dash(offset):
            kind = _SEQUENCE
        else:
            kind = _MAPPING
        if not self._agrees(kind, self.data):
            return None
        self._shape = (kind, offset, column)
        return self._shape

    def _entry_of_mapping(self, shape: tuple[int, int, int], node: dict[str, Any], key: str,
                          child: Any) -> tuple[tuple[int, ...], tuple[int, int, int]] | None:
        kind, offset, column = shape
        if kind != _MAPPING:
            return None
        keys = self._keys.get(offset)
        if keys is None:
            keys = self._keys[offset] = self._scan_keys(offset, column)
        if len(keys) != len(node) or key not in keys:
            return None
        at = keys[key]
        m = _KEY.match(self.text, at)
        if m is None:  # pragma: no cover - the scan matched it
            return None
        value = self._value(m.end(), m.end(4), column, True)
        if value is None or not self._agrees(value[0], child):
            return None
        line, col = self._line_col(value[1])
        key_line, key_col = self._line_col(at)
        return (line, col, key_line, key_col), value

    def _item_of_sequence(self, shape: tuple[int, int, int], node: list[Any], index: int,
                          child: Any) -> tuple[tuple[int, ...], tuple[int, int, int]] | None:
        kind, offset, column = shape
        if kind == _FLOW:
            items = self._entries.get(offset)
            if items is None:
                items = self._entries[offset] = self._flow_items(offset)
            if len(items) != len(node):
                return None
            return self._line_col(items[index]), (_SCALAR, items[index], 0)
        if kind != _SEQUENCE:
            return None
        items = self._entries.get(offset)
        if items is None:
            items = self._entries[offset] = self._scan_items(offset, column)
        if len(items) != len(node):
            return None
        dash = items[index]
        after = _past(_SPACES, self.text, dash + 1)
        if _KEY.match(self.text, after) is not None:
            # '- key: ...' opens a mapping inside the item, its first key here.
            value: tuple[int, int, int] | None = (_MAPPING, after, after - self._line_start(after))
        else:
            value = self._value(after, dash + 1, column, False)
        if value is None or not self._agrees(value[0], child):
            return None
        return self._line_col(value[1]), value

    def _value(self, at: int, empty_at: int, column: int, under_key: bool) -> tuple[int, int, int] | None:
        """The shape of the value written from ``at`` (after ``key:`` or ``-`` and spaces) in a
        collection at ``column``; ``empty_at`` is where an empty value's mark goes."""
        text = self.text
        if at < len(text) and text[at] != "\n" and text[at] != "#":
            first = text[at]
            if first == "[":
                return _FLOW, at, 0
            return _SCALAR, at, 0  # a scalar, or {} (empty: nothing below it is asked for)
        # Nothing on the line: a collection on the next lines with content, or an empty value.
        m = _CONTENT.search(text, at)
        if m is not None:
            below = m.end()
            indent = below - m.start() - 1
            dash = self._is_dash(below)
            if indent > column or (under_key and dash and indent == column):
                return (_SEQUENCE if dash else _MAPPING), below, indent
        return _EMPTY, empty_at, 0

    # -- scans ------------------------------------------------------------------------------------

    def _scan_keys(self, first: int, column: int) -> dict[str, int]:
        """The keys of the mapping whose first key is at ``first``: the following lines at
        exactly its column that are not sequence entries, up to a line with content left of it."""
        text = self.text
        keys: dict[str, int] = {}
        self._add_key(keys, first)
        pattern = self._pattern(False, column)
        end = text.find("\n", first)
        if end < 0:
            return keys
        for m in pattern.finditer(text, end):
            if m.end() - m.start() - 1 < column:
                break
            self._add_key(keys, m.end())
        return keys

    def _add_key(self, keys: dict[str, int], at: int) -> None:
        m = _KEY.match(self.text, at)
        if m is None:
            keys["\x00unread"] = at  # a line this module does not read: the count will disagree
            return
        key = m.group(1) or m.group(2) or m.group(3)
        keys[key] = at

    def _scan_items(self, first: int, column: int) -> list[int]:
        """The dashes of the block sequence whose first dash is at ``first``: the following
        dashes at its column, up to a line with content left of it or at it without a dash."""
        text = self.text
        items = [first]
        end = text.find("\n", first)
        if end < 0:
            return items
        for m in self._pattern(True, column).finditer(text, end):
            if m.group(1) is None:
                break
            items.append(m.end() - 1)
        return items

    def _flow_items(self, bracket: int) -> list[int]:
        """The offsets of the items of the flow sequence at ``bracket`` (a line may end after the
        '[' or a ','); a list of the wrong length (so, refused) where it is written otherwise."""
        text = self.text
        items: list[int] = []
        at = _past(_GAP, text, bracket + 1)
        if text.startswith("]", at):
            return items
        while True:
            m = _FLOW_ITEM.match(text, at)
            if m is None:
                return [-1]
            items.append(at)
            at = _past(_SPACES, text, m.end())
            if text.startswith(",", at):
                at = _past(_GAP, text, at + 1)
            elif text.startswith("]", at):
                return items
            else:
                return [-1]

    def _pattern(self, sequence: bool, column: int) -> re.Pattern[str]:
        """For a sequence: the next line that is an entry at ``column`` (group 1) or has content
        at or left of it. For a mapping: the next line at ``column`` that is not an entry, or
        with content left of it."""
        pattern = self._patterns.get((sequence, column))
        if pattern is None:
            if sequence:
                source = rf"\n(?:( {{{column}}}-)(?![^ \n])| {{0,{column}}}(?=[^ \n#]))"
            elif column:
                source = rf"\n(?: {{{column}}}(?=[^ \n#-])| {{0,{column - 1}}}(?=[^ \n#]))"
            else:
                source = r"\n(?=[^ \n#-])"
            pattern = self._patterns[(sequence, column)] = re.compile(source)
        return pattern

    # -- helpers ----------------------------------------------------------------------------------

    def _is_dash(self, at: int) -> bool:
        """A sequence entry's dash at ``at`` (followed by a space, a line break or the end)."""
        text = self.text
        return text.startswith("-", at) and (at + 1 == len(text) or text[at + 1] in " \n")

    @staticmethod
    def _agrees(kind: int, value: Any) -> bool:
        """The shape found can hold ``value`` (else the text was not read as this assumes)."""
        if kind == _MAPPING:
            return isinstance(value, dict)
        if kind in (_SEQUENCE, _FLOW):
            return isinstance(value, list)
        if kind == _EMPTY:
            return value is None
        return not isinstance(value, list) and (not isinstance(value, dict) or not value)

    def _line_start(self, offset: int) -> int:
        return self._lines.line_start(offset)

    def _line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column (in characters) of an offset of the text."""
        return self._lines.line_col(offset)

def _past(pattern: re.Pattern[str], text: str, at: int) -> int:
    """The end of what ``pattern`` (which may match nothing) matches at ``at``."""
    m = pattern.match(text, at)
    return at if m is None else m.end()
