"""Unpack the archive (placeholder for the conformance suite; never run)."""
