"""The call log: one JSON line per request the proxy handled, written outside the sandbox.

Each line is appended and flushed as soon as the call ends, so the log is complete up to the
last call even if the evaluator is killed. Fields: ``time`` (when the request arrived, UTC ISO
8601), ``provider``, ``protocol``, ``path`` (no query string: it may hold a key), ``model``,
``stream``, ``metered`` (a model call, not a count of tokens or a list of models), ``status``
(the HTTP status the client got), ``latency_s`` (arrival to the complete answer at the proxy),
``ttfb_s`` (arrival to the first byte of the answer sent on), the five normalised token figures
(:mod:`.usage`), ``cost_usd`` (None when unpriced), ``retries``, ``stripped_tools`` and
``error`` (None, or why the call failed or was refused). Keys never appear in it.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType

from .errors import ProxyError

__all__ = ["CallLog", "CallRecord", "utc_now"]


def utc_now() -> str:
    """The current time, UTC, ISO 8601 with milliseconds and a ``Z``."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class CallRecord:
    """One line of the call log (see the module docstring for each field)."""

    time: str
    provider: str
    protocol: str
    path: str
    model: str | None = None
    stream: bool = False
    metered: bool = True
    status: int = 0
    latency_s: float = 0.0
    ttfb_s: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = None
    retries: int = 0
    stripped_tools: list[str] = field(default_factory=list)
    error: str | None = None


class CallLog:
    """The append-only JSON-lines file of one proxy; :meth:`write` is thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 (held open for the proxy's life)
        except OSError as error:
            raise ProxyError(f"call log {str(path)!r} cannot be opened for appending: {error}") from None
        self._lock = threading.Lock()

    def write(self, record: CallRecord) -> None:
        """Append ``record`` as one line and flush it."""
        line = json.dumps(asdict(record), separators=(",", ":")) + "\n"
        with self._lock:
            if not self._file.closed:
                self._file.write(line)
                self._file.flush()

    def close(self) -> None:
        """Close the file (later writes are dropped)."""
        with self._lock:
            self._file.close()

    def __enter__(self) -> CallLog:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()
