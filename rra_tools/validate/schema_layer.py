"""The first layer: version dispatch and the published JSON Schema, mapped onto rule codes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from .. import SPEC_VERSION
from ..io.schemas import SchemaNotFound, import_jsonschema_lean, jsonschema_loaded, load_schema, schema_path
from ..io.limits import INT_MAX, INT_MIN, has_out_of_range_integer, out_of_range_integers, out_of_range_message
from ..io.schemas import compile_schema, compiled_error_paths, compiled_is_valid, compiled_loaded, compiled_verdict
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


#: Documents are first checked by a compiled validator of the same schema (jsonschema-rs: ~60 ms
#: for a million values where jsonschema takes ~10 s). When it finds the document valid, nothing
#: is left to report; otherwise jsonschema runs to give the precise, located findings. For a
#: small document the imports decide: jsonschema-rs costs ~7 ms where jsonschema costs ~28 ms
#: and its walk a few more, so it is asked first unless jsonschema is imported already and it is
#: not (then a document of fewer values than this is cheaper to walk than the import).
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


def check_schema(data: Any, values: int = 0, text: str | None = None, *,
                 integers_in_range: bool = False) -> Iterator[Finding]:
    """Every JSON Schema violation of ``data`` (a document of ``values`` values, read from
    ``text``, when known), as findings with rule codes. ``integers_in_range``: the reader
    vouches that no integer lies outside INT_MIN..INT_MAX (no search for one is made)."""
    version = declared_version(data) if isinstance(data, Mapping) else None
    newer_minor = version is not None and version > (_SUPPORTED_MAJOR, _SUPPORTED_MINOR)
    # The declared version when a field newer than it (RRA102) can be found at all.
    older = version if version is not None and _newest_field_version() > version else None
    # The compiled validator reads an integer beyond 64 bits as a float and may accept it: its
    # "valid" counts only for a document without one (RRA114 is reported below otherwise).
    maybe_huge = not integers_in_range and has_out_of_range_integer(data, text)
    quick = not maybe_huge and (values >= FAST_PATH_MIN_VALUES or compiled_loaded() or not jsonschema_loaded())
    if quick and older is not None and _valid_without_newer_fields(data, older):
        return  # valid, and holds no field newer than its version: that schema refuses them all
    if older is not None:
        yield from _newer_fields(manifest_schema(), manifest_schema(), data, (), older)
    walked: Any = data
    cut: dict[str, list[int]] = {}
    if quick:
        verdict = compiled_is_valid(data)
        if verdict:
            return
        if verdict is False:
            walked, cut = _cut_long_lists(data)
    # has_out_of_range_integer is exact: without one the walk (0.7 s on the sweep) is skipped.
    huge = list(out_of_range_integers(data)) if maybe_huge else []
    yield from (Finding("RRA114", out_of_range_message(value), path) for path, value in huge)
    errors = list(_validator().iter_errors(walked))
    for error in errors:
        # Back to the document's own indexes (a context error's path is built on its parent's).
        if len(error.path) >= 2 and error.path[0] in cut:
            error.path[1] = cut[error.path[0]][error.path[1]]
    if huge:  # reported once above; a bound of the schema would report them again
        errors = [e for e in errors if not (_is_int(e.instance) and not INT_MIN <= e.instance <= INT_MAX)]
    # A value of the wrong type also fails its enum or pattern; one finding per place says it.
    mistyped = {tuple(e.absolute_path) for e in errors if e.validator == "type"}
    for error in errors:
        if error.validator != "type" and tuple(error.absolute_path) in mistyped and \
                error.validator in _VALUE | _RANGE:
            continue
        yield from _findings(error, newer_minor)


#: Lists longer than this are cut before jsonschema's walk (:func:`_cut_long_lists`).
CUT_MIN_ENTRIES = 64


def _cut_long_lists(data: Any) -> tuple[Any, dict[str, list[int]]]:
    """``data`` with each long top-level list (launchers, claims ...) cut to the entries the
    compiled validator finds fault with, and for each list cut the indexes of the entries kept.

    jsonschema's walk gives the precise, located findings but takes ~10 s over the million
    values of a 10,000-launcher sweep, for one unknown field in one claim. An entry of these
    lists is checked against the entries' schema alone (:func:`_cuttable_lists` makes sure of
    it), and one the compiled validator finds nothing wrong with is valid for jsonschema too
    (its "valid" is trusted the same way for the whole document): so jsonschema finds in the
    cut document exactly the errors it finds in the whole one, at the kept indexes. Nothing is
    cut when the compiled validator cannot say where its errors are.
    """
    if type(data) is not dict:
        return data, {}
    long = [key for key in _cuttable_lists() if type(data.get(key)) is list and len(data[key]) > CUT_MIN_ENTRIES]
    if not long:
        return data, {}
    paths = compiled_error_paths(data)
    if paths is None:
        return data, {}
    faulty: dict[str, set[int]] = {key: set() for key in long}
    for path in paths:
        # An error is about an entry (path[1] its index): a list these fields' schemas can find
        # fault with as a whole is not long (minItems of at most 1, no other bound; see
        # cuttable_lists) or not a list (it is not cut).
        if len(path) >= 2 and path[0] in faulty:
            faulty[path[0]].add(path[1])
    walked = dict(data)  # the same keys in the same order: findings come out in the same order
    cut: dict[str, list[int]] = {}
    for key, indexes in faulty.items():
        # One entry (valid) stays in a list without faults: it keeps a minItems of 1 met.
        kept = sorted(indexes) or [0]
        entries = data[key]
        walked[key] = [entries[i] for i in kept]
        cut[key] = kept
    return walked, cut


#: Keywords of the root schema that judge a list by its keys, never by its entries.
_ROOT_BY_KEYS = frozenset({"$id", "$schema", "$defs", "$comment", "title", "description", "type", "properties",
                           "required", "additionalProperties", "patternProperties"})
#: Keywords of a list's schema that :func:`_cut_long_lists` keeps true of a cut list.
_LIST_CUTTABLE = frozenset({"type", "items", "minItems", "title", "description", "default", "examples",
                            "$comment", "x-rra-added"})


@cache
def _cuttable_lists() -> tuple[str, ...]:
    return cuttable_lists(_validator().schema)


def cuttable_lists(schema: Any) -> tuple[str, ...]:
    """The top-level fields of ``schema`` (references inlined) whose value is a list each entry
    of which is checked alone against one schema: no bound on the count but a ``minItems`` of at
    most 1, no ``uniqueItems`` or ``contains``, no pattern property of the root applying to the
    field too, and a root that judges the document by its keys only.

    >>> cuttable_lists({"properties": {"a": {"type": "array", "items": {}}, "b": {"type": "array", "items": {},
    ...                 "uniqueItems": True}}})
    ('a',)
    """
    if not isinstance(schema, Mapping) or not _ROOT_BY_KEYS.issuperset(schema):
        return ()
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    out = []
    for key, sub in schema.get("properties", {}).items():
        if isinstance(sub, Mapping) and sub.get("type") == "array" and _LIST_CUTTABLE.issuperset(sub) \
                and isinstance(sub.get("items"), Mapping) and sub.get("minItems", 0) <= 1 \
                and not any(p.search(key) for p in patterns):
            out.append(key)
    return tuple(out)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@cache
def _newest_field_version() -> tuple[int, int]:
    """The latest ``x-rra-added`` version in the schema: a manifest declaring at least that one
    cannot use a field newer than its version, and the walk over its values is skipped."""
    return max((_version_tuple(added) for added in _added_versions()), default=(0, 0))


def _valid_without_newer_fields(data: Any, declared: tuple[int, int]) -> bool:
    """Whether ``data`` is valid under the manifest schema with every field added after
    ``declared`` refused (its schema made ``false``), by the compiled validator.

    One pass then says both that the document is valid and that :func:`_newer_fields` has
    nothing to report: every place that walk looks at (``properties``, ``additionalProperties``,
    ``items``, ``$ref``) is one the validator applies, so a newer field there makes the document
    invalid under this schema. And refusing more only makes a schema stricter (valid here is
    valid under the published schema) as long as no keyword turns a failure into a success
    (``not``, ``oneOf``, ``if``...): :func:`_refusing_newer` makes no such schema. False when
    the answer is not known (no compiled validator, a value it cannot read): the caller checks
    the slow way.
    """
    later = tuple(sorted({added for added in _added_versions() if _version_tuple(added) > declared}))
    validator = _refusing_newer(later)
    return validator is not None and compiled_verdict(validator, data) is True


#: Keywords under which a stricter subschema can make a document valid (``not``, ``oneOf``,
#: ``if``) or that apply subschemas to places the walk of :func:`_newer_fields` does not follow
#: the same way.
_NOT_MONOTONE = frozenset({"not", "oneOf", "if", "then", "else", "dependentSchemas", "dependencies", "contains",
                           "prefixItems", "additionalItems", "unevaluatedProperties", "unevaluatedItems",
                           "$dynamicRef", "$recursiveRef"})


@cache
def _refusing_newer(versions: tuple[str, ...]) -> Any | None:
    """A compiled validator of :func:`refusing_schema` of the manifest schema; None when none
    is installed or that schema cannot be made."""
    schema = refusing_schema(manifest_schema(), frozenset(versions))
    return None if schema is None else compile_schema(schema)


def refusing_schema(schema: Mapping[str, Any], versions: frozenset[str]) -> dict[str, Any] | None:
    """``schema`` with every subschema marked ``x-rra-added`` with one of ``versions`` made
    ``false``; None when that schema would not be stricter than ``schema``, or when
    :func:`_newer_fields` walks a place the validator checks against another subschema (see
    :func:`_valid_without_newer_fields`).

    >>> refusing_schema({"properties": {"a": {"x-rra-added": "1.1"}, "b": {}}}, frozenset({"1.1"}))
    {'properties': {'a': False, 'b': {}}}
    >>> refusing_schema({"oneOf": [{"properties": {"a": {"x-rra-added": "1.1"}}}]}, frozenset({"1.1"})) is None
    True
    """
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            if not _NOT_MONOTONE.isdisjoint(node):
                return None
            # The walk gives every key outside "properties" to "additionalProperties"; the
            # validator gives a key matching "patternProperties" to that instead.
            if isinstance(node.get("additionalProperties"), Mapping) and "patternProperties" in node:
                return None
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    refused: dict[str, Any] = _refuse(schema, versions, top=True)
    return refused


def _refuse(node: Any, versions: frozenset[str], top: bool = False) -> Any:
    if isinstance(node, Mapping):
        if not top and node.get("x-rra-added") in versions:
            return False
        return {key: _refuse(value, versions) for key, value in node.items()}
    if isinstance(node, list):
        return [_refuse(value, versions) for value in node]
    return node


@cache
def _added_versions() -> frozenset[str]:
    """Every ``x-rra-added`` version the manifest schema names."""
    found: set[str] = set()
    stack: list[Any] = [manifest_schema()]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            added = node.get("x-rra-added")
            if isinstance(added, str):
                found.add(added)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return frozenset(found)


def _version_tuple(added: str) -> tuple[int, int]:
    major, _, minor = added.partition(".")
    return int(major), int(minor)


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
            from difflib import get_close_matches  # here: only a finding needs it

            close = get_close_matches(str(key), allowed, n=1)
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
    elif keyword == "anyOf" and error.context and _is_kind_alternative(error.validator_value):
        # A claim whose values are not numbers and that names no other kind (spec/02-manifest.md#kinds):
        # what is wrong is its values, as the number branch says ("expected number"), not a
        # missing 'kind'. An unknown kind is reported once, by the enum of 'kind' itself.
        kind = error.instance.get("kind") if isinstance(error.instance, Mapping) else None
        if kind is None or kind == "number":
            for sub in sorted(error.context, key=lambda e: tuple(map(str, e.absolute_path))):
                if sub.schema_path and sub.schema_path[0] == 0:
                    yield from _findings(sub, newer_minor)
    elif keyword in {"anyOf", "oneOf"} and error.context:
        from jsonschema.exceptions import best_match

        yield from _findings(best_match(error.context), newer_minor)
    else:
        yield Finding("RRA115", error.message, path)


def _is_kind_alternative(alternatives: Any) -> bool:
    """Whether an anyOf is the claim's: values that are numbers, or a kind that says otherwise."""
    return (isinstance(alternatives, list) and len(alternatives) == 2 and isinstance(alternatives[1], Mapping)
            and alternatives[1].get("required") == ["kind"])


