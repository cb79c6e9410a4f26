"""Positions of single values in a JSON manifest, found in its text along the pointer.

Why this exists: a JSON manifest is read by Python's decoder, which records no positions; until
now the first finding made :meth:`.source.SourceDocument.position` re-read the whole text with
the located YAML reader (JSON is YAML 1.2 flow style) and pair the two trees: ~6 s on the
15 MiB manifest of 10,000 launchers. Here the positions along one pointer are read off the text:
the members of each object and the items of each array on the way, read in order only as far
as the pointer needs (keys read and values skipped by the decoder's own C scanner), and where
each stopped kept for the next finding.

It answers exactly what the located reader records: libyaml marks a JSON value at its first
character and a key at its opening quote; ``(line, column, key_line, key_column)`` for an
object member, ``(line, column)`` for an array item, 1-based, columns in characters.

It **refuses** (answers None: the caller re-reads the whole text as before) whatever the YAML
reader might read differently from the JSON decoder: characters YAML does not allow or reads as
line breaks (tabs and carriage returns included, as :mod:`.blockyaml` refuses them), escapes of
surrogate code points, a key over 1,000 characters or not on the line of its colon (libyaml's
limits on implicit keys), and a text that does not agree with the data (keys in another order
or number than the data's, another number of items, a container where the data has a scalar).
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
        # Offset of an object's '{' -> [{key: (offset of its quote, offset of its value)}, ...];
        # offset of an array's '[' -> [the offsets of its items, ...] (see _member).
        self._members: dict[int, list[Any]] = {}
        self._items: dict[int, list[Any]] = {}
        self._skip = json.JSONDecoder().raw_decode

    def position(self, pointer: tuple[str | int, ...]) -> tuple[int, ...] | None:
        """The located reader's position of the value at ``pointer`` (the nearest enclosing one
        if it is absent; the first key for the document itself), or None when not sure."""
        if not self._readable():
            return None
        root = _end(_SPACE, self.text, 0)
        if not self.text.startswith("{", root) or not isinstance(self.data, dict):
            return None
        # The start: the first key, as the located reader's table has it (line 1, column 1 for {}).
        best: tuple[int, ...] = (1, 1)
        if self.data:
            first = self._member(root, self.data, next(iter(self.data)))
            if first is None:
                return None
            best = self._line_col(first[0])
        node, at = self.data, root
        for part in pointer:
            if isinstance(node, dict):
                if not isinstance(part, str) or part not in node:
                    break
                member = self._member(at, node, part)
                if member is None:
                    return None
                key, at = member
                best = (*self._line_col(at), *self._line_col(key))
            elif isinstance(node, list):
                if not isinstance(part, int) or not 0 <= part < len(node):
                    break
                item = self._item(at, node, part)
                if item is None:
                    return None
                at = item
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

    # An object or array is read only as far as a finding needs, and where that stopped is kept:
    # [what was read, the offset to go on from, finished]. The offset is that of the last value
    # read (to be skipped first), or of the opening bracket before any.

    def _member(self, brace: int, node: dict[str, Any], key: str) -> tuple[int, int] | None:
        """(offset of the key's quote, offset of its value) of ``key`` in the object at ``brace``;
        None when the text's members are not the keys of ``node`` in their order."""
        state = self._members.get(brace)
        if state is None:
            state = self._members[brace] = [{}, brace, False]
        members: dict[str, tuple[int, int]] = state[0]
        keys = list(node) if len(members) < len(node) and key not in members else []
        try:
            while key not in members and not state[2]:
                at = self._after(state[1], "}", not members)
                if at < 0:
                    state[2] = True
                    break
                if len(members) >= len(keys) or not self.text.startswith('"', at):
                    return None
                name, after = self._skip(self.text, at)
                colon = after
                while self.text.startswith(" ", colon):
                    colon += 1
                # The decoder's keys come in the order of the text: the next one must be it.
                if name != keys[len(members)] or not self.text.startswith(":", colon) or colon - at > _LONGEST_KEY:
                    return None
                value = _end(_SPACE, self.text, colon + 1)
                members[name] = (at, value)
                state[1] = value
        except ValueError:  # not JSON here after all: leave it to the located reader
            return None
        if state[2] and len(members) != len(node):
            return None
        return members.get(key)

    def _item(self, bracket: int, node: list[Any], index: int) -> int | None:
        """The offset of item ``index`` of the array at ``bracket``; None when the text holds
        fewer items."""
        state = self._items.get(bracket)
        if state is None:
            state = self._items[bracket] = [[], bracket, False]
        items: list[int] = state[0]
        try:
            while len(items) <= index and not state[2]:
                at = self._after(state[1], "]", not items)
                if at < 0:
                    state[2] = True
                    break
                items.append(at)
                state[1] = at
        except ValueError:
            return None
        # Items are read only up to the one asked for, which the data hold: fewer in the text
        # (its end reached first) is the one disagreement there can be.
        return items[index] if index < len(items) else None

    def _after(self, at: int, close: str, first: bool) -> int:
        """Where the next member or item starts: past the opening bracket at ``at`` (``first``)
        or past the value at ``at`` and its comma; -1 at the closing bracket. Raises ValueError
        where the text is not as expected."""
        text = self.text
        at = _end(_SPACE, text, at + 1 if first else self._skip(text, at)[1])
        if text.startswith(close, at):
            return -1
        if not first:
            if not text.startswith(",", at):
                raise ValueError(at)
            at = _end(_SPACE, text, at + 1)
        return at

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
