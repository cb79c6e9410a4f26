"""A fast reader for the plain block subset of YAML, used when no source positions are needed.

Why a reader of our own: the located reader (:mod:`.source`) builds a document from libyaml's
events, one Python object per event, which takes 4-7 s for a 15 MiB manifest of 10,000
launchers; ruamel's C-based loader constructs the same document more slowly still, and the
compiled YAML libraries measured are either not YAML 1.2 core (``1_000``, ``0x1F`` and ``0b1``
read as numbers; tags silently dropped) or much slower than this. Manifests written by people
and generators alike use a small part of YAML: block mappings and sequences, one-line
scalars, one-line flow sequences of scalars, comments. This module reads exactly that part
and **gives up** (returns None) on anything else: anchors, aliases, tags, block scalars,
multi-line scalars, flow mappings, tabs, control or line-separator characters, duplicate keys,
empty quoted keys, unusual indentation, nesting near the depth limit, documents near the value
limit. The caller then uses the located reader, which handles all of
YAML 1.2 within the bounds of :mod:`..limits` and reports every error with its position.

It also leaves to the located reader every integer outside the 64-bit range a manifest may
carry (:mod:`..limits`), so a document it reads holds none (``SourceDocument.integers_in_range``).

So this reader never decides that a document is wrong, and for every document it accepts it
returns the same data as the located reader (scalars resolved by the same functions);
``tests/unit/test_blockyaml.py`` checks that on generated documents and on every manifest
in the repository.

How it is fast: one ``findall`` of one pattern over each 64 KiB of lines splits every line into
a tuple (indentation and dash, key, and the value when it is a plain string, a double-quoted
string without escapes or a decimal number), so the regular-expression work runs in C and the
Python work per line is a tuple unpacking, a few tests and one store; the line that continues
the open mapping takes the shortest path. Anything else on a line goes to the general path as
the rest of the line. Memory is kept small, since touching new memory is much of the time: a
chunk's tuples are freed before the next, and each distinct key, string value, number and flow
sequence is made once.

>>> read_block_yaml("a: 1\\nb:\\n- [x, 'y']\\n- {}\\n")
({'a': 1, 'b': [['x', 'y'], {}]}, 7)
>>> read_block_yaml("a: &anchor 1\\n") is None
True
"""

from __future__ import annotations

import json
import re
from operator import length_hint
from typing import Any

from ..errors import IOLayerError
from ..limits import INT_MAX, INT_MIN, MAX_DEPTH, MAX_NODES
from .scalars import resolve_plain as _resolve_plain

__all__ = ["read_block_yaml"]

# Anything outside printable ASCII, newline and the printable Unicode ranges libyaml accepts;
# NEL, LS and PS (line breaks in YAML 1.1 only) and the BOM are left to the located reader.
# Spelt as the complement of [\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd
# \U00010000-\U0010ffff] (the same characters, tests/unit/test_blockyaml.py): compiling that
# negated class walks its 60,000 code points in Python, 3 ms of every start-up; this takes 0.3.
_UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")

