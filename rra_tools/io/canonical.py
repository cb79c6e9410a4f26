"""Canonical JSON: the one byte form of a document that digests (run records, SBOM serial
numbers, OCI configs) are computed over."""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["canonical_digest", "canonical_json"]


def canonical_json(data: Any) -> bytes:
    """Sorted keys, no insignificant whitespace, UTF-8, no NaN or Infinity.

    >>> canonical_json({"b": 1, "a": [1.5, "é"]})
    b'{"a":[1.5,"\\xc3\\xa9"],"b":1}'
    """
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def canonical_digest(data: Any) -> str:
    """Hex SHA-256 of :func:`canonical_json`."""
    return hashlib.sha256(canonical_json(data)).hexdigest()