def _newer_fields(root: Mapping[str, Any], schema: Mapping[str, Any], data: Any, path: Pointer,
                  declared: tuple[int, int]) -> Iterator[Finding]:
    """Fields whose schema says ``x-rra-added`` a version later than the declared one.

    The walk follows ``properties``, ``additionalProperties``, ``items`` and ``$ref`` from
    ``schema``, but only into the parts of the document under which the schema has such a field
    at all (a :class:`_Plan`, built once per schema and version): a 1.0 manifest of a million
    values is not walked value by value for the six fields 1.1 added.
    """
    plan = _plan(root, schema, declared, {})
    out: list[Finding] = []
    if plan is not None:
        _walk_plan(plan, data, path, declared, out)
    yield from out


class _Plan:
    """The part of a schema node that can hold a field newer than a declared version.

    ``props`` maps every property name of the node to its entry (``None`` when nothing newer
    is at or below it); ``additional`` is the entry for other keys (``None`` when there is none
    or nothing newer in it); ``items`` the plan for list items. An entry is the ``x-rra-added``
    version of the field when it is newer (else ``None``) and the plan below it (or ``None``).
    """

    __slots__ = ("additional", "items", "names", "props")

    def __init__(self) -> None:
        self.props: dict[Any, tuple[str | None, _Plan | None] | None] = {}
        self.names: tuple[Any, ...] = ()  # the properties whose entry is not None
        self.additional: tuple[str | None, _Plan | None] | None = None
        self.items: _Plan | None = None