# One row per line of the text, found by one findall over the whole text, so that the work per
# line in Python is one tuple unpacking and a few tests. Each capture group costs every row, so
# there are few: the indentation with the sequence dash if any (a row whose prefix is all spaces
# has no dash), a plain mapping key, then the value as a plain string (read as written unless it
# is one of the nine keyword spellings, told apart in Python: a lookahead in the pattern cost
# more) or a double-quoted one without escapes, a decimal number, or the rest of the line for the
# general path (quoted keys, flow sequences, comments, trailing spaces, everything else).
_ROW = re.compile(
    r"^( *(?:-(?: +|$))?)"                                                # 1 indentation, dash
    r"(?:([A-Za-z0-9_][A-Za-z0-9_./-]*):(?: +|$))?"                       # 2 a plain key
    r"(?:([A-Za-z_/(][^\n#:]*)(?<! )$"                                   # 3 a plain string or keyword
    r"|\"([^\"\\\n]+)\"$"                                                # 4 a double-quoted string
    r"|([0-9]{1,18}|[0-9]+\.[0-9]+)$"                                    # 5 a decimal number
    r"|(.*)$)",                                                           # 6 anything else
    re.M,
)
# A quoted mapping key at the start of the rest of a row, and the spaces after its colon.
_QUOTED_KEY = re.compile(r"(?:\"([^\"\\]+)\"|'([^']+)'):(?: +|$)")
# A plain scalar may start with these (or with '-' before one of the next set); other
# first characters are YAML indicators or rare enough to leave to the located reader.
_PLAIN_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./~+(")
_AFTER_DASH = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.")
_DOUBLE = re.compile(r'"((?:[^"\\]|\\.)*)" *(?:(?<= )#.*)?$')
_SINGLE = re.compile(r"'((?:[^']|'')*)' *(?:(?<= )#.*)?$")
# Escapes that mean the same in JSON and YAML double-quoted scalars (no surrogate code points).
_JSON_ESCAPES = re.compile(r'\\(?:[^"\\/bfnrtu]|u(?![0-9a-fA-F]{4})|u[dD][89a-fA-F])')
_FLOW_PLAIN = r"(?:[A-Za-z0-9_./~+(]|-[A-Za-z0-9.])(?:[A-Za-z0-9_./~+()= -]*[A-Za-z0-9_./~+()=-])?"
# Quoted items unrolled (a run of plain characters, then an escape and a run, ...): the same
# strings as one alternation per character, matched several times faster.
_FLOW_ITEM = r"""(?:("[^"\\]*(?:\\.[^"\\]*)*")|('[^']*(?:''[^']*)*')|(""" + _FLOW_PLAIN + r"))"
_FLOW_ITEMS = re.compile(_FLOW_ITEM)
_FLOW_ANY = re.compile(r"\[( *" + _FLOW_ITEM + r"(?: *, *" + _FLOW_ITEM + r")* *)\] *(?:(?<= )#.*)?$")
_FLOW_INTS = re.compile(r"\[ *([0-9]{1,18}(?: *, *[0-9]{1,18})*) *\] *(?:(?<= )#.*)?$")
_FLOW_PLAINS = re.compile(r"\[ *(" + _FLOW_PLAIN + r"(?: *, *" + _FLOW_PLAIN + r")*)? *\] *(?:(?<= )#.*)?$")
_EMPTY_MAP = re.compile(r"\{ *\} *(?:(?<= )#.*)?$")
_TYPED_FIRST = frozenset("-+.0123456789~nNtTfF")
_KEYWORD_FIRST = frozenset("nNtTfF")
_DIGITS = frozenset("0123456789")
_KEYWORDS: dict[str, Any] = {"null": None, "Null": None, "NULL": None, "true": True, "True": True, "TRUE": True,
                             "false": False, "False": False, "FALSE": False}
_PENDING = object()
# Characters of text read by one findall (then cut at the end of a line).
_CHUNK = 1 << 16
# Distinct flow sequences remembered by one read (bounds its memory on hostile input).
_FLOW_MEMO = 4096


# Printable ASCII and the newline: what an ASCII text may hold. Deleting them from the text's
# bytes (one C pass) leaves nothing exactly when _UNSAFE finds nothing, at a sixth of its cost.
_SAFE_ASCII = b"\n" + bytes(range(0x20, 0x7F))


def _unsafe(text: str) -> bool:
    if text.isascii():
        return bool(text.encode("ascii").translate(None, _SAFE_ASCII))
    return _UNSAFE.search(text) is not None


class _GiveUp(IOLayerError):
    """The text is outside the subset; the located reader decides what it is. (Caught in this
    module, never seen by a caller; under the one root like every exception of the package.)"""


def read_block_yaml(text: str) -> tuple[Any, int] | None:
    """``(data, number of values)`` of ``text`` when it is in the plain block subset, else None."""
    if _unsafe(text):
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
    target: Any = None
    # The indentation of the open mapping's keys while no slot is pending (else None): a row with
    # exactly this prefix and a key is the common line, read by the shortest path.
    map_indent: str | None = None
    lines: list[str] | None = None  # the text's lines, split only for a flow sequence over lines
    inline = _inline
    no_value = _PENDING
    keyword_first, keywords = _KEYWORD_FIRST, _KEYWORDS
    flows: dict[str, list[Any]] = {}
    known: dict[str, str] = {}
    strings = known.setdefault  # the one string kept for each distinct key and value
    numbers: dict[str, Any] = {}
    # The rows come a chunk of lines at a time: the table of a whole 16 MiB text would hold
    # 680,000 tuples (150 MiB) at once, written and read back through the caches; a chunk's
    # tuples are freed and their memory reused for the next one.
    length = len(text)
    position = 0
    lines_before = 0  # the number of the chunk's first line, from 0
    while position <= length:
        end = text.find("\n", position + _CHUNK)
        if end < 0:
            end = length
        table = _ROW.findall(text, position, end)
        rows = iter(table)
        for prefix, key, plain, double, number, rest in rows:
            if key:
                # One string per distinct key, as json's decoder keeps them (the 680,000 keys of
                # the 10k manifest are a few dozen strings), and per distinct plain or quoted value
                # below (fingerprints, formats, units repeat in every claim): less memory to
                # touch, which on this class of machine is much of the reader's time.
                key = strings(key, key)
            # The value written on the line, or no_value when there is none (blank lines and
            # comments too). The common scalar forms come in groups of their own.
            if plain:
                # Only null, true and false (in three spellings each) are not strings here.
                value: Any = strings(plain, plain) if plain[0] not in keyword_first else keywords.get(plain, plain)
            elif double:
                value = strings(double, double)
            elif number:
                # Numbers repeat too (observed values, sizes, timeouts): each is converted once.
                value = numbers.get(number)
                if value is None:
                    value = numbers[number] = int(number) if "." not in number else float(number)
            elif not rest or rest[0] == "#":
                value = no_value
            else:
                if not key and (rest[0] == '"' or rest[0] == "'"):
                    quoted = _QUOTED_KEY.match(rest)
                    if quoted is not None:  # a quoted key (an empty one is left to the located reader)
                        key = quoted.group(1) or quoted.group(2)
                        rest = rest[quoted.end():]
                if not rest or rest[0] == "#":
                    value = no_value
                else:
                    if rest[0] == "[" and "]" not in rest:
                        if lines is None:
                            lines = text.split("\n")
                        # The rows are the lines of the text; the iterator says how many are left.
                        left = length_hint(rows)
                        column = len(prefix) if key else len(prefix) - len(prefix.lstrip(" "))
                        rest, used = _flow_lines(rest, lines, lines_before + len(table) - left, column)
                        if used > left:
                            raise _GiveUp  # it goes on in the next chunk: rare enough to leave
                        for _ in range(used):
                            next(rows)
                    if rest[0] == "[":
                        # Flow sequences repeat (seeds, choices, data lists of every launcher): each
                        # distinct one is read once. Its items are immutable scalars; every use gets
                        # its own list.
                        flow = flows.get(rest)
                        if flow is None:
                            flow = inline(rest)
                            if len(flows) < _FLOW_MEMO:
                                flows[rest] = flow
                        value = flow.copy()
                        count += len(flow)
                    else:
                        value = inline(rest)
            if key:
                if prefix == map_indent:
                    # The common line: 'key: ...' in the open mapping.
                    if key in target:
                        raise _GiveUp  # a duplicate key: the located reader reports where
                    if value is no_value:
                        target[key] = no_value
                        pending = (target, key, len(prefix))
                        map_indent = None
                    else:
                        target[key] = value
                        count += 1
                    continue
                if "-" not in prefix:
                    # 'key: ...' that does not continue the open mapping: the general path below,
                    # specialised to a mapping key.
                    column = len(prefix)
                    if pending is not None:
                        parent, slot, parent_column = pending
                        pending = None
                        if column > parent_column:  # the first key of a mapping that is the slot's value
                            if len(stack) >= MAX_DEPTH - 2:
                                raise _GiveUp
                            target = {}
                            if slot is None:
                                parent.append(target)
                            else:
                                parent[slot] = target
                            frame = [column, target, False, False]
                            stack.append(frame)
                        else:  # the slot is null
                            if slot is None:
                                parent.append(None)
                            else:
                                parent[slot] = None
                            _close_to(stack, column, False)
                            frame = stack[-1]
                            target = frame[1]
                        count += 1
                    elif root is None:
                        target = root = {}
                        frame = [column, root, False, False]
                        stack.append(frame)
                        count += 1
                    else:  # a key of a mapping that encloses the open collection
                        _close_to(stack, column, False)
                        frame = stack[-1]
                        target = frame[1]
                    if key in target:
                        raise _GiveUp
                    if value is no_value:
                        target[key] = no_value
                        pending = (target, key, column)
                        map_indent = None
                    else:
                        target[key] = value
                        count += 1
                        map_indent = prefix
                    continue
            elif "-" not in prefix:
                if value is no_value:
                    continue  # blank or comment line
                raise _GiveUp  # a bare scalar, a continuation line, a directive, '---'
            # A sequence entry: '- value', '- key: value' or '-' alone.
            column = prefix.index("-")
            if frame and frame[0] == column and frame[2] and pending is None:
                pass  # one more entry of the open sequence
            elif root is None:
                root = []
                stack.append([column, root, True, False])
                count += 1
            elif pending is not None:
                parent, slot, parent_column = pending
                pending = None
                if column > parent_column or (slot is not None and column == parent_column):
                    if len(stack) >= MAX_DEPTH - 2:
                        raise _GiveUp
                    container: list[Any] = []
                    _store(parent, slot, container)
                    count += 1
                    stack.append([column, container, True, column == parent_column])
                else:
                    _store(parent, slot, None)
                    count += 1
                    _close_to(stack, column, True)
            else:
                _close_to(stack, column, True)
            frame = stack[-1]
            target = frame[1]
            map_indent = None
            if not key:
                if value is no_value:
                    pending = (target, None, column)
                else:
                    target.append(value)
                    count += 1
                continue
            # '- key: ...' opens a mapping inside the item, its keys at the column of this one.
            column = len(prefix)
            if len(stack) >= MAX_DEPTH - 2:
                raise _GiveUp
            target.append({})
            frame = [column, target[-1], False, False]
            stack.append(frame)
            target = frame[1]
            count += 1
            if value is no_value:
                target[key] = no_value
                pending = (target, key, column)
                continue
            target[key] = value
            count += 1
            if count > MAX_NODES // 2:
                raise _GiveUp
            map_indent = " " * column
        lines_before += len(table)
        position = end + 1
    if root is None:
        raise _GiveUp  # empty: the located reader says so
    if pending is not None:
        _store(pending[0], pending[1], None)
        count += 1
    if count > MAX_NODES // 2:
        raise _GiveUp
    return root, count


def _flow_lines(first: str, lines: list[str], start: int, column: int) -> tuple[str, int]:
    """A flow sequence written over several lines, joined into one, and the number of lines it
    took after the first: every line but the last ends between two items (after ``[`` or ``,``)
    and is indented past ``column``."""
    parts = [first.rstrip(" ")]
    number = start
    while True:
        if parts[-1][-1] not in "[," or "#" in parts[-1]:
            raise _GiveUp
        if number >= len(lines):
            raise _GiveUp
        line = lines[number]
        number += 1
        body = line.lstrip(" ")
        if len(line) - len(body) <= column or not body:
            raise _GiveUp
        parts.append(body.rstrip(" "))
        if "]" in body:
            if "#" in body:
                raise _GiveUp
            return " ".join(parts), number - start


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
    if '"' not in rest and "'" not in rest:
        numbers = _FLOW_INTS.match(rest)
        if numbers is not None:  # decimal integers only, as in `seeds: [0, 1, 2]` (int() skips the spaces)
            return [int(item) for item in numbers.group(1).split(",")]
        simple = _FLOW_PLAINS.match(rest)
        if simple is None:
            raise _GiveUp
        inner = simple.group(1)
        if inner is None:
            return []
        items = [item.strip(" ") for item in inner.split(",")]
        return [item if item[0] not in _TYPED_FIRST else _plain(item) for item in items]
    # Quoted items too: checked whole by one match, then taken apart by one findall.
    whole = _FLOW_ANY.match(rest)
    if whole is None:
        raise _GiveUp
    values: list[Any] = []
    append = values.append
    for double, single, plain in _FLOW_ITEMS.findall(whole.group(1)):
        if plain:
            append(plain if plain[0] not in _TYPED_FIRST else _plain(plain))
        elif double:
            append(_double(double[1:-1]))
        else:
            append(single[1:-1].replace("''", "'"))
    return values


def _plain(value: str) -> Any:
    first = value[0]
    if first not in _TYPED_FIRST:
        return value
    if first in _KEYWORD_FIRST:
        return _KEYWORDS.get(value, value)
    if value.isdigit() and len(value) < 19 and value.isascii():
        return int(value)
    if first in _DIGITS and "." in value and value.replace(".", "", 1).isdigit() and value.isascii():
        return float(value)  # digits with one dot: a core-schema float
    return _resolved(value)


def _resolved(value: str) -> Any:
    try:
        resolved = _resolve_plain(value)
    except ValueError:  # an integer too long to convert: the located reader says where
        raise _GiveUp from None
    if type(resolved) is int and not INT_MIN <= resolved <= INT_MAX:
        # Every other integer this reader makes has at most 18 digits: a document it reads holds
        # none outside the range, which spares the validator its search (RRA114 needs positions,
        # which the located reader gives).
        raise _GiveUp
    return resolved
