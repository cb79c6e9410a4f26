"""Upstream 429 and 5xx answers and failed connections are retried with backoff; the last
failure goes back to the client as the upstream sent it."""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path

import pytest

from rra_tools.agents.proxy import MeteringProxy, PriceTable, ProxySettings, parse_upstreams, server
from rra_tools.agents.scripted import ScriptedFailure, ScriptedReply, ScriptedUsage

from .conftest import MakeCell, call

REPLY = ScriptedReply("ok", usage=ScriptedUsage(input=10, output=4))
BODY = {"model": "claude-haiku-4-5", "max_tokens": 10, "stream": True, "messages": []}


def test_a_429_then_success_is_one_call_and_one_retry(make_cell: MakeCell) -> None:
    cell = make_cell([ScriptedFailure(429), REPLY], backoff_s=0.05)
    answer = call(cell.connect(), "POST", "/v1/messages", BODY)
    assert answer.status == 200
    usage = cell.proxy.usage()
    assert (usage.calls, usage.retries, usage.input_tokens, usage.output_tokens) == (1, 1, 10, 4)
    assert 0.05 <= usage.waiting_s < 1  # a loaded machine wakes late, never early
    [line] = cell.log_lines()
    assert (line["retries"], line["status"], line["input_tokens"]) == (1, 200, 10)
    assert cell.upstream.calls == 2


def test_retry_after_is_honoured(make_cell: MakeCell) -> None:
    cell = make_cell([ScriptedFailure(529, retry_after=0.4), REPLY], backoff_s=0.01)
    assert call(cell.connect(), "POST", "/v1/messages", BODY).status == 200
    assert cell.proxy.usage().waiting_s >= 0.4


def test_retry_after_is_capped(make_cell: MakeCell, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "RETRY_WAIT_CAP_S", 0.1)
    cell = make_cell([ScriptedFailure(429, retry_after=3600), REPLY])
    assert call(cell.connect(), "POST", "/v1/messages", BODY).status == 200
    assert cell.proxy.usage().waiting_s < 1


def test_the_last_failure_goes_back_to_the_client(make_cell: MakeCell) -> None:
    cell = make_cell([ScriptedFailure(500)] * 3, max_retries=2, backoff_s=0.01)
    answer = call(cell.connect("unix"), "POST", "/v1/chat/completions", {"model": "gpt-4o", "messages": []})
    assert answer.status == 500
    assert answer.json() == {"error": {"message": "scripted upstream: scripted failure 500", "type": "server_error",
                                       "param": None, "code": None}}
    usage = cell.proxy.usage()
    assert (usage.calls, usage.retries, usage.input_tokens) == (1, 2, 0)
    assert 0.03 <= usage.waiting_s < 1  # 0.01 then 0.02
    assert cell.upstream.calls == 3
    [line] = cell.log_lines()
    assert (line["status"], line["retries"], line["error"]) == (500, 2, None)


def test_a_client_error_is_not_retried(make_cell: MakeCell) -> None:
    cell = make_cell([ScriptedFailure(400), REPLY], backoff_s=0.01)
    assert call(cell.connect(), "POST", "/v1/messages", BODY).status == 400
    assert cell.proxy.usage().retries == 0


def test_an_unreachable_upstream_is_retried_then_a_502(short_dir: Path, prices: PriceTable) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once the probe is closed
    settings = ProxySettings(upstreams=parse_upstreams([f"openai=http://127.0.0.1:{port}"]), keys={},
                             prices=prices, call_log=short_dir / "calls.jsonl", max_retries=2, backoff_s=0.01)
    with MeteringProxy(settings, tcp=("127.0.0.1", 0)) as proxy:
        assert proxy.tcp_address is not None
        answer = call(http.client.HTTPConnection(*proxy.tcp_address), "POST", "/v1/responses",
                      {"model": "gpt-5", "input": "x"})
        usage = proxy.usage()
    assert answer.status == 502
    message = json.loads(answer.body)["error"]["message"]
    assert message.startswith(f"rra: the upstream openai (http://127.0.0.1:{port}) cannot be reached: ")
    assert (usage.calls, usage.retries) == (0, 2)
