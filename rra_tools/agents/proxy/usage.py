"""Token usage read from an upstream's own answer, normalised across the providers.

The normalised figures (those of :class:`~rra_tools.model.cell.MeteredUsage`):

- ``input_tokens``: input neither read from nor written to the prompt cache. Anthropic states it
  as ``input_tokens``; OpenAI's ``prompt_tokens`` (Chat Completions) and ``input_tokens``
  (Responses) include the cached part, which is subtracted; Google's ``promptTokenCount``
  includes ``cachedContentTokenCount``, which is subtracted, and its ``toolUsePromptTokenCount``
  (tool results, billed as input) is added.
- ``cache_read_tokens``: Anthropic's ``cache_read_input_tokens``, OpenAI's ``cached_tokens``,
  Google's ``cachedContentTokenCount``.
- ``cache_write_tokens``: Anthropic's ``cache_creation_input_tokens``; the others state none (they
  bill writing to the cache as plain input).
- ``output_tokens``: all output, reasoning included: Anthropic's ``output_tokens`` (thinking is in
  it), OpenAI's ``completion_tokens`` / ``output_tokens``, Google's ``candidatesTokenCount`` plus
  ``thoughtsTokenCount`` (stated apart there).
- ``reasoning_tokens``: the reasoning part of the output where the upstream states it (OpenAI's
  ``reasoning_tokens``, Google's ``thoughtsTokenCount``); Anthropic states none, so 0.

A streamed answer is read as it passes (:class:`StreamMeter`): Anthropic's ``message_start``
holds the input figures and each ``message_delta`` the cumulative ones (the last wins, figure by
figure); OpenAI's Chat Completions stream states usage in its last chunk when the request asked
for ``stream_options.include_usage`` (the proxy asks); the Responses stream in
``response.completed`` (or ``.incomplete``, ``.failed``); Google's in the last ``usageMetadata``.
Only the events that can hold usage are decoded, and only after the bytes went on to the client.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["StreamMeter", "Usage", "usage_from_answer"]

# A streamed JSON answer (Google's stream without alt=sse) is kept to be read at its end, up to this.
_JSON_STREAM_LIMIT = 64 * 1024 * 1024
_USAGE_NULL = re.compile(rb'"usage"\s*:\s*null')


@dataclass(frozen=True)
class Usage:
    """The normalised usage of one model call (see the module docstring for each figure)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total(self) -> int:
        """Every token the call processed: input, cache read and written, output."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens + self.output_tokens


def _count(value: Any) -> int:
    # An upstream's figure, or 0 when it is absent, null or not a count.
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _anthropic(usage: dict[str, Any]) -> Usage:
    return Usage(input_tokens=_count(usage.get("input_tokens")), output_tokens=_count(usage.get("output_tokens")),
                 cache_read_tokens=_count(usage.get("cache_read_input_tokens")),
                 cache_write_tokens=_count(usage.get("cache_creation_input_tokens")))


def _details(usage: dict[str, Any], key: str, field: str) -> int:
    details = usage.get(key)
    return _count(details.get(field)) if isinstance(details, dict) else 0


def _openai_chat(usage: dict[str, Any]) -> Usage:
    cached = _details(usage, "prompt_tokens_details", "cached_tokens")
    return Usage(input_tokens=max(0, _count(usage.get("prompt_tokens")) - cached),
                 output_tokens=_count(usage.get("completion_tokens")), cache_read_tokens=cached,
                 reasoning_tokens=_details(usage, "completion_tokens_details", "reasoning_tokens"))


def _openai_responses(usage: dict[str, Any]) -> Usage:
    cached = _details(usage, "input_tokens_details", "cached_tokens")
    return Usage(input_tokens=max(0, _count(usage.get("input_tokens")) - cached),
                 output_tokens=_count(usage.get("output_tokens")), cache_read_tokens=cached,
                 reasoning_tokens=_details(usage, "output_tokens_details", "reasoning_tokens"))


def _gemini(usage: dict[str, Any]) -> Usage:
    cached = _count(usage.get("cachedContentTokenCount"))
    thoughts = _count(usage.get("thoughtsTokenCount"))
    prompt = max(0, _count(usage.get("promptTokenCount")) - cached) + _count(usage.get("toolUsePromptTokenCount"))
    return Usage(input_tokens=prompt, output_tokens=_count(usage.get("candidatesTokenCount")) + thoughts,
                 cache_read_tokens=cached, reasoning_tokens=thoughts)


def _model(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def usage_from_answer(protocol: str, document: Any) -> tuple[Usage | None, str | None]:
    """The usage and the model named in a whole (not streamed) answer of ``protocol``; (None, None)
    for what is not an answer (an error body).

    >>> usage_from_answer("openai-chat", {"model": "gpt-4o", "usage": {"prompt_tokens": 10,
    ...     "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 4}}})
    (Usage(input_tokens=6, output_tokens=3, cache_read_tokens=4, cache_write_tokens=0, reasoning_tokens=0), 'gpt-4o')
    """
    if protocol == "gemini-generate" and isinstance(document, list):
        # Google's stream without alt=sse is one JSON array of chunks; the last usage wins.
        found: tuple[Usage | None, str | None] = (None, None)
        for chunk in document:
            answer = usage_from_answer(protocol, chunk)
            if answer[0] is not None:
                found = answer
        return found
    if not isinstance(document, dict):
        return None, None
    if protocol == "openai-responses" and isinstance(document.get("response"), dict):
        document = document["response"]  # a streamed response.completed event
    usage = document.get("usageMetadata" if protocol == "gemini-generate" else "usage")
    model = _model(document.get("modelVersion" if protocol == "gemini-generate" else "model"))
    if not isinstance(usage, dict):
        return None, model
    if protocol == "anthropic-messages":
        return _anthropic(usage), model
    if protocol == "openai-chat":
        return _openai_chat(usage), model
    if protocol == "openai-responses":
        return _openai_responses(usage), model
    return _gemini(usage), model


class StreamMeter:
    """Reads the usage of a streamed answer from its bytes as they pass (``feed``), then ``finish``.

    Server-sent events are cut at their blank lines; only the events that can hold usage are kept,
    and each is decoded once (Anthropic's two) or only the last one at the end (the others), so the
    work per chunk is a few byte searches.

    >>> meter = StreamMeter("anthropic-messages", sse=True)
    >>> meter.feed(b'event: message_start\\ndata: {"type":"message_start","message":{"model":"claude-haiku-4-5",'
    ...            b'"usage":{"input_tokens":5,"output_tokens":1}}}\\n\\nevent: message_delta\\ndata: {"type":')
    >>> meter.feed(b'"message_delta","usage":{"output_tokens":9}}\\n\\n')
    >>> meter.finish()
    (Usage(input_tokens=5, output_tokens=9, cache_read_tokens=0, cache_write_tokens=0, reasoning_tokens=0), 'claude-haiku-4-5')
    """

    def __init__(self, protocol: str, *, sse: bool) -> None:
        self.protocol = protocol
        self.sse = sse
        self._pending = b""
        self._json = bytearray()
        self._json_over = False
        self._anthropic: dict[str, Any] = {}
        self._model: str | None = None
        self._first: bytes | None = None  # OpenAI chat: the first chunk names the model if no usage comes
        self._last: bytes | None = None   # the last event that can hold usage, decoded at the end

    def feed(self, chunk: bytes) -> None:
        """Take the next bytes of the answer."""
        if not self.sse:
            if not self._json_over:
                self._json += chunk
                self._json_over = len(self._json) > _JSON_STREAM_LIMIT
            return
        text = self._pending + chunk
        # A CR LF may be cut between two chunks: keep a trailing CR for the next one.
        keep = b"\r" if text.endswith(b"\r") else b""
        if keep:
            text = text[:-1]
        events = text.replace(b"\r\n", b"\n").split(b"\n\n")
        self._pending = events.pop() + keep
        for event in events:
            self._event(event)

    def _event(self, event: bytes) -> None:
        data = b"\n".join(line[5:].lstrip(b" ") for line in event.split(b"\n") if line.startswith(b"data:"))
        if not data:
            return
        protocol = self.protocol
        if protocol == "anthropic-messages":
            if b'"message_start"' in data or b'"message_delta"' in data:
                self._anthropic_event(data)
        elif protocol == "openai-chat":
            if self._first is None and data.startswith(b"{"):
                self._first = data
            if b'"usage"' in data and _USAGE_NULL.search(data) is None:
                self._last = data
        elif protocol == "openai-responses":
            if b'"response.completed"' in data or b'"response.incomplete"' in data or b'"response.failed"' in data:
                self._last = data
        elif b'"usageMetadata"' in data:
            self._last = data

    def _anthropic_event(self, data: bytes) -> None:
        try:
            document = json.loads(data)
        except ValueError:
            return
        if not isinstance(document, dict):
            return
        if document.get("type") == "message_start" and isinstance(document.get("message"), dict):
            message = document["message"]
            self._model = _model(message.get("model")) or self._model
            usage = message.get("usage")
        elif document.get("type") == "message_delta":
            usage = document.get("usage")
        else:
            return
        if isinstance(usage, dict):
            # message_delta's figures are cumulative: each one stated replaces the earlier one.
            self._anthropic.update({key: value for key, value in usage.items() if value is not None})

    def finish(self) -> tuple[Usage | None, str | None]:
        """The usage and model of the whole answer (None where the answer stated none)."""
        if not self.sse:
            if self._json_over:
                return None, None
            try:
                return usage_from_answer(self.protocol, json.loads(self._json))
            except ValueError:
                return None, None
        if self._pending.strip():
            self._event(self._pending)
            self._pending = b""
        if self.protocol == "anthropic-messages":
            return (_anthropic(self._anthropic) if self._anthropic else None), self._model
        usage, model = None, None
        if self._last is not None:
            try:
                usage, model = usage_from_answer(self.protocol, json.loads(self._last))
            except ValueError:
                pass
        if model is None and self._first is not None:
            try:
                first = json.loads(self._first)
                model = _model(first.get("model")) if isinstance(first, dict) else None
            except ValueError:
                pass
        return usage, model
