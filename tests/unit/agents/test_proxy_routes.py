"""What the proxy forwards and what it refuses, its upstreams and its sockets."""

from __future__ import annotations

import http.client
import stat
from pathlib import Path

import pytest

from rra_tools.agents.proxy import (
    DEFAULT_UPSTREAMS,
    KEY_VARIABLES,
    MeteringProxy,
    PriceTable,
    ProxyError,
    ProxySettings,
    parse_upstreams,
)
from rra_tools.agents.scripted import ScriptedReply, ScriptedUsage

from .conftest import MakeCell, UnixHTTPConnection, call

REPLY = ScriptedReply("ok", usage=ScriptedUsage(input=10, output=4))


@pytest.mark.parametrize(("method", "path", "headers", "body"), [
    ("POST", "/v1/files", {"Authorization": "Bearer dummy"},
     {"error": {"message": "rra: the metering proxy does not forward POST /v1/files",
                "type": "invalid_request_error", "param": None, "code": None}}),
    ("GET", "/v1/messages/batches", {"x-api-key": "dummy"},
     {"type": "error", "error": {"type": "not_found_error",
                                 "message": "rra: the metering proxy does not forward GET /v1/messages/batches"}}),
    ("POST", "/v1beta/cachedContents", {},
     {"error": {"code": 404, "message": "rra: the metering proxy does not forward POST /v1beta/cachedContents",
                "status": "NOT_FOUND"}}),
    ("DELETE", "/v1/responses/resp_1", {"Authorization": "Bearer dummy"},
     {"error": {"message": "rra: the metering proxy does not forward DELETE /v1/responses/resp_1",
                "type": "invalid_request_error", "param": None, "code": None}}),
])
def test_an_unknown_route_is_refused_in_the_providers_shape(make_cell: MakeCell, method: str, path: str,
                                                            headers: dict[str, str], body: object) -> None:
    cell = make_cell([REPLY])
    answer = call(cell.connect(), method, path + "?key=secret", {}, headers)
    assert answer.status == 404
    assert answer.json() == body
    usage = cell.proxy.usage()
    assert (usage.refused, usage.calls) == (1, 0)
    assert cell.upstream.requests == []
    [line] = cell.log_lines()
    assert (line["status"], line["path"], line["protocol"], line["metered"]) == (404, path, "unknown", False)


def test_the_connection_stays_usable_after_a_refusal(make_cell: MakeCell) -> None:
    cell = make_cell([REPLY])
    conn = cell.connect("unix")
    assert call(conn, "POST", "/nowhere", {}).status == 404
    assert call(conn, "POST", "/v1/messages", {"model": "claude-haiku-4-5", "messages": []}).status == 200


@pytest.mark.parametrize(("method", "path", "headers"), [
    ("GET", "/v1/models", {"x-api-key": "dummy", "anthropic-version": "2023-06-01"}),
    ("GET", "/v1/models", {"Authorization": "Bearer dummy"}),
    ("GET", "/v1beta/models", {}),
    ("POST", "/v1/messages/count_tokens", {"x-api-key": "dummy"}),
    ("POST", "/v1/responses/input_tokens", {}),
    ("POST", "/v1beta/models/gemini-2.5-flash:countTokens", {}),
])
def test_listing_models_and_counting_tokens_are_forwarded_unmetered(make_cell: MakeCell, method: str, path: str,
                                                                    headers: dict[str, str]) -> None:
    cell = make_cell([REPLY], keys={"anthropic": "real-a", "openai": "real-o", "gemini": "real-g"})
    answer = call(cell.connect(), method, path, None if method == "GET" else {"model": "m", "messages": []}, headers)
    assert answer.status == 200
    usage = cell.proxy.usage()
    assert (usage.calls, usage.refused, usage.input_tokens) == (0, 0, 0)
    assert cell.upstream.calls == 0  # the script's reply is left for a model call
    received = cell.upstream.requests[0]
    assert "dummy" not in str(received.headers)
    [line] = cell.log_lines()
    assert line["metered"] is False


