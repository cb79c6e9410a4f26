"""What the proxy's and the scripted model's tests share: an HTTP client over a Unix socket or
TCP, a short scratch directory (a Unix socket's name has at most 107 bytes), and a proxy in
front of a fresh scripted upstream."""

from __future__ import annotations

import http.client
import json
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rra_tools.agents.proxy import (
    DEFAULT_UPSTREAMS,
    MeteringProxy,
    PriceTable,
    ProxySettings,
    load_price_table,
)
from rra_tools.agents.scripted import ScriptedFailure, ScriptedReply, ScriptedUpstream


class UnixHTTPConnection(http.client.HTTPConnection):
    """http.client over a Unix socket, as the sandbox's relay reaches the proxy."""

    def __init__(self, path: Path, timeout: float = 30) -> None:
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(str(self.socket_path))


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def call(conn: http.client.HTTPConnection, method: str, path: str, body: Any = None,
         headers: dict[str, str] | None = None) -> Answer:
    """One request on ``conn`` (kept alive for the next one); a dict body is sent as JSON."""
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    conn.request(method, path, data, {"Content-Type": "application/json", **(headers or {})})
    response = conn.getresponse()
    return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())


@pytest.fixture
def short_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="rra-px-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def prices() -> PriceTable:
    return load_price_table(None)


@dataclass
class Cell:
    """A scripted upstream and a metering proxy in front of it, on a Unix socket and TCP."""

    upstream: ScriptedUpstream
    proxy: MeteringProxy
    log: Path

    def connect(self, via: str = "tcp") -> http.client.HTTPConnection:
        if via == "unix":
            assert self.proxy.unix_socket is not None
            return UnixHTTPConnection(self.proxy.unix_socket)
        assert self.proxy.tcp_address is not None
        return http.client.HTTPConnection(*self.proxy.tcp_address, timeout=30)

    def log_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()]


MakeCell = Callable[..., Cell]


@pytest.fixture
def make_cell(short_dir: Path, prices: PriceTable) -> Iterator[MakeCell]:
    """make_cell(script, **settings): a started upstream and proxy, closed after the test."""
    opened: list[Any] = []

    def make(script: list[ScriptedReply | ScriptedFailure], *, default: ScriptedReply | None = None,
             keys: dict[str, str] | None = None, **settings: Any) -> Cell:
        upstream = ScriptedUpstream(script, default=default).start()
        opened.append(upstream)
        log = short_dir / f"calls-{len(opened)}.jsonl"
        options = {"upstreams": {name: upstream.url for name in DEFAULT_UPSTREAMS}, "keys": keys or {},
                   "prices": prices, "call_log": log, **settings}
        proxy = MeteringProxy(ProxySettings(**options), unix_socket=short_dir / f"p{len(opened)}.sock",
                              tcp=("127.0.0.1", 0)).start()
        opened.append(proxy)
        return Cell(upstream, proxy, log)

    yield make
    for thing in reversed(opened):
        thing.close()
