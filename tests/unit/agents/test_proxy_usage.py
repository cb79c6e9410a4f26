"""Reading usage from the bytes of a stream however they are cut, and from each provider's fields."""

from __future__ import annotations

import http.client
import json
from functools import cache

import pytest

from rra_tools.agents.proxy.usage import StreamMeter, Usage, usage_from_answer
from rra_tools.agents.scripted import ScriptedReply, ScriptedUpstream, ScriptedUsage

USAGE = ScriptedUsage(input=1200, output=340, cache_read=5000, cache_write=0, reasoning=120)


PATHS = {"anthropic-messages": "/v1/messages", "openai-chat": "/v1/chat/completions",
         "openai-responses": "/v1/responses", "gemini-generate": "/v1beta/models/gpt-5:streamGenerateContent?alt=sse"}


@cache
def stream_of(protocol: str) -> bytes:
    """The bytes of a stream as the scripted model sends them."""
    reply = ScriptedReply("a b c d e f g", tool_call=("f", {"x": 1}), usage=USAGE)
    with ScriptedUpstream([reply]) as upstream:
        conn = http.client.HTTPConnection("127.0.0.1", upstream.port)
        conn.request("POST", PATHS[protocol], json.dumps({"model": "gpt-5", "stream": True,
                                                          "stream_options": {"include_usage": True}}))
        data = conn.getresponse().read()
        conn.close()
    return data


@pytest.mark.parametrize("protocol", ["anthropic-messages", "openai-chat", "openai-responses", "gemini-generate"])
@pytest.mark.parametrize("cut", [1, 2, 7, 1000, 10**6])
def test_the_same_usage_however_the_stream_is_cut(protocol: str, cut: int) -> None:
    data = stream_of(protocol)
    meter = StreamMeter(protocol, sse=True)
    for start in range(0, len(data), cut):
        meter.feed(data[start:start + cut])
    usage, model = meter.finish()
    reasoning = 0 if protocol == "anthropic-messages" else 120
    assert usage == Usage(1200, 340, 5000, 0, reasoning)
    assert model == "gpt-5"


def test_anthropic_message_delta_replaces_figures_it_states() -> None:
    meter = StreamMeter("anthropic-messages", sse=True)
    meter.feed(b'event: message_start\r\ndata: {"type":"message_start","message":{"model":"claude-opus-4-5",'
               b'"usage":{"input_tokens":10,"cache_read_input_tokens":90,"cache_creation_input_tokens":0,'
               b'"output_tokens":1}}}\r\n\r\n'
               b'event: message_delta\r\ndata: {"type":"message_delta","usage":{"output_tokens":30}}\r\n\r\n'
               b'event: message_delta\r\ndata: {"type":"message_delta","usage":{"input_tokens":12,'
               b'"cache_creation_input_tokens":null,"output_tokens":45}}')  # no blank line at the end
    assert meter.finish() == (Usage(12, 45, 90, 0, 0), "claude-opus-4-5")


def test_a_stream_without_usage_states_none() -> None:
    meter = StreamMeter("openai-chat", sse=True)
    meter.feed(b'data: {"model":"gpt-4o","choices":[{"delta":{"content":"x"}}],"usage":null}\n\ndata: [DONE]\n\n')
    assert meter.finish() == (None, "gpt-4o")


def test_gemini_tool_use_prompt_is_input_and_thoughts_are_output() -> None:
    answer = {"usageMetadata": {"promptTokenCount": 100, "cachedContentTokenCount": 40, "toolUsePromptTokenCount": 7,
                                "candidatesTokenCount": 20, "thoughtsTokenCount": 30, "totalTokenCount": 157},
              "modelVersion": "gemini-2.5-pro"}
    assert usage_from_answer("gemini-generate", answer) == (Usage(67, 50, 40, 0, 30), "gemini-2.5-pro")


def test_an_error_body_states_no_usage() -> None:
    assert usage_from_answer("anthropic-messages", {"type": "error", "error": {}}) == (None, None)
    assert usage_from_answer("openai-chat", [1, 2]) == (None, None)


def test_figures_that_are_not_counts_count_zero() -> None:
    answer = {"usage": {"prompt_tokens": 10, "completion_tokens": "5", "prompt_tokens_details": None,
                        "completion_tokens_details": {"reasoning_tokens": True}}}
    assert usage_from_answer("openai-chat", answer) == (Usage(10, 0, 0, 0, 0), None)
