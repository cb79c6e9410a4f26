"""Reading a claim's number out of a declared output: JSON pointer, CSV cell, or regex; and the
answer of a claim of another kind (string, set, list: :func:`extract_answer`, RRA 1.2).

Every failure is an :class:`ExtractError` with a message that names the output and what was
wrong with it; extraction never raises anything else for bad file contents.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path
from typing import Any

from ..answers import Answer, AnswerError, as_decimal, parse_answer, split_elements
from ..errors import ExitStatus
from ..model.manifest_view import ExtractSpec as Extract
from ..model.regex import compile_pattern, normalise_newlines
from .errors import RunLayerError

__all__ = ["MAX_EXTRACT_BYTES", "ExtractError", "answer_from_json", "extract_answer", "extract_value", "json_pointer",
           "parse_json_output", "value_from_json"]

#: Outputs larger than this are not read for metrics.
MAX_EXTRACT_BYTES = 256 * 1024 * 1024


class ExtractError(RunLayerError):
    """The metric cannot be read from the output."""

    exit_status = ExitStatus.FAILED


def json_pointer(document: Any, pointer: str) -> Any:
    """The value at RFC 6901 ``pointer``; ExtractError naming the first step that fails.

    >>> json_pointer({"a/b": [1, {"~": 2}]}, "/a~1b/1/~0")
    2
    """
    node = document
    if pointer == "":
        return node
    if not pointer.startswith("/"):
        raise ExtractError(f"JSON pointer {pointer!r} does not start with '/'")
    walked = ""
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        walked += "/" + raw
        if isinstance(node, dict):
            if token not in node:
                raise ExtractError(f"no member {token!r} at {walked!r}")
            node = node[token]
        elif isinstance(node, list):
            if not re.fullmatch(r"0|[1-9][0-9]*", token) or int(token) >= len(node):
                raise ExtractError(f"no array element {token!r} at {walked!r} (length {len(node)})")
            node = node[int(token)]
        else:
            raise ExtractError(f"{walked!r} steps into a {type(node).__name__}, not an object or array")
    return node


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ExtractError(f"{where} is {json.dumps(value)[:60]}, not a number")
    try:
        number = float(value.strip()) if isinstance(value, str) else float(value)
    except ValueError:
        raise ExtractError(f"{where} is {str(value)[:60]!r}, not a number") from None
    if not math.isfinite(number):
        raise ExtractError(f"{where} is {value!r}, not a finite number")
    return number


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _read_text(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_EXTRACT_BYTES:
            raise ExtractError(f"is larger than {MAX_EXTRACT_BYTES} bytes")
        raw = path.read_bytes()
    except IsADirectoryError:
        raise ExtractError("is a directory, not a file") from None
    except OSError as exc:
        raise ExtractError(f"cannot be read: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ExtractError(f"is not UTF-8 text (byte {exc.start})") from None


def parse_json_output(path: Path) -> Any:
    """The JSON document in the output file ``path`` (read as :func:`extract_value` reads it), for
    callers that extract several values from one output."""
    try:
        return json.loads(_read_text(path), parse_constant=_no_constants)
    except (ValueError, RecursionError) as exc:
        raise ExtractError(f"is not valid JSON: {exc}") from None


def value_from_json(document: Any, rule: Extract) -> float:
    """The value ``rule`` (a JSON-pointer rule) reads from the parsed ``document``, times its scale."""
    assert rule.json_pointer is not None
    value = _number(json_pointer(document, rule.json_pointer), f"the value at {rule.json_pointer!r}")
    return _scaled(value, rule)


def _scaled(value: float, rule: Extract) -> float:
    scaled = value * rule.scale
    if not math.isfinite(scaled):
        raise ExtractError(f"value {value!r} times scale {rule.scale!r} is not finite")
    return scaled


def extract_value(path: Path, rule: Extract) -> float:
    """The claim's value in the output file ``path`` by ``rule``, times ``rule.scale``."""
    if rule.json_pointer is not None:
        return value_from_json(parse_json_output(path), rule)
    text = _read_text(path)
    if rule.csv is not None:
        value = _csv_value(text, rule)
    elif rule.regex is not None:
        value = _regex_value(text, rule)
    else:
        raise ExtractError("the claim's extract gives no method (json_pointer, csv or regex)")
    return _scaled(value, rule)


def _csv_value(text: str, rule: Extract) -> float:
    cell, where = _csv_cell(text, rule)
    return _number(cell, where)


