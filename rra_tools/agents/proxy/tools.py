"""Stripping the tools a provider runs on its own side (web search, fetching pages, running
code, MCP servers) from a request.

A sandboxed agent has no network on purpose; a tool that the provider runs would give it one
through the proxy (and the provider bills it apart from tokens). Such tools are removed from the
request before it is forwarded, unless the operator allows them by name, and the call log says
what was removed. Names are the tool's type as the request states it (``web_search_20250305``)
or its family (``web_search``), and for the other fields their own name (``mcp_servers``,
``web_search_options``, ``googleSearch``).

>>> body = {"tools": [{"type": "web_search_20250305", "name": "web_search"}, {"name": "Bash"}]}
>>> strip_tools("anthropic-messages", body, frozenset())
['web_search_20250305']
>>> body
{'tools': [{'name': 'Bash'}]}
"""

from __future__ import annotations

from typing import Any

__all__ = ["STRIP_MARKERS", "strip_tools"]

_ANTHROPIC_FAMILIES = ("web_search", "web_fetch", "code_execution")
# Longest first: a dated type (web_search_preview_2025_03_11) belongs to the longest family it extends.
_RESPONSES_FAMILIES = ("web_search_preview", "code_interpreter", "file_search", "web_search", "mcp")
_GEMINI_TOOLS = ("googleSearch", "googleSearchRetrieval", "codeExecution", "urlContext")

#: Per protocol, byte strings at least one of which a request holds when it has something to
#: strip: a request without any is forwarded as it came, without decoding it.
STRIP_MARKERS: dict[str, tuple[bytes, ...]] = {
    "anthropic-messages": (b"web_search_", b"web_fetch_", b"code_execution_", b"mcp_servers"),
    "openai-responses": (b"web_search", b"code_interpreter", b'"mcp"', b"file_search"),
    "openai-chat": (b"web_search_options",),
    # Google's JSON mapping also accepts the snake_case names of its fields.
    "gemini-generate": (b"googleSearch", b"codeExecution", b"urlContext", b"google_search", b"code_execution",
                        b"url_context"),
}
_GEMINI_SNAKE = {"google_search": "googleSearch", "google_search_retrieval": "googleSearchRetrieval",
                 "code_execution": "codeExecution", "url_context": "urlContext"}


def _allowed(name: str, family: str, allowed: frozenset[str]) -> bool:
    return name in allowed or family in allowed


def _family(kind: str, families: tuple[str, ...], *, exact: bool) -> str | None:
    # Anthropic's types are always dated (web_search_20250305); OpenAI's may be (web_search_2025_08_26).
    for family in families:
        if (exact and kind == family) or kind.startswith(family + "_"):
            return family
    return None


def strip_tools(protocol: str, body: dict[str, Any], allowed: frozenset[str]) -> list[str]:
    """Remove from ``body`` (in place) the provider-side tools of ``protocol`` not in ``allowed``;
    the names of what was removed, in the order found."""
    stripped: list[str] = []
    tools = body.get("tools")
    if protocol == "anthropic-messages":
        if isinstance(tools, list):
            kept = []
            for tool in tools:
                kind = tool.get("type") if isinstance(tool, dict) else None
                family = _family(kind, _ANTHROPIC_FAMILIES, exact=False) if isinstance(kind, str) else None
                if family is not None and isinstance(kind, str) and not _allowed(kind, family, allowed):
                    stripped.append(kind)
                else:
                    kept.append(tool)
            body["tools"] = kept
        if "mcp_servers" in body and "mcp_servers" not in allowed:
            del body["mcp_servers"]
            stripped.append("mcp_servers")
    elif protocol == "openai-responses":
        if isinstance(tools, list):
            kept = []
            for tool in tools:
                kind = tool.get("type") if isinstance(tool, dict) else None
                family = _family(kind, _RESPONSES_FAMILIES, exact=True) if isinstance(kind, str) else None
                if family is not None and isinstance(kind, str) and not _allowed(kind, family, allowed):
                    stripped.append(kind)
                else:
                    kept.append(tool)
            body["tools"] = kept
    elif protocol == "openai-chat":
        if "web_search_options" in body and "web_search_options" not in allowed:
            del body["web_search_options"]
            stripped.append("web_search_options")
    elif protocol == "gemini-generate" and isinstance(tools, list):
        kept = []
        for tool in tools:
            if isinstance(tool, dict):
                for key in list(tool):
                    name = _GEMINI_SNAKE.get(key, key)
                    if name in _GEMINI_TOOLS and name not in allowed and key not in allowed:
                        del tool[key]
                        stripped.append(name)
                if not tool:
                    continue  # an entry left empty would be refused by the upstream
            kept.append(tool)
        body["tools"] = kept
    return stripped
