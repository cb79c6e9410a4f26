"""The schema layer's cut of long lists gives the same findings as jsonschema's walk of the whole
document.

When the compiled validator finds a large manifest invalid, jsonschema gives the located
findings. Its walk over a 10,000-launcher sweep takes ~10 s, so long top-level lists are first
cut to the entries the compiled validator finds fault with (``schema_layer._cut_long_lists``).
Checked here against the uncut walk (the same function with the cut switched off) on a
generated sweep with problems planted at random entries, of every kind the schema layer
reports, in entries reached through ``anyOf`` too, and alongside problems outside the lists.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rra_tools.io.read.source import parse_document
from rra_tools.validate import schema_layer
from rra_tools.validate.schema_layer import check_schema

ROOT = Path(__file__).resolve().parents[2]
ENTRIES = 80  # past CUT_MIN_ENTRIES, so launchers and claims are cut


def sweep() -> dict[str, Any]:
    """The CPU example with its launcher and claim repeated ENTRIES times (valid)."""
    data = parse_document((ROOT / "examples" / "digits-logreg" / "rra.yaml").read_text()).data
    launcher, claim = data["launchers"][0], data["claims"][0]
    data["launchers"] = [dict(copy.deepcopy(launcher), id=f"train-{i:03d}") for i in range(ENTRIES)]
    data["claims"] = [dict(copy.deepcopy(claim), id=f"acc-{i:03d}", launcher=f"train-{i:03d}")
                      for i in range(ENTRIES)]
    return data


def _set_parameter_default(entry: dict[str, Any], value: Any) -> None:
    entry.setdefault("parameters", {})["lr"] = {"type": "float", "default": value}


# Each plants one problem in a launcher (L) or a claim (C); the values are what a person gets wrong.
PLANTS: dict[str, tuple[str, Any]] = {
    "unknown field": ("C", lambda e: e.update(notes="extra")),
    "misspelt field": ("L", lambda e: e.update(arvg=e.pop("argv", ["python"]))),
    "missing required": ("C", lambda e: e.pop("paper_location", None)),
    "wrong type": ("L", lambda e: e.update(seeds="0, 1, 2")),
    "bad id pattern": ("L", lambda e: e.update(id="Train Model")),
    "bad enum": ("C", lambda e: e["metric"].update(direction="up")),  # (metric is never removed)
    "out of range": ("L", lambda e: e.setdefault("resources", {}).update(timeout_s=-5)),
    "anyOf: extract without output or stream": ("C", lambda e: e.update(extract={"json_pointer": "/x"})),
    "anyOf: observation without seed or repeat": ("C", lambda e: e["reference"]["observations"][0].pop("seed", None)),
    "anyOf: parameter default of a wrong type": ("L", lambda e: _set_parameter_default(e, [1])),
    "entry not a mapping": ("C", lambda e: e.clear()),
}


def findings(data: Any, *, cut: bool, monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    monkeypatch.setattr(schema_layer, "CUT_MIN_ENTRIES", 64 if cut else 10**9)
    return [(f.code, f.message, f.pointer, f.hint, f.severity, f.at_key)
            for f in check_schema(data, values=10**6, integers_in_range=True)]


def plant(data: dict[str, Any], name: str, index: int) -> None:
    where, change = PLANTS[name]
    entries = data["launchers" if where == "L" else "claims"]
    if name == "entry not a mapping":
        entries[index] = "acc"
        return
    change(entries[index])


@pytest.mark.parametrize("name", list(PLANTS))
def test_each_kind_of_problem_is_found_the_same_at_its_own_index(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    data = sweep()
    for index in (0, 41, ENTRIES - 1):
        plant(data, name, index)
    whole = findings(data, cut=False, monkeypatch=monkeypatch)
    assert whole, f"{name!r} planted no problem the schema layer reports"
    assert findings(data, cut=True, monkeypatch=monkeypatch) == whole
    # The findings point at the entries the problems were planted in, not at the cut list's.
    key = "launchers" if PLANTS[name][0] == "L" else "claims"
    assert {f[2][1] for f in whole if f[2][:1] == (key,)} == {0, 41, ENTRIES - 1}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(plants=st.lists(st.tuples(st.sampled_from(sorted(PLANTS)), st.integers(0, ENTRIES - 1)), min_size=1, max_size=6),
       outside=st.sampled_from(["none", "missing title", "unknown top-level field", "empty data list"]))
def test_planted_problems_anywhere(plants: list[tuple[str, int]], outside: str,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    data = sweep()
    for name, index in plants:
        if isinstance(data["launchers" if PLANTS[name][0] == "L" else "claims"][index], dict):
            plant(data, name, index)
    if outside == "missing title":
        data.pop("title")
    elif outside == "unknown top-level field":
        data["note"] = "x"
    elif outside == "empty data list":
        data["data"] = []
    assert findings(data, cut=True, monkeypatch=monkeypatch) == findings(data, cut=False, monkeypatch=monkeypatch)


def test_only_the_faulty_entries_are_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    data = sweep()
    data["claims"][7]["notes"] = "x"
    data["claims"][63]["metric"]["direction"] = "up"
    walked, cut = schema_layer._cut_long_lists(data)
    # Claims: the two faulty ones; launchers: one valid entry keeps minItems met.
    assert cut == {"claims": [7, 63], "launchers": [0]}
    assert walked["claims"] == [data["claims"][7], data["claims"][63]] and walked["launchers"] == [data["launchers"][0]]
    assert list(walked) == list(data) and walked["paper"] is data["paper"]
    assert [f.pointer for f in check_schema(data, values=10**6, integers_in_range=True)] == [
        ("claims", 7, "notes"), ("claims", 63, "metric", "direction")]


def test_short_lists_and_list_level_errors_are_not_cut() -> None:
    data = sweep()
    data["claims"] = data["claims"][:10]  # short: walked whole
    walked, cut = schema_layer._cut_long_lists(data)
    assert "claims" not in cut and walked["claims"] is data["claims"]
    limit = schema_layer.CUT_MIN_ENTRIES
    data["claims"] = sweep()["claims"][:limit]  # as long as a list walked whole may be
    assert "claims" not in schema_layer._cut_long_lists(data)[1]
    data["claims"] = sweep()["claims"][:limit + 1]
    assert schema_layer._cut_long_lists(data)[1]["claims"] == [0]
    data = sweep()
    data["launchers"] = "train"  # not a list at all: nothing to cut there
    assert "launchers" not in schema_layer._cut_long_lists(data)[1]


def test_the_cuttable_lists_are_the_top_level_lists_of_entries() -> None:
    assert set(schema_layer._cuttable_lists()) == {"changes", "claims", "data", "discrepancies", "launchers", "levels"}


@pytest.mark.parametrize(("schema", "expected"), [
    ({"type": "object", "properties": {"a": {"type": "array", "items": {}, "minItems": 1}}}, ("a",)),
    # The root judges more than keys: nothing is cut.
    ({"allOf": [{}], "properties": {"a": {"type": "array", "items": {}}}}, ()),
    ({"if": {}, "properties": {"a": {"type": "array", "items": {}}}}, ()),
    (["not", "a", "schema"], ()),
    # Lists judged as a whole, or whose entries are not each checked against one schema.
    ({"properties": {"a": {"type": "array", "items": {}, "minItems": 2}}}, ()),
    ({"properties": {"a": {"type": "array", "items": {}, "maxItems": 9}}}, ()),
    ({"properties": {"a": {"type": "array", "items": {}, "uniqueItems": True}}}, ()),
    ({"properties": {"a": {"type": "array", "items": {}, "contains": {}}}}, ()),
    ({"properties": {"a": {"type": "array", "prefixItems": [{}], "items": {}}}}, ()),
    ({"properties": {"a": {"type": "array", "items": [{}]}}}, ()),
    ({"properties": {"a": {"type": "array"}}}, ()),
    ({"properties": {"a": {"type": "object", "items": {}}}}, ()),
    ({"properties": {"a": True}}, ()),
    # A pattern property of the root applies to the field too.
    ({"patternProperties": {"^x-": {}, "a$": {}}, "properties": {"a": {"type": "array", "items": {}},
                                                                  "b": {"type": "array", "items": {}}}}, ("b",)),
])
def test_which_lists_can_be_cut(schema: Any, expected: tuple[str, ...]) -> None:
    assert schema_layer.cuttable_lists(schema) == expected


def test_nothing_is_cut_when_the_compiled_validator_cannot_say_where() -> None:
    # It cannot read a lone surrogate: the whole document is walked.
    data = sweep()
    data["claims"][5]["notes"] = "\ud800"
    assert schema_layer._cut_long_lists(data) == (data, {})
    assert schema_layer._cut_long_lists(["not", "a", "mapping"]) == (["not", "a", "mapping"], {})


def test_compiled_error_paths() -> None:
    from rra_tools.io.schemas import compiled_error_paths

    data = sweep()
    data["claims"][5]["notes"] = "x"
    data["launchers"][2]["seeds"] = "0"
    assert compiled_error_paths(data) == [("launchers", 2, "seeds"), ("claims", 5)]
    assert compiled_error_paths(data, limit=2) == [("launchers", 2, "seeds"), ("claims", 5)]
    assert compiled_error_paths(data, limit=1) is None  # more errors than asked for: not complete
    assert compiled_error_paths(sweep()) == []


class WalkSpy:
    """jsonschema's validator, recording the length of the lists of each document it walks."""

    def __init__(self, validator: Any) -> None:
        self.validator = validator
        self.schema = validator.schema
        self.walked: list[dict[str, int]] = []

    def iter_errors(self, data: Any) -> Any:
        self.walked.append({k: len(v) for k, v in data.items() if isinstance(v, list)})
        return self.validator.iter_errors(data)


@pytest.mark.parametrize("integers_in_range", [True, False])
def test_check_schema_walks_the_cut_document(integers_in_range: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # When the compiled validator is loaded (as here) even a document of few values is asked,
    # found invalid, cut, and walked cut: whether or not the reader vouched for its integers
    # (then the exact check of has_out_of_range_integer finds none).
    from rra_tools.io.schemas import compiled_is_valid

    assert compiled_is_valid({}) is False  # loaded
    spy = WalkSpy(schema_layer._validator())
    monkeypatch.setattr(schema_layer, "_validator", lambda: spy)
    data = sweep()
    data["claims"][9]["notes"] = "x"
    found = list(check_schema(data, values=0, integers_in_range=integers_in_range))
    assert [f.pointer for f in found] == [("claims", 9, "notes")]
    assert [walked["claims"] for walked in spy.walked] == [1]
    assert [walked["launchers"] for walked in spy.walked] == [1]
