"""Committing a finished run to the cell's run journal (:mod:`rra_tools.io.journal`), when ``rra
run`` runs inside a benchmark cell: one small POST to the metering proxy, the moment the record
is written.

Outside a cell (no :data:`~rra_tools.io.journal.JOURNAL_VARIABLE`) nothing is sent. A commit that
fails does not fail the run: its record is already written, and the auditor reports a record the
journal never saw, which is what such a record is.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from ..io.journal import JOURNAL_VARIABLE

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any

__all__ = ["COMMIT_TIMEOUT_S", "commit_record"]

#: Seconds a commit may take (the proxy answers from memory and one append).
COMMIT_TIMEOUT_S = 10.0


def commit_record(record_path: Path, data: bytes, record: Mapping[str, Any], root: Path | None = None,
                  environ: Mapping[str, str] | None = None) -> str | None:
    """Commit the record written at ``record_path`` (its bytes ``data``) to the journal that
    ``environ`` (default: this process's environment) names; ``root``: the artifact root its
    outputs' paths are relative to (default: the record's directory); why it could not, or None
    (also when no journal is named)."""
    url = (os.environ if environ is None else environ).get(JOURNAL_VARIABLE)
    if not url:
        return None
    # Imported here: http.client costs ~9 ms, and every 'rra run' outside a cell would pay it.
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        return f"{JOURNAL_VARIABLE}={url!r} is not an http:// URL"
    base = (root or record_path.parent).resolve()
    outputs: dict[str, str] = {}
    for out in record.get("outputs") or []:
        if isinstance(out, Mapping) and isinstance(out.get("path"), str) and isinstance(out.get("sha256"), str):
            outputs[os.path.normpath(base / out["path"])] = out["sha256"]
    body = json.dumps({"record": str(record_path.parent.resolve() / record_path.name), "sha256": hashlib.sha256(data).hexdigest(),
                       "ended": str(record.get("ended", "")), "outputs": outputs}).encode()
    connection = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=COMMIT_TIMEOUT_S)
    try:
        connection.request("POST", parts.path or "/", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        answer = response.read(4096)
        if response.status != 200:
            return f"the run journal refused the commit ({response.status}): {answer.decode(errors='replace')[:200]}"
    except OSError as exc:
        return f"the run journal at {url} cannot be reached: {exc}"
    finally:
        connection.close()
    return None
