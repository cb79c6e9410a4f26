"""Every protocol, streamed and not, through the proxy on its Unix socket and on TCP: the metered
figures and cost are the script's exactly, and the client gets the upstream's bytes unchanged."""

from __future__ import annotations

import http.client
import json
import threading
import time
from typing import Any

import pytest

from rra_tools.agents.scripted import ScriptedReply, ScriptedUpstream, ScriptedUsage

from .conftest import MakeCell, call

# Anthropic states cache writes and no reasoning; the others the other way round.
ANTHROPIC_USAGE = ScriptedUsage(input=1200, output=340, cache_read=5000, cache_write=700)
OTHER_USAGE = ScriptedUsage(input=1200, output=340, cache_read=5000, reasoning=120)
TOOL = ("Bash", {"command": "python3 train.py --epochs 3"})
TEXT = "The loss went down to 0.31 after three epochs, as the paper says."

# Expected cost, by hand from rra-prices 2026-12-01 (USD per million tokens):
EXPECTED = {
    # claude-sonnet-4-5: 3 in, 15 out, 0.30 cache read, 3.75 cache write
    "anthropic": ({"input_tokens": 1200, "output_tokens": 340, "cache_read_tokens": 5000, "cache_write_tokens": 700,
                   "reasoning_tokens": 0}, (1200 * 3 + 340 * 15 + 5000 * 0.3 + 700 * 3.75) / 1e6, "claude-sonnet-4-5-20250929"),
    # gpt-4o: 2.50 in, 10 out, 1.25 cached
    "chat": ({"input_tokens": 1200, "output_tokens": 340, "cache_read_tokens": 5000, "cache_write_tokens": 0,
              "reasoning_tokens": 120}, (1200 * 2.5 + 340 * 10 + 5000 * 1.25) / 1e6, "gpt-4o-2024-08-06"),
    # gpt-5: 1.25 in, 10 out, 0.125 cached
    "responses": ({"input_tokens": 1200, "output_tokens": 340, "cache_read_tokens": 5000, "cache_write_tokens": 0,
                   "reasoning_tokens": 120}, (1200 * 1.25 + 340 * 10 + 5000 * 0.125) / 1e6, "gpt-5"),
    # gemini-2.5-flash: 0.30 in, 2.50 out, 0.03 cached
    "gemini": ({"input_tokens": 1200, "output_tokens": 340, "cache_read_tokens": 5000, "cache_write_tokens": 0,
                "reasoning_tokens": 120}, (1200 * 0.3 + 340 * 2.5 + 5000 * 0.03) / 1e6, "gemini-2.5-flash"),
}


def request(protocol: str, stream: bool) -> tuple[str, dict[str, Any], dict[str, str]]:
    """The path, body and (dummy) key header an agent's SDK sends."""
    if protocol == "anthropic":
        return ("/v1/messages?beta=true",
                {"model": "claude-sonnet-4-5-20250929", "max_tokens": 1024, "stream": stream,
                 "messages": [{"role": "user", "content": "train it"}]},
                {"x-api-key": "dummy", "anthropic-version": "2023-06-01"})
    if protocol == "chat":
        body: dict[str, Any] = {"model": "gpt-4o-2024-08-06", "stream": stream,
                                "messages": [{"role": "user", "content": "train it"}]}
        if stream:
            body["stream_options"] = {"include_usage": True}
        return "/v1/chat/completions", body, {"Authorization": "Bearer dummy"}
    if protocol == "responses":
        return "/v1/responses", {"model": "gpt-5", "input": "train it", "stream": stream}, {"Authorization": "Bearer dummy"}
    verb = "streamGenerateContent?alt=sse" if stream else "generateContent"
    return (f"/v1beta/models/gemini-2.5-flash:{verb}", {"contents": [{"role": "user", "parts": [{"text": "train it"}]}]},
            {"x-goog-api-key": "dummy"})


def reply(protocol: str) -> ScriptedReply:
    return ScriptedReply(TEXT, tool_call=TOOL, usage=ANTHROPIC_USAGE if protocol == "anthropic" else OTHER_USAGE)


def direct(protocol: str, stream: bool) -> http.client.HTTPResponse:
    with ScriptedUpstream([reply(protocol)]) as upstream:
        path, body, headers = request(protocol, stream)
        conn = http.client.HTTPConnection("127.0.0.1", upstream.port)
        conn.request("POST", path, json.dumps(body), headers)
        response = conn.getresponse()
        response.body = response.read()  # type: ignore[attr-defined]
        conn.close()
        return response


