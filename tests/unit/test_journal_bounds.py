"""The run journal at its bounds and in its exact format: the sizes a commit may have (at the
limit and one past it), the cap on entries, digests with every hex digit, the chain's digest as
docs/bench.md#the-run-journal defines it (SHA-256 of the canonical JSON), the genesis value,
entries that cannot be changed, and a journal closed twice."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rra_tools.io.journal import GENESIS, MAX_ENTRIES, Journal, JournalError, entry_from_request, read_journal

DIGEST = "0123456789abcdef" * 4


def _commit(**change: object) -> dict[str, object]:
    return {"record": "/w/r.json", "sha256": DIGEST, "ended": "2026-12-05T00:00:00Z", "outputs": {}, **change}


def test_a_commit_at_each_bound_is_taken_and_one_past_it_refused() -> None:
    # A digest may use all sixteen hex digits.
    assert entry_from_request(_commit()) == ("/w/r.json", DIGEST, "2026-12-05T00:00:00Z", {})
    for field_, limit in (("record", 4096), ("ended", 64)):
        assert entry_from_request(_commit(**{field_: "x" * limit}))
        with pytest.raises(JournalError, match="a commit needs"):
            entry_from_request(_commit(**{field_: "x" * (limit + 1)}))
    assert entry_from_request(_commit(outputs={"o" * 4096: DIGEST}))[3] == {"o" * 4096: DIGEST}
    many = {f"/w/out/{i}": DIGEST for i in range(10_000)}
    assert len(entry_from_request(_commit(outputs=many))[3]) == 10_000
    for outputs in ({"o" * 4097: DIGEST}, {**many, "/w/one-more": DIGEST}, {"/w/o": "xyz"}, {5: DIGEST},
                    {"/w/o": DIGEST.upper()}):
        with pytest.raises(JournalError, match="a commit's 'outputs'"):
            entry_from_request(_commit(outputs=outputs))


def test_the_cap_on_entries(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.jsonl")
    journal._count = MAX_ENTRIES - 1  # as if 99,999 entries were there
    assert journal.append("/w/r.json", DIGEST, "e", {}).seq == 100_000
    with pytest.raises(JournalError, match="the run journal holds 100000 entries and takes no more"):
        journal.append("/w/r.json", DIGEST, "e", {})
    journal.close()


def test_the_file_format_and_the_chain_digest(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal(path)
    first = journal.append("/w/a.json", DIGEST, "e1", {"/w/out": DIGEST})
    second = journal.append("/w/b.json", DIGEST, "e2", {})
    journal.close()
    lines = path.read_text().splitlines()
    data = [json.loads(line) for line in lines]
    # One canonical line per entry (sorted keys); the first links to 64 zeros.
    assert lines == [json.dumps(d, sort_keys=True) for d in data]
    assert GENESIS == "0" * 64 and data[0]["prev"] == "0" * 64 and data[1]["prev"] == data[0]["hash"]
    for entry, line in zip((first, second), data):
        body = {k: v for k, v in line.items() if k != "hash"}
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
        assert line["hash"] == entry.hash == hashlib.sha256(canonical).hexdigest()
    assert [e.seq for e in read_journal(path, second.hash)] == [1, 2]
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.seq = 5  # type: ignore[misc]


def test_a_head_not_matched_is_named_by_its_first_twelve_digits(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal(path)
    last = journal.append("/w/a.json", DIGEST, "e", {}).hash
    journal.close()
    with pytest.raises(JournalError) as caught:
        read_journal(path, "ab" * 32)
    assert str(caught.value) == (f"{path}: the run journal ends in {last[:12]}..., not in the abababababab... the "
                                 "evaluator kept: entries were removed or the file was rewritten")


def test_a_journal_on_descriptor_0_is_closed_once_and_nothing_else_is(tmp_path: Path) -> None:
    # With standard input closed the journal's file gets descriptor 0; closing the journal closes
    # it, and closing it again closes nothing (standard output, descriptor 1, stays open).
    script = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from rra_tools.io.journal import Journal\n"
        "os.close(0)\n"
        f"j = Journal(Path({str(tmp_path / 'j.jsonl')!r}))\n"
        "assert j._fd == 0, j._fd\n"
        "j.close(); j.close()\n"
        "try:\n    os.fstat(0)\nexcept OSError:\n    pass\nelse:\n    raise SystemExit('descriptor 0 still open')\n"
        "os.fstat(1)\n"
        "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr


def test_a_broken_chain_is_named_by_its_line(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal(path)
    for name in "abc":
        journal.append(f"/w/{name}.json", DIGEST, "e", {})
    journal.close()
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace("/w/b.json", "/w/x.json")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(JournalError) as caught:
        read_journal(path)
    assert str(caught.value) == (f"{path}:2:1: the run journal's chain is broken at entry 2 (it was edited, "
                                 "reordered or cut after it was written)")
    path.write_text(lines[0] + "\nnot json\n")
    with pytest.raises(JournalError, match=r":2:1: not a journal entry"):
        read_journal(path)
