"""The metering proxy: an HTTP server on a Unix socket and/or a TCP port that forwards a cell's
model calls to the real upstreams, with the real keys, and meters every answer.

Why the standard library: the proxy sits on every model call of every cell, so it must add
little latency (a few hundred microseconds: one thread per client connection, kept-alive
upstream connections, no decoding of a request that needs no change) and it must run on a
cluster node where nothing can be installed. ``http.server`` parses the agent's requests,
``http.client`` speaks to the upstreams and undoes their chunked encoding; answers go back
byte for byte, streams chunk by chunk as they arrive (usage is read from each chunk after it
has been sent on; see :mod:`.usage`).

What the proxy does to a request: it routes it by its path (:mod:`.routes`); refuses it with a
provider-shaped error when the path is unknown (404) or a budget is spent (403, with
``x-should-retry: false`` so that SDKs do not retry); removes provider-side tools
(:mod:`.tools`); asks OpenAI's streamed Chat Completions for their usage
(``stream_options.include_usage``); replaces whatever key the agent sent (``x-api-key``,
``Authorization``, ``x-goog-api-key``, a ``key`` query parameter) with the real one, or with
none when the operator gave none; asks for an unencoded answer. Upstream 429 and 5xx answers
and failed connections are retried with exponential backoff (``Retry-After`` honoured up to
:data:`RETRY_WAIT_CAP_S`) before anything is sent to the client; the last failure goes back as
the upstream's answer. The totals are updated and the call's line is written to the call log
(:mod:`.calllog`) before the answer's last byte is sent, so a client that has its whole answer
can read the totals.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import socketserver
import ssl
import stat
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from ...io.journal import JOURNAL_PATH, Journal, JournalError, entry_from_request
from ...model.cell import MeteredUsage
from .budget import Budgets, Ledger
from .calllog import CallLog, CallRecord, utc_now
from .errors import ProxyError, error_body
from .prices import PriceTable
from .routes import Route, guess_provider, route
from .tools import STRIP_MARKERS, strip_tools
from .usage import StreamMeter, Usage, usage_from_answer

__all__ = ["DEFAULT_UPSTREAMS", "KEY_VARIABLES", "RETRY_WAIT_CAP_S", "MeteringProxy", "ProxySettings",
           "parse_upstreams"]

#: The real upstream of each provider.
DEFAULT_UPSTREAMS: Mapping[str, str] = MappingProxyType({
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com",
    "gemini": "https://generativelanguage.googleapis.com",
})
#: The environment variable the operator's real key of each provider is read from.
KEY_VARIABLES: Mapping[str, str] = MappingProxyType({
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
})
#: The longest wait before a retry, whatever an upstream's Retry-After asks for.
RETRY_WAIT_CAP_S = 60.0
#: Seconds an upstream may stay silent (a long generation streams, so this is between chunks).
UPSTREAM_TIMEOUT_S = 600.0
#: The largest request body a client may send (an agent's whole conversation is far smaller).
MAX_REQUEST_BYTES = 256 * 1024 * 1024
_READ = 64 * 1024

# Never forwarded either way: they describe one connection, not the message, or carry a key.
_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate",
                  "te", "trailer", "transfer-encoding", "upgrade", "content-length", "host", "accept-encoding"})
_KEY_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key"})
_ANSWER_DROP = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "content-length",
                          "trailer", "upgrade"})


def _check_url(provider: str, url: str) -> str:
    parts = urlsplit(url)
    try:
        parts.port  # raises ValueError on a bad port
    except ValueError:
        raise ProxyError(f"upstream URL {url!r} of {provider!r} has a bad port") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ProxyError(f"upstream URL {url!r} of {provider!r} must be http:// or https:// with a host, "
                         f"and no query", hint=f"e.g. {provider}=http://127.0.0.1:8080")
    return url.rstrip("/")


def parse_upstreams(specs: Sequence[str]) -> dict[str, str]:
    """``PROVIDER=URL`` specs merged over :data:`DEFAULT_UPSTREAMS`.

    >>> parse_upstreams(["anthropic=http://127.0.0.1:9/"])["anthropic"]
    'http://127.0.0.1:9'
    >>> parse_upstreams(["azure=https://example.org"])
    Traceback (most recent call last):
    ...
    rra_tools.agents.proxy.errors.ProxyError: unknown provider 'azure' in upstream 'azure=https://example.org' (known: anthropic, gemini, openai)
    """
    upstreams = dict(DEFAULT_UPSTREAMS)
    for spec in specs:
        provider, sep, url = spec.partition("=")
        provider = provider.strip()
        if not sep:
            raise ProxyError(f"upstream {spec!r} is not PROVIDER=URL", hint="e.g. anthropic=http://127.0.0.1:8080")
        if provider not in DEFAULT_UPSTREAMS:
            raise ProxyError(f"unknown provider {provider!r} in upstream {spec!r} "
                             f"(known: {', '.join(sorted(DEFAULT_UPSTREAMS))})")
        upstreams[provider] = _check_url(provider, url.strip())
    return upstreams


@dataclass(frozen=True)
class ProxySettings:
    """What one cell's proxy forwards to, with which keys, at which prices, within which budgets.

    ``keys``: provider -> the real key (a provider without one is called without a key);
    ``allowed_tools``: provider-side tools not to strip (:mod:`.tools` names them);
    ``max_retries`` and ``backoff_s``: retries of an upstream's 429 or 5xx, waiting
    ``backoff_s * 2**n`` before the n-th (or what Retry-After asks, up to :data:`RETRY_WAIT_CAP_S`).
    """

    upstreams: Mapping[str, str]
    keys: Mapping[str, str]
    prices: PriceTable
    call_log: Path
    budgets: Budgets = field(default_factory=Budgets)
    allowed_tools: frozenset[str] = frozenset()
    max_retries: int = 4
    backoff_s: float = 0.5
    #: Where the cell's run journal is kept (:mod:`rra_tools.io.journal`); None: no journal.
    journal: Path | None = None
    #: The last digest of that journal as the evaluator kept it from the cell's previous command
    #: (None: the journal starts here, or its file is trusted as it is).
    journal_head: str | None = None


class _Pool:
    """Kept-alive connections to one upstream, reused across the proxy's threads."""

    def __init__(self, provider: str, base: str) -> None:
        parts = urlsplit(_check_url(provider, base))
        self.https = parts.scheme == "https"
        self.host = parts.hostname or ""
        self.port = parts.port
        self.prefix = parts.path.rstrip("/")
        self.name = f"{provider} ({parts.scheme}://{parts.netloc})"
        self._context = ssl.create_default_context() if self.https else None
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def _new(self) -> http.client.HTTPConnection:
        if self._context is not None:
            return http.client.HTTPSConnection(self.host, self.port, timeout=UPSTREAM_TIMEOUT_S, context=self._context)
        return http.client.HTTPConnection(self.host, self.port, timeout=UPSTREAM_TIMEOUT_S)

    def send(self, method: str, target: str, headers: list[tuple[str, str]],
             body: bytes) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """Send one request and read the head of its answer, on an idle connection if there is one."""
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is not None:
            try:
                return conn, self._exchange(conn, method, target, headers, body)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # The upstream closed a kept-alive connection while it was idle: not a failure
                # of the call, so a fresh connection is tried at once and no retry is counted.
                conn.close()
        conn = self._new()
        try:
            return conn, self._exchange(conn, method, target, headers, body)
        except BaseException:
            conn.close()
            raise

    def _exchange(self, conn: http.client.HTTPConnection, method: str, target: str,
                  headers: list[tuple[str, str]], body: bytes) -> http.client.HTTPResponse:
        # putheader keeps repeated headers (several anthropic-beta lines) that a dict would merge;
        # putrequest adds Host and 'Accept-Encoding: identity' (usage is read from plain bytes).
        conn.putrequest(method, self.prefix + target)
        for name, value in headers:
            conn.putheader(name, value)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        return conn.getresponse()

    def release(self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        """Keep ``conn`` for the next call when its answer was read to the end and it stays open."""
        if response.will_close or not response.isclosed():
            conn.close()
            return
        with self._lock:
            self._idle.append(conn)

    def close(self) -> None:
        """Close every idle connection."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


def _retry_after(response: http.client.HTTPResponse) -> float | None:
    # OpenAI and Anthropic also state milliseconds; Retry-After is seconds or an HTTP date.
    millis = response.getheader("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = response.getheader("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class _Servers:
    """What both of the proxy's servers share: the proxy, and the open client connections (shut
    down on close, or a client's idle kept-alive connection would hold a thread forever)."""

    proxy: MeteringProxy
    daemon_threads = True
    request_queue_size = 128
    allow_reuse_address = True

    def _init_connections(self) -> None:
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that went away mid-answer; the library never prints (the call log says it).
        return None


class _TCPServer(_Servers, socketserver.ThreadingMixIn, socketserver.TCPServer):
    pass


class _UnixServer(_Servers, socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    pass


@dataclass
class _Call:
    # What one request's handling gathers for its line in the call log.
    record: CallRecord
    started: float
    ttfb: float | None = None


class _Handler(BaseHTTPRequestHandler):
    """One client connection: reads its requests one after the other (HTTP/1.1 keep-alive)."""

    protocol_version = "HTTP/1.1"
    server: _Servers  # type: ignore[assignment]

    def setup(self) -> None:
        super().setup()
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.connections_lock:
            self.server.connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        return None  # the call log records every call; the library never prints

    def do_POST(self) -> None:
        """Handle a POST (every model call)."""
        self.server.proxy._handle(self)

    def do_GET(self) -> None:
        """Handle a GET (lists of models; anything else is refused)."""
        self.server.proxy._handle(self)

    def do_PUT(self) -> None:
        """Refuse a PUT (no API the proxy forwards has one)."""
        self.server.proxy._handle(self)

    def do_DELETE(self) -> None:
        """Refuse a DELETE."""
        self.server.proxy._handle(self)

    def do_PATCH(self) -> None:
        """Refuse a PATCH."""
        self.server.proxy._handle(self)

    def read_body(self) -> bytes:
        """The request's body, by Content-Length or chunked; ValueError when it is malformed or too large."""
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            parts: list[bytes] = []
            total = 0
            while True:
                size = int(self.rfile.readline(1024).split(b";", 1)[0].strip() or b"x", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(parts)
                total += size
                if total > MAX_REQUEST_BYTES:
                    raise ValueError(f"the request body is larger than {MAX_REQUEST_BYTES} bytes")
                parts.append(self.rfile.read(size))
                self.rfile.readline(1024)
        length = int(self.headers.get("content-length") or 0)
        if length < 0 or length > MAX_REQUEST_BYTES:
            raise ValueError(f"Content-Length {length} is out of range (at most {MAX_REQUEST_BYTES})")
        return self.rfile.read(length) if length else b""

    def write_head(self, status: int, reason: str, headers: list[tuple[str, str]], body: bytes = b"") -> None:
        """Send the status line and headers (and a body, in the same write)."""
        lines = [f"HTTP/1.1 {status} {reason}\r\n"]
        lines.extend(f"{name}: {value}\r\n" for name, value in headers)
        if self.close_connection:
            lines.append("Connection: close\r\n")
        lines.append("\r\n")
        self.wfile.write("".join(lines).encode("latin-1") + body)


class MeteringProxy:
    """One cell's metering proxy; a context manager (or :meth:`start` and :meth:`close`).

    It listens on ``unix_socket`` (created mode 0600: only this user may use the keys behind it),
    on ``tcp`` (host, port; port 0 picks a free one, see :attr:`tcp_address`), or both.
    """

    def __init__(self, settings: ProxySettings, *, unix_socket: Path | None = None,
                 tcp: tuple[str, int] | None = None) -> None:
        if unix_socket is None and tcp is None:
            raise ProxyError("the metering proxy needs a Unix socket, a TCP address or both to listen on")
        if settings.max_retries < 0 or not settings.backoff_s >= 0:
            raise ProxyError(f"max_retries and backoff_s must be >= 0, got {settings.max_retries!r} and "
                             f"{settings.backoff_s!r}")
        self.settings = settings
        self._pools = {provider: _Pool(provider, url) for provider, url in settings.upstreams.items()}
        self._ledger = Ledger(settings.budgets)
        self._closing = threading.Event()
        self._threads: list[threading.Thread] = []
        self._servers: list[_Servers] = []
        self._started = False
        self._closed = False
        self.unix_socket: Path | None = None
        self.tcp_address: tuple[str, int] | None = None
        self._log: CallLog | None = None
        self._journal: Journal | None = None
        try:
            if settings.journal is not None:
                self._journal = Journal(settings.journal, settings.journal_head)
            if tcp is not None:
                self._bind_tcp(tcp)
            if unix_socket is not None:
                self._bind_unix(unix_socket)
            self._log = CallLog(settings.call_log)
        except BaseException:
            self.close()
            raise

    def _bind_tcp(self, address: tuple[str, int]) -> None:
        try:
            server = _TCPServer(address, _Handler, bind_and_activate=True)
        except OSError as error:
            raise ProxyError(f"the metering proxy cannot listen on {address[0]}:{address[1]}: {error}") from None
        server.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        server._init_connections()
        server.proxy = self
        self._servers.append(server)
        host, port = server.server_address[:2]
        self.tcp_address = (str(host), int(port))

    def _bind_unix(self, path: Path) -> None:
        if len(os.fsencode(path)) > 107:
            raise ProxyError(f"Unix socket path {str(path)!r} is longer than the 107 bytes a socket name may have",
                             hint="use a shorter directory, e.g. one made with tempfile.mkdtemp(dir='/tmp')")
        try:
            if stat.S_ISSOCK(path.lstat().st_mode):
                path.unlink()  # left by a proxy that did not close; a socket holds no data
        except FileNotFoundError:
            pass
        try:
            server = _UnixServer(str(path), _Handler, bind_and_activate=False)
            try:
                server.server_bind()
                os.chmod(path, 0o600)
                server.server_activate()
            except BaseException:
                server.server_close()
                raise
        except OSError as error:
            raise ProxyError(f"the metering proxy cannot listen on Unix socket {str(path)!r}: {error}") from None
        server._init_connections()
        server.proxy = self
        self._servers.append(server)
        self.unix_socket = path

    # Life cycle.

    def start(self) -> MeteringProxy:
        """Start serving (and the working-time clock)."""
        if self._closed:
            raise ProxyError("this metering proxy is closed; make a new one")
        if self._started:
            return self
        self._started = True
        self._ledger.started = time.monotonic()
        for server in self._servers:
            assert isinstance(server, socketserver.BaseServer)
            thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                      name="rra-metering-proxy", daemon=True)
            thread.start()
            self._threads.append(thread)
        self._ledger.start_watch()
        return self

    def close(self) -> None:
        """Stop serving, close every connection, remove the socket file, close the call log."""
        if self._closed:
            return
        self._closed = True
        self._closing.set()
        for server in self._servers:
            assert isinstance(server, socketserver.BaseServer)
            if self._started:
                server.shutdown()
            server.server_close()
            with server.connections_lock:
                open_connections = list(server.connections)
            for connection in open_connections:
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        for thread in self._threads:
            thread.join()
        self._ledger.stop_watch()
        for pool in self._pools.values():
            pool.close()
        if self.unix_socket is not None:
            try:
                self.unix_socket.unlink()
            except FileNotFoundError:
                pass
        if self._log is not None:
            self._log.close()
        if self._journal is not None:
            self._journal.close()

    def __enter__(self) -> MeteringProxy:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    # What the evaluator reads.

    @property
    def limit_event(self) -> threading.Event:
        """Set the moment a budget is passed."""
        return self._ledger.limit_event

    @property
    def limit_reached(self) -> str | None:
        """The budget passed first: 'tokens', 'cost_usd', 'calls' or 'wall_s'; None while none is."""
        return self._ledger.limit_reached

    @property
    def journal_head(self) -> str | None:
        """The digest of the run journal's last entry, as this process holds it (None: no journal)."""
        return None if self._journal is None else self._journal.head

    def usage(self) -> MeteredUsage:
        """The totals so far (``call_log`` is the log's path as given; make it relative to the
        benchmark directory where the record needs that)."""
        return self._ledger.snapshot(self.settings.prices.label, str(self.settings.call_log))

    # Handling one request.

    def _write(self, call: _Call) -> None:
        call.record.latency_s = round(time.perf_counter() - call.started, 6)
        if call.ttfb is not None:
            call.record.ttfb_s = round(call.ttfb, 6)
        if self._log is not None:
            self._log.write(call.record)

    def _answer_error(self, handler: _Handler, call: _Call, status: int, message: str, *,
                      final: bool = True) -> None:
        record = call.record
        record.status, record.error = status, message
        body = error_body(record.provider, status, message)
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        if final:
            headers.append(("x-should-retry", "false"))
        call.ttfb = time.perf_counter() - call.started
        self._write(call)
        handler.write_head(status, http.client.responses.get(status, "Error"), headers, body)

    def _handle(self, handler: _Handler) -> None:
        started = time.perf_counter()
        parts = urlsplit(handler.path)
        headers = {name.lower(): value for name, value in handler.headers.items()}
        found = route(handler.command, parts.path, headers)
        provider = found.provider if found is not None else guess_provider(parts.path, headers)
        call = _Call(CallRecord(time=utc_now(), provider=provider, protocol=found.protocol if found else "unknown",
                                path=parts.path, metered=bool(found and found.metered),
                                model=found.model if found else None, stream=bool(found and found.stream)),
                     started)
        try:
            body = handler.read_body()
        except ValueError as error:
            handler.close_connection = True
            self._ledger.refuse()
            self._answer_error(handler, call, 400, f"rra: the request cannot be read: {error}")
            return
        if parts.path == JOURNAL_PATH and self._journal is not None and handler.command == "POST":
            self._commit(handler, body)
            return
        if found is None:
            self._ledger.refuse()
            self._answer_error(handler, call, 404, f"rra: the metering proxy does not forward "
                                                   f"{handler.command} {parts.path}")
            return
        try:
            self._forward(handler, call, found, parts.query, body)
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True  # the client went away; what it spent is recorded
        except Exception as error:  # noqa: BLE001 (a bug must not kill the cell's only way out)
            handler.close_connection = True
            call.record.error = f"rra: the proxy failed: {error!r}"
            self._write(call)

    def _commit(self, handler: _Handler, body: bytes) -> None:
        """A run's commit to the journal: appended, stamped by this clock; not a model call, so
        neither metered nor in the call log."""
        assert self._journal is not None
        try:
            record, sha256, ended, outputs = entry_from_request(json.loads(body))
            entry = self._journal.append(record, sha256, ended, outputs)
            status, answer = 200, {"seq": entry.seq, "hash": entry.hash}
        except (ValueError, JournalError) as error:
            status, answer = 400, {"error": f"rra: {error}"}
        data = json.dumps(answer).encode()
        handler.write_head(status, "OK" if status == 200 else "Bad Request",
                           [("Content-Type", "application/json"), ("Content-Length", str(len(data)))], data)

    def _prepare(self, found: Route, body: bytes, record: CallRecord) -> bytes:
        """The body to forward: as it came unless tools are stripped or usage must be asked for."""
        protocol = found.protocol
        strip = any(marker in body for marker in STRIP_MARKERS.get(protocol, ()))
        ask_usage = protocol == "openai-chat" and b'"stream"' in body
        document: Any = None
        if strip or ask_usage or (record.model is None and found.metered):
            try:
                document = json.loads(body)
            except ValueError:
                return body  # the upstream answers what it makes of it
        if not isinstance(document, dict):
            return body
        if record.model is None and isinstance(document.get("model"), str):
            record.model = document["model"]
        changed = False
        if strip:
            record.stripped_tools = strip_tools(protocol, document, self.settings.allowed_tools)
            changed = bool(record.stripped_tools)
        if document.get("stream") is True:
            record.stream = True
            if protocol == "openai-chat":
                options = document.get("stream_options")
                if not isinstance(options, dict) or options.get("include_usage") is not True:
                    document["stream_options"] = {**(options if isinstance(options, dict) else {}),
                                                  "include_usage": True}
                    changed = True
        return json.dumps(document, ensure_ascii=False).encode() if changed else body

    def _upstream_headers(self, handler: _Handler, provider: str) -> list[tuple[str, str]]:
        forwarded = [(name, value) for name, value in handler.headers.items()
                     if name.lower() not in _HOP and name.lower() not in _KEY_HEADERS]
        key = self.settings.keys.get(provider)
        if key:
            if provider == "anthropic":
                forwarded.append(("x-api-key", key))
            elif provider == "openai":
                forwarded.append(("Authorization", f"Bearer {key}"))
            else:
                forwarded.append(("x-goog-api-key", key))
        return forwarded

    def _target(self, path: str, query: str, provider: str) -> str:
        if "key=" in query:
            # The agent's dummy key goes; the real one replaces it (never logged: the log has no query).
            pairs = [(name, value) for name, value in parse_qsl(query, keep_blank_values=True) if name != "key"]
            key = self.settings.keys.get(provider)
            if key:
                pairs.append(("key", key))
            query = urlencode(pairs)
        return f"{path}?{query}" if query else path

    def _forward(self, handler: _Handler, call: _Call, found: Route, query: str, body: bytes) -> None:
        if not found.metered:
            self._forward_admitted(handler, call, found, query, body)
            return
        spent = self._ledger.admit()
        if spent is not None:
            self._answer_error(handler, call, 403, self.settings.budgets.message(spent))
            return
        try:
            self._forward_admitted(handler, call, found, query, self._prepare(found, body, call.record))
        finally:
            # However the call ended, it is no longer in flight (Ledger.admit counts those).
            self._ledger.release()

    def _forward_admitted(self, handler: _Handler, call: _Call, found: Route, query: str, body: bytes) -> None:
        record = call.record
        ledger = self._ledger
        pool = self._pools.get(found.provider)
        if pool is None:
            ledger.refuse()
            self._answer_error(handler, call, 502, f"rra: no upstream is set for {found.provider}")
            return
        headers = self._upstream_headers(handler, found.provider)
        target = self._target(record.path, query, found.provider)
        settings = self.settings
        attempt = 0
        while True:
            try:
                conn, response = pool.send(handler.command, target, headers, body)
            except (OSError, http.client.HTTPException) as error:
                if attempt < settings.max_retries and self._wait(attempt, None):
                    attempt += 1
                    record.retries = attempt
                    continue
                if found.metered:
                    ledger.record(None, record.model, None, answered=False)
                self._answer_error(handler, call, 502, f"rra: the upstream {pool.name} cannot be reached: "
                                                       f"{error}", final=False)
                return
            status = response.status
            if (status == 429 or status >= 500) and attempt < settings.max_retries:
                try:
                    response.read()
                    pool.release(conn, response)
                except (OSError, http.client.HTTPException):
                    conn.close()
                if self._wait(attempt, _retry_after(response)):
                    attempt += 1
                    record.retries = attempt
                    continue
                # The proxy closes while waiting: the upstream's failure was read already, so
                # the client gets its status in the provider's error shape.
                self._answer_error(handler, call, status, f"rra: the proxy closed while waiting to retry the "
                                                          f"upstream's {status}", final=False)
                return
            break
        record.status = status
        self._relay(handler, call, found, pool, conn, response)

    def _wait(self, attempt: int, retry_after: float | None) -> bool:
        """Wait before retry ``attempt + 1``; False when the proxy closes meanwhile."""
        delay = retry_after if retry_after is not None else self.settings.backoff_s * 2 ** attempt
        delay = min(delay, RETRY_WAIT_CAP_S)
        ledger = self._ledger
        ledger.retry()
        begun = ledger.begin_wait()
        try:
            return not self._closing.wait(delay)
        finally:
            ledger.end_wait(begun)

    def _account(self, found: Route, call: _Call, usage: Usage | None, model: str | None) -> None:
        record = call.record
        if model is not None:
            record.model = model
        if not found.metered:
            return
        cost: float | None = None
        if usage is not None:
            record.input_tokens = usage.input_tokens
            record.output_tokens = usage.output_tokens
            record.cache_read_tokens = usage.cache_read_tokens
            record.cache_write_tokens = usage.cache_write_tokens
            record.reasoning_tokens = usage.reasoning_tokens
            if record.model is not None:
                cost = self.settings.prices.cost(record.model, usage.input_tokens, usage.output_tokens,
                                                 usage.cache_read_tokens, usage.cache_write_tokens)
            record.cost_usd = cost
        elif 200 <= record.status < 300 and record.error is None:
            record.error = "rra: the answer stated no usage"
        self._ledger.record(usage, record.model, cost, answered=True)

    def _relay(self, handler: _Handler, call: _Call, found: Route, pool: _Pool,
               conn: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        record = call.record
        answer_headers = [(name, value) for name, value in response.getheaders()
                          if name.lower() not in _ANSWER_DROP]
        content_type = response.getheader("content-type") or ""
        sse = "text/event-stream" in content_type
        if not sse and response.getheader("content-length") is not None:
            # A whole answer: read it, meter it, then send it in one write.
            try:
                data = response.read()
            except (OSError, http.client.HTTPException) as error:
                conn.close()
                if found.metered:
                    self._ledger.record(None, record.model, None, answered=False)
                self._answer_error(handler, call, 502, f"rra: the upstream's answer broke off: {error}", final=False)
                return
            pool.release(conn, response)
            usage, model = None, None
            if 200 <= response.status < 300 and found.protocol in STRIP_MARKERS:
                try:
                    usage, model = usage_from_answer(found.protocol, json.loads(data))
                except ValueError:
                    pass
            self._account(found, call, usage, model)
            call.ttfb = time.perf_counter() - call.started
            self._write(call)
            handler.write_head(response.status, response.reason, [*answer_headers, ("Content-Length", str(len(data)))],
                               data)
            return
        # A stream: each chunk goes on as it comes, then is read for usage.
        record.stream = record.stream or sse
        chunked = handler.request_version == "HTTP/1.1"
        if not chunked:
            handler.close_connection = True
        meter = StreamMeter(found.protocol, sse=sse) if found.metered and 200 <= response.status < 300 else None
        client_gone = False
        try:
            handler.write_head(response.status, response.reason,
                               [*answer_headers, ("Transfer-Encoding", "chunked")] if chunked else answer_headers)
        except OSError:
            client_gone = True
        wfile = handler.wfile
        broken: str | None = None
        while True:
            try:
                data = response.read1(_READ)
            except (OSError, http.client.HTTPException) as error:
                broken = f"rra: the upstream's stream broke off: {error!r}"
                break
            if not data:
                break
            if not client_gone:
                try:
                    wfile.write(b"%x\r\n%b\r\n" % (len(data), data) if chunked else data)
                except OSError:
                    # The client is gone, but the upstream goes on (and bills): read on to meter it.
                    client_gone = True
                if call.ttfb is None:
                    call.ttfb = time.perf_counter() - call.started
            if meter is not None:
                meter.feed(data)
        if broken is None:
            pool.release(conn, response)
        else:
            conn.close()
            record.error = broken
        usage, model = meter.finish() if meter is not None else (None, None)
        if client_gone and record.error is None:
            record.error = "rra: the client closed the connection before the answer ended"
        self._account(found, call, usage, model)
        self._write(call)
        if client_gone or broken is not None:
            handler.close_connection = True
            return
        if chunked:
            try:
                wfile.write(b"0\r\n\r\n")
            except OSError:
                handler.close_connection = True