def _csv_cell(text: str, rule: Extract) -> tuple[str, str]:
    """The text of the CSV cell ``rule`` selects, and where it is (for a message)."""
    spec = rule.csv
    assert spec is not None
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = reader.fieldnames or []
        rows = list(reader)
    except csv.Error as exc:
        raise ExtractError(f"is not valid CSV: {exc}") from None
    if spec.column not in header:
        raise ExtractError(f"has no column {spec.column!r} (columns: {', '.join(map(repr, header)) or 'none'})")
    if spec.where:
        missing = [k for k in spec.where if k not in header]
        if missing:
            raise ExtractError(f"has no column {missing[0]!r} named in 'where'")
        matches = [row for row in rows if all(row.get(k) == v for k, v in spec.where.items())]
        if len(matches) != 1:
            raise ExtractError(f"has {len(matches)} rows matching {spec.where!r}; exactly one is needed")
        row, where = matches[0], f"column {spec.column!r} of the row matching {spec.where!r}"
    else:
        index = spec.row_index if spec.row_index is not None else -1
        if not -len(rows) <= index < len(rows):
            raise ExtractError(f"has {len(rows)} data rows; row_index {index} is out of range")
        row, where = rows[index], f"column {spec.column!r} of row {index}"
    return row.get(spec.column) or "", where


def _regex_value(text: str, rule: Extract) -> float:
    group, where = _regex_group(text, rule)
    return _number(group, where)


def _regex_group(text: str, rule: Extract) -> tuple[str, str]:
    """The text of the group ``rule``'s regex captures, and where it is (for a message)."""
    spec = rule.regex
    assert spec is not None
    try:
        # The dialect of spec/02-manifest.md#regular-expressions: multi-line, ASCII classes, over
        # text whose line ends are LF (a log written on Windows matches the same pattern).
        pattern = compile_pattern(spec.pattern)
        text = normalise_newlines(text)
    except re.error as exc:
        raise ExtractError(f"regex {spec.pattern!r} is invalid: {exc}") from None
    if spec.group > pattern.groups:
        raise ExtractError(f"regex {spec.pattern!r} has no group {spec.group}")
    found = None
    for match in pattern.finditer(text):
        found = match
        if spec.occurrence == "first":
            break
    if found is None:
        raise ExtractError(f"has no match for regex {spec.pattern!r}")
    return found.group(spec.group) or "", f"the {spec.occurrence} match of {spec.pattern!r}"


def answer_from_json(document: Any, rule: Extract, kind: str) -> Answer:
    """The answer of ``kind`` ('string', 'set' or 'list') that ``rule`` (a JSON-pointer rule) reads
    from the parsed ``document``: a string, or an array of numbers and strings (numbers times
    ``rule.scale``)."""
    assert rule.json_pointer is not None
    node = json_pointer(document, rule.json_pointer)
    try:
        return parse_answer(node, kind, rule.scale)
    except AnswerError as exc:
        raise ExtractError(f"the value at {rule.json_pointer!r}: {exc}") from None


def extract_answer(path: Path, rule: Extract, kind: str) -> Answer:
    """The answer of a claim of ``kind`` ('string', 'set' or 'list') in the output file ``path``,
    read by ``rule`` as spec/02-manifest.md#kinds says: the JSON value at the pointer, or the text
    of the CSV cell or regex group (a set or list: a JSON array when it starts with '[', else
    items separated by commas; an item that reads as a number is one, times ``rule.scale``).
    Compare it with the expected answer by :func:`rra_tools.answers.answer_mismatch`.

    >>> import tempfile, pathlib
    >>> from rra_tools.model.manifest_view import ExtractSpec, RegexSpec
    >>> log = pathlib.Path(tempfile.mkdtemp()) / "run.log"
    >>> _ = log.write_text("best: adam, 0.5\\n")
    >>> extract_answer(log, ExtractSpec(stream="stdout", regex=RegexSpec("^best: (.*)$"), scale=100), "list")
    ('adam', 50.0)
    """
    if rule.json_pointer is not None:
        return answer_from_json(parse_json_output(path), rule, kind)
    text = _read_text(path)
    if rule.csv is not None:
        found, where = _csv_cell(text, rule)
    elif rule.regex is not None:
        found, where = _regex_group(text, rule)
    else:
        raise ExtractError("the claim's extract gives no method (json_pointer, csv or regex)")
    try:
        if kind == "string":
            return parse_answer(found.strip(), kind)
        items = [number if (number := as_decimal(item)) is not None else item for item in split_elements(found)]
        return parse_answer(items, kind, rule.scale)
    except AnswerError as exc:
        raise ExtractError(f"{where}: {exc}") from None
