"""Documented bounds that keep reading hostile input cheap. Specified in spec/01-overview.md#limits."""

from __future__ import annotations

__all__ = ["MAX_DEPTH", "MAX_MANIFEST_BYTES", "MAX_NODES"]

#: Largest manifest file read, in bytes (16 MiB): 10,000 launchers and 10,000 claims with five
#: observations each come to about 15 MiB of compact JSON.
MAX_MANIFEST_BYTES = 16 * 1024 * 1024

#: Most nodes a document may hold once aliases are expanded; stops "billion laughs".
MAX_NODES = 2_000_000

#: Deepest nesting of mappings and sequences; the standard's documents need fewer than 10.
MAX_DEPTH = 64
