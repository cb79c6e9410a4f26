"""The run journal: what each run's record and outputs were when the run ended, committed at that
moment to a place the reproducer cannot rewrite (docs/bench.md#the-run-journal).

``rra run`` inside a benchmark cell posts one entry per finished run to the cell's metering
proxy (:data:`JOURNAL_VARIABLE` names where, :data:`JOURNAL_PATH` is the proxy's path for it):
the record's path and digest, its ``ended`` time and its outputs' digests. The proxy lives
outside the sandbox; it stamps each entry with its own clock and appends it to the cell's
journal file, in the cell's directory, which the sandbox hides. Each entry carries the digest of
the one before it and its own (a hash chain), and the evaluator keeps the last digest (the
*head*) in memory: a cell run without a sandbox, whose reproducer could reach the file, cannot
rewrite it without the chain or the head giving it away.

The auditor then compares every run record it traces with the journal: a record whose bytes the
journal did not commit was edited after its run (or never written by ``rra run`` in the cell),
whatever the delay and whichever field changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from ..errors import ExitStatus
from ..plain import Frozen
from .errors import IOLayerError

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any

__all__ = ["GENESIS", "JOURNAL_PATH", "JOURNAL_VARIABLE", "MAX_ENTRIES", "Journal", "JournalEntry", "JournalError",
           "entry_from_request", "read_journal"]

#: The environment variable that tells ``rra run`` where to commit its records (a URL).
JOURNAL_VARIABLE = "RRA_RUN_JOURNAL"
#: The proxy's path that receives commits (never forwarded upstream, never metered).
JOURNAL_PATH = "/rra/journal"
#: The ``prev`` of the first entry.
GENESIS = "0" * 64
#: Entries one journal accepts (a reproducer posting in a loop must not fill the disk).
MAX_ENTRIES = 100_000
_HEX = frozenset("0123456789abcdef")


class JournalError(IOLayerError):
    """A journal file that is not a whole, unbroken chain, or a commit that cannot be read."""

    exit_status = ExitStatus.FAILED


class JournalEntry(Frozen):
    """One committed run: ``record`` is the record's absolute path as the run saw it. Its fields
    cannot be reassigned (FrozenInstanceError, as a frozen dataclass's)."""

    __slots__ = ("seq", "at", "record", "sha256", "ended", "outputs", "prev", "hash")

    def __init__(self, seq: int, at: float, record: str, sha256: str, ended: str,
                 outputs: Mapping[str, str] | None = None, prev: str = GENESIS,
                 hash: str = "") -> None:  # noqa: A002 (the entry's JSON key, as the dataclass field was)
        for name, value in (("seq", seq), ("at", at), ("record", record), ("sha256", sha256), ("ended", ended),
                            ("outputs", {} if outputs is None else outputs), ("prev", prev), ("hash", hash)):
            object.__setattr__(self, name, value)

    if not TYPE_CHECKING:  # mypy reads the fields from __init__'s types; at run time they are read-only
        def __setattr__(self, name: str, value: object) -> None:
            self._refuse_assignment(name)

    # The fields' types, for mypy (object.__setattr__ above sets them).
    seq: int
    at: float
    record: str
    sha256: str
    ended: str
    outputs: Mapping[str, str]
    prev: str
    hash: str

    def body(self) -> dict[str, Any]:
        """The entry's fields but its own digest (what that digest is taken over)."""
        return {"seq": self.seq, "at": self.at, "record": self.record, "sha256": self.sha256, "ended": self.ended,
                "outputs": dict(self.outputs), "prev": self.prev}


def _digest(body: Mapping[str, Any]) -> str:
    """The entry's own digest: SHA-256 of its canonical JSON (sorted keys, no spaces), which holds
    the previous entry's digest."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _is_digest(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


def entry_from_request(data: object) -> tuple[str, str, str, dict[str, str]]:
    """(record, sha256, ended, outputs) of a commit's JSON body; JournalError saying what is wrong.

    >>> entry_from_request({"record": "/w/r.json", "sha256": "a" * 64, "ended": "2026-01-01T00:00:00Z",
    ...                     "outputs": {"out/m.json": "b" * 64}})[0]
    '/w/r.json'
    >>> entry_from_request({"record": "/w/r.json"})
    Traceback (most recent call last):
    ...
    rra_tools.io.journal.JournalError: a commit needs 'record', 'sha256' (64 hex digits) and 'ended'
    """
    if not isinstance(data, Mapping):
        raise JournalError("a commit is a JSON object")
    record, sha256, ended, outputs = data.get("record"), data.get("sha256"), data.get("ended"), data.get("outputs", {})
    if not (isinstance(record, str) and record and len(record) <= 4096 and _is_digest(sha256)
            and isinstance(ended, str) and len(ended) <= 64):
        raise JournalError("a commit needs 'record', 'sha256' (64 hex digits) and 'ended'")
    if not isinstance(outputs, Mapping) or len(outputs) > 10_000 or not all(
            isinstance(k, str) and len(k) <= 4096 and _is_digest(v) for k, v in outputs.items()):
        raise JournalError("a commit's 'outputs' maps each output's path to its digest (64 hex digits)")
    assert isinstance(sha256, str)
    return record, sha256, ended, {str(k): str(v) for k, v in outputs.items()}


def _parse(line: str, where: str) -> JournalEntry:
    try:
        data = json.loads(line)
        entry = JournalEntry(seq=int(data["seq"]), at=float(data["at"]), record=str(data["record"]),
                             sha256=str(data["sha256"]), ended=str(data["ended"]),
                             outputs={str(k): str(v) for k, v in dict(data["outputs"]).items()},
                             prev=str(data["prev"]), hash=str(data["hash"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise JournalError(f"{where}: not a journal entry ({exc})") from None
    return entry


def read_journal(path: Path, head: str | None = None) -> list[JournalEntry]:
    """Every entry of the journal at ``path``, its chain checked (each entry's digest, each
    ``prev`` the digest before it, ``seq`` counting from 1) and, when given, its last digest equal
    to ``head`` (what the evaluator kept); JournalError naming the first line that breaks it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise JournalError(f"{path}: the run journal cannot be read: {exc}") from None
    entries: list[JournalEntry] = []
    prev = GENESIS
    for number, line in enumerate(text.splitlines(), 1):
        where = f"{path}:{number}:1"
        entry = _parse(line, where)
        if entry.prev != prev or entry.seq != len(entries) + 1 or _digest(entry.body()) != entry.hash:
            raise JournalError(f"{where}: the run journal's chain is broken at entry {entry.seq} (it was edited, "
                               "reordered or cut after it was written)")
        entries.append(entry)
        prev = entry.hash
    if head is not None and prev != head:
        raise JournalError(f"{path}: the run journal ends in {prev[:12]}..., not in the {head[:12]}... the evaluator "
                           "kept: entries were removed or the file was rewritten")
    return entries


class Journal:
    """A journal file, appended to by one writer at a time (the cell's proxy), from several threads.

    An existing file is continued (a cell whose commands run one after another, as Inspect's
    sandbox calls do, keeps one journal): its chain is checked first, and its last digest must be
    ``head``, the one the evaluator kept from the writer before (JournalError otherwise: someone
    else wrote to it in between)."""

    def __init__(self, path: Path, head: str | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        held = read_journal(path, head) if path.exists() else []
        if head is not None and not held and head != GENESIS:
            raise JournalError(f"{path}: the run journal is gone or empty, but the evaluator kept {head[:12]}... "
                               "as its last digest")
        self._count = len(held)
        self._head = held[-1].hash if held else GENESIS
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        try:
            self._fd = os.open(path, flags, 0o600)
        except OSError as exc:
            raise JournalError(f"{path}: the run journal cannot be opened: {exc}") from None

    @property
    def head(self) -> str:
        """The last entry's digest (:data:`GENESIS` while it is empty)."""
        with self._lock:
            return self._head

    def append(self, record: str, sha256: str, ended: str, outputs: Mapping[str, str]) -> JournalEntry:
        """Commit one run, stamped now by this process's clock; JournalError once it is full."""
        with self._lock:
            if self._count >= MAX_ENTRIES:
                raise JournalError(f"the run journal holds {MAX_ENTRIES} entries and takes no more")
            body = JournalEntry(seq=self._count + 1, at=time.time(), record=record, sha256=sha256, ended=ended,
                                outputs=dict(outputs), prev=self._head).body()
            digest = _digest(body)
            line = json.dumps({**body, "hash": digest}, sort_keys=True) + "\n"
            # One write of a whole line to an O_APPEND file: a reader never sees half an entry.
            os.write(self._fd, line.encode())
            self._count += 1
            self._head = digest
            return JournalEntry(**{**body, "hash": digest})

    def close(self) -> None:
        """Close the file (entries already appended stay: each was one whole write)."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
