"""The published JSON Schemas: where they are installed, loaded once, and compiled.

Kept free of the validator and of pydantic so that the run path can check a manifest or a run
record against its schema for a few milliseconds of start-up.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from functools import cache
from pathlib import Path

from .. import FORMAT_VERSIONS
from ..errors import ExitStatus
from .errors import IOLayerError

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any

__all__ = ["SCHEMA_NAMES", "SchemaNotFound", "UnknownSchema", "compile_schema", "compiled_error_paths", "compiled_is_valid", "compiled_loaded", "compiled_verdict", "import_jsonschema_lean", "jsonschema_loaded", "load_schema", "schema_bytes", "schema_path", "schema_versions"]


class SchemaNotFound(IOLayerError):
    """The committed schema file is missing from the installation."""

    exit_status = ExitStatus.USAGE


class UnknownSchema(IOLayerError):
    """No published schema has the name or version asked for; the hint lists those there are."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


#: The names of the published document formats (``schemas/rra-<name>-<version>.schema.json``).
SCHEMA_NAMES = tuple(sorted(FORMAT_VERSIONS))


def _directories() -> tuple[Path, ...]:
    # A wheel installs the schemas in the package (pyproject's force-include); a source
    # checkout keeps the committed schemas/ beside it.
    package = Path(__file__).resolve().parent.parent
    return package / "_schemas", package.parent / "schemas"


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def schema_versions(name: str) -> list[str]:
    """The versions of the published schema ``name`` that are installed, oldest first."""
    _check_name(name)
    prefix, suffix = f"rra-{name}-", ".schema.json"
    found = {path.name[len(prefix):-len(suffix)] for directory in _directories() if directory.is_dir()
             for path in directory.glob(f"{prefix}*{suffix}")}
    return sorted((v for v in found if re.fullmatch(r"\d+\.\d+", v)), key=_version_key)


def _check_name(name: str) -> None:
    if name not in FORMAT_VERSIONS:
        raise UnknownSchema(f"no published schema is named {name!r}", f"the schemas are: {', '.join(SCHEMA_NAMES)}")


def schema_path(name: str = "manifest", version: str | None = None) -> Path:
    """Location of the published schema ``name`` (at ``version``, by default the version this
    tool writes) in a wheel or a source checkout."""
    _check_name(name)
    if version is not None and version not in (versions := schema_versions(name)):
        raise UnknownSchema(f"the schema {name!r} has no version {version!r}",
                            f"its versions are: {', '.join(versions) or 'none installed'}")
    file = f"rra-{name}-{version or FORMAT_VERSIONS[name]}.schema.json"
    for directory in _directories():
        if (directory / file).is_file():
            return directory / file
    raise SchemaNotFound(f"schema {file!r} is not installed; reinstall rra-tools")


@cache
def schema_bytes(name: str = "manifest") -> bytes:
    """The published schema ``name`` as installed (read once per process)."""
    return schema_path(name).read_bytes()


@cache
def load_schema(name: str = "manifest") -> dict[str, Any]:
    """The published schema ``name`` (parsed once per process)."""
    loaded: dict[str, Any] = json.loads(schema_bytes(name))
    return loaded


@cache
def _compiled(name: str) -> Any | None:
    return compile_schema(load_schema(name))


def compile_schema(schema: dict[str, Any]) -> Any | None:
    """A compiled validator (jsonschema-rs) of ``schema``, for :func:`compiled_verdict`; None
    when it is not installed. Compiling costs milliseconds: callers keep what they compile."""
    try:
        import jsonschema_rs
    except ImportError:  # an optional speed-up: jsonschema alone gives the same answers
        return None
    return jsonschema_rs.validator_for(schema)


def compiled_verdict(validator: Any, data: Any) -> bool | None:
    """``validator``'s verdict on ``data`` (see :func:`compiled_is_valid`)."""
    try:
        return bool(validator.is_valid(data))
    except (ValueError, OverflowError, TypeError):
        return None


def compiled_loaded() -> bool:
    """Whether the compiled validator is imported in this process already (asking it about a
    small document then costs less than importing jsonschema; importing it, more)."""
    return "jsonschema_rs" in sys.modules


def jsonschema_loaded() -> bool:
    """Whether jsonschema is imported in this process already (walking a small document with it
    then costs less than importing the compiled validator)."""
    return "jsonschema" in sys.modules


def compiled_is_valid(data: Any, name: str = "manifest") -> bool | None:
    """The compiled validator's verdict on ``data`` against schema ``name``; None when it is
    unavailable or cannot read the data (e.g. an integer beyond 64 bits, a non-finite number,
    a lone surrogate). Its "valid" is jsonschema's too (tests/unit/test_schema_fast_path.py);
    its "invalid" may not be, so callers ask jsonschema for the findings."""
    validator = _compiled(name)
    return None if validator is None else compiled_verdict(validator, data)


def compiled_error_paths(data: Any, name: str = "manifest", limit: int = 10_000) -> list[tuple[Any, ...]] | None:
    """Where the compiled validator finds ``data`` wrong against schema ``name``: the instance
    path of each of its errors (keys and indexes). None when it is unavailable, cannot read the
    data, or finds ``limit`` errors or more (the list would not be complete).

    Only *where*: its messages are not jsonschema's, and a place it finds fault with may be
    valid for jsonschema. A place it finds nothing wrong with is valid for both
    (tests/unit/test_schema_fast_path.py), which is what lets a caller skip it.
    """
    validator = _compiled(name)
    if validator is None:
        return None
    paths: list[tuple[Any, ...]] = []
    try:
        for error in validator.iter_errors(data):
            if len(paths) >= limit:
                return None
            paths.append(tuple(error.instance_path))
    except (ValueError, OverflowError, TypeError):
        return None
    return paths


#: Optional modules jsonschema imports eagerly for format checks the validator never runs;
#: rfc3987_syntax alone compiles grammars for ~1.5 s on import (it arrives with
#: jsonschema[format], e.g. through cyclonedx-python-lib[json-validation]).
_UNUSED_FORMAT_MODULES = ("rfc3987_syntax", "rfc3987", "rfc3986_validator", "rfc3339_validator", "webcolors",
                          "uri_template", "isoduration", "fqdn", "idna", "jsonpointer")


#: Held while jsonschema is first imported: another thread would otherwise find the module in
#: sys.modules half initialised ("partially initialized module 'jsonschema'"), and the blocked
#: names would be restored under it. Validating from several threads at once is a library use
#: (a registry, ``rra conformance run -j``).
_IMPORT_LOCK = threading.Lock()


def import_jsonschema_lean() -> Any:
    """Import jsonschema without the format-checking modules the validator does not use."""
    with _IMPORT_LOCK:
        if "jsonschema" in sys.modules:
            return sys.modules["jsonschema"]
        blocked = [m for m in _UNUSED_FORMAT_MODULES if m not in sys.modules]
        for name in blocked:
            sys.modules[name] = None  # type: ignore[assignment]  # makes "import name" raise ImportError
        try:
            import jsonschema
        finally:
            for name in blocked:
                del sys.modules[name]
        return jsonschema
