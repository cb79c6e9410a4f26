"""``attempt.json``: what the evaluator knew about an attempt when it judged it (its window, the
workspace's snapshot at its start, the honeypot's decoys, the run journal), kept beside the
workspace so that ``rra bench score`` audits the workspace again exactly as the run did.

The file is the evaluator's own. One that is there but cannot be read whole is not skipped: an
audit without the snapshot, the window and the decoys would pass what they exist to catch, so
every value of the attempt then carries a confirmed finding (:func:`read_attempt`'s ``error``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...io.atomic import write_atomic
from ...io.journal import JournalError, read_journal
from .auditor import AuditContext
from ..workspace import FileState

__all__ = ["ATTEMPT_NAME", "JOURNAL_NAME", "read_attempt", "write_attempt"]

#: The attempt's file, in the cell's directory (beside the workspace).
ATTEMPT_NAME = "attempt.json"
#: The cell's run journal, in the cell's directory (hidden from the sandbox).
JOURNAL_NAME = "journal.jsonl"


def write_attempt(directory: Path, *, task: str, started: float, ended: float, decoys: Sequence[float],
                  before: Mapping[str, FileState], journal_head: str | None, workspace: Path) -> None:
    """Write ``directory/attempt.json`` for the attempt at ``task``; ``journal_head``: the run
    journal's last digest as the evaluator held it (None: no journal was kept)."""
    data: dict[str, Any] = {
        "task": task, "started": started, "ended": ended, "honeypot": list(decoys),
        "before": {rel: [s.size, s.mtime_ns, s.sha256] for rel, s in before.items()}}
    if journal_head is not None:
        data["journal"] = {"file": JOURNAL_NAME, "head": journal_head, "root": os.path.realpath(workspace)}
    write_atomic(directory / ATTEMPT_NAME, (json.dumps(data) + "\n").encode())


def journal_context(directory: Path, head: str | None, root: str) -> dict[str, Any]:
    """The :class:`AuditContext` fields of a cell's journal: its entries, or why it cannot be
    trusted; none when no journal was kept (``head`` None)."""
    if head is None:
        return {}
    try:
        return {"journal": read_journal(directory / JOURNAL_NAME, head), "journal_root": root}
    except JournalError as exc:
        return {"journal": [], "journal_root": root, "journal_error": str(exc)}


def read_attempt(workspace: Path, live: bool = False) -> tuple[AuditContext, str | None]:
    """The audit context of the workspace at ``workspace`` from the ``attempt.json`` beside it,
    and why that file, present, cannot be read (None when it was read, or is absent: a submission
    made elsewhere, audited without it)."""
    path = workspace.parent / ATTEMPT_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return AuditContext(workspace), None
    except (OSError, UnicodeDecodeError) as exc:
        return AuditContext(workspace), f"{path}: cannot be read: {exc}"
    try:
        data = json.loads(text)
        before = {str(rel): FileState(int(v[0]), int(v[1]), str(v[2])) for rel, v in data["before"].items()}
        fields: dict[str, Any] = {
            "before": before, "started": float(data["started"]), "ended": float(data["ended"]),
            "honeypots": {str(data["task"]): [float(d) for d in data["honeypot"]]}, "live": live}
        journal = data.get("journal")
        if journal is not None:
            fields.update(journal_context(path.parent, str(journal["head"]), str(journal["root"])))
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        return AuditContext(workspace), f"{path}: not an attempt file the evaluator wrote ({type(exc).__name__}: {exc})"
    return AuditContext(workspace, **fields), None
