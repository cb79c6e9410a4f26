"""The first layer: version dispatch and the published JSON Schema, mapped onto rule codes."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from .. import SPEC_VERSION
from ..io.schemas import SchemaNotFound, import_jsonschema_lean, load_schema, schema_path
from ..io.limits import INT_MAX, INT_MIN, out_of_range_integers, out_of_range_message
from ..io.schemas import compiled_is_valid
from .context import Finding, Pointer
from .diagnostics import Severity

__all__ = ["SchemaNotFound", "check_schema", "check_version", "manifest_schema", "schema_path"]

_RANGE = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
          "minItems", "maxItems", "minProperties", "maxProperties"}
_VALUE = {"pattern", "enum", "const", "format", "propertyNames"}
_SUPPORTED_MAJOR, _SUPPORTED_MINOR = (int(p) for p in SPEC_VERSION.split("."))


def manifest_schema() -> dict[str, Any]:
    """The published manifest schema (read once per process)."""
    return load_schema("manifest")


def _inline_refs(node: Any, defs: Mapping[str, Any]) -> Any:
    """The schema with every local ``$ref`` replaced by its definition (the manifest schema has
    no recursion). jsonschema then skips a registry lookup per reference per value: 1.6x faster
    on large manifests, with the same errors."""
    if isinstance(node, Mapping):
        if "$ref" in node:
            target = _inline_refs(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
            return {**target, **{k: _inline_refs(v, defs) for k, v in node.items() if k != "$ref"}}
        return {k: _inline_refs(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline_refs(v, defs) for v in node]
    return node


@cache
def _ecma_regex(pattern: str) -> re.Pattern[str]:
    # ECMA-262's '$' (JSON Schema's regex dialect) matches only at the very end; Python's also
    # matches before a final line break, which would accept "<sha256>\n". Our patterns end in '$'.
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def _pattern_keyword(validator: Any, pattern: str, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    if isinstance(instance, str) and not _ecma_regex(pattern).search(instance):
        from jsonschema.exceptions import ValidationError

        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def _validator() -> Any:
    jsonschema = import_jsonschema_lean()
    schema = manifest_schema()
    cls = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _pattern_keyword})
    return cls(_inline_refs(schema, schema.get("$defs", {})))


#: Documents with more values than this are first checked by a compiled validator of the same
#: schema (jsonschema-rs: ~60 ms for a million values where jsonschema takes ~10 s). When it
#: finds the document valid, nothing is left to report; otherwise jsonschema runs to give the
#: precise, located findings. Small documents skip it: its import would cost more than it saves.
FAST_PATH_MIN_VALUES = 20_000


def declared_version(data: Mapping[str, Any]) -> tuple[int, int] | None:
    """(major, minor) of a well-formed ``rra_version``, else None."""
    value = data.get("rra_version")
    if isinstance(value, str):
        major, _, minor = value.partition(".")
        if major.isdigit() and minor.isdigit():
            return int(major), int(minor)
    return None


def check_version(data: Mapping[str, Any]) -> tuple[list[Finding], bool]:
    """Version findings and whether the rest of validation can proceed."""
    version = declared_version(data)
    if version is None:
        return [], True  # the schema layer reports a missing or malformed rra_version
    major, minor = version
    if major != _SUPPORTED_MAJOR:
        return [Finding(
            "RRA100", f"rra_version {data['rra_version']!r} has major version {major}; "
            f"this validator implements {SPEC_VERSION}", ("rra_version",),
            f"use a validator for RRA {major}.x, or write the manifest for RRA {SPEC_VERSION}")], False
    if minor > _SUPPORTED_MINOR:
        return [Finding(
            "RRA101", f"rra_version {data['rra_version']!r} is newer than {SPEC_VERSION}, the version "
            "this validator implements; fields added since are reported as unknown", ("rra_version",),
            "upgrade rra-tools to check every field")], True
    return [], True


def check_schema(data: Any, values: int = 0) -> Iterator[Finding]:
    """Every JSON Schema violation of ``data`` (a document of ``values`` values, when known),
    as findings with rule codes."""
    newer_minor = isinstance(data, Mapping) and (declared_version(data) or (0, 0)) > (
        _SUPPORTED_MAJOR, _SUPPORTED_MINOR)
    if isinstance(data, Mapping):
        version = declared_version(data)
        if version is not None and _newest_field_version() > version:
            yield from _newer_fields(manifest_schema(), manifest_schema(), data, (), version)
    if values >= FAST_PATH_MIN_VALUES and compiled_is_valid(data):
        return
    huge = list(out_of_range_integers(data))
    yield from (Finding("RRA114", out_of_range_message(value), path) for path, value in huge)
    errors = list(_validator().iter_errors(data))
    if huge:  # reported once above; a bound of the schema would report them again
        errors = [e for e in errors if not (_is_int(e.instance) and not INT_MIN <= e.instance <= INT_MAX)]
    # A value of the wrong type also fails its enum or pattern; one finding per place says it.
    mistyped = {tuple(e.absolute_path) for e in errors if e.validator == "type"}
    for error in errors:
        if error.validator != "type" and tuple(error.absolute_path) in mistyped and \
                error.validator in _VALUE | _RANGE:
            continue
        yield from _findings(error, newer_minor)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@cache
def _newest_field_version() -> tuple[int, int]:
    """The latest ``x-rra-added`` version in the schema: a manifest declaring at least that one
    cannot use a field newer than its version, and the walk over its values is skipped."""
    newest = (0, 0)
    stack: list[Any] = [manifest_schema()]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            added = node.get("x-rra-added")
            if isinstance(added, str):
                major, _, minor = added.partition(".")
                newest = max(newest, (int(major), int(minor)))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return newest


def _findings(error: Any, newer_minor: bool) -> Iterator[Finding]:
    path: Pointer = tuple(error.absolute_path)
    keyword = error.validator
    if keyword == "required":
        missing = _quoted_key(error.message)
        where = f" in {_describe(path)}" if path else ""
        yield Finding("RRA110", f"missing required field {missing!r}{where}", path,
                      f"add '{missing}:'; see the field's reference in the spec")
    elif keyword == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extras = [k for k in error.instance if k not in allowed and not str(k).startswith("x-")]
        for key in extras:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f"did you mean {close[0]!r}?" if close else "extensions must start with 'x-'"
            if newer_minor:
                yield Finding("RRA111", f"unknown field {key!r} (it may come from a newer minor version)",
                              (*path, key), hint, at_key=True, severity=Severity.WARNING)
            else:
                yield Finding("RRA111", f"unknown field {key!r}", (*path, key), hint, at_key=True)
    elif keyword == "type":
        got = _json_type(error.instance)
        shown = "" if got in ("null", "object", "array") else f" {_short(error.instance)}"
        yield Finding("RRA112", f"expected {_type_words(error.validator_value)}, got {got}{shown}", path)
    elif keyword in _VALUE:
        yield Finding("RRA113", _value_message(error), path, _value_hint(error))
    elif keyword in _RANGE:
        yield Finding("RRA114", f"{_short(error.instance)} is out of range: {_range_words(error)}", path)
    elif keyword in {"anyOf", "oneOf"} and error.context:
        from jsonschema.exceptions import best_match

        yield from _findings(best_match(error.context), newer_minor)
    else:
        yield Finding("RRA115", error.message, path)


def _newer_fields(root: Mapping[str, Any], schema: Mapping[str, Any], data: Any, path: Pointer,
                  declared: tuple[int, int]) -> Iterator[Finding]:
    """Fields whose schema says ``x-rra-added`` a version later than the declared one."""
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = root.get("$defs", {}).get(name, {})
    if isinstance(data, Mapping):
        properties = schema.get("properties", {})
        for key, value in data.items():
            sub = properties.get(key)
            if sub is None:
                sub = schema.get("additionalProperties")
                if not isinstance(sub, Mapping):
                    continue
            added = sub.get("x-rra-added")
            if isinstance(added, str):
                major, _, minor = added.partition(".")
                if (int(major), int(minor)) > declared:
                    yield Finding("RRA102", f"field {key!r} was added in RRA {added}, but the manifest "
                                  f"declares rra_version '{declared[0]}.{declared[1]}'", (*path, key),
                                  f"declare rra_version: '{added}' or remove the field", at_key=True)
            yield from _newer_fields(root, sub, value, (*path, key), declared)
    elif isinstance(data, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(data):
            yield from _newer_fields(root, schema["items"], item, (*path, index), declared)


def _quoted_key(message: str) -> str:
    # jsonschema's required message is "'name' is a required property".
    return message.split("'")[1] if message.count("'") >= 2 else message


def _describe(path: Pointer) -> str:
    names = [p for p in path if isinstance(p, str)]
    return f"'{'.'.join(names)}'" if names else "the document"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, Mapping) else type(value).__name__


def _type_words(expected: Any) -> str:
    names = expected if isinstance(expected, list) else [expected]
    words = {"object": "a mapping", "array": "a list", "string": "a string", "integer": "an integer",
             "number": "a number", "boolean": "true or false", "null": "nothing"}
    return " or ".join(words.get(str(n), str(n)) for n in names)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str) if not isinstance(value, (dict, list)) else (
        "{...}" if isinstance(value, dict) else "[...]")
    return text if len(text) <= 60 else text[:57] + "..."


def _value_message(error: Any) -> str:
    keyword, expected, value = error.validator, error.validator_value, error.instance
    if keyword == "enum":
        return f"{_short(value)} is not one of {', '.join(json.dumps(e) for e in expected)}"
    if keyword == "pattern":
        return f"{_short(value)} does not match the pattern {expected!r}"
    if keyword == "const":
        return f"{_short(value)} must be {json.dumps(expected)}"
    return str(error.message)


def _value_hint(error: Any) -> str | None:
    if error.validator == "enum" and isinstance(error.instance, str):
        close = difflib.get_close_matches(error.instance, [str(e) for e in error.validator_value], n=1)
        if close:
            return f"did you mean {close[0]!r}?"
    description = error.schema.get("description")
    return str(description) if description else None


def _range_words(error: Any) -> str:
    keyword, bound = error.validator, error.validator_value
    return {
        "minimum": f"must be at least {bound}",
        "maximum": f"must be at most {bound}",
        "exclusiveMinimum": f"must be greater than {bound}",
        "exclusiveMaximum": f"must be less than {bound}",
        "minLength": f"must have at least {bound} character(s)",
        "maxLength": f"must have at most {bound} characters",
        "minItems": f"must have at least {bound} item(s)",
        "maxItems": f"must have at most {bound} items",
        "minProperties": f"must have at least {bound} entr(ies)",
        "maxProperties": f"must have at most {bound} entries",
    }.get(keyword, str(error.message))
