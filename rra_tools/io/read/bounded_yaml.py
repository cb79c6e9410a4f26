"""YAML rra did not write (a conda ``environment.yml``, a ``conda-lock.yml``, an artifact's
manifest before an edit) is read within the bounds of the one document loader.

The manifest loader (:func:`rra_tools.io.read.manifest.load_manifest_bytes`) counts every value an
alias expands to (at most :data:`~rra_tools.io.limits.MAX_NODES`: a "billion laughs" of a few
hundred bytes stops there), nests at most :data:`~rra_tools.io.limits.MAX_DEPTH` deep and reads at
most :data:`~rra_tools.io.limits.MAX_MANIFEST_BYTES`. :func:`load_yaml` gives its data (aliases
shared, never copied); :func:`check_yaml` only checks, for the callers that must then read the
text again with ruamel's round-trip reader (to keep line numbers or comments), whose own reader
has none of these bounds: once the text is within them, that reader is too.
"""

from __future__ import annotations

from typing import Any

from ...errors import ExitStatus
from ..errors import IOLayerError, LoadError
from .manifest import load_manifest_bytes

__all__ = ["YamlBoundsError", "check_yaml", "load_yaml"]


class YamlBoundsError(IOLayerError, ValueError):
    """The YAML text is beyond the bounds, or not YAML the bounded loader reads (so its bounds
    cannot be vouched for); ``reason`` and ``line`` say where. A ValueError too: the readers it
    replaced raised one, and their callers catch it."""

    exit_status = ExitStatus.FAILED

    def __init__(self, name: str, reason: str, line: int | None) -> None:
        where = f"{name}:{line}" if line is not None else name
        super().__init__(f"{where}: {reason}")
        self.reason = reason
        self.line = line


def load_yaml(text: str, name: str) -> Any:
    """The data of the YAML ``text`` (file ``name``, for messages); None when it is empty;
    :class:`YamlBoundsError` when it is beyond the bounds or not one well-formed document."""
    if not text.strip():
        return None
    try:
        return load_manifest_bytes(text.encode("utf-8", "surrogatepass")).data
    except LoadError as exc:
        raise YamlBoundsError(name, exc.problem.message, exc.problem.line) from None


def check_yaml(text: str, name: str) -> None:
    """:class:`YamlBoundsError` unless ``text`` is within the bounds (see the module docstring)."""
    load_yaml(text, name)
