"""A fast reader for the plain block subset of YAML, used when no source positions are needed.

Why a reader of our own: the located reader (:mod:`.source`) builds a document from libyaml's
events, one Python object per event, which takes 4-7 s for a 15 MiB manifest of 10,000
launchers; ruamel's C-based loader constructs the same document more slowly still, and the
compiled YAML libraries measured are either not YAML 1.2 core (``1_000``, ``0x1F`` and ``0b1``
read as numbers; tags silently dropped) or much slower than this. Manifests written by people
and generators alike use a small part of YAML: block mappings and sequences, one-line
scalars, one-line flow sequences of scalars, comments. This module reads exactly that part,
one regular-expression match per line, and **gives up** (returns None) on anything else:
anchors, aliases, tags, block scalars, multi-line scalars, flow mappings, tabs, control or
line-separator characters, duplicate keys, unusual indentation, nesting near the depth limit,
documents near the value limit. The caller then uses the located reader, which handles all of
YAML 1.2 within the bounds of :mod:`.limits` and reports every error with its position.

So this reader never decides that a document is wrong, and for every document it accepts it
returns the same data as the located reader (scalars resolved by the same functions);
``tests/unit/test_blockyaml.py`` checks that on generated documents and on every manifest
in the repository.

>>> read_block_yaml("a: 1\\nb:\\n- [x, 'y']\\n- {}\\n")
({'a': 1, 'b': [['x', 'y'], {}]}, 7)
>>> read_block_yaml("a: &anchor 1\\n") is None
True
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from ..errors import RRAError
from .limits import MAX_DEPTH, MAX_NODES
from .scalars import resolve_plain as _resolve_plain

__all__ = ["read_block_yaml"]

# Anything outside printable ASCII, newline and the printable Unicode ranges libyaml accepts;
# NEL, LS and PS (line breaks in YAML 1.1 only) and the BOM are left to the located reader.
_UNSAFE = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")

# One line: indentation, an optional sequence dash, an optional mapping key, the rest.
_LINE = re.compile(
    r"( *)"
    r"(?:(-)(?: +|$))?"
    r"(?:([A-Za-z0-9_][A-Za-z0-9_./-]*|\"[^\"\\]*\"|'[^']*'):(?: +|$))?"
    r"(.*)"
)
# A plain scalar may start with these (or with '-' before one of the next set); other
# first characters are YAML indicators or rare enough to leave to the located reader.
_PLAIN_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./~+(")
_AFTER_DASH = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.")
_DOUBLE = re.compile(r'"((?:[^"\\]|\\.)*)" *(?:(?<= )#.*)?$')
_SINGLE = re.compile(r"'((?:[^']|'')*)' *(?:(?<= )#.*)?$")
# Escapes that mean the same in JSON and YAML double-quoted scalars (no surrogate code points).
_JSON_ESCAPES = re.compile(r'\\(?:[^"\\/bfnrtu]|u(?![0-9a-fA-F]{4})|u[dD][89a-fA-F])')
_FLOW_PLAIN = r"(?:[A-Za-z0-9_./~+(]|-[A-Za-z0-9.])(?:[A-Za-z0-9_./~+()= -]*[A-Za-z0-9_./~+()=-])?"
_FLOW_ITEM = r"""(?:("(?:[^"\\]|\\.)*")|('(?:[^']|'')*')|(""" + _FLOW_PLAIN + r"))"
_FLOW_ITEMS = re.compile(_FLOW_ITEM)
_FLOW_ANY = re.compile(r"\[( *" + _FLOW_ITEM + r"(?: *, *" + _FLOW_ITEM + r")* *)\] *(?:(?<= )#.*)?$")
_FLOW_PLAINS = re.compile(r"\[ *(" + _FLOW_PLAIN + r"(?: *, *" + _FLOW_PLAIN + r")*)? *\] *(?:(?<= )#.*)?$")
_EMPTY_MAP = re.compile(r"\{ *\} *(?:(?<= )#.*)?$")
_TYPED_FIRST = frozenset("-+.0123456789~nNtTfF")
_KEYWORD_FIRST = frozenset("nNtTfF")
_KEYWORDS: dict[str, Any] = {"null": None, "Null": None, "NULL": None, "true": True, "True": True, "TRUE": True,
                             "false": False, "False": False, "FALSE": False}
