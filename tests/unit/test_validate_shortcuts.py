"""The validator's shortcuts on large manifests find exactly what the plain walks find.

Three checks skip work on documents that cannot hold a finding:

- RRA102 (a field newer than the declared version) walks only the parts of the document under
  which the schema has such a field (``schema_layer._plan``), not every value;
- RRA214 (placeholder text) is ruled out by one substring search of the source text when the
  text holds no placeholder word and no backslash (``Context.may_contain``);
- JSON integers are read by Python's own ``int`` (the decoder's fast path) where it agrees
  with :func:`rra_tools.io.read.scalars.to_int`;
- the compiled schema pre-check (jsonschema-rs) is trusted only for documents without an
  integer beyond 64 bits, which it reads as a float and accepts (``has_out_of_range_integer``),
  and is asked about small documents too once it is loaded (``rra run``'s check);
- that search for integers beyond 64 bits is ruled out by the source text when it holds no run
  of 19 digits, no digit before an x or o and no backslash;
- RRA103 (extension fields) is ruled out by the text when it holds neither ``x-`` nor a
  backslash (``Context.may_contain``, keys included);
- the artifact-root resolver makes no ``lstat`` below a prefix whose ``lstat`` failed.

Each is compared here with the straightforward version, over every conformance case, every
example and generated documents around the edges (escapes, extensions, newer fields anywhere).
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rra_tools.conformance import load_suite, materialise, suite_path
from rra_tools.io.errors import LoadError
from rra_tools.io.read.scalars import MAX_DECIMAL_DIGITS
from rra_tools.io.read.source import decode_text, parse_document
from rra_tools.validate.api import find_manifest
from rra_tools.validate.context import Context, Finding, Pointer
from rra_tools.validate.rules.unfinished import unfinished_values
from rra_tools.validate.schema_layer import _newer_fields, manifest_schema

ROOT = Path(__file__).resolve().parents[2]


# The plain versions, as they were before the shortcuts -------------------------------------


def newer_fields_walk(root: Mapping[str, Any], schema: Mapping[str, Any], data: Any, path: Pointer,
                      declared: tuple[int, int]) -> Iterator[Finding]:
    """RRA102 by visiting every value of the document beside its schema."""
    while "$ref" in schema:
        schema = root.get("$defs", {}).get(schema["$ref"].rsplit("/", 1)[-1], {})
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
            yield from newer_fields_walk(root, sub, value, (*path, key), declared)
    elif isinstance(data, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(data):
            yield from newer_fields_walk(root, schema["items"], item, (*path, index), declared)


def placeholders_walked(data: Any) -> list[Finding]:
    """RRA214 without the text: every value is looked at."""
    return list(unfinished_values(Context(data=data, root=None)))


# The documents compared --------------------------------------------------------------------


def _texts() -> list[tuple[str, str]]:
    """(name, manifest text) of every conformance case with a manifest and every example."""
    import tempfile

    suite = suite_path()
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, loaded in enumerate(load_suite(suite)):
            manifest = find_manifest(materialise(suite, loaded, Path(tmp) / str(n)))
            if manifest is not None and manifest.is_file():
                out.append((loaded.case.id, manifest.read_bytes()))
    out += [(str(path.relative_to(ROOT)), path.read_bytes()) for path in sorted(ROOT.glob("examples/**/rra.yaml"))]
    texts = []
    for name, raw in out:
        try:
            texts.append((name, decode_text(raw)))  # as the loader decodes them
        except LoadError:
            continue  # not text: never reaches the checks
    return texts


TEXTS = _texts()


def _parsed(text: str) -> Any:
    try:
        return parse_document(text, located=False)
    except LoadError:
        return None


def _findings(found: Iterator[Finding] | list[Finding]) -> list[tuple[Any, ...]]:
    return [(f.code, f.pointer, f.message, f.hint, f.at_key) for f in found]


def test_the_documents_are_many() -> None:
    # The comparisons below are only as good as their inputs.
    assert len(TEXTS) > 400


@pytest.mark.parametrize("declared", [(1, 0), (1, 1), (0, 9)])
def test_newer_fields_as_the_walk_over_every_document(declared: tuple[int, int]) -> None:
    schema = manifest_schema()
    checked = 0
    for name, text in TEXTS:
        doc = _parsed(text)
        if doc is None or not isinstance(doc.data, Mapping):
            continue
        expected = _findings(newer_fields_walk(schema, schema, doc.data, (), declared))
        assert _findings(_newer_fields(schema, schema, doc.data, (), declared)) == expected, name
        checked += 1
    assert checked > 400


_NEWER = [("launchers", "repeats", 3), ("launchers", "secrets", ["TOKEN"]),
          ("claims.extract", "stream", "stdout"), ("observations", "repeat", 0),
          ("observations", "provenance", {"by": "someone"}), ("parameters", "secret", True)]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_newer_fields_anywhere(data: st.DataObject) -> None:
    # Newer fields (and unknown keys, and values of the wrong type) put at random places of a
    # valid manifest: the plan finds what the walk finds, in the same order.
    doc = parse_document((ROOT / "examples" / "digits-logreg" / "rra.yaml").read_text()).data
    doc = copy.deepcopy(doc)
    for _ in range(data.draw(st.integers(1, 6))):
        where, key, value = data.draw(st.sampled_from(_NEWER))
        targets = _targets(doc, where)
        if targets:
            target = data.draw(st.sampled_from(targets))
            if data.draw(st.booleans()):
                target[key] = value
            else:  # the same place holding something unexpected
                target[data.draw(st.sampled_from([key, "x-" + key, "unknown"]))] = data.draw(
                    st.sampled_from([None, 1, "text", [1, {"repeat": 1}], {"secret": True}]))
    schema = manifest_schema()
    for declared in ((1, 0), (1, 1)):
        assert _findings(_newer_fields(schema, schema, doc, (), declared)) == \
            _findings(newer_fields_walk(schema, schema, doc, (), declared))


def _targets(doc: dict[str, Any], where: str) -> list[dict[str, Any]]:
    launchers = [x for x in doc.get("launchers", []) if isinstance(x, dict)]
    claims = [x for x in doc.get("claims", []) if isinstance(x, dict)]
    if where == "launchers":
        return launchers
    if where == "claims.extract":
        return [c["extract"] for c in claims if isinstance(c.get("extract"), dict)]
    if where == "observations":
        return [o for c in claims for o in c.get("reference", {}).get("observations", []) if isinstance(o, dict)]
    params = [p for x in launchers for p in (x.get("parameters") or {}).values() if isinstance(p, dict)]
    if not params and launchers:
        launchers[0]["parameters"] = {"lr": {"type": "float", "default": 0.1}}
        params = [launchers[0]["parameters"]["lr"]]
    return params


def test_placeholders_as_the_walk_over_every_document() -> None:
    checked = with_findings = 0
    for name, text in TEXTS:
        doc = _parsed(text)
        if doc is None or not isinstance(doc.data, Mapping):  # the engine runs rules on mappings only
            continue
        expected = _findings(placeholders_walked(doc.data))
        assert _findings(unfinished_values(Context(data=doc.data, root=None, text=text))) == expected, name
        checked += 1
        with_findings += bool(expected)
    assert checked > 400 and with_findings >= 3


# Placeholder words written so that the text does not hold them literally: escapes of JSON
# and of YAML double quotes, and YAML's escaped line break inside double quotes.
_SPELLINGS = {
    "json": ['"\\u0054ODO: x"', '"T\\u004fDO"', '"\\tTODO"', '"TB\\u0044"', '"\\u0046IXME later"', '"TODO"',
             '"TODOs"', '"\\u0054ODOs"', '"to do"'],
    "yaml": ['"\\x54ODO: x"', '"T\\u004FDO"', '"\\U00000046IXME"', '"TO\\\n  DO"', '"\\tTBD"', "TODO - x",
             "'TODO'", '"TO\n  DO"', '"\\x54ODOs"'],
}


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["json", "yaml"]), st.data())
def test_placeholders_written_with_escapes(form: str, data: st.DataObject) -> None:
    spellings = st.sampled_from(_SPELLINGS[form])
    values = data.draw(st.lists(spellings, min_size=1, max_size=4))
    keys = data.draw(st.lists(st.sampled_from(["title", "x-note", "summary", "note"]), min_size=len(values),
                              max_size=len(values)))
    if form == "json":
        text = "{" + ", ".join(f'"{k}{i}": {v}' for i, (k, v) in enumerate(zip(keys, values))) + "}"
    else:
        text = "".join(f"{k}{i}: {v}\n" for i, (k, v) in enumerate(zip(keys, values)))
    doc = _parsed(text)
    assert doc is not None, text
    expected = _findings(placeholders_walked(doc.data))
    assert _findings(unfinished_values(Context(data=doc.data, root=None, text=text))) == expected


def test_may_contain() -> None:
    assert not Context(data={}, root=None, text="title: to do\n").may_contain("TODO")
    assert Context(data={}, root=None, text='title: "\\x54ODO"\n').may_contain("TODO")  # an escape
    assert Context(data={}, root=None, text="title: TBD\n").may_contain("TODO", "TBD")
    assert Context(data={}, root=None).may_contain("TODO")  # no text: nothing is ruled out


# JSON integers ------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [0, 640, MAX_DECIMAL_DIGITS, 100_000])
def test_json_integers_under_any_digit_limit(limit: int) -> None:
    # Python's int() decides where its limit agrees with to_int; otherwise to_int does. Either
    # way a literal of 5,000 digits reads as to_int's stand-in, never as a huge exact number.
    huge, long = "7" + "0" * 5000, "3" + "0" * 1000
    text = f'{{"a": {huge}, "b": -{huge}, "c": [1, -2, 0, 9223372036854775808]}}'
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(limit)
    try:
        data = parse_document(text, located=False).data
        if limit == 640:  # under so low a limit to_int refuses 1,001 digits too: RRA006
            with pytest.raises(LoadError):
                parse_document(f'{{"a": {long}}}', located=False)
        else:
            assert parse_document(f'{{"a": {long}}}', located=False).data == {"a": 3 * 10**1000}
    finally:
        sys.set_int_max_str_digits(before)
    stand_in = 10 ** (MAX_DECIMAL_DIGITS - 1)
    assert data == {"a": stand_in, "b": -stand_in, "c": [1, -2, 0, 2**63]}


# Integers beyond 64 bits and the compiled pre-check ------------------------------------------


def _big_manifest_text(huge: int) -> str:
    # A valid manifest of more than FAST_PATH_MIN_VALUES values (the compiled pre-check runs).
    from rra_tools.validate.schema_layer import FAST_PATH_MIN_VALUES

    doc = parse_document((ROOT / "examples" / "digits-logreg" / "rra.yaml").read_text()).data
    doc["x-sweep"] = {"values": list(range(FAST_PATH_MIN_VALUES))}
    doc["launchers"][0]["resources"]["timeout_s"] = huge
    doc["x-build"] = -huge - 1
    import json as _json

    return _json.dumps(doc)


@pytest.mark.parametrize("huge", [2**63, 2**64 + 1, 10**30])
def test_integers_beyond_64_bits_in_a_large_manifest(huge: int) -> None:
    # jsonschema-rs reads such an integer as a float and accepts it: its "valid" must not hide
    # RRA114 (it did for documents of 20,000 values or more).
    from rra_tools.validate.api import validate_bytes

    result = validate_bytes(_big_manifest_text(huge).encode(), name="rra.json")
    assert [(d.code, d.pointer) for d in result.diagnostics if d.code == "RRA114"] == [
        ("RRA114", "/launchers/0/resources/timeout_s"), ("RRA114", "/x-build")]


def test_small_manifest_once_the_compiled_validator_is_loaded() -> None:
    # rra run has loaded the compiled validator when it checks a manifest's own errors; the
    # schema layer then asks it first (no jsonschema import for a valid manifest) and must still
    # report what jsonschema reports.
    from rra_tools.io.schemas import compiled_is_valid, compiled_loaded
    from rra_tools.validate.api import validate_bytes

    assert compiled_is_valid({}) is False and compiled_loaded()
    doc = parse_document((ROOT / "examples" / "digits-logreg" / "rra.yaml").read_text()).data
    doc["launchers"][0]["resources"]["timeout_s"] = 2**63
    found = [(d.code, d.pointer) for d in validate_bytes(json_text(doc), name="rra.json").diagnostics]
    assert ("RRA114", "/launchers/0/resources/timeout_s") in found
    doc["launchers"][0]["resources"]["timeout_s"] = "soon"
    found = [(d.code, d.pointer) for d in validate_bytes(json_text(doc), name="rra.json").diagnostics]
    assert ("RRA112", "/launchers/0/resources/timeout_s") in found


def json_text(doc: Any) -> bytes:
    import json as _json

    return _json.dumps(doc).encode()


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.one_of(st.integers(), st.booleans(), st.none(), st.text(max_size=3), st.floats()),
                    lambda inner: st.one_of(st.lists(inner, max_size=4),
                                            st.dictionaries(st.text(max_size=3), inner, max_size=4)),
                    max_leaves=30))
def test_has_out_of_range_integer_as_the_walk(data: Any) -> None:
    from rra_tools.io.limits import has_out_of_range_integer, out_of_range_integers

    assert has_out_of_range_integer(data) == (next(out_of_range_integers(data), None) is not None)


# The text rules out integers beyond 64 bits, and extension fields ----------------------------


def test_out_of_range_integers_with_the_text_over_every_document() -> None:
    from rra_tools.io.limits import has_out_of_range_integer, out_of_range_integers

    checked = 0
    for name, text in TEXTS:
        doc = _parsed(text)
        if doc is None:
            continue
        walked = next(out_of_range_integers(doc.data), None) is not None
        assert has_out_of_range_integer(doc.data, text) == walked, name
        checked += 1
    assert checked > 400


# Integer spellings of both readers, some of which hold no 19-digit run in the text.
_INT_SPELLINGS = {
    "yaml": ["{n}", "+{n}", "0{n}", "0x{n:x}", "0o{n:o}", "!!int {n}", '!!int "{n}"', "!!int '0x{n:x}'",
             '!!int "\\x3{first}{rest}"', '!!int "0\\x78{n:x}"', "[{n}, 1]", "{{k: {n}}}"],
    "json": ["{n}", "[{n}]", '{{"k": {n}}}', "[0, {n}]"],
}


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["json", "yaml"]), st.data())
def test_out_of_range_integers_written_any_way(form: str, data: st.DataObject) -> None:
    from rra_tools.io.limits import has_out_of_range_integer, out_of_range_integers

    magnitude = data.draw(st.one_of(st.integers(0, 2**70), st.sampled_from(
        [2**63 - 1, 2**63, 2**64, 10**18, 10**19, 2**63 + 1, 16**15, 16**16, 8**21, 8**22])))
    negative = data.draw(st.booleans()) and form == "json"
    spelling = data.draw(st.sampled_from(_INT_SPELLINGS[form]))
    digits = str(magnitude)
    value = spelling.format(n=magnitude, first=digits[0], rest=digits[1:])
    if negative:
        value = value.replace(str(magnitude), f"-{magnitude}", 1)
    text = f'{{"a": {value}}}' if form == "json" else f"a: {value}\n"
    doc = _parsed(text)
    if doc is None:
        return  # not a document (a tag the reader refuses): nothing reaches the check
    walked = next(out_of_range_integers(doc.data), None) is not None
    assert has_out_of_range_integer(doc.data, text) == walked, text


def test_extension_fields_with_the_text_over_every_document() -> None:
    from rra_tools.validate.rules.extensions import extension_fields

    checked = with_findings = 0
    for name, text in TEXTS:
        doc = _parsed(text)
        if doc is None or not isinstance(doc.data, Mapping):
            continue
        expected = _findings(extension_fields(Context(data=doc.data, root=None)))
        assert _findings(extension_fields(Context(data=doc.data, root=None, text=text))) == expected, name
        checked += 1
        with_findings += bool(expected)
    assert checked > 400 and with_findings >= 3


@pytest.mark.parametrize("text", ['{"\\u0078-note": 1}', '{"a": {"x\\u002dnote": [1]}}', 'a:\n  "\\x78-note": 1\n',
                                  '"\\U00000078-b": 2\n', '? "x\\\n  -c"\n: 3\n'])
def test_extension_keys_written_with_escapes_are_found(text: str) -> None:
    from rra_tools.validate.rules.extensions import extension_fields

    doc = _parsed(text)
    assert doc is not None, text
    found = _findings(extension_fields(Context(data=doc.data, root=None, text=text)))
    assert [f[0] for f in found] == ["RRA103"], text


# The root resolver below a missing prefix ----------------------------------------------------


def _resolver_walked(root: Path, rel: str) -> str:
    """The real path of ``rel`` with one lstat per component, as before the shortcut."""
    import os
    import posixpath

    real = os.path.realpath(root)
    for part in posixpath.normpath(rel).split("/"):
        if part in (".", ""):
            continue
        candidate = os.path.join(real, part)
        real = os.path.realpath(candidate) if os.path.islink(candidate) else candidate
    return real


def test_root_resolver_below_missing_prefixes(tmp_path: Path) -> None:
    import os

    from rra_tools.io.paths import RootResolver

    outside = tmp_path / "outside"
    root = tmp_path / "root"
    (outside / "deep").mkdir(parents=True)
    (root / "runs" / "a").mkdir(parents=True)
    (root / "file.txt").write_text("x")
    os.symlink(outside, root / "runs" / "a" / "out")  # a link below an existing prefix
    os.symlink("../../outside", root / "runs" / "up")
    os.symlink("runs/a", root / "alias")
    os.symlink("missing/deeper", root / "dangling")
    rels = ["runs/a/out/deep/x", "missing/x/y", "missing/x/z", "runs/b/out/x", "runs/up/deep", "file.txt/x/y",
            "alias/out/deep", "dangling/x", "runs/a/./out", "runs//a/out", "missing", "runs/a/out"]
    resolver = RootResolver(root)
    # Twice in a row: the second pass answers from what the first one cached.
    for rel in rels + rels[::-1]:
        assert resolver.real_path(rel) == _resolver_walked(root, rel), rel
    assert not resolver.inside(resolver.real_path("runs/a/out/deep/x"))
    assert resolver.inside(resolver.real_path("missing/x/y"))


def test_root_resolver_makes_one_lstat_for_outputs_under_a_missing_folder(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # The reason for the shortcut: 10,000 launchers' outputs under runs/, which does not exist
    # before a run, cost one lstat rather than three per path.
    import os

    from rra_tools.io.paths import RootResolver

    calls: list[str] = []
    real_lstat = os.lstat

    def counting(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        calls.append(str(path))
        return real_lstat(path, *args, **kwargs)

    resolver = RootResolver(tmp_path)
    runs = str(tmp_path.resolve() / "runs")
    monkeypatch.setattr(os, "lstat", counting)
    for n in range(100):
        resolver.real_path(f"runs/train-{n:05d}/{{seed}}/metrics.json")
    assert calls == [runs]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_reader_vouching_for_its_integers_is_right(data: st.DataObject) -> None:
    from rra_tools.io.limits import out_of_range_integers

    magnitude = data.draw(st.one_of(st.integers(0, 2**70), st.sampled_from([2**63 - 1, 2**63, 2**64, 10**19])))
    spelling = data.draw(st.sampled_from(["{n}", "-{n}", "0x{n:x}", "0o{n:o}", "[1, {n}]", "[0x{n:x}]"]))
    text = f"a: {spelling.format(n=magnitude)}\nb:\n- c: {spelling.format(n=magnitude)}\n"
    doc = _parsed(text)
    assert doc is not None
    if doc.integers_in_range:
        assert next(out_of_range_integers(doc.data), None) is None, text


def test_rra114_in_a_large_yaml_manifest() -> None:
    # The fast reader leaves the document to the located reader, and the finding is located.
    from rra_tools.validate.api import validate_bytes
    from rra_tools.validate.schema_layer import FAST_PATH_MIN_VALUES

    text = (ROOT / "examples" / "digits-logreg" / "rra.yaml").read_text()
    text = text.replace("timeout_s: ", "timeout_s: 9223372036854775808 #", 1)
    text += "x-sweep:\n" + "".join(f"- {i}\n" for i in range(FAST_PATH_MIN_VALUES))
    result = validate_bytes(text.encode(), name="rra.yaml")
    found = [(d.code, d.pointer, d.line is not None) for d in result.diagnostics if d.code == "RRA114"]
    assert found == [("RRA114", "/launchers/0/resources/timeout_s", True)]