def _plan(root: Mapping[str, Any], schema: Mapping[str, Any], declared: tuple[int, int],
          memo: dict[int, _Plan | None]) -> _Plan | None:
    """The plan of ``schema`` for a manifest declaring ``declared``, or None when nothing below
    it was added later (memoized per schema node; the manifest schema has no recursion)."""
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = root.get("$defs", {}).get(name, {})
    key = id(schema)
    if key in memo:
        return memo[key]
    memo[key] = None  # a recursive reference (none today) ends the walk instead of looping
    plan = _Plan()
    useful = False
    properties = schema.get("properties", {})
    for name, sub in properties.items():
        plan.props[name] = entry = _entry(root, sub, declared, memo)
        useful = useful or entry is not None
    additional = schema.get("additionalProperties")
    if isinstance(additional, Mapping):
        plan.additional = _entry(root, additional, declared, memo)
        useful = useful or plan.additional is not None
    plan.names = tuple(name for name, entry in plan.props.items() if entry is not None)
    if isinstance(schema.get("items"), Mapping):
        plan.items = _plan(root, schema["items"], declared, memo)
        useful = useful or plan.items is not None
    memo[key] = plan if useful else None
    return memo[key]


def _entry(root: Mapping[str, Any], sub: Any, declared: tuple[int, int],
           memo: dict[int, _Plan | None]) -> tuple[str | None, _Plan | None] | None:
    if not isinstance(sub, Mapping):
        return None
    added = sub.get("x-rra-added")
    newer: str | None = None
    if isinstance(added, str):
        major, _, minor = added.partition(".")
        if (int(major), int(minor)) > declared:
            newer = added
    below = _plan(root, sub, declared, memo)
    return None if newer is None and below is None else (newer, below)


