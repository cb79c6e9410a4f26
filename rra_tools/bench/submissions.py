"""Reading a submission leniently: a file that cannot be read is a parse failure of every task
it should have covered, and one bad entry is a parse failure of its own task only, so that one
typo does not silently remove the other values from the benchmark."""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from ..answers import Answer, AnswerError, parse_answer
from ..model.submission import DeclaredChange, Submission, SubmittedValue, Usage

__all__ = ["MAX_SUBMISSION_BYTES", "AnswerEntry", "Entry", "EvidencePaths", "ReadSubmission", "read_submission"]

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
    #: Task key -> its entry (a number, or a string or list answer: :class:`AnswerEntry`), or why
    #: the entry cannot be read.
    values: dict[str, Entry | AnswerEntry | str] = field(default_factory=dict)


def _message(exc: ValidationError) -> str:
    error = exc.errors()[0]
    loc = "/".join(str(part) for part in error["loc"])
    return f"at /{loc}: {error['msg']}" if loc else f"({error['msg']})"


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


_TASK_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}/[A-Za-z0-9][A-Za-z0-9._-]{0,127}"
                       r"/[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_EVIDENCE_KEYS = frozenset({"run_record", "output", "script"})


class EvidencePaths(NamedTuple):
    """An entry's evidence (the fields of :class:`~rra_tools.model.submission.Evidence`)."""

    run_record: str | None
    output: str | None
    script: str | None


class Entry(NamedTuple):
    """One submitted value as the evaluator uses it: the fields of
    :class:`~rra_tools.model.submission.SubmittedValue`, held in a tuple (a submission of 100,000
    values is read in a fraction of the time building a model per value takes)."""

    task: str
    value: float
    evidence: EvidencePaths | None


class AnswerEntry(NamedTuple):
    """A submitted answer that is not a number (RRA 1.2, claims of kind string, set or list): a
    string, or a JSON array read as a tuple of numbers and strings. Only a task whose claim is of
    such a kind scores it (:func:`rra_tools.bench.scoring.score_value`); for a number claim it is a
    parse failure, as a string value always was."""

    task: str
    value: Answer
    evidence: EvidencePaths | None
    #: Its place in the submission's 'values' (a parse failure names it: 'values/3: ...').
    position: int = 0

    def not_a_number(self) -> str:
        """Why it is no value of a number claim (the parse failure's detail)."""
        if isinstance(self.value, str):
            return f"values/{self.position}: value {self.value!r} is a string, not a JSON number"
        return f"values/{self.position}: value {json.dumps(list(self.value))[:80]} is a JSON array, not a JSON number"


def _plain_entry(raw: dict[str, Any]) -> Entry | None:
    """The entry when it has the plain shape the schema allows, checked here; None otherwise (the
    model then validates it and words the error)."""
    task, value, evidence = raw.get("task"), raw.get("value"), raw.get("evidence")
    if (len(raw) > 3 or not raw.keys() <= {"task", "value", "evidence"} or not isinstance(task, str)
            or not _TASK_KEY.fullmatch(task) or not isinstance(value, (int, float)) or isinstance(value, bool)
            or not math.isfinite(value)):
        return None
    paths = None
    if evidence is not None:
        if (not isinstance(evidence, dict) or not evidence.keys() <= _EVIDENCE_KEYS
                or not all(isinstance(v, str) and 0 < len(v) <= 4096 for v in evidence.values())):
            return None
        paths = EvidencePaths(evidence.get("run_record"), evidence.get("output"), evidence.get("script"))
    return Entry(task, float(value), paths)


def _entry(raw: object, index: int = 0) -> tuple[str | None, Entry | AnswerEntry | str]:
    task = raw.get("task") if isinstance(raw, dict) else None
    key = task if isinstance(task, str) else None
    if isinstance(raw, dict):
        plain = _plain_entry(raw)
        if plain is not None:
            return key, plain
    if isinstance(raw, dict) and isinstance(raw.get("value"), list) and any(isinstance(v, bool) for v in raw["value"]):
        # pydantic would take true for 1.0 in a list as well.
        return key, f"value {json.dumps(raw['value'])[:80]} holds a boolean, not a number or a string"
    if isinstance(raw, dict) and isinstance(raw.get("value"), bool):
        # pydantic would take true for 1.0: a boolean is not a value.
        return key, f"value {json.dumps(raw['value'])} is a boolean, not a number"
    try:
        model = SubmittedValue.model_validate(raw)
    except ValidationError as exc:
        return key, f"entry is invalid {_message(exc)}"
    if isinstance(model.value, float) and not math.isfinite(model.value):
        return key, f"value {model.value!r} is not finite"
    ev = model.evidence
    paths = None if ev is None else EvidencePaths(ev.run_record, ev.output, ev.script)
    value = model.value
    if isinstance(value, (str, list)):
        try:
            answer = parse_answer(value, "string" if isinstance(value, str) else "list")
        except AnswerError as exc:
            return key, f"value: {exc}"
        return key, AnswerEntry(model.task, answer, paths, index)
    return key, Entry(model.task, value, paths)


def _read_regular(path: Path) -> bytes | str:
    """The bytes of ``path`` when it is a regular file of at most MAX_SUBMISSION_BYTES, else what
    it is instead (a phrase: 'is a FIFO, not a regular file'). OSError when it cannot be opened.

    Written by a process the evaluator does not trust: opened without following a link (a link
    could name the references) and without blocking (a FIFO would hang the evaluator for ever),
    then checked on the open file itself, so a swap after the check changes nothing."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link, not a regular file"
        raise
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a directory" if stat.S_ISDIR(st.st_mode) else \
                "a socket" if stat.S_ISSOCK(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or \
                stat.S_ISBLK(st.st_mode) else "not a regular file"
            return f"is {kind}, not a regular file"
        if st.st_size > MAX_SUBMISSION_BYTES:
            return f"is larger than {MAX_SUBMISSION_BYTES} bytes"
        data = handle.read(MAX_SUBMISSION_BYTES + 1)
    if len(data) > MAX_SUBMISSION_BYTES:
        return f"is larger than {MAX_SUBMISSION_BYTES} bytes"
    return data


def read_submission(path: Path) -> ReadSubmission:
    """The submission at ``path``; never raises for bad content (see :class:`ReadSubmission`)."""
    out = ReadSubmission(path)
    try:
        raw = _read_regular(path)
    except FileNotFoundError:
        out.error = "does not exist"
        return out
    except OSError as exc:
        out.error = f"cannot be read: {exc}"
        return out
    if isinstance(raw, str):
        out.error = raw
        return out
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
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
        key, entry = _entry(raw, index)
        if key is None:
            continue  # an entry naming no task cannot be given to one; it counts as no value
        if isinstance(entry, str):
            entry = f"values/{index}: {entry}"
        if key in out.values:
            out.values[key] = f"values/{index}: task {key!r} is given twice"
            continue
        out.values[key] = entry
    return out
