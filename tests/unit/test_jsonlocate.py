"""The JSON locator against today's full re-read: the same position wherever it answers.

``SourceDocument.position`` of a document read by the JSON decoder asks the locator
(rra_tools/io/read/jsonlocate.py) first; the locator may answer None (then the whole text is
re-read by the located YAML reader, as before), never something else. Checked for every
pointer to every node, and absent ones, of generated JSON in several layouts, of every JSON file
of the repository and of hand-written texts near the locator's refusals.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rra_tools.io.errors import LoadError
from rra_tools.io.read.jsonlocate import JsonLocator
from rra_tools.io.read.source import Position, SourceDocument, parse_document

from .test_blocklocate import pointers, validate_counting_builds

REPO = Path(__file__).resolve().parents[2]


def check_json(text: str) -> tuple[int, int] | None:
    """Assert the locator agrees with the re-read; (refused, asked) for a text the JSON decoder
    reads for the loader, else None."""
    try:
        doc = parse_document(text, located=False)
    except LoadError:
        return None
    if not doc._json_read:
        return None
    # Today's answer: the same document without the locator re-reads the text when asked.
    reread = SourceDocument(text=text, data=doc.data, _unlocated=True)
    locator = JsonLocator(text, doc.data)
    refused = asked = 0
    for pointer in pointers(doc.data):
        asked += 1
        found = locator.position(pointer)
        if found is None:
            refused += 1
            continue
        expected = reread.position(pointer)
        assert Position(*found) == expected, f"{pointer}: located {expected}, locator {found}\n{text}"
    return refused, asked


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=15)
LAYOUTS = [{}, {"indent": 2}, {"indent": 0}, {"separators": (",", ":")}, {"indent": 1, "separators": (" ,", " : ")},
           {"ensure_ascii": False}, {"indent": 3, "ensure_ascii": False}]


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=4), st.sampled_from(LAYOUTS),
       st.sampled_from(["", "\n", "  ", "\n\n "]))
def test_json_locator_agrees_on_generated_documents(data: Any, layout: dict[str, Any], around: str) -> None:
    text = around + json.dumps(data, **layout) + around[::-1]
    assert check_json(text) is not None


@pytest.mark.parametrize("text", [
    '{"a": 1, "b": [1, "x", {"c": null}], "d": {}, "e": []}',
    '{\n  "a": {\n    "b": [\n      1,\n      2\n    ]\n  },\n  "c":"x" , "d"  :  true\n}\n',
    '  {"é": "ü", "k": ["😀", 1.5e3, -2]}',
    '{"a":1,"b":{"c":[{"d":2}]}}',
    '{"a" : 1, "b" : [2, {"c" :3}]}',     # a space before the colon
    '{}',
    '{"a": "\\u00e9\\/\\n", "\\u00fc": [0.5]}',
])
def test_json_locator_answers_for_plain_json(text: str) -> None:
    counts = check_json(text)
    assert counts is not None and counts[0] == 0, counts


@pytest.mark.parametrize("text", [
    '{"a":\t1}',                           # a tab: refused, as the YAML reader may read it otherwise
    '{"a": 1,\r\n "b": 2}',                # carriage returns
    '{"a": "\\ud83d\\ude00"}',             # escaped surrogates: libyaml refuses them
    '{"a": "x\u2028y"}',                   # a YAML 1.1 line break inside a string
    '{"' + "k" * 1200 + '": 1}',           # a key too long for an implicit YAML key
    '{"a"\n: 1}',                          # a key not on the line of its colon
])
def test_json_locator_refuses_what_yaml_may_read_otherwise(text: str) -> None:
    doc = parse_document(text, located=False)
    assert doc._json_read
    assert JsonLocator(text, doc.data).position(("a",)) is None
    check_json(text)  # and the document still answers (from the re-read)


def test_every_json_file_of_the_repository() -> None:
    read = 0
    for path in sorted(REPO.glob("examples/**/*.json")) + sorted(REPO.glob("conformance/**/*.json")) + \
            sorted(REPO.glob("tests/**/*.json")):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if not text.lstrip().startswith("{"):
            continue
        counts = check_json(text)
        if counts is None:
            continue
        read += 1
        assert counts[0] == 0, f"refused {counts[0]} of {counts[1]} pointers of {path}"
    assert read >= 10


def test_a_json_sweep_is_located_whole() -> None:
    launchers = [{"id": f"t-{i}", "argv": ["python", "t.py", str(i)], "seeds": [0, 1], "env": {"A": "1"}}
                 for i in range(30)]
    claims = [{"id": f"c-{i}", "launcher": f"t-{i}", "reported": {"value": 1.5}} for i in range(30)]
    for indent in (None, 2):
        counts = check_json(json.dumps({"rra_version": "1.0", "launchers": launchers, "claims": claims}, indent=indent))
        assert counts is not None and counts[0] == 0 and counts[1] > 500


def test_unsure_falls_back_to_the_re_read() -> None:
    doc = parse_document('{"a": 1, "b": {"c": [1, 2]}}', located=False)
    assert doc.position(("a",)) == Position(1, 7, 1, 2)
    assert doc._positions is None  # found by the locator
    # The data no longer agree with the text: a key before the others (the locator reads an
    # object only as far as it needs, in order, so a key added at the end would go unseen).
    doc.data["b"] = {"new": 0, **doc.data["b"]}
    assert doc.position(("b", "c", 1)) == Position(1, 25)
    assert doc._positions is not None and not doc._json_read


def test_a_json_finding_is_located_without_re_reading(tmp_path: Path) -> None:
    # Through the real CLI, a spy counting the located reader's builds in the rra process.
    example = REPO / "examples" / "digits-logreg"
    for name in os.listdir(example):
        (tmp_path / name).write_bytes((example / name).read_bytes())
    data = parse_document((example / "rra.yaml").read_text(encoding="utf-8")).data
    data["claims"][0]["launcher"] = "trian"
    (tmp_path / "rra.yaml").unlink()
    text = json.dumps(data, indent=2) + "\n"
    (tmp_path / "rra.json").write_text(text, encoding="utf-8")
    line = text[: text.index('"launcher": "trian"')].count("\n") + 1
    out, builds = validate_counting_builds(tmp_path / "rra.json", tmp_path)
    assert f"rra.json:{line}:19: error[RRA201] launcher 'trian' is not declared" in out, out
    assert builds == 0, "the manifest was re-read by the located reader"
