"""Parse YAML or JSON manifests into plain data while remembering where every value came from.

YAML is read as a stream of parser events (libyaml through ruamel.yaml when its C extension is
installed) and assembled here without recursion, so the bounds in :mod:`..limits` are checked
while building: nesting depth, expanded alias size, duplicate keys and unsupported tags are
reported with their line and column instead of exhausting memory or the stack. Scalars are
resolved by the YAML 1.2 core schema: ``yes`` is a string, ``2024-01-01`` is a string.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

from ..errors import LoadError, Problem
from ..limits import MAX_DEPTH, MAX_NODES
from .scalars import BOOL, FLOAT, INT, MAX_DECIMAL_DIGITS, NULL, resolve_plain, to_float, to_int

__all__ = ["Position", "SourceDocument", "decode_text", "parse_document"]

_CORE = "tag:yaml.org,2002:"
# Plain scalars whose first character is none of these are strings; skips the regexes.
_MAYBE_TYPED = frozenset("-+.0123456789~nNtTfF")


@dataclass(frozen=True)
class Position:
    """1-based line and column of a key and of its value."""

    line: int
    column: int
    key_line: int | None = None
    key_column: int | None = None


@dataclass
class SourceDocument:
    """A parsed manifest: its data, its text, and the source position of every value."""

    text: str
    data: Any
    problems: list[Problem] = field(default_factory=list)
    #: How many values the document holds (aliases counted at each use).
    values: int = 0
    # id(container) -> {key or index: (line, column[, key_line, key_column])}; containers stay
    # alive through ``data``. Tuples, not Position objects: a million of those cost a second,
    # and only the positions of findings are ever looked at.
    _positions: dict[int, dict[Any, tuple[int, ...]]] | None = None
    #: Read without positions: they are worked out by re-reading the text on first use.
    _unlocated: bool = False
    #: Every integer of ``data`` is known to lie in INT_MIN..INT_MAX (the fast block reader
    #: leaves any other to the located reader), so nobody need look for one.
    integers_in_range: bool = False
    #: Read by the fast block reader (YAML) or by the JSON decoder: positions are first looked
    #: for along each pointer in the text (:mod:`.blocklocate`, :mod:`.jsonlocate`), and only
    #: where that is unsure by re-reading it all.
    _block_read: bool = False
    _json_read: bool = False
    _locator: Any = field(default=None, repr=False, compare=False)

    def position(self, pointer: tuple[str | int, ...]) -> Position | None:
        """Where the value at ``pointer`` is written; the nearest enclosing value if it is absent."""
        if self._positions is None and (self._block_read or self._json_read):
            if self._locator is None:
                from .blocklocate import BlockLocator
                from .jsonlocate import JsonLocator

                self._locator = (BlockLocator if self._block_read else JsonLocator)(self.text, self.data)
            found = self._locator.position(pointer)
            if found is not None:
                return Position(*found)
            # Unsure: the located reader's positions from now on (the same answers, all of them).
            self._block_read = self._json_read = False
            self._locator = None
        if self._positions is None:
            self._positions = _located_positions(self.text, self.data) if self._unlocated else {}
        node = self.data
        best: Position | None = self._start()
        for part in pointer:
            table = self._positions.get(id(node))
            if table is None or part not in table:
                break
            best = Position(*table[part])
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                break
        return best

    def _start(self) -> Position:
        """Where the document's content starts: its first key, past any leading comments (a
        finding about the whole document, such as a missing field, points there)."""
        table = (self._positions or {}).get(id(self.data))
        keys = [(entry[2], entry[3]) for entry in (table or {}).values() if len(entry) >= 4]
        return Position(*min(keys)) if keys else Position(1, 1)


def decode_text(raw: bytes) -> str:
    """Decode manifest bytes as UTF-8 (a BOM is allowed); raise a located :class:`LoadError`."""
    if b"\x00" in raw:
        offset = raw.index(b"\x00")
        line, col = _line_col(raw, offset)
        raise LoadError(Problem("RRA004", "file is binary: it contains a NUL byte", line, col,
                                "a manifest is UTF-8 text (YAML or JSON)"))
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, col = _line_col(raw, exc.start)
        raise LoadError(Problem(
            "RRA004", f"file is not valid UTF-8: byte {raw[exc.start]:#04x} cannot start a character",
            line, col, "save the manifest as UTF-8")) from None


def _line_col(raw: bytes, offset: int) -> tuple[int, int]:
    line = raw.count(b"\n", 0, offset) + 1
    start = raw.rfind(b"\n", 0, offset) + 1
    return line, offset - start + 1


def parse_document(text: str, *, located: bool = True) -> SourceDocument:
    """Parse manifest text (YAML 1.2 or JSON) into a :class:`SourceDocument`.

    Raises :class:`LoadError` when the text is not a single, well-formed document within the
    bounds; duplicate keys are recorded in ``problems`` and the first value is kept. Without
    ``located``, a reader that records no positions may be used (same data, same errors);
    :meth:`SourceDocument.position` then finds each position along its pointer in the text
    (:mod:`.blocklocate`, :mod:`.jsonlocate`), or re-reads the whole text where those are unsure.

    >>> parse_document("a: [1, 2]").data
    {'a': [1, 2]}
    """
    if not text.strip():
        raise LoadError(Problem("RRA003", "manifest is empty", 1, 1,
                                "start from 'rra init' or an example in examples/"))
    if text.lstrip().startswith("{"):
        doc = _parse_json(text)
        if doc is not None:
            return doc
    elif not located:
        from .blockyaml import read_block_yaml

        fast = read_block_yaml(text)
        if fast is not None:
            return SourceDocument(text=text, data=fast[0], values=fast[1], _unlocated=True, integers_in_range=True,
                                  _block_read=True)
    return _YamlBuilder(text).build()


def _parse_json(text: str) -> SourceDocument | None:
    duplicates: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) != len(items):
            duplicates.append(next(k for i, (k, _) in enumerate(items) if k in dict(items[:i])))
        return out

    def no_constants(name: str) -> Any:
        # NaN and Infinity are not JSON (RFC 8259); read as YAML 1.2 they are plain strings.
        raise ValueError(name)

    # Python's own int() is the decoder's fast path (a Python callback per integer costs ~0.1 s
    # on the 10,000-launcher manifest). Under the default limit on digits it refuses exactly the
    # literals to_int replaces by a stand-in, and the YAML reader below then reads them through
    # to_int; with the limit lifted (or raised past to_int's) to_int decides here.
    limit = sys.get_int_max_str_digits()
    parse_int = None if 0 < limit <= MAX_DECIMAL_DIGITS else to_int
    try:
        data = json.loads(text, object_pairs_hook=pairs, parse_constant=no_constants, parse_int=parse_int)
    except (ValueError, RecursionError):
        # Not strict JSON (or too deep for the C decoder): the YAML reader reports it precisely.
        return None
    if duplicates:
        # The YAML reader locates each duplicate; JSON is a subset of YAML 1.2 flow style.
        return None
    values = _check_bounds(data)
    return SourceDocument(text=text, data=data, values=values, _unlocated=True, _json_read=True)


def _check_bounds(data: Any) -> int:
    """The number of values in ``data``; raises when it or the nesting depth is over the limit."""
    # Level by level, so hostile depth cannot exhaust the stack and each level's containers
    # are picked out by one comprehension (a million values take ~0.1 s); json.loads shares
    # no objects, so nothing is counted twice.
    count, depth = 1, 1
    level = [data] if type(data) in _CONTAINERS else []
    while level:
        if depth > MAX_DEPTH:
            raise LoadError(Problem("RRA007", f"nesting is deeper than {MAX_DEPTH} levels", 1, 1,
                                    "the standard's documents nest fewer than 10 levels"))
        below: list[Any] = []
        for node in level:
            children = node.values() if type(node) is dict else node
            count += len(children)
            below += [child for child in children if type(child) in _CONTAINERS]
        if count > MAX_NODES:
            raise LoadError(Problem("RRA006", f"document has more than {MAX_NODES} values", 1, 1))
        level, depth = below, depth + 1
    return count


_CONTAINERS = (dict, list)


def _located_positions(text: str, data: Any) -> dict[int, dict[Any, tuple[int, ...]]]:
    """Positions for data read without them, found by re-reading the text with the located reader."""
    try:
        shadow = _YamlBuilder(text).build()
    except LoadError:
        return {}
    out: dict[int, dict[Any, tuple[int, ...]]] = {}
    shadow_positions = shadow._positions or {}
    pairs: list[tuple[Any, Any]] = [(data, shadow.data)]
    while pairs:
        real, twin = pairs.pop()
        table = shadow_positions.get(id(twin))
        if table is not None:
            out[id(real)] = table
        if isinstance(real, dict) and isinstance(twin, dict):
            pairs.extend((real[k], twin[k]) for k in real if k in twin)
        elif isinstance(real, list) and isinstance(twin, list):
            pairs.extend(zip(real, twin))
    return out


class _YamlBuilder:
    """Assemble data from parser events with an explicit stack."""

    def __init__(self, text: str) -> None:
        self.text = text
        # The empty line after a final newline exists (an editor shows it); nothing beyond it does.
        self._last_line = text.count("\n") + 1
        # libyaml treats NEL, LS and PS as line breaks (YAML 1.1); in YAML 1.2 they are ordinary
        # characters. They are swapped for private-use stand-ins of the same length before
        # parsing and swapped back in every scalar, so comments, lines and columns stay right.
        self._parse_text = text
        self._restore: dict[int, int] | None = None
        if any(ch in text for ch in _YAML11_BREAKS) and not any(ch in text for ch in _STAND_INS):
            self._parse_text = text.translate(_TO_STAND_IN)
            self._restore = _FROM_STAND_IN
        self.positions: dict[int, dict[Any, tuple[int, ...]]] = {}
        self.problems: list[Problem] = []
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.sizes: dict[int, int] = {}
        self.total = 0

    def build(self) -> SourceDocument:
        from ruamel.yaml.error import MarkedYAMLError
        from ruamel.yaml.reader import ReaderError

        try:
            data = self._assemble()
        except ReaderError as exc:
            # Characters YAML forbids (most C0 controls); the reader gives a character offset.
            line, column = _offset_line_col(self.text, exc.position)
            char = exc.character
            shown = f"U+{char:04X}" if isinstance(char, int) else repr(char)
            raise LoadError(Problem("RRA002", f"character {shown} is not allowed in YAML", line, column,
                                    "remove the control character")) from None
        except MarkedYAMLError as exc:
            problem, where, hint = self._syntax_problem(exc)
            raise LoadError(Problem("RRA002", f"YAML syntax error: {problem}", *where, hint)) from None
        return SourceDocument(text=self.text, data=data, problems=self.problems, values=self.total,
                              _positions=self.positions)

    def _events(self) -> Any:
        loader: Any
        try:
            from ruamel.yaml.cyaml import CSafeLoader

            loader = CSafeLoader(self._parse_text)
        except ImportError:  # pragma: no cover - the C extension is a dependency on CPython
            from ruamel.yaml.loader import SafeLoader

            loader = SafeLoader(self._parse_text)
        try:
            while True:
                event = loader.get_event()
                if event is None:
                    return
                yield event
        finally:
            loader.dispose()

    def _assemble(self) -> Any:
        from ruamel.yaml import events as ev

        # Each frame: [container, kind, pending_key, key_position, size, anchor]
        stack: list[list[Any]] = []
        root: Any = _NO_KEY
        documents = 0
        for event in self._events():
            kind = type(event)
            if kind is ev.ScalarEvent or kind is ev.AliasEvent or kind is ev.MappingStartEvent \
                    or kind is ev.SequenceStartEvent:
                pos = self._pos(event.start_mark)
                if stack and stack[-1][1] == "map" and stack[-1][2] is _NO_KEY:
                    if kind is not ev.ScalarEvent:
                        raise LoadError(Problem("RRA002", "mapping keys must be plain strings, not collections "
                                                "or aliases", *pos, "quote the key"))
                    top = stack[-1]
                    top[2] = event.value if self._restore is None else event.value.translate(self._restore)
                    top[3] = pos
                    continue
                if kind is ev.ScalarEvent:
                    value, size = self._scalar(event, pos), 1
                elif kind is ev.AliasEvent:
                    if event.anchor not in self.anchors:
                        raise LoadError(Problem("RRA002", f"YAML alias '*{event.anchor}' has no anchor",
                                                *pos, "define '&name' before using '*name'"))
                    value, size = self.anchors[event.anchor]
                else:
                    if len(stack) >= MAX_DEPTH:
                        raise LoadError(Problem("RRA007", f"nesting is deeper than {MAX_DEPTH} levels", *pos,
                                                "the standard's documents nest fewer than 10 levels"))
                    self._check_collection_tag(event, pos, kind is ev.MappingStartEvent)
                    container: Any = {} if kind is ev.MappingStartEvent else []
                    self.positions[id(container)] = {}
                    stack.append([container, "map" if kind is ev.MappingStartEvent else "seq",
                                  _NO_KEY, None, 1, event.anchor, pos])
                    continue
                if event.anchor and kind is ev.ScalarEvent:
                    self.anchors[event.anchor] = (value, size)
                # A scalar is one new value; an alias adds its whole expansion again.
                root = self._attach(stack, value, size, size, pos, root)
            elif kind is ev.MappingEndEvent or kind is ev.SequenceEndEvent:
                frame = stack.pop()
                container, size, anchor, pos = frame[0], frame[4], frame[5], frame[6]
                if anchor:
                    self.anchors[anchor] = (container, size)
                # Its members were counted as they arrived; the container itself is one more.
                root = self._attach(stack, container, size, 1, pos, root)
            elif kind is ev.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise LoadError(Problem("RRA002", "file holds more than one YAML document",
                                            *self._pos(event.start_mark),
                                            "a manifest is a single document: remove the '---' separator"))
        if root is _NO_KEY:
            raise LoadError(Problem("RRA003", "manifest is empty", 1, 1,
                                    "start from 'rra init' or an example in examples/"))
        return root

    def _syntax_problem(self, exc: Any) -> tuple[str, tuple[int | None, int | None], str]:
        """Message, position and hint of a parser error, keeping the parser's context ("while
        parsing a flow sequence", and where that started).

        An unclosed ``[``, ``{`` or quote is noticed only where the text goes on without closing
        it (the next line, or the end); the mistake is the opening, so that is where it points.
        """
        problem_at = self._pos(exc.problem_mark) if exc.problem_mark else None
        context_at = self._pos(exc.context_mark) if exc.context_mark else None
        what = str(exc.problem or exc.context or "malformed YAML")
        context = str(exc.context) if exc.problem and exc.context else None
        unclosed = context is not None and context_at is not None and problem_at is not None and context.startswith(
            _UNCLOSED_CONTEXTS)
        if unclosed and context is not None and context_at is not None and problem_at is not None:
            message = f"{what} at line {problem_at[0]}, column {problem_at[1]}, {context} that starts here"
            where: tuple[int | None, int | None] = context_at
            hint = "close what opens here, or quote the value if the bracket or quote is meant as text"
            return message, where, hint
        message = what
        if context is not None and context_at is not None and context_at != problem_at:
            message += f" ({context} started at line {context_at[0]}, column {context_at[1]})"
        elif context is not None:
            message += f" ({context})"
        where = problem_at or context_at or (None, None)
        line_text = self.text.split("\n")[where[0] - 1] if where[0] else ""
        tabbed = "\t" in line_text[: len(line_text) - len(line_text.lstrip(" \t"))]
        return message, where, _syntax_hint("tab" if tabbed else what)

    def _pos(self, mark: Any) -> tuple[int, int]:
        """1-based line and column of a libyaml mark, never past the end of the text (an error
        at the end of input points at the last line)."""
        line, column = mark.line + 1, mark.column + 1
        if line > self._last_line >= 1:
            tail = self.text.rsplit("\n", 1)[-1]
            line, column = self._last_line, len(tail) + 1
        return line, column

    def _check_collection_tag(self, event: Any, pos: tuple[int, int], mapping: bool) -> None:
        tag = event.tag
        if tag is None or tag == "!":
            return
        expected = _CORE + ("map" if mapping else "seq")
        if tag == expected or tag == "!!" + expected[len(_CORE):]:
            return
        raise LoadError(Problem("RRA002", f"unsupported YAML tag {tag!r} on a {'mapping' if mapping else 'sequence'}",
                                *pos, "the standard uses plain YAML: remove the tag"))

    def _attach(self, stack: list[list[Any]], value: Any, size: int, new: int, pos: tuple[int, int],
                root: Any) -> Any:
        """Add ``value`` (expanding to ``size`` values, ``new`` of them not yet counted) to its parent."""
        self.total += new
        if self.total > MAX_NODES:
            raise LoadError(Problem("RRA006", f"document expands to more than {MAX_NODES} values "
                                    "(aliases are counted each time they are used)", *pos,
                                    "write the values out or use fewer aliases"))
        if not stack:
            return value
        frame = stack[-1]
        frame[4] += size
        container = frame[0]
        table = self.positions[id(container)]
        if frame[1] == "seq":
            table[len(container)] = pos
            container.append(value)
            return root
        key, key_pos = frame[2], frame[3]
        frame[2] = _NO_KEY
        if key in container:
            first = table[key]
            self.problems.append(Problem(
                "RRA005", f"duplicate key {key!r} (first at line {first[2]}); the first value is kept",
                key_pos[0], key_pos[1], "remove one of the two entries",
            ))
            return root
        table[key] = (pos[0], pos[1], key_pos[0], key_pos[1])
        container[key] = value
        return root

    def _scalar(self, event: Any, pos: tuple[int, int]) -> Any:
        value: str = event.value if self._restore is None else event.value.translate(self._restore)
        tag = event.tag
        if tag is None or tag == "!":
            if not event.implicit[0] or not value or value[0] not in _MAYBE_TYPED:
                # Quoted, block or obviously textual scalars are strings; empty plain is null.
                if event.implicit[0] and value == "" and not event.style:
                    return None
                return value
            try:
                return resolve_plain(value)
            except ValueError:
                # An integer with more digits than Python converts in linear time (4,300 by
                # default): a located finding, never a traceback.
                raise LoadError(Problem(
                    "RRA006", f"integer {value[:12]}... has {len(value)} digits, more than a manifest can carry",
                    *pos, "quote it if it is text rather than a number")) from None
        if tag.startswith("!!"):
            tag = _CORE + tag[2:]
        name = tag[len(_CORE):] if tag.startswith(_CORE) else None
        try:
            if name == "str":
                return value
            if name == "int" and INT.match(value):
                return to_int(value)
            if name == "float" and (FLOAT.match(value) or INT.match(value)):
                return to_float(value)
            if name == "bool" and BOOL.match(value):
                return value.lower() == "true"
            if name == "null" and NULL.match(value):
                return None
        except ValueError:
            pass
        raise LoadError(Problem("RRA002", f"unsupported YAML tag {event.tag!r} on value {value!r}", *pos,
                                "the standard uses plain YAML: remove the tag"))


_YAML11_BREAKS = "\x85\u2028\u2029"
_STAND_INS = "\ue085\ue028\ue029"
_TO_STAND_IN = str.maketrans(_YAML11_BREAKS, _STAND_INS)
_FROM_STAND_IN = str.maketrans(_STAND_INS, _YAML11_BREAKS)


class _NoKey:
    __slots__ = ()


_NO_KEY = _NoKey()


def _offset_line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


#: Parser contexts of something opened and never closed: a flow collection or a quoted scalar.
_UNCLOSED_CONTEXTS = ("while parsing a flow sequence", "while parsing a flow mapping", "while scanning a quoted scalar")


def _syntax_hint(what: str) -> str:
    if "tab" in what:
        return "indent with spaces; YAML forbids tabs for indentation"
    if "mapping values are not allowed" in what:
        return "a value containing ': ' must be quoted"
    return "check indentation and quoting near this position"