@pytest.mark.parametrize("via", ["unix", "tcp"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("protocol", ["anthropic", "chat", "responses", "gemini"])
def test_metered_as_scripted_and_bytes_unchanged(make_cell: MakeCell, protocol: str, stream: bool, via: str) -> None:
    cell = make_cell([reply(protocol)])
    path, body, headers = request(protocol, stream)
    answer = call(cell.connect(via), "POST", path, body, headers)
    expected = direct(protocol, stream)
    assert answer.status == expected.status == 200
    assert answer.body == expected.body  # type: ignore[attr-defined]
    assert answer.headers["content-type"] == expected.getheader("content-type")
    assert ("text/event-stream" in answer.headers["content-type"]) is stream
    figures, cost, model = EXPECTED[protocol]
    usage = cell.proxy.usage()
    assert usage.model_dump(include=set(figures)) == figures
    assert usage.calls == 1
    assert usage.cost_usd == pytest.approx(cost, rel=1e-12)
    assert usage.price_table == "rra-prices 2026-12-01"
    assert (usage.retries, usage.refused, usage.unpriced_models) == (0, 0, [])
    [line] = cell.log_lines()
    assert {key: line[key] for key in figures} == figures
    assert line["cost_usd"] == pytest.approx(cost, rel=1e-12)
    assert (line["model"], line["stream"], line["status"], line["metered"]) == (model, stream, 200, True)
    assert line["ttfb_s"] is not None and 0 < line["ttfb_s"] <= line["latency_s"]


def test_streamed_chat_is_asked_for_its_usage(make_cell: MakeCell) -> None:
    """A streamed Chat Completions request without include_usage gets it added (else OpenAI states
    no usage in a stream); the other stream options stay; the client sees the usage chunk."""
    cell = make_cell([reply("chat")])
    body = {"model": "gpt-4o", "stream": True, "stream_options": {"include_obfuscation": False},
            "messages": [{"role": "user", "content": "hi"}]}
    answer = call(cell.connect(), "POST", "/v1/chat/completions", body)
    sent = cell.upstream.requests[0].body
    assert sent["stream_options"] == {"include_obfuscation": False, "include_usage": True}
    assert {k: v for k, v in sent.items() if k != "stream_options"} == {k: v for k, v in body.items()
                                                                        if k != "stream_options"}
    assert b'"choices":[],"usage":{"prompt_tokens":6200' in answer.body
    assert cell.proxy.usage().input_tokens == 1200


def test_a_request_with_nothing_to_change_is_forwarded_byte_for_byte(make_cell: MakeCell) -> None:
    cell = make_cell([reply("anthropic")])
    raw = b'{"model":  "claude-haiku-4-5",\n "max_tokens": 5, "messages": [{"role": "user", "content": "\\u00e9"}]}'
    call(cell.connect(), "POST", "/v1/messages", raw, {"x-api-key": "dummy"})
    assert cell.upstream.requests[0].raw == raw


def test_gemini_stream_as_one_json_array_is_metered(make_cell: MakeCell) -> None:
    cell = make_cell([reply("gemini")])
    answer = call(cell.connect("unix"), "POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
                  {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    chunks = answer.json()
    assert isinstance(chunks, list) and len(chunks) > 1
    assert cell.proxy.usage().model_dump(include=set(EXPECTED["gemini"][0])) == EXPECTED["gemini"][0]


def test_stream_chunks_reach_the_client_as_they_come(make_cell: MakeCell) -> None:
    """The first event arrives long before the upstream ends its stream (no buffering)."""
    slow = ScriptedReply("one two three four five six seven eight", usage=ANTHROPIC_USAGE, pause_s=0.15)
    cell = make_cell([slow])
    conn = cell.connect("unix")
    path, body, headers = request("anthropic", True)
    started = time.perf_counter()
    conn.request("POST", path, json.dumps(body), headers)
    response = conn.getresponse()
    first = response.read1(65536)
    first_at = time.perf_counter() - started
    rest = response.read()
    total = time.perf_counter() - started
    assert first.startswith(b"event: message_start")
    # 9 events after the first, 0.15 s apart: at least 1.35 s in all.
    assert total >= 1.3
    assert first_at < 0.5
    assert b"event: message_stop" in rest
    assert cell.proxy.usage().output_tokens == 340


def test_many_clients_at_once_are_counted_exactly(make_cell: MakeCell) -> None:
    usage = ScriptedUsage(input=3, output=2, cache_read=1)
    cell = make_cell([], default=ScriptedReply("ok", usage=usage))
    errors: list[BaseException] = []

    def client(n: int) -> None:
        try:
            conn = cell.connect("unix" if n % 2 else "tcp")
            for i in range(10):
                protocol = ("anthropic", "chat", "responses", "gemini")[(n + i) % 4]
                path, body, headers = request(protocol, bool(i % 2))
                assert call(conn, "POST", path, body, headers).status == 200
            conn.close()
        except BaseException as error:  # noqa: BLE001 (reported by the main thread)
            errors.append(error)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    metered = cell.proxy.usage()
    assert (metered.calls, metered.input_tokens, metered.output_tokens, metered.cache_read_tokens) == (80, 240, 160, 80)
    assert len(cell.log_lines()) == 80



def test_a_client_that_leaves_mid_stream_is_still_metered(make_cell: MakeCell) -> None:
    """The upstream goes on generating (and billing) after the agent hangs up: the proxy reads
    the stream to its end to meter it."""
    slow = ScriptedReply("one two three four five six seven eight", usage=ANTHROPIC_USAGE, pause_s=0.05)
    cell = make_cell([slow])
    conn = cell.connect("unix")
    path, body, headers = request("anthropic", True)
    conn.request("POST", path, json.dumps(body), headers)
    assert conn.getresponse().read1(65536).startswith(b"event: message_start")
    conn.close()
    deadline = time.monotonic() + 10
    while not cell.log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    [line] = cell.log_lines()
    assert line["error"] == "rra: the client closed the connection before the answer ended"
    assert (line["input_tokens"], line["output_tokens"]) == (1200, 340)
    assert cell.proxy.usage().output_tokens == 340


def test_a_chunked_request_body_is_read(make_cell: MakeCell) -> None:
    cell = make_cell([reply("responses")])
    conn = cell.connect()
    pieces = [b'{"model": "gpt-5", ', b'"input": "train it", ', b'"stream": false}']
    conn.request("POST", "/v1/responses", iter(pieces), {"Content-Type": "application/json"}, encode_chunked=True)
    response = conn.getresponse()
    assert response.status == 200 and json.loads(response.read())["status"] == "completed"
    assert cell.upstream.requests[0].raw == b"".join(pieces)
    assert cell.proxy.usage().calls == 1