def _walk_plan(plan: _Plan, data: Any, path: Pointer, declared: tuple[int, int], out: list[Finding]) -> None:
    # Appends rather than yields: a generator per mapping cost more than the walk itself.
    if type(data) is dict or (type(data) is not list and isinstance(data, Mapping)):
        props, additional = plan.props, plan.additional
        if additional is None:
            for name in plan.names:
                if name in data:
                    break
            else:
                return  # the common case: none of the keys that lead to newer fields
        for key, value in data.items():
            entry = props.get(key, additional)  # a known property with nothing newer is None
            if entry is None:
                continue
            added, below = entry
            if added is not None:
                out.append(Finding("RRA102", f"field {key!r} was added in RRA {added}, but the manifest "
                                   f"declares rra_version '{declared[0]}.{declared[1]}'", (*path, key),
                                   f"declare rra_version: '{added}' or remove the field", at_key=True))
            if below is not None:
                _walk_plan(below, value, (*path, key), declared, out)
    elif isinstance(data, list) and plan.items is not None:
        items = plan.items
        # Items that are mappings without a key leading to newer fields are skipped here, not
        # in a call each (fifty thousand observations in the benchmark manifest).
        names = items.names if items.additional is None else None
        for index, item in enumerate(data):
            if names is not None and type(item) is dict:
                for name in names:
                    if name in item:
                        break
                else:
                    continue
            _walk_plan(items, item, (*path, index), declared, out)


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
        from difflib import get_close_matches  # here: only a finding needs it

        close = get_close_matches(error.instance, [str(e) for e in error.validator_value], n=1)
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
