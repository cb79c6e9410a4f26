"""``attempt.json`` written and read back: every field the audit needs, a file that is absent
(a submission made elsewhere), one that cannot be read or is not the evaluator's (an error, never
a silent audit without it), and the run journal it names, whole or broken."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rra_tools.bench.audit.attempt_file import ATTEMPT_NAME, JOURNAL_NAME, journal_context, read_attempt, write_attempt
from rra_tools.bench.workspace import FileState
from rra_tools.io.journal import Journal

DIGEST = "ab" * 32


def _write(cell: Path, head: str | None = None) -> Path:
    ws = cell / "workspace"
    ws.mkdir(parents=True)
    write_attempt(cell, task="p/e/t", started=10.5, ended=20.25, decoys=[0.1234567, 0.7654321],
                  before={"a.py": FileState(3, 1_000_000_001, DIGEST)}, journal_head=head, workspace=ws)
    return ws


def test_an_attempt_reads_back_as_it_was_written(tmp_path: Path) -> None:
    ws = _write(tmp_path)
    data = json.loads((tmp_path / ATTEMPT_NAME).read_text())
    assert "journal" not in data
    ctx, error = read_attempt(ws)
    assert error is None
    assert (ctx.workspace, ctx.started, ctx.ended, ctx.live) == (ws, 10.5, 20.25, False)
    assert ctx.before == {"a.py": FileState(3, 1_000_000_001, DIGEST)}
    assert {k: list(v) for k, v in ctx.honeypots.items()} == {"p/e/t": [0.1234567, 0.7654321]}
    assert (ctx.journal, ctx.journal_root, ctx.journal_error) == (None, None, None)
    assert read_attempt(ws, live=True)[0].live is True


def test_no_attempt_file_is_an_audit_without_it_and_no_error(tmp_path: Path) -> None:
    ws = tmp_path / "workspace"
    ws.mkdir()
    ctx, error = read_attempt(ws)
    assert error is None and ctx.workspace == ws
    assert (ctx.before, ctx.started, ctx.ended, dict(ctx.honeypots), ctx.journal) == (None, None, None, {}, None)


@pytest.mark.parametrize("damage", ["directory", "not utf-8"])
def test_an_attempt_file_that_cannot_be_read_is_an_error(tmp_path: Path, damage: str) -> None:
    ws = tmp_path / "workspace"
    ws.mkdir()
    if damage == "directory":
        (tmp_path / ATTEMPT_NAME).mkdir()
    else:
        (tmp_path / ATTEMPT_NAME).write_bytes(b'{"task": "\xff"}')
    ctx, error = read_attempt(ws)
    assert error is not None and error.startswith(f"{tmp_path / ATTEMPT_NAME}: cannot be read: ")
    assert ctx.before is None and ctx.started is None


@pytest.mark.parametrize(("key", "value", "why"), [
    ("before", None, "KeyError: 'before'"), ("honeypot", None, "KeyError: 'honeypot'"),
    ("started", "soon", "ValueError"), ("before", {"a.py": [1, 2]}, "IndexError"),
    ("journal", {"head": DIGEST}, "KeyError: 'root'"), ("before", [], "AttributeError"),
    ("honeypot", 5, "TypeError")])
def test_an_attempt_file_the_evaluator_did_not_write_is_an_error(tmp_path: Path, key: str, value: object,
                                                                 why: str) -> None:
    ws = _write(tmp_path)
    data = json.loads((tmp_path / ATTEMPT_NAME).read_text())
    if value is None:
        del data[key]
    else:
        data[key] = value
    (tmp_path / ATTEMPT_NAME).write_text(json.dumps(data))
    ctx, error = read_attempt(ws)
    assert error is not None
    assert error.startswith(f"{tmp_path / ATTEMPT_NAME}: not an attempt file the evaluator wrote ({why}")
    assert ctx.before is None and ctx.started is None and ctx.journal is None


def test_the_journal_it_names_is_read_with_its_head(tmp_path: Path) -> None:
    journal = Journal(tmp_path / JOURNAL_NAME)
    journal.append("/w/runs/r/record.json", DIGEST, "2026-12-05T00:00:00Z", {})
    head = journal.head
    journal.close()
    ws = _write(tmp_path, head)
    data = json.loads((tmp_path / ATTEMPT_NAME).read_text())
    assert data["journal"] == {"file": JOURNAL_NAME, "head": head, "root": os.path.realpath(ws)}
    ctx, error = read_attempt(ws)
    assert error is None and ctx.journal_error is None and ctx.journal_root == os.path.realpath(ws)
    assert [e.record for e in ctx.journal or []] == ["/w/runs/r/record.json"]
    # A head the journal does not end in: the journal cannot be trusted, and the audit says why.
    data["journal"]["head"] = "cd" * 32
    (tmp_path / ATTEMPT_NAME).write_text(json.dumps(data))
    ctx, error = read_attempt(ws)
    assert error is None and ctx.journal == [] and ctx.journal_root == os.path.realpath(ws)
    assert ctx.journal_error is not None and "not in the cdcdcdcdcdcd... the evaluator kept" in ctx.journal_error


def test_a_cell_without_a_journal_adds_nothing_to_the_context(tmp_path: Path) -> None:
    # rra bench run judges a cell kept without a journal (no proxy) with journal_context(..., None, ...).
    assert journal_context(tmp_path, None, str(tmp_path)) == {}
