"""The proxy's error class and the error bodies it answers a client with, in each provider's shape.

A refusal must read like the provider's own error so that the agent's SDK reports it and stops:
Anthropic's ``{"type": "error", "error": {"type", "message"}}``, OpenAI's ``{"error": {"message",
"type", "param", "code"}}`` and Google's ``{"error": {"code", "message", "status"}}``.
"""

from __future__ import annotations

import json

from ...errors import ExitStatus
from ..errors import AgentsLayerError

__all__ = ["ProxyError", "error_body"]


class ProxyError(AgentsLayerError):
    """The metering proxy cannot be set up (a bad price table, a bad upstream, a socket it cannot bind).

    >>> str(ProxyError("unknown provider 'azure' in upstream 'azure=http://x'"))
    "unknown provider 'azure' in upstream 'azure=http://x'"
    """

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


# Each provider's name for the kind of error behind an HTTP status.
_ANTHROPIC_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                    404: "not_found_error", 429: "rate_limit_error", 502: "api_error", 529: "overloaded_error"}
_OPENAI_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 403: "insufficient_quota",
                 404: "invalid_request_error", 429: "rate_limit_exceeded", 502: "server_error"}
_GOOGLE_STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                    429: "RESOURCE_EXHAUSTED", 502: "UNAVAILABLE"}


def error_body(provider: str, status: int, message: str, code: str | None = None) -> bytes:
    """The JSON body of an error answer of ``status`` in the shape of ``provider`` ('anthropic',
    'openai' or 'gemini'; Anthropic's shape for any other name).

    >>> error_body("gemini", 404, "no such route")
    b'{"error": {"code": 404, "message": "no such route", "status": "NOT_FOUND"}}'
    """
    if provider == "openai":
        document: dict[str, object] = {"error": {"message": message, "type": _OPENAI_TYPES.get(status, "server_error"),
                                                 "param": None, "code": code}}
    elif provider == "gemini":
        document = {"error": {"code": status, "message": message, "status": _GOOGLE_STATUSES.get(status, "INTERNAL")}}
    else:
        document = {"type": "error", "error": {"type": _ANTHROPIC_TYPES.get(status, "api_error"), "message": message}}
    return json.dumps(document).encode()
