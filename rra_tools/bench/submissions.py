"""Reading a submission leniently: a file that cannot be read is a parse failure of every task
it should have covered, and one bad entry is a parse failure of its own task only, so that one
typo does not silently remove the other values from the benchmark."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..model.submission import DeclaredChange, Submission, SubmittedValue, Usage

__all__ = ["MAX_SUBMISSION_BYTES", "ReadSubmission", "read_submission"]

#: A submission larger than this is not read (a parse failure).
MAX_SUBMISSION_BYTES = 256 * 1024 * 1024


@dataclass
class ReadSubmission:
    """What a submission says, entry by entry; ``error`` when the whole file cannot be read."""

    path: Path
    error: str | None = None
    reproducer: str | None = None
    condition: str | None = None
    repeat: int | None = None
    usage: Usage | None = None
    changes: list[DeclaredChange] = field(default_factory=list)
    #: Task key -> its entry, or why the entry cannot be read.
    values: dict[str, SubmittedValue | str] = field(default_factory=dict)


def _message(exc: ValidationError) -> str:
    error = exc.errors()[0]
    loc = "/".join(str(part) for part in error["loc"])
    return f"at /{loc}: {error['msg']}" if loc else str(error["msg"])


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _entry(raw: object) -> tuple[str | None, SubmittedValue | str]:
    task = raw.get("task") if isinstance(raw, dict) else None
    key = task if isinstance(task, str) else None
    if isinstance(raw, dict) and isinstance(raw.get("value"), str):
        return key, f"value {raw['value']!r} is a string, not a JSON number"
    try:
        return key, SubmittedValue.model_validate(raw)
    except ValidationError as exc:
        return key, f"entry is invalid {_message(exc)}"


def read_submission(path: Path) -> ReadSubmission:
    """The submission at ``path``; never raises for bad content (see :class:`ReadSubmission`)."""
    out = ReadSubmission(path)
    try:
        if path.stat().st_size > MAX_SUBMISSION_BYTES:
            out.error = f"is larger than {MAX_SUBMISSION_BYTES} bytes"
            return out
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        out.error = "does not exist"
        return out
    except (OSError, UnicodeDecodeError) as exc:
        out.error = f"cannot be read: {exc}"
        return out
    try:
        data = json.loads(text, parse_constant=_no_constants)
    except (ValueError, RecursionError) as exc:
        out.error = f"is not valid JSON: {exc}"
        return out
    if not isinstance(data, dict):
        out.error = f"is a JSON {type(data).__name__}, not an object"
        return out
    entries = data.get("values", [])
    if not isinstance(entries, list):
        out.error = "'values' is not a list"
        return out
    try:
        head = Submission.model_validate({**data, "values": []})
    except ValidationError as exc:
        out.error = f"is invalid {_message(exc)}"
        return out
    out.reproducer, out.condition, out.repeat = head.reproducer, head.condition, head.repeat
    out.usage, out.changes = head.usage, list(head.changes)
    for index, raw in enumerate(entries):
        key, entry = _entry(raw)
        if key is None:
            continue  # an entry naming no task cannot be given to one; it counts as no value
        if isinstance(entry, SubmittedValue) and not math.isfinite(entry.value):
            entry = f"value {entry.value!r} is not finite"
        if isinstance(entry, str):
            entry = f"values/{index}: {entry}"
        if key in out.values:
            out.values[key] = f"values/{index}: task {key!r} is given twice"
            continue
        out.values[key] = entry
    return out
