"""A scripted loopback model: a real HTTP server on 127.0.0.1 that answers the providers'
protocols from a script, for tests, benchmarks and the docs' self-checks (no key, no network).

It speaks Anthropic's Messages API (``POST /v1/messages``, with or without ``?beta=true``),
OpenAI's Chat Completions (``POST /v1/chat/completions``) and Responses (``POST /v1/responses``)
and Google's ``POST /v1beta/models/{model}:generateContent`` and ``:streamGenerateContent``
(``?alt=sse`` for server-sent events, else one streamed JSON array), each streamed or not, in
the shapes and event sequences the providers send, so that the real agent programs (Claude
Code, Codex, mini-swe-agent) can be pointed at it. Counting tokens and listing models are
answered too (without using the script).

Each model call takes the next step of the script, in order: a :class:`ScriptedReply` (text,
optionally one tool call, and the usage to report) or a :class:`ScriptedFailure` (an HTTP error
such as 429 or 529, to test retries). The usage in every answer is exactly the script's, in the
provider's own fields; :class:`ScriptedUsage` holds the normalised figures (those of
:class:`~rra_tools.model.cell.MeteredUsage`):

- Anthropic: ``input_tokens`` = input, ``cache_read_input_tokens``, ``cache_creation_input_tokens``,
  ``output_tokens`` = output (no reasoning figure: Anthropic states none);
- OpenAI Chat Completions: ``prompt_tokens`` = input + cache_read + cache_write with
  ``prompt_tokens_details.cached_tokens`` = cache_read, ``completion_tokens`` = output with
  ``completion_tokens_details.reasoning_tokens`` = reasoning; Responses the same as
  ``input_tokens`` / ``input_tokens_details`` / ``output_tokens`` / ``output_tokens_details``;
- Google: ``promptTokenCount`` = input + cache_read + cache_write with ``cachedContentTokenCount``
  = cache_read, ``candidatesTokenCount`` = output - reasoning, ``thoughtsTokenCount`` = reasoning,
  ``totalTokenCount`` their sum.

OpenAI and Google state no cache writes: there ``cache_write`` is reported as plain input.
Every request is recorded (:attr:`ScriptedUpstream.requests`) so that a test can check which
key arrived and what the body held. Ids are numbered by call and ``created`` times are fixed, so
two fresh upstreams given the same script answer the same requests with the same bytes.

>>> import http.client, json
>>> with ScriptedUpstream([ScriptedReply("done", usage=ScriptedUsage(input=11, output=7))]) as model:
...     conn = http.client.HTTPConnection("127.0.0.1", model.port)
...     conn.request("POST", "/v1/messages", json.dumps({"model": "claude-haiku-4-5", "max_tokens": 9,
...                  "messages": [{"role": "user", "content": "say done"}]}))
...     answer = json.loads(conn.getresponse().read())
...     conn.close()
>>> answer["content"], answer["usage"]["input_tokens"], answer["usage"]["output_tokens"]
([{'type': 'text', 'text': 'done'}], 11, 7)
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["ReceivedRequest", "ScriptedFailure", "ScriptedReply", "ScriptedUpstream", "ScriptedUsage"]

#: The ``created`` time of every answer (2025-12-01T00:00:00Z): fixed, so answers are reproducible.
CREATED = 1764547200


@dataclass(frozen=True)
class ScriptedUsage:
    """The normalised usage one reply reports (see the module docstring for each provider's fields).

    ``output`` includes ``reasoning``; ``input`` excludes what was read from or written to the cache.
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0


@dataclass(frozen=True)
class ScriptedReply:
    """One answer: its text, optionally one tool call (name, arguments), its usage, and a pause
    between the events of its stream (to see that a client gets them as they come)."""

    text: str = ""
    tool_call: tuple[str, Mapping[str, Any]] | None = None
    usage: ScriptedUsage = field(default_factory=ScriptedUsage)
    pause_s: float = 0.0


@dataclass(frozen=True)
class ScriptedFailure:
    """One failed call: the HTTP status (429, 500, 503, 529, ...) and an optional Retry-After (s)."""

    status: int = 500
    retry_after: float | None = None


@dataclass(frozen=True)
class ReceivedRequest:
    """A request as the upstream received it: ``headers`` with lower-case names (repeated ones
    joined by ", "), ``body`` parsed from JSON (None when it is not JSON), ``raw`` as sent."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any
    raw: bytes


_GEMINI = re.compile(r"/v1(?:beta)?/models/([^/:]+):(generateContent|streamGenerateContent|countTokens)")
_ERROR_KINDS = {400: ("invalid_request_error", "INVALID_ARGUMENT"), 404: ("not_found_error", "NOT_FOUND"),
                429: ("rate_limit_error", "RESOURCE_EXHAUSTED"), 500: ("api_error", "INTERNAL"),
                503: ("api_error", "UNAVAILABLE"), 529: ("overloaded_error", "UNAVAILABLE")}


def _pieces(text: str) -> list[str]:
    # A text streamed in up to four deltas, cut at word ends (the providers cut at token ends).
    words = re.findall(r"\S+\s*|\s+", text)
    if len(words) <= 1:
        return [text] if text else []
    size = -(-len(words) // 4)
    return ["".join(words[i:i + size]) for i in range(0, len(words), size)]


def _halves(text: str) -> list[str]:
    middle = len(text) // 2
    return [part for part in (text[:middle], text[middle:]) if part]


def _json(document: Any) -> str:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False)


def _sse(event: str | None, document: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {_json(document)}\n\n".encode()


class _Answer:
    """How one protocol renders a reply, whole (``body``) or as a stream (``events``)."""

    def __init__(self, reply: ScriptedReply, number: int, model: str, request: Any) -> None:
        self.reply = reply
        self.number = number
        self.model = model
        self.request = request if isinstance(request, dict) else {}
        usage = reply.usage
        self.prompt = usage.input + usage.cache_read + usage.cache_write  # OpenAI's and Google's prompt figure

    # Anthropic Messages.

    def _anthropic_usage(self, output: int) -> dict[str, Any]:
        usage = self.reply.usage
        return {"input_tokens": usage.input, "cache_creation_input_tokens": usage.cache_write,
                "cache_read_input_tokens": usage.cache_read,
                "cache_creation": {"ephemeral_5m_input_tokens": usage.cache_write, "ephemeral_1h_input_tokens": 0},
                "output_tokens": output, "service_tier": "standard"}

    def _anthropic_blocks(self) -> list[dict[str, Any]]:
        reply = self.reply
        blocks: list[dict[str, Any]] = []
        if reply.text or reply.tool_call is None:
            blocks.append({"type": "text", "text": reply.text})
        if reply.tool_call is not None:
            blocks.append({"type": "tool_use", "id": f"toolu_scripted{self.number:06d}", "name": reply.tool_call[0],
                           "input": dict(reply.tool_call[1])})
        return blocks

    def anthropic(self) -> dict[str, Any]:
        """A whole Messages answer."""
        return {"id": f"msg_scripted{self.number:06d}", "type": "message", "role": "assistant", "model": self.model,
                "content": self._anthropic_blocks(),
                "stop_reason": "tool_use" if self.reply.tool_call else "end_turn", "stop_sequence": None,
                "usage": self._anthropic_usage(self.reply.usage.output)}

    def anthropic_events(self) -> Iterator[bytes]:
        """A streamed Messages answer: message_start, ping, each block's start/deltas/stop,
        message_delta (the cumulative usage), message_stop."""
        message = self.anthropic()
        final_usage = message["usage"]["output_tokens"]
        start = {**message, "content": [], "stop_reason": None, "stop_sequence": None,
                 "usage": self._anthropic_usage(min(1, final_usage))}
        yield _sse("message_start", {"type": "message_start", "message": start})
        yield _sse("ping", {"type": "ping"})
        for index, block in enumerate(message["content"]):
            if block["type"] == "text":
                yield _sse("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "text", "text": ""}})
                for piece in _pieces(block["text"]):
                    yield _sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "text_delta", "text": piece}})
            else:
                yield _sse("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {**block, "input": {}}})
                for piece in _halves(_json(block["input"])):
                    yield _sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "input_json_delta", "partial_json": piece}})
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
        yield _sse("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                     "usage": {"output_tokens": final_usage}})
        yield _sse("message_stop", {"type": "message_stop"})

    # OpenAI Chat Completions.

    def _chat_usage(self) -> dict[str, Any]:
        usage = self.reply.usage
        return {"prompt_tokens": self.prompt, "completion_tokens": usage.output,
                "total_tokens": self.prompt + usage.output,
                "prompt_tokens_details": {"cached_tokens": usage.cache_read, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": usage.reasoning, "audio_tokens": 0,
                                              "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}

    def _chat_tool(self) -> dict[str, Any] | None:
        if self.reply.tool_call is None:
            return None
        name, arguments = self.reply.tool_call
        return {"id": f"call_scripted{self.number:06d}", "type": "function",
                "function": {"name": name, "arguments": _json(dict(arguments))}}

    def _chat_base(self, kind: str) -> dict[str, Any]:
        return {"id": f"chatcmpl-scripted{self.number:06d}", "object": kind, "created": CREATED, "model": self.model,
                "service_tier": "default", "system_fingerprint": "fp_scripted"}

    def chat(self) -> dict[str, Any]:
        """A whole Chat Completions answer."""
        tool = self._chat_tool()
        message: dict[str, Any] = {"role": "assistant", "content": self.reply.text or None, "refusal": None,
                                   "annotations": []}
        if tool is not None:
            message["tool_calls"] = [tool]
        return {**self._chat_base("chat.completion"),
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": "tool_calls" if tool else "stop"}],
                "usage": self._chat_usage()}

    def chat_events(self) -> Iterator[bytes]:
        """Streamed Chat Completions chunks; with ``stream_options.include_usage`` every chunk has
        ``"usage": null`` and a last chunk with no choices holds the usage; then ``[DONE]``."""
        options = self.request.get("stream_options")
        with_usage = isinstance(options, dict) and options.get("include_usage") is True
        base = self._chat_base("chat.completion.chunk")

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            document = {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
            if with_usage:
                document["usage"] = None
            return _sse(None, document)

        yield chunk({"role": "assistant", "content": "", "refusal": None})
        for piece in _pieces(self.reply.text):
            yield chunk({"content": piece})
        tool = self._chat_tool()
        if tool is not None:
            yield chunk({"tool_calls": [{"index": 0, "id": tool["id"], "type": "function",
                                         "function": {"name": tool["function"]["name"], "arguments": ""}}]})
            for piece in _halves(tool["function"]["arguments"]):
                yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        yield chunk({}, "tool_calls" if tool else "stop")
        if with_usage:
            yield _sse(None, {**base, "choices": [], "usage": self._chat_usage()})
        yield b"data: [DONE]\n\n"

    # OpenAI Responses.

    def _responses_items(self) -> list[dict[str, Any]]:
        reply = self.reply
        items: list[dict[str, Any]] = []
        if reply.text or reply.tool_call is None:
            items.append({"id": f"msg_scripted{self.number:06d}", "type": "message", "status": "completed",
                          "role": "assistant", "content": [{"type": "output_text", "text": reply.text,
                                                            "annotations": [], "logprobs": []}]})
        if reply.tool_call is not None:
            items.append({"id": f"fc_scripted{self.number:06d}", "type": "function_call", "status": "completed",
                          "arguments": _json(dict(reply.tool_call[1])), "call_id": f"call_scripted{self.number:06d}",
                          "name": reply.tool_call[0]})
        return items

    def responses(self, status: str = "completed") -> dict[str, Any]:
        """A whole Responses answer (``status`` 'in_progress' for the stream's first events)."""
        usage = self.reply.usage
        done = status == "completed"
        request = self.request
        return {"id": f"resp_scripted{self.number:06d}", "object": "response", "created_at": CREATED,
                "status": status, "background": False, "error": None, "incomplete_details": None,
                "instructions": request.get("instructions"), "max_output_tokens": request.get("max_output_tokens"),
                "model": self.model, "output": self._responses_items() if done else [],
                "parallel_tool_calls": True, "previous_response_id": request.get("previous_response_id"),
                "reasoning": {"effort": None, "summary": None}, "service_tier": "default",
                "store": request.get("store", True), "temperature": 1.0, "text": {"format": {"type": "text"}},
                "tool_choice": request.get("tool_choice", "auto"), "tools": request.get("tools", []), "top_p": 1.0,
                "truncation": "disabled", "user": None, "metadata": {},
                "usage": {"input_tokens": self.prompt, "input_tokens_details": {"cached_tokens": usage.cache_read},
                          "output_tokens": usage.output,
                          "output_tokens_details": {"reasoning_tokens": usage.reasoning},
                          "total_tokens": self.prompt + usage.output} if done else None}

    def responses_events(self) -> Iterator[bytes]:
        """Streamed Responses events: response.created, .in_progress, per item output_item.added,
        its parts and deltas, output_item.done, then response.completed with the usage."""
        number = 0

        def event(kind: str, **fields: Any) -> bytes:
            nonlocal number
            document = {"type": kind, "sequence_number": number, **fields}
            number += 1
            return _sse(kind, document)

        yield event("response.created", response=self.responses("in_progress"))
        yield event("response.in_progress", response=self.responses("in_progress"))
        for index, item in enumerate(self._responses_items()):
            if item["type"] == "message":
                text = item["content"][0]["text"]
                yield event("response.output_item.added", output_index=index,
                            item={**item, "status": "in_progress", "content": []})
                part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
                yield event("response.content_part.added", item_id=item["id"], output_index=index, content_index=0,
                            part=part)
                for piece in _pieces(text):
                    yield event("response.output_text.delta", item_id=item["id"], output_index=index,
                                content_index=0, delta=piece, logprobs=[])
                yield event("response.output_text.done", item_id=item["id"], output_index=index, content_index=0,
                            text=text, logprobs=[])
                yield event("response.content_part.done", item_id=item["id"], output_index=index, content_index=0,
                            part={**part, "text": text})
            else:
                yield event("response.output_item.added", output_index=index,
                            item={**item, "status": "in_progress", "arguments": ""})
                for piece in _halves(item["arguments"]):
                    yield event("response.function_call_arguments.delta", item_id=item["id"], output_index=index,
                                delta=piece)
                yield event("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                            arguments=item["arguments"])
            yield event("response.output_item.done", output_index=index, item=item)
        yield event("response.completed", response=self.responses())

    # Google generateContent.

    def _gemini_usage(self) -> dict[str, Any]:
        usage = self.reply.usage
        candidates = usage.output - usage.reasoning
        document: dict[str, Any] = {"promptTokenCount": self.prompt, "candidatesTokenCount": candidates,
                                    "totalTokenCount": self.prompt + usage.output}
        # Google leaves out the figures that are zero.
        if usage.cache_read:
            document["cachedContentTokenCount"] = usage.cache_read
        if usage.reasoning:
            document["thoughtsTokenCount"] = usage.reasoning
        document["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": self.prompt}]
        return document

    def _gemini_chunk(self, parts: list[dict[str, Any]], finish: bool, usage: dict[str, Any]) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
        if finish:
            candidate["finishReason"] = "STOP"
        candidate["index"] = 0
        return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": self.model,
                "responseId": f"scripted{self.number:06d}"}

    def _gemini_parts(self) -> list[dict[str, Any]]:
        reply = self.reply
        parts: list[dict[str, Any]] = []
        if reply.text or reply.tool_call is None:
            parts.append({"text": reply.text})
        if reply.tool_call is not None:
            parts.append({"functionCall": {"name": reply.tool_call[0], "args": dict(reply.tool_call[1])}})
        return parts

    def gemini(self) -> dict[str, Any]:
        """A whole generateContent answer."""
        return self._gemini_chunk(self._gemini_parts(), True, self._gemini_usage())

    def gemini_chunks(self) -> list[dict[str, Any]]:
        """The chunks of a streamed answer: text pieces with the prompt's count so far, the last
        one with the finish reason and the whole usage."""
        parts: list[dict[str, Any]] = [{"text": piece} for piece in _pieces(self.reply.text)]
        if self.reply.tool_call is not None:
            parts.append({"functionCall": {"name": self.reply.tool_call[0], "args": dict(self.reply.tool_call[1])}})
        if not parts:
            parts = [{"text": ""}]
        early = {"promptTokenCount": self.prompt, "totalTokenCount": self.prompt,
                 "promptTokensDetails": [{"modality": "TEXT", "tokenCount": self.prompt}]}
        return [self._gemini_chunk([part], index == len(parts) - 1,
                                   self._gemini_usage() if index == len(parts) - 1 else early)
                for index, part in enumerate(parts)]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    upstream: ScriptedUpstream

    def handle_error(self, request: Any, client_address: Any) -> None:
        return None  # a client that went away; a test sees what it needs in the answers


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.upstream._opened(self.connection)

    def finish(self) -> None:
        self.server.upstream._closed(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        return None

    def do_POST(self) -> None:
        """Answer a model call (or a count of tokens)."""
        self.server.upstream._answer(self)

    def do_GET(self) -> None:
        """Answer a list of models."""
        self.server.upstream._answer(self)

    def send(self, status: int, body: bytes, content_type: str = "application/json",
             extra: Iterable[tuple[str, str]] = ()) -> None:
        """Send a whole answer."""
        head = [f"HTTP/1.1 {status} {self.responses.get(status, ('Error',))[0]}",
                f"Content-Type: {content_type}", f"Content-Length: {len(body)}",
                "request-id: req_scripted", *(f"{name}: {value}" for name, value in extra)]
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)

    def stream(self, events: Iterable[bytes], pause_s: float, content_type: str = "text/event-stream") -> None:
        """Send a streamed answer, one chunk per event, as the providers do."""
        self.wfile.write(f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nCache-Control: no-cache\r\n"
                         f"Transfer-Encoding: chunked\r\n\r\n".encode())
        for n, event in enumerate(events):
            if pause_s and n:
                time.sleep(pause_s)
            self.wfile.write(b"%x\r\n%b\r\n" % (len(event), event))
        self.wfile.write(b"0\r\n\r\n")


class ScriptedUpstream:
    """The scripted model's server; a context manager (or :meth:`start` and :meth:`close`).

    ``script``: the steps, one per model call, in order; ``default``: the reply once the script
    is used up (without one, a call past the end gets a 400 that says so). ``url`` is its base
    URL, ``http://127.0.0.1:PORT``.
    """

    def __init__(self, script: Iterable[ScriptedReply | ScriptedFailure] = (), *,
                 default: ScriptedReply | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        self._script = list(script)
        self._default = default
        self._lock = threading.Lock()
        self._requests: list[ReceivedRequest] = []
        self._calls = 0
        self._connections: set[socket.socket] = set()
        self._server = _Server((host, port), _Handler)
        self._server.upstream = self
        self._thread: threading.Thread | None = None
        self.host = host
        self.port = int(self._server.server_address[1])
        self.url = f"http://{host}:{self.port}"

    def add(self, *steps: ScriptedReply | ScriptedFailure) -> None:
        """Append steps to the script."""
        with self._lock:
            self._script.extend(steps)

    @property
    def requests(self) -> list[ReceivedRequest]:
        """Every request received so far, in order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def calls(self) -> int:
        """Model calls answered so far (each took one step of the script)."""
        with self._lock:
            return self._calls

    def start(self) -> ScriptedUpstream:
        """Start serving in a thread."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                            name="rra-scripted-upstream", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and close every connection."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self) -> ScriptedUpstream:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def _opened(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.add(connection)

    def _closed(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.discard(connection)

    def _next(self) -> tuple[int, ScriptedReply | ScriptedFailure | None]:
        with self._lock:
            self._calls += 1
            if self._script:
                return self._calls, self._script.pop(0)
            return self._calls, self._default

    def _answer(self, handler: _Handler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers: dict[str, str] = {}
        for name, value in handler.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        with self._lock:
            self._requests.append(ReceivedRequest(handler.command, handler.path, headers, body, raw))
        parts = urlsplit(handler.path)
        path, query = parts.path, parse_qs(parts.query)
        gemini = _GEMINI.fullmatch(path)
        if handler.command == "GET" and path in ("/v1/models", "/v1beta/models"):
            handler.send(200, _json({"object": "list", "data": [{"id": "scripted", "object": "model",
                                                                  "type": "model", "created": CREATED}],
                                     "has_more": False}).encode())
            return
        if handler.command != "POST":
            self._fail(handler, "anthropic", 404, f"scripted upstream: no {handler.command} {path}")
            return
        if path == "/v1/messages/count_tokens":
            handler.send(200, _json({"input_tokens": len(raw) // 4}).encode())
            return
        if path == "/v1/responses/input_tokens":
            handler.send(200, _json({"object": "response.input_tokens", "input_tokens": len(raw) // 4}).encode())
            return
        if gemini is not None and gemini.group(2) == "countTokens":
            handler.send(200, _json({"totalTokens": len(raw) // 4}).encode())
            return
        protocol = {"/v1/messages": "anthropic", "/v1/chat/completions": "chat",
                    "/v1/responses": "responses"}.get(path, "gemini" if gemini else "")
        if not protocol:
            self._fail(handler, "anthropic", 404, f"scripted upstream: no route {path}")
            return
        if not isinstance(body, dict):
            self._fail(handler, protocol, 400, "scripted upstream: the body is not a JSON object")
            return
        number, step = self._next()
        if step is None:
            self._fail(handler, protocol, 400, f"scripted upstream: the script has no reply left for call {number}")
            return
        if isinstance(step, ScriptedFailure):
            extra = [] if step.retry_after is None else [("Retry-After", f"{step.retry_after:g}")]
            self._fail(handler, protocol, step.status, f"scripted upstream: scripted failure {step.status}", extra)
            return
        model = gemini.group(1) if gemini else str(body.get("model") or "scripted-model")
        answer = _Answer(step, number, model, body)
        stream = body.get("stream") is True
        if protocol == "anthropic":
            if stream:
                handler.stream(answer.anthropic_events(), step.pause_s)
            else:
                handler.send(200, _json(answer.anthropic()).encode())
        elif protocol == "chat":
            if stream:
                handler.stream(answer.chat_events(), step.pause_s)
            else:
                handler.send(200, _json(answer.chat()).encode())
        elif protocol == "responses":
            if stream:
                handler.stream(answer.responses_events(), step.pause_s)
            else:
                handler.send(200, _json(answer.responses()).encode())
        elif gemini is not None and gemini.group(2) == "streamGenerateContent":
            chunks = answer.gemini_chunks()
            if query.get("alt") == ["sse"]:
                # Google ends each event with CR LF CR LF.
                handler.stream((f"data: {_json(chunk)}\r\n\r\n".encode() for chunk in chunks), step.pause_s)
            else:
                pieces = [("[" if n == 0 else ",\r\n") + _json(chunk) for n, chunk in enumerate(chunks)]
                handler.stream((piece.encode() for piece in [*pieces, "]"]), step.pause_s, "application/json")
        else:
            handler.send(200, _json(answer.gemini()).encode())

    @staticmethod
    def _fail(handler: _Handler, protocol: str, status: int, message: str,
              extra: Iterable[tuple[str, str]] = ()) -> None:
        anthropic_kind, google_status = _ERROR_KINDS.get(status, ("api_error", "INTERNAL"))
        if protocol in ("chat", "responses"):
            kind = "requests" if status == 429 else ("invalid_request_error" if status < 500 else "server_error")
            document: dict[str, Any] = {"error": {"message": message, "type": kind, "param": None,
                                                  "code": "rate_limit_exceeded" if status == 429 else None}}
        elif protocol == "gemini":
            document = {"error": {"code": status, "message": message, "status": google_status}}
        else:
            document = {"type": "error", "error": {"type": anthropic_kind, "message": message}}
        handler.send(status, _json(document).encode(), extra=extra)