_PENDING = object()


class _GiveUp(RRAError):
    """The text is outside the subset; the located reader decides what it is. (Caught in this
    module, never seen by a caller; under the one root like every exception of the package.)"""


def read_block_yaml(text: str) -> tuple[Any, int] | None:
    """``(data, number of values)`` of ``text`` when it is in the plain block subset, else None."""
    if _UNSAFE.search(text) is not None:
        return None
    try:
        return _read(text)
    except _GiveUp:
        return None


def _read(text: str) -> tuple[Any, int]:
    # Frames: [column, container, is_sequence, under a key at the same column]
    stack: list[list[Any]] = []
    root: Any = None
    count = 0
    # A slot waiting for its value on the next lines: (container, key or None, column).
    pending: tuple[Any, Any, int] | None = None
    frame: list[Any] = []
    inline = _inline
    match_line = _LINE.match
    lines = iter(text.split("\n"))
    for line in lines:
        m = match_line(line)
        if m is None:  # pragma: no cover - the pattern matches every line
            raise _GiveUp
        indent, dash, key, rest = m.groups()
        if rest and rest[0] == "[" and "]" not in rest:
            rest = _flow_lines(rest, lines, m.start(3) if key is not None else len(indent))
        if dash is None and key is not None and pending is None and frame and frame[0] == len(indent) \
                and not frame[2] and rest and rest[0] != "#":
            # The common line: 'key: value' in the open mapping.
            target = frame[1]
            name = key if key[0] not in "\"'" else key[1:-1]
            if name in target:
                raise _GiveUp  # a duplicate key: the located reader reports where
            value = inline(rest)
            target[name] = value
            count += len(value) + 1 if type(value) is list else 1
            continue
        if dash is None and key is None:
            if not rest or rest[0] == "#":
                continue  # blank or comment line
            raise _GiveUp  # a bare scalar, a continuation line, a directive, '---'
        column = len(indent)
        is_seq = dash is not None
        if frame and frame[0] == column and frame[2] is is_seq and pending is None:
            pass  # the common case: one more entry of the open collection
        elif root is None:
            root = [] if is_seq else {}
            stack.append([column, root, is_seq, False])
            count = 1
        elif pending is not None:
            parent, slot, parent_column = pending
            pending = None
            if column > parent_column or (is_seq and slot is not None and column == parent_column):
                container: Any = [] if is_seq else {}
                if len(stack) >= MAX_DEPTH - 2:
                    raise _GiveUp
                _store(parent, slot, container)
                count += 1
                stack.append([column, container, is_seq, column == parent_column])
            else:
                _store(parent, slot, None)
                count += 1
                _close_to(stack, column, is_seq)
        else:
            _close_to(stack, column, is_seq)
        frame = stack[-1]
        target = frame[1]
        if is_seq:
            if key is None:
                if not rest or rest[0] == "#":
                    pending = (target, None, column)
                    continue
                value = inline(rest)
                target.append(value)
                count += len(value) + 1 if type(value) is list else 1
                continue
            # '- key: ...' opens a mapping inside the item.
            inner_column = m.start(3)
            if len(stack) >= MAX_DEPTH - 2:
                raise _GiveUp
            mapping: dict[str, Any] = {}
            target.append(mapping)
            count += 1
            frame = [inner_column, mapping, False, False]
            stack.append(frame)
            target = mapping
            column = inner_column
        name = key if key[0] not in "\"'" else key[1:-1]
        if name in target:
            raise _GiveUp  # a duplicate key: the located reader reports where
        if not rest or rest[0] == "#":
            target[name] = _PENDING
            pending = (target, name, column)
            continue
        value = inline(rest)
        target[name] = value
        count += len(value) + 1 if type(value) is list else 1
        if count > MAX_NODES // 2:
            raise _GiveUp
    if root is None:
        raise _GiveUp  # empty: the located reader says so
    if pending is not None:
        _store(pending[0], pending[1], None)
        count += 1
    if count > MAX_NODES // 2:
        raise _GiveUp
    return root, count


