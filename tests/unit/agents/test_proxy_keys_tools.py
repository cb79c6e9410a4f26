"""The real key replaces the agent's dummy one and is never logged; provider-side tools are
stripped (and kept when the operator allows them), and the call log says what was stripped."""

from __future__ import annotations

from typing import Any

import pytest

from rra_tools.agents.scripted import ScriptedReply, ScriptedUsage

from .conftest import MakeCell, call

KEYS = {"anthropic": "sk-ant-REAL-1", "openai": "sk-REAL-2", "gemini": "AIza-REAL-3"}
OK = ScriptedReply("ok", usage=ScriptedUsage(input=5, output=1))


@pytest.mark.parametrize("headers", [{"x-api-key": "dummy"}, {"Authorization": "Bearer dummy"}],
                         ids=["x-api-key", "bearer"])
def test_anthropic_gets_the_real_key_whatever_the_agent_sent(make_cell: MakeCell, headers: dict[str, str]) -> None:
    cell = make_cell([OK], keys=KEYS)
    call(cell.connect(), "POST", "/v1/messages?beta=true", {"model": "claude-haiku-4-5", "messages": []},
         {**headers, "anthropic-version": "2023-06-01", "anthropic-beta": "a"})
    received = cell.upstream.requests[0]
    assert received.headers["x-api-key"] == "sk-ant-REAL-1"
    assert "authorization" not in received.headers
    assert received.path == "/v1/messages?beta=true"
    assert received.headers["anthropic-version"] == "2023-06-01"
    assert received.headers["anthropic-beta"] == "a"


def test_openai_gets_the_real_key(make_cell: MakeCell) -> None:
    cell = make_cell([OK], keys=KEYS)
    call(cell.connect("unix"), "POST", "/v1/responses", {"model": "gpt-5", "input": "x"},
         {"Authorization": "Bearer dummy", "x-api-key": "dummy"})
    received = cell.upstream.requests[0]
    assert received.headers["authorization"] == "Bearer sk-REAL-2"
    assert "x-api-key" not in received.headers


def test_gemini_gets_the_real_key_in_its_header_and_query(make_cell: MakeCell) -> None:
    cell = make_cell([OK], keys=KEYS)
    call(cell.connect(), "POST", "/v1beta/models/gemini-2.5-pro:generateContent?key=dummy&x=1", {"contents": []},
         {"x-goog-api-key": "dummy"})
    received = cell.upstream.requests[0]
    assert received.headers["x-goog-api-key"] == "AIza-REAL-3"
    assert received.path == "/v1beta/models/gemini-2.5-pro:generateContent?x=1&key=AIza-REAL-3"


def test_without_a_real_key_the_dummy_is_not_forwarded(make_cell: MakeCell) -> None:
    cell = make_cell([OK, OK])
    call(cell.connect(), "POST", "/v1/chat/completions", {"model": "gpt-4o", "messages": []},
         {"Authorization": "Bearer dummy"})
    call(cell.connect(), "POST", "/v1beta/models/gemini-2.5-pro:generateContent?key=dummy", {"contents": []})
    first, second = cell.upstream.requests
    assert "authorization" not in first.headers
    assert second.path == "/v1beta/models/gemini-2.5-pro:generateContent"


def test_no_key_in_the_call_log(make_cell: MakeCell) -> None:
    cell = make_cell([OK, OK, OK], keys=KEYS)
    call(cell.connect(), "POST", "/v1/messages", {"model": "claude-haiku-4-5", "messages": []}, {"x-api-key": "dummy-9"})
    call(cell.connect(), "POST", "/v1beta/models/gemini-2.5-pro:generateContent?key=dummy-9", {"contents": []})
    call(cell.connect(), "POST", "/v1/nowhere?key=dummy-9", {}, {"Authorization": "Bearer dummy-9"})
    text = cell.log.read_text()
    assert len(text.splitlines()) == 3
    for secret in (*KEYS.values(), "dummy-9", "key="):
        assert secret not in text


ANTHROPIC_TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}},
                   {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
                   {"type": "web_fetch_20250910", "name": "web_fetch"},
                   {"type": "code_execution_20250825", "name": "code_execution"}]
CASES: dict[str, tuple[str, dict[str, Any], list[str], dict[str, Any]]] = {
    "anthropic": ("/v1/messages",
                  {"model": "claude-sonnet-4-5", "messages": [], "tools": ANTHROPIC_TOOLS,
                   "mcp_servers": [{"type": "url", "url": "https://example.org/mcp", "name": "x"}]},
                  ["web_search_20250305", "web_fetch_20250910", "code_execution_20250825", "mcp_servers"],
                  {"model": "claude-sonnet-4-5", "messages": [], "tools": ANTHROPIC_TOOLS[:1]}),
    "responses": ("/v1/responses",
                  {"model": "gpt-5", "input": "x", "tools": [
                      {"type": "function", "name": "shell", "parameters": {}}, {"type": "web_search"},
                      {"type": "web_search_preview"}, {"type": "code_interpreter", "container": {"type": "auto"}},
                      {"type": "mcp", "server_label": "x", "server_url": "https://example.org"},
                      {"type": "file_search", "vector_store_ids": ["vs_1"]}, {"type": "web_search_2025_08_26"},
                      {"type": "web_search_preview_2025_03_11"}]},
                  ["web_search", "web_search_preview", "code_interpreter", "mcp", "file_search", "web_search_2025_08_26",
                   "web_search_preview_2025_03_11"],
                  {"model": "gpt-5", "input": "x", "tools": [{"type": "function", "name": "shell", "parameters": {}}]}),
    "chat": ("/v1/chat/completions",
             {"model": "gpt-4o-search-preview", "messages": [], "web_search_options": {}},
             ["web_search_options"], {"model": "gpt-4o-search-preview", "messages": []}),
    "gemini": ("/v1beta/models/gemini-2.5-flash:generateContent",
               {"contents": [], "tools": [{"functionDeclarations": [{"name": "shell"}]}, {"googleSearch": {}},
                                          {"codeExecution": {}, "urlContext": {}}, {"google_search_retrieval": {}}]},
               ["googleSearch", "codeExecution", "urlContext", "googleSearchRetrieval"],
               {"contents": [], "tools": [{"functionDeclarations": [{"name": "shell"}]}]}),
}


@pytest.mark.parametrize("protocol", sorted(CASES))
def test_provider_side_tools_are_stripped(make_cell: MakeCell, protocol: str) -> None:
    path, body, stripped, forwarded = CASES[protocol]
    cell = make_cell([OK])
    assert call(cell.connect(), "POST", path, body).status == 200
    assert cell.upstream.requests[0].body == forwarded
    [line] = cell.log_lines()
    assert line["stripped_tools"] == stripped


@pytest.mark.parametrize("protocol", sorted(CASES))
def test_allowed_tools_are_kept(make_cell: MakeCell, protocol: str) -> None:
    path, body, stripped, _ = CASES[protocol]
    families = {"web_search_20250305": "web_search", "web_fetch_20250910": "web_fetch",
                "code_execution_20250825": "code_execution_20250825", "web_search_2025_08_26": "web_search",
                "web_search_preview_2025_03_11": "web_search_preview_2025_03_11"}
    # Dated types by family or by exact type; the others by their name.
    cell = make_cell([OK], allowed_tools=frozenset(families.get(name, name) for name in stripped))
    call(cell.connect(), "POST", path, body)
    assert cell.upstream.requests[0].body == body
    assert cell.log_lines()[0]["stripped_tools"] == []
