"""Which provider and protocol a request path belongs to.

The agent's SDKs are pointed at the proxy with their usual base URLs, so the path alone says
where a call goes: ``/v1/messages`` is Anthropic's Messages API, ``/v1/chat/completions`` and
``/v1/responses`` OpenAI's, ``/v1beta/models/{model}:generateContent`` (and the ``v1`` form)
Google's. A few paths that are not model calls (listing models, counting tokens) are forwarded
unmetered; every other path is refused.

>>> route("POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", {})
Route(provider='gemini', protocol='gemini-generate', metered=True, model='gemini-2.5-flash', stream=True)
>>> route("POST", "/v1/files", {}) is None
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["PROTOCOLS", "Route", "guess_provider", "route"]

#: The metered protocols: one model call each.
PROTOCOLS = ("anthropic-messages", "openai-chat", "openai-responses", "gemini-generate")

_GEMINI = re.compile(r"/v1(?:beta)?/models/([^/:]+):(generateContent|streamGenerateContent|countTokens)")
_GEMINI_MODELS = re.compile(r"/v1beta/models(?:/[^/:]+)?")
_MODELS = re.compile(r"/v1/models(?:/[^/:]+)?")


@dataclass(frozen=True)
class Route:
    """Where a request goes: the provider, its protocol, whether it is a metered model call, and
    what the path alone says of the model and of streaming (Google puts both in the path)."""

    provider: str
    protocol: str
    metered: bool
    model: str | None = None
    stream: bool = False


_FIXED = {
    ("POST", "/v1/messages"): Route("anthropic", "anthropic-messages", True),
    ("POST", "/v1/messages/count_tokens"): Route("anthropic", "anthropic-count-tokens", False),
    ("POST", "/v1/chat/completions"): Route("openai", "openai-chat", True),
    ("POST", "/v1/responses"): Route("openai", "openai-responses", True),
    ("POST", "/v1/responses/input_tokens"): Route("openai", "openai-input-tokens", False),
}


def guess_provider(path: str, headers: Mapping[str, str]) -> str:
    """The provider a request most likely meant, for the shape of an error about it: Google's for
    its paths and key header, Anthropic's when its version header or key header is there, else
    OpenAI's. ``headers`` has lower-case names."""
    if path.startswith("/v1beta/") or "x-goog-api-key" in headers:
        return "gemini"
    if "anthropic-version" in headers or "x-api-key" in headers:
        return "anthropic"
    return "openai"


def route(method: str, path: str, headers: Mapping[str, str]) -> Route | None:
    """The route of ``method`` ``path`` (no query string), or None when the proxy does not forward it.

    ``headers`` (lower-case names) decide only whose ``GET /v1/models`` it is.
    """
    fixed = _FIXED.get((method, path))
    if fixed is not None:
        return fixed
    if method == "POST":
        match = _GEMINI.fullmatch(path)
        if match is None:
            return None
        model, verb = match.group(1), match.group(2)
        if verb == "countTokens":
            return Route("gemini", "gemini-count-tokens", False, model)
        return Route("gemini", "gemini-generate", True, model, verb == "streamGenerateContent")
    if method == "GET":
        if _GEMINI_MODELS.fullmatch(path):
            return Route("gemini", "models", False)
        if _MODELS.fullmatch(path):
            return Route(guess_provider(path, headers), "models", False)
    return None