def _flow_lines(first: str, lines: Iterator[str], column: int) -> str:
    """A flow sequence written over several lines, joined into one: every line but the last
    ends between two items (after ``[`` or ``,``) and is indented past ``column``."""
    parts = [first.rstrip(" ")]
    while True:
        if parts[-1][-1] not in "[," or "#" in parts[-1]:
            raise _GiveUp
        line = next(lines, None)
        if line is None:
            raise _GiveUp
        body = line.lstrip(" ")
        if len(line) - len(body) <= column or not body:
            raise _GiveUp
        parts.append(body.rstrip(" "))
        if "]" in body:
            if "#" in body:
                raise _GiveUp
            return " ".join(parts)


def _store(container: Any, slot: Any, value: Any) -> None:
    if slot is None:
        container.append(value)
    else:
        container[slot] = value


def _close_to(stack: list[list[Any]], column: int, is_seq: bool) -> None:
    """Close the collections that end before a node at ``column``; the open one must take it."""
    while stack:
        top = stack[-1]
        if top[0] > column or (top[0] == column and top[3] and not is_seq):
            stack.pop()
            continue
        if top[0] == column and top[2] == is_seq:
            return
        break
    raise _GiveUp


def _inline(rest: str) -> Any:
    """The value written after ``key: `` or ``- `` on one line."""
    first = rest[0]
    if first in _PLAIN_FIRST:
        if "#" in rest or ":" in rest:
            cut = rest.find(" #")
            value = (rest if cut < 0 else rest[:cut]).rstrip(" ")
            if "#" in value or ": " in value or value[-1] == ":":
                raise _GiveUp
        else:
            value = rest if rest[-1] != " " else rest.rstrip(" ")
        if first not in _TYPED_FIRST:
            return value
        if first in _KEYWORD_FIRST:
            # Only these words start with a letter and are not strings (YAML 1.2 core schema).
            return _KEYWORDS.get(value, value)
        if len(value) < 19 and value.isdigit() and value.isascii():
            return int(value)
        return _resolved(value)
    if first == '"':
        m = _DOUBLE.match(rest)
        if m is None:
            raise _GiveUp
        return _double(m.group(1))
    if first == "'":
        m = _SINGLE.match(rest)
        if m is None:
            raise _GiveUp
        return m.group(1).replace("''", "'")
    if first == "[":
        return _flow(rest)
    if first == "{":
        if _EMPTY_MAP.match(rest) is None:
            raise _GiveUp
        return {}
    if not (first == "-" and len(rest) > 1 and rest[1] in _AFTER_DASH):
        raise _GiveUp
    cut = rest.find(" #")
    value = (rest if cut < 0 else rest[:cut]).rstrip(" ")
    if "#" in value or ": " in value or value.endswith(":"):
        raise _GiveUp
    return _plain(value)


def _double(body: str) -> str:
    if "\\" not in body:
        return body
    if _JSON_ESCAPES.search(body) is not None:
        raise _GiveUp
    try:
        value: str = json.loads(f'"{body}"')
    except ValueError:
        raise _GiveUp from None
    return value


def _flow(rest: str) -> list[Any]:
    """A one-line flow sequence of scalars."""
    simple = _FLOW_PLAINS.match(rest)
    if simple is not None:  # plain scalars only, as in `seeds: [0, 1, 2]`
        inner = simple.group(1)
        return [] if inner is None else [_plain(item.strip(" ")) for item in inner.split(",")]
    # Quoted items too: checked whole by one match, then taken apart by one findall.
    whole = _FLOW_ANY.match(rest)
    if whole is None:
        raise _GiveUp
    items: list[Any] = []
    for double, single, plain in _FLOW_ITEMS.findall(whole.group(1)):
        if double:
            items.append(_double(double[1:-1]))
        elif single:
            items.append(single[1:-1].replace("''", "'"))
        else:
            items.append(_plain(plain))
    return items


def _plain(value: str) -> Any:
    first = value[0]
    if first not in _TYPED_FIRST:
        return value
    if first in _KEYWORD_FIRST:
        return _KEYWORDS.get(value, value)
    if len(value) < 19 and value.isdigit() and value.isascii():
        return int(value)
    return _resolved(value)


def _resolved(value: str) -> Any:
    try:
        return _resolve_plain(value)
    except ValueError:  # an integer too long to convert: the located reader says where
        raise _GiveUp from None
