"""Reading run-record files safely: one reader for the validator's levels and ``rra results``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..limits import MAX_MANIFEST_BYTES

__all__ = ["is_successful", "read_run_record"]


def read_run_record(root: Path, path: Path) -> Mapping[str, Any] | str:
    """The record at ``path`` (under artifact ``root``), or a message saying why it is unusable.

    Symlinks and oversized files are refused; NaN and Infinity are not JSON (RFC 8259).
    """
    real_root = root.resolve()
    shown = str(path.relative_to(real_root)) if path.is_relative_to(real_root) else str(path)
    try:
        if path.is_symlink() or not path.is_file():
            return f"run record {shown!r} is not a regular file"
        if path.stat().st_size > MAX_MANIFEST_BYTES:
            return f"run record {shown!r} is larger than {MAX_MANIFEST_BYTES} bytes"
        raw = path.read_bytes()
    except OSError as exc:
        return f"run record {shown!r} cannot be read: {exc.strerror or exc}"

    def no_constants(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON value")

    try:
        data = json.loads(raw, parse_constant=no_constants)
    except ValueError as exc:
        return f"run record {shown!r} is not valid JSON: {exc}"
    if not isinstance(data, Mapping) or not isinstance(data.get("launcher"), str):
        return f"run record {shown!r} is not an object with a 'launcher'"
    return data


def is_successful(record: Mapping[str, Any]) -> bool:
    """A completed run that exited 0: the evidence the functional level counts."""
    return record.get("exit_status") == 0 and record.get("status") == "completed"
