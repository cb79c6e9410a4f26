"""Positions of single values in a JSON manifest, found in its text along the pointer.

Why this exists: a JSON manifest is read by Python's decoder, which records no positions; until
now the first finding made :meth:`.source.SourceDocument.position` re-read the whole text with
the located YAML reader (JSON is YAML 1.2 flow style) and pair the two trees: ~6 s on the
15 MiB manifest of 10,000 launchers. Here the positions along one pointer are read off the text:
the entries of each object on the way (keys read and values skipped by the decoder's own C
scanner), kept for the next finding.

It answers exactly what the located reader records: libyaml marks a JSON value at its first
character and a key at its opening quote; ``(line, column, key_line, key_column)`` for an
object member, ``(line, column)`` for an array item, 1-based, columns in characters.

It **refuses** (answers None: the caller re-reads the whole text as before) whatever the YAML
reader might read differently from the JSON decoder: characters YAML does not allow or reads as
line breaks (tabs and carriage returns included, as :mod:`.blockyaml` refuses them), escapes of
surrogate code points, a key over 1,000 characters or not on the line of its colon (libyaml's
limits on implicit keys), and a text that does not agree with the data (another number of
members or items than the data hold, a container where the data has a scalar).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .blockyaml import _unsafe
from .lineindex import LineIndex

__all__ = ["JsonLocator"]

_SPACE = re.compile(r"[ \n]*")
# An escaped surrogate: libyaml refuses what Python's decoder accepts.
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
# libyaml looks for the ':' of an implicit key within 1,024 characters of its start.
_LONGEST_KEY = 1000


class JsonLocator:
    """Finds the positions along a pointer in the text of a JSON document."""

    def __init__(self, text: str, data: Any) -> None:
        self.text = text
        self.data = data
        self._lines = LineIndex(text)
        self._sure: bool | None = None
        # Offset of an object's '{' -> {key: (offset of its quote, offset of its value)};
        # offset of an array's '[' -> the offsets of its items. None: not read as expected.
        self._members: dict[int, dict[str, tuple[int, int]] | None] = {}
        self._items: dict[int, list[int] | None] = {}
        self._skip = json.JSONDecoder().raw_decode

    def position(self, pointer: tuple[str | int, ...]) -> tuple[int, ...] | None:
        """The located reader's position of the value at ``pointer`` (the nearest enclosing one
        if it is absent; the first key for the document itself), or None when not sure."""
        if not self._readable():
            return None
        root = _end(_SPACE, self.text, 0)
        if not self.text.startswith("{", root) or not isinstance(self.data, dict):
            return None
        members = self._object(root, self.data)
        if members is None:
            return None
        # The start: the first key, as the located reader's table has it (line 1, column 1 for {}).
        first = min((key for key, _ in members.values()), default=None)
        best: tuple[int, ...] = (1, 1) if first is None else self._line_col(first)
        node, at = self.data, root
        for part in pointer:
            if isinstance(node, dict):
                if not isinstance(part, str) or part not in node:
                    break
                table = self._object(at, node)
                if table is None or part not in table:
                    return None
                key, at = table[part]
                best = (*self._line_col(at), *self._line_col(key))
            elif isinstance(node, list):
                if not isinstance(part, int) or not 0 <= part < len(node):
                    break
                items = self._array(at, node)
                if items is None:
                    return None
                at = items[part]
                best = self._line_col(at)
            else:
                break
            node = node[part]
            if not _agrees(self.text[at], node):
                return None
        return best

    def _readable(self) -> bool:
        """Whether the YAML reader reads this text as the JSON decoder did (checked once)."""
        if self._sure is None:
            self._sure = not _unsafe(self.text) and _SURROGATE.search(self.text) is None
        return self._sure

    def _object(self, at: int, node: dict[str, Any]) -> dict[str, tuple[int, int]] | None:
        """The members of the object at ``at``, when they are as many as ``node`` holds."""
        if at not in self._members:
            self._members[at] = self._read_object(at)
        members = self._members[at]
        return members if members is not None and len(members) == len(node) else None

    def _array(self, at: int, node: list[Any]) -> list[int] | None:
        """The items of the array at ``at``, when they are as many as ``node`` holds."""
        if at not in self._items:
            self._items[at] = self._read_array(at)
        items = self._items[at]
        return items if items is not None and len(items) == len(node) else None

    def _read_object(self, brace: int) -> dict[str, tuple[int, int]] | None:
        text = self.text
        members: dict[str, tuple[int, int]] = {}
        at = _end(_SPACE, text, brace + 1)
        if text.startswith("}", at):
            return members
        try:
            while True:
                if not text.startswith('"', at):
                    return None
                key, after = self._skip(text, at)
                colon = after
                while text.startswith(" ", colon):
                    colon += 1
                if not text.startswith(":", colon) or colon - at > _LONGEST_KEY or key in members:
                    return None
                value = _end(_SPACE, text, colon + 1)
                members[key] = (at, value)
                at = _end(_SPACE, text, self._skip(text, value)[1])
                if text.startswith(",", at):
                    at = _end(_SPACE, text, at + 1)
                elif text.startswith("}", at):
                    return members
                else:
                    return None
        except ValueError:  # not JSON here after all: leave it to the located reader
            return None

    def _read_array(self, bracket: int) -> list[int] | None:
        text = self.text
        items: list[int] = []
        at = _end(_SPACE, text, bracket + 1)
        if text.startswith("]", at):
            return items
        try:
            while True:
                items.append(at)
                at = _end(_SPACE, text, self._skip(text, at)[1])
                if text.startswith(",", at):
                    at = _end(_SPACE, text, at + 1)
                elif text.startswith("]", at):
                    return items
                else:
                    return None
        except ValueError:
            return None

    def _line_col(self, offset: int) -> tuple[int, int]:
        return self._lines.line_col(offset)


def _agrees(first: str, value: Any) -> bool:
    """A value written from the character ``first`` can be ``value``."""
    if first == "{":
        return isinstance(value, dict)
    if first == "[":
        return isinstance(value, list)
    return not isinstance(value, (dict, list))


def _end(pattern: re.Pattern[str], text: str, at: int) -> int:
    """The end of what ``pattern`` (which may match nothing) matches at ``at``."""
    m = pattern.match(text, at)
    return at if m is None else m.end()
