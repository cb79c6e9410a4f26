"""The run journal's file: a hash chain that any edit, reordering or cut breaks, continued by
several writers of one cell (one chain), and commits checked before they are written."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from rra_tools.io.journal import GENESIS, Journal, JournalError, entry_from_request, read_journal

DIGEST = "ab" * 32


def _journal(path: Path, n: int = 3) -> str:
    journal = Journal(path)
    for i in range(n):
        journal.append(f"/w/runs/{i}/record.json", DIGEST, f"2026-12-05T00:00:0{i}Z", {"/w/out/m.json": DIGEST})
    head = journal.head
    journal.close()
    return head


def test_a_whole_chain_reads_back(tmp_path: Path) -> None:
    head = _journal(tmp_path / "j.jsonl")
    entries = read_journal(tmp_path / "j.jsonl", head)
    assert [e.seq for e in entries] == [1, 2, 3] and entries[0].prev == GENESIS
    assert entries[1].prev == entries[0].hash and entries[-1].hash == head


@pytest.mark.parametrize("edit", ["field", "reorder", "cut-last", "cut-first", "rechain-tail"])
def test_any_edit_breaks_the_chain_or_the_head(tmp_path: Path, edit: str) -> None:
    path = tmp_path / "j.jsonl"
    head = _journal(path)
    lines = path.read_text().splitlines()
    if edit == "field":
        entry = json.loads(lines[1])
        entry["sha256"] = "cd" * 32
        lines[1] = json.dumps(entry, sort_keys=True)
    elif edit == "reorder":
        lines[0], lines[1] = lines[1], lines[0]
    elif edit == "cut-last":
        lines = lines[:-1]
    elif edit == "cut-first":
        lines = lines[1:]
    else:
        # The last entry removed and a new one chained properly in its place: only the head the
        # evaluator kept tells.
        path.write_text("\n".join(lines[:-1]) + "\n")
        journal = Journal(path)
        journal.append("/w/runs/x/record.json", "cd" * 32, "2026-12-05T00:00:09Z", {})
        journal.close()
        lines = path.read_text().splitlines()
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(JournalError):
        read_journal(path, head)


def test_threads_of_one_writer_keep_one_chain(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal(path)

    def commit(k: int) -> None:
        for i in range(25):
            journal.append(f"/w/runs/{k}-{i}/record.json", DIGEST, "2026-12-05T00:00:00Z", {})

    threads = [threading.Thread(target=commit, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    entries = read_journal(path, journal.head)
    assert len(entries) == 100 and len({e.record for e in entries}) == 100
    journal.close()


def test_a_journal_continued_must_end_where_the_evaluator_left_it(tmp_path: Path) -> None:
    """A cell's next command continues the journal from the digest the evaluator kept: an entry
    appended in between by anyone else (properly chained or not) is refused, as is a journal gone."""
    path = tmp_path / "j.jsonl"
    head = _journal(path, 2)
    again = Journal(path, head)
    again.append("/w/runs/9/record.json", DIGEST, "2026-12-05T00:00:09Z", {})
    again.close()
    with pytest.raises(JournalError, match="not in the"):
        Journal(path, head)
    path.unlink()
    with pytest.raises(JournalError, match="gone or empty"):
        Journal(path, head)


@pytest.mark.parametrize("body", [[], {"record": "/r", "sha256": "xyz", "ended": "t"},
                                  {"record": "", "sha256": DIGEST, "ended": "t"},
                                  {"record": "/r", "sha256": DIGEST, "ended": "t", "outputs": {"/o": "nope"}},
                                  {"record": "/r", "sha256": DIGEST, "ended": "t", "outputs": []}])
def test_a_malformed_commit_is_refused(body: object) -> None:
    with pytest.raises(JournalError):
        entry_from_request(body)


def test_the_proxy_takes_commits_and_refuses_garbage(tmp_path: Path) -> None:
    """The metering proxy answers /rra/journal itself: a commit is appended (200, its seq and
    digest), a malformed one refused (400) and nothing written; neither is a metered call."""
    import http.client

    from rra_tools.agents.proxy import MeteringProxy, ProxySettings, load_price_table

    settings = ProxySettings(upstreams={}, keys={}, prices=load_price_table(None), call_log=tmp_path / "calls.jsonl",
                             journal=tmp_path / "j.jsonl")
    with MeteringProxy(settings, tcp=("127.0.0.1", 0)) as proxy:
        assert proxy.tcp_address is not None
        answers = []
        for body in (b"{not json", json.dumps({"record": "/w/r.json", "sha256": "x"}).encode(),
                     json.dumps({"record": "/w/r.json", "sha256": DIGEST, "ended": "t", "outputs": {}}).encode()):
            connection = http.client.HTTPConnection(*proxy.tcp_address, timeout=5)
            connection.request("POST", "/rra/journal", body=body, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            answers.append((response.status, json.loads(response.read())))
            connection.close()
        head = proxy.journal_head
        assert proxy.usage().calls == 0
    assert [status for status, _ in answers] == [400, 400, 200]
    assert answers[2][1] == {"seq": 1, "hash": head}
    (entry,) = read_journal(tmp_path / "j.jsonl", head)
    assert (entry.record, entry.sha256) == ("/w/r.json", DIGEST)