def test_default_upstreams_key_variables_and_their_merge() -> None:
    assert dict(DEFAULT_UPSTREAMS) == {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com",
                                       "gemini": "https://generativelanguage.googleapis.com"}
    assert dict(KEY_VARIABLES) == {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY",
                                   "gemini": "GEMINI_API_KEY"}
    assert parse_upstreams([]) == dict(DEFAULT_UPSTREAMS)
    merged = parse_upstreams(["anthropic=http://127.0.0.1:9/", "gemini = https://gw.example.org/google/"])
    assert merged == {"anthropic": "http://127.0.0.1:9", "openai": "https://api.openai.com",
                      "gemini": "https://gw.example.org/google"}


@pytest.mark.parametrize(("spec", "message"), [
    ("anthropic", "upstream 'anthropic' is not PROVIDER=URL"),
    ("azure=https://x.example.org", "unknown provider 'azure' in upstream 'azure=https://x.example.org' "
                                    "(known: anthropic, gemini, openai)"),
    ("openai=ftp://x.example.org", "upstream URL 'ftp://x.example.org' of 'openai' must be http:// or https:// "
                                   "with a host, and no query"),
    ("openai=127.0.0.1:8080", "upstream URL '127.0.0.1:8080' of 'openai' must be http:// or https:// with a host, "
                              "and no query"),
    ("openai=http://127.0.0.1:99999", "upstream URL 'http://127.0.0.1:99999' of 'openai' has a bad port"),
])
def test_a_bad_upstream_is_refused(spec: str, message: str) -> None:
    with pytest.raises(ProxyError) as caught:
        parse_upstreams([spec])
    assert str(caught.value) == message


def test_an_upstream_with_a_path_prefix(make_cell: MakeCell) -> None:
    cell = make_cell([REPLY])
    cell.proxy.close()
    # The same upstream behind a prefix the scripted model does not know: the path shows it was used.
    settings = ProxySettings(upstreams={"anthropic": cell.upstream.url + "/gateway"}, keys={},
                             prices=cell.proxy.settings.prices, call_log=cell.log)
    with MeteringProxy(settings, tcp=("127.0.0.1", 0)) as proxy:
        assert proxy.tcp_address is not None
        answer = call(http.client.HTTPConnection(*proxy.tcp_address), "POST", "/v1/messages", {"model": "x"})
    assert answer.status == 404
    assert cell.upstream.requests[0].path == "/gateway/v1/messages"


def test_unix_socket_is_private_and_removed_on_close(short_dir: Path, prices: PriceTable) -> None:
    path = short_dir / "proxy.sock"
    settings = ProxySettings(upstreams=dict(DEFAULT_UPSTREAMS), keys={}, prices=prices, call_log=short_dir / "c.jsonl")
    with MeteringProxy(settings, unix_socket=path) as proxy:
        assert proxy.unix_socket == path
        assert proxy.tcp_address is None
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert call(UnixHTTPConnection(path), "GET", "/nowhere").status == 404
    assert not path.exists()


def test_a_socket_path_too_long_is_a_clear_error(short_dir: Path, prices: PriceTable) -> None:
    path = short_dir / ("x" * 120)
    settings = ProxySettings(upstreams=dict(DEFAULT_UPSTREAMS), keys={}, prices=prices, call_log=short_dir / "c.jsonl")
    with pytest.raises(ProxyError, match="is longer than the 107 bytes a socket name may have"):
        MeteringProxy(settings, unix_socket=path)


def test_a_proxy_needs_somewhere_to_listen(short_dir: Path, prices: PriceTable) -> None:
    settings = ProxySettings(upstreams=dict(DEFAULT_UPSTREAMS), keys={}, prices=prices, call_log=short_dir / "c.jsonl")
    with pytest.raises(ProxyError, match="^the metering proxy needs a Unix socket, a TCP address or both"):
        MeteringProxy(settings)


def test_close_ends_idle_kept_alive_connections(make_cell: MakeCell) -> None:
    cell = make_cell([REPLY])
    conn = cell.connect()
    assert call(conn, "POST", "/v1/messages", {"model": "claude-haiku-4-5"}).status == 200
    cell.proxy.close()
    with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
        call(conn, "POST", "/v1/messages", {"model": "claude-haiku-4-5"})
