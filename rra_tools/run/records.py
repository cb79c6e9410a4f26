"""Where runs go and how records are written: a fresh directory per run, atomic record files."""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path

from ..io.atomic import scratch_name

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any

__all__ = ["REDACTED", "SECRET_NAME", "StreamRedactor", "fresh_private_dir", "new_run_dir", "record_bytes", "redact",
           "redact_values", "utc_stamp"]

REDACTED = "[redacted]"
#: Environment variable names whose values are never recorded.
SECRET_NAME = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)


def fresh_private_dir(prefix: str) -> str:
    """Create a new directory only this user can enter in the first usable temporary directory
    ($TMPDIR, $TEMP, $TMP, /tmp, /var/tmp, the order ``tempfile`` uses); OSError from the last
    when none is usable."""
    bases = [os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")] + ["/tmp", "/var/tmp"]  # noqa: S108
    error: OSError | None = None
    for base in dict.fromkeys(b for b in bases if b):
        while True:
            path = os.path.join(base, scratch_name(prefix))
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                continue
            except OSError as exc:  # missing or not writable: try the next one
                error = exc
                break
            return path
    assert error is not None
    raise error


def redact(env: dict[str, str]) -> dict[str, str]:
    """``env`` with the values of secret-looking names replaced by '[redacted]'.

    >>> redact({"API_TOKEN": "abc", "LANG": "C.UTF-8"})
    {'API_TOKEN': '[redacted]', 'LANG': 'C.UTF-8'}
    """
    return {k: (REDACTED if SECRET_NAME.search(k) else v) for k, v in env.items()}


def redact_values(document: Any, values: list[str]) -> Any:
    """``document`` (plain JSON data) with every occurrence of each of ``values`` inside its
    strings, keys included, replaced by '[redacted]'.

    >>> redact_values({"argv": ["--token=s3cr3t"], "n": 1}, ["s3cr3t"])
    {'argv': ['--token=[redacted]'], 'n': 1}
    """
    values = sorted({v for v in values if v}, key=len, reverse=True)
    if not values:
        return document
    pattern = re.compile("|".join(map(re.escape, values)))

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            return pattern.sub(REDACTED, node)
        if isinstance(node, dict):
            return {walk(k): walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(document)


class StreamRedactor:
    """Replaces secret values in a byte stream that arrives in chunks, so that a log never holds
    one, even when a value is split across two reads.

    The last ``len(longest) - 1`` bytes of what has arrived are held back until more arrives
    (they may begin a value), and :meth:`flush` releases them at the end.

    >>> r = StreamRedactor(["hunter2"])
    >>> r.feed(b"pass=hun") + r.feed(b"ter2 ok") + r.flush()
    b'pass=[redacted] ok'
    """

    def __init__(self, values: list[str]) -> None:
        secrets = sorted({v.encode("utf-8") for v in values if v}, key=len, reverse=True)
        self.pattern = re.compile(b"|".join(map(re.escape, secrets))) if secrets else None
        self.keep = max((len(v) for v in secrets), default=1) - 1
        self.pending = b""

    def feed(self, chunk: bytes, final: bool = False) -> bytes:
        """The part of what has arrived that can be written now, redacted."""
        data = self.pending + chunk
        if self.pattern is None:
            self.pending = b""
            return data
        # Matches that start in the held-back tail wait: a longer value may begin there.
        limit = len(data) if final else max(0, len(data) - self.keep)
        out, pos = [], 0
        for match in self.pattern.finditer(data):
            if match.start() >= limit:
                break
            out += [data[pos:match.start()], REDACTED.encode()]
            pos = match.end()
        cut = max(pos, limit)
        out.append(data[pos:cut])
        self.pending = data[cut:]
        return b"".join(out)

    def flush(self) -> bytes:
        """Whatever is held back, redacted: the end of the stream."""
        return self.feed(b"", final=True)


def utc_stamp(moment: datetime) -> str:
    """ISO 8601 UTC with microseconds, e.g. '2026-01-31T12:00:00.123456Z'."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_run_dir(runs_dir: Path, launcher: str, seed: int | None, moment: datetime, repeat: int | None = None) -> Path:
    """Create ``runs/<launcher>/<seed|repeat-N|noseed>-<UTC timestamp>/``; never reuse an existing one."""
    parent = runs_dir / launcher
    parent.mkdir(parents=True, exist_ok=True)
    which = str(seed) if seed is not None else f"repeat-{repeat}" if repeat is not None else "noseed"
    base = f"{which}-{moment.astimezone(timezone.utc).strftime('%Y%m%dT%H%M%S.%fZ')}"
    for attempt in range(1000):
        candidate = parent / (base if attempt == 0 else f"{base}-{attempt}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        return candidate
    raise FileExistsError(f"cannot create a new run directory under {parent}")


def record_bytes(record: dict[str, Any]) -> bytes:
    """The record as written: JSON, two-space indent, UTF-8; NaN and infinities are refused
    (they are not JSON)."""
    return (json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
