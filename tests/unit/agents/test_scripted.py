"""The scripted loopback model speaks each provider's protocol in its real shapes and event
sequences, with the script's usage in the provider's own fields."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest

from rra_tools.agents.scripted import ScriptedFailure, ScriptedReply, ScriptedUpstream, ScriptedUsage

from .conftest import Answer, call

USAGE = ScriptedUsage(input=100, output=60, cache_read=400, cache_write=50, reasoning=20)
REPLY = ScriptedReply("Done: the accuracy is 0.91.", tool_call=("Write", {"file_path": "/w/s.json", "content": "{}"}),
                      usage=USAGE)


@pytest.fixture
def upstream() -> Iterator[ScriptedUpstream]:
    with ScriptedUpstream([REPLY]) as model:
        yield model


def post(model: ScriptedUpstream, path: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> Answer:
    return call(http.client.HTTPConnection("127.0.0.1", model.port), "POST", path, body, headers)


def events(body: bytes, separator: bytes = b"\n\n") -> list[tuple[str | None, Any]]:
    """(event name, decoded data) of each server-sent event."""
    found = []
    assert body.endswith(separator)
    for block in body[:-len(separator)].split(separator):
        lines = block.decode().splitlines()
        name = next((line[7:] for line in lines if line.startswith("event: ")), None)
        [data] = [line[6:] for line in lines if line.startswith("data: ")]
        found.append((name, data if data == "[DONE]" else json.loads(data)))
    return found


def test_anthropic_stream(upstream: ScriptedUpstream) -> None:
    answer = post(upstream, "/v1/messages?beta=true", {"model": "claude-sonnet-4-5", "stream": True, "messages": []})
    assert answer.headers["content-type"] == "text/event-stream"
    assert answer.headers["transfer-encoding"] == "chunked"
    found = events(answer.body)
    for name, data in found:
        assert data["type"] == name
    names = [name for name, _ in found]
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 2
    start = found[0][1]["message"]
    assert start["usage"]["input_tokens"] == 100 and start["usage"]["cache_read_input_tokens"] == 400
    assert start["usage"]["cache_creation_input_tokens"] == 50 and start["content"] == []
    text = "".join(d["delta"]["text"] for n, d in found if n == "content_block_delta" and d["index"] == 0)
    tool_json = "".join(d["delta"]["partial_json"] for n, d in found if n == "content_block_delta" and d["index"] == 1)
    assert text == REPLY.text
    assert json.loads(tool_json) == {"file_path": "/w/s.json", "content": "{}"}
    tool_start = [d for n, d in found if n == "content_block_start"][1]["content_block"]
    assert (tool_start["type"], tool_start["name"], tool_start["input"]) == ("tool_use", "Write", {})
    delta = found[-2][1]
    assert delta["delta"]["stop_reason"] == "tool_use" and delta["usage"] == {"output_tokens": 60}


def test_anthropic_whole(upstream: ScriptedUpstream) -> None:
    answer = post(upstream, "/v1/messages", {"model": "claude-sonnet-4-5", "messages": []}).json()
    assert answer["type"] == "message" and answer["role"] == "assistant" and answer["model"] == "claude-sonnet-4-5"
    assert answer["content"][0] == {"type": "text", "text": REPLY.text}
    assert answer["content"][1]["type"] == "tool_use" and answer["content"][1]["input"]["file_path"] == "/w/s.json"
    usage = answer["usage"]
    assert (usage["input_tokens"], usage["output_tokens"], usage["cache_read_input_tokens"],
            usage["cache_creation_input_tokens"]) == (100, 60, 400, 50)


@pytest.mark.parametrize("include_usage", [False, True])
def test_chat_stream(upstream: ScriptedUpstream, include_usage: bool) -> None:
    body: dict[str, Any] = {"model": "gpt-4o", "stream": True, "messages": []}
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    found = events(post(upstream, "/v1/chat/completions", body).body)
    assert found[-1] == (None, "[DONE]")
    chunks = [data for _, data in found[:-1]]
    assert all(chunk["object"] == "chat.completion.chunk" for chunk in chunks)
    if include_usage:
        assert all(chunk["usage"] is None for chunk in chunks[:-1])
        last = chunks.pop()
        assert last["choices"] == []
        assert last["usage"]["prompt_tokens"] == 550  # input + cache read + cache write
        assert last["usage"]["prompt_tokens_details"]["cached_tokens"] == 400
        assert last["usage"]["completion_tokens"] == 60
        assert last["usage"]["completion_tokens_details"]["reasoning_tokens"] == 20
    else:
        assert all("usage" not in chunk for chunk in chunks)
    deltas = [chunk["choices"][0]["delta"] for chunk in chunks]
    assert deltas[0]["role"] == "assistant"
    assert "".join(d.get("content") or "" for d in deltas) == REPLY.text
    calls = [c for d in deltas for c in d.get("tool_calls", [])]
    assert calls[0]["function"]["name"] == "Write" and calls[0]["id"].startswith("call_")
    assert json.loads("".join(c["function"]["arguments"] for c in calls))["content"] == "{}"
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_chat_whole(upstream: ScriptedUpstream) -> None:
    answer = post(upstream, "/v1/chat/completions", {"model": "gpt-4o", "messages": []}).json()
    message = answer["choices"][0]["message"]
    assert message["content"] == REPLY.text
    assert json.loads(message["tool_calls"][0]["function"]["arguments"])["file_path"] == "/w/s.json"
    assert answer["usage"]["total_tokens"] == 610


def test_responses_stream(upstream: ScriptedUpstream) -> None:
    found = events(post(upstream, "/v1/responses", {"model": "gpt-5", "input": "x", "stream": True}).body)
    names = [name for name, _ in found]
    assert [data["sequence_number"] for _, data in found] == list(range(len(found)))
    assert all(data["type"] == name for name, data in found)
    assert names[:4] == ["response.created", "response.in_progress", "response.output_item.added",
                         "response.content_part.added"]
    assert names[-1] == "response.completed"
    assert {"response.output_text.done", "response.function_call_arguments.done"} <= set(names)
    text = "".join(data["delta"] for name, data in found if name == "response.output_text.delta")
    arguments = "".join(data["delta"] for name, data in found if name == "response.function_call_arguments.delta")
    assert text == REPLY.text and json.loads(arguments)["file_path"] == "/w/s.json"
    created, completed = found[0][1]["response"], found[-1][1]["response"]
    assert (created["status"], created["usage"]) == ("in_progress", None)
    assert completed["status"] == "completed"
    assert completed["usage"] == {"input_tokens": 550, "input_tokens_details": {"cached_tokens": 400},
                                  "output_tokens": 60, "output_tokens_details": {"reasoning_tokens": 20},
                                  "total_tokens": 610}
    done = [data["item"] for name, data in found if name == "response.output_item.done"]
    assert done == completed["output"]
    assert [item["type"] for item in done] == ["message", "function_call"]


def test_gemini_stream(upstream: ScriptedUpstream) -> None:
    answer = post(upstream, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", {"contents": []})
    found = events(answer.body, b"\r\n\r\n")
    chunks = [data for _, data in found]
    assert all(chunk["modelVersion"] == "gemini-2.5-flash" for chunk in chunks)
    parts = [part for chunk in chunks for part in chunk["candidates"][0]["content"]["parts"]]
    assert "".join(part.get("text", "") for part in parts) == REPLY.text
    assert parts[-1]["functionCall"] == {"name": "Write", "args": {"file_path": "/w/s.json", "content": "{}"}}
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert all("finishReason" not in chunk["candidates"][0] for chunk in chunks[:-1])
    usage = chunks[-1]["usageMetadata"]
    assert (usage["promptTokenCount"], usage["cachedContentTokenCount"], usage["candidatesTokenCount"],
            usage["thoughtsTokenCount"], usage["totalTokenCount"]) == (550, 400, 40, 20, 610)


def test_gemini_whole_leaves_out_zero_figures() -> None:
    with ScriptedUpstream([ScriptedReply("hi", usage=ScriptedUsage(input=3, output=2))]) as model:
        answer = post(model, "/v1beta/models/gemini-2.5-pro:generateContent", {"contents": []}).json()
    assert answer["candidates"][0]["content"] == {"parts": [{"text": "hi"}], "role": "model"}
    assert answer["usageMetadata"] == {"promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5,
                                       "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 3}]}


@pytest.mark.parametrize(("path", "status", "body"), [
    ("/v1/messages", 529, {"type": "error", "error": {"type": "overloaded_error",
                                                      "message": "scripted upstream: scripted failure 529"}}),
    ("/v1/responses", 429, {"error": {"message": "scripted upstream: scripted failure 429", "type": "requests",
                                      "param": None, "code": "rate_limit_exceeded"}}),
    ("/v1beta/models/g:generateContent", 503, {"error": {"code": 503, "status": "UNAVAILABLE",
                                                         "message": "scripted upstream: scripted failure 503"}}),
])
def test_scripted_failures(path: str, status: int, body: dict[str, Any]) -> None:
    with ScriptedUpstream([ScriptedFailure(status, retry_after=2), REPLY]) as model:
        failed = post(model, path, {"model": "m"})
        assert (failed.status, failed.json(), failed.headers["retry-after"]) == (status, body, "2")
        assert post(model, path, {"model": "m"}).status == 200
        assert model.calls == 2


def test_the_script_runs_out_unless_there_is_a_default() -> None:
    with ScriptedUpstream([REPLY]) as model:
        post(model, "/v1/messages", {"model": "m"})
        answer = post(model, "/v1/messages", {"model": "m"})
        assert answer.status == 400
        assert answer.json()["error"]["message"] == "scripted upstream: the script has no reply left for call 2"
    with ScriptedUpstream([], default=ScriptedReply("again")) as model:
        for _ in range(3):
            assert post(model, "/v1/messages", {"model": "m"}).json()["content"][0]["text"] == "again"


def test_requests_are_recorded(upstream: ScriptedUpstream) -> None:
    post(upstream, "/v1/messages?beta=true", {"model": "m", "tools": []}, {"X-Api-Key": "k1", "anthropic-beta": "b"})
    [received] = upstream.requests
    assert (received.method, received.path, received.body) == ("POST", "/v1/messages?beta=true",
                                                               {"model": "m", "tools": []})
    assert received.headers["x-api-key"] == "k1" and received.headers["anthropic-beta"] == "b"
    assert json.loads(received.raw) == received.body


def test_two_fresh_upstreams_answer_with_the_same_bytes() -> None:
    bodies = []
    for _ in range(2):
        with ScriptedUpstream([REPLY]) as model:
            bodies.append(post(model, "/v1/responses", {"model": "gpt-5", "stream": True}).body)
    assert bodies[0] == bodies[1]


def test_models_counting_and_unknown_paths(upstream: ScriptedUpstream) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", upstream.port)
    assert call(conn, "GET", "/v1/models").json()["data"][0]["id"] == "scripted"
    assert "input_tokens" in call(conn, "POST", "/v1/messages/count_tokens", {"model": "m"}).json()
    assert call(conn, "POST", "/v1/embeddings", {"model": "m"}).status == 404
    assert upstream.calls == 0
