"""The compiled pre-check (jsonschema-rs) and jsonschema give the same verdict on every document.

Large manifests are first checked by a compiled validator of the same schema; when it says
"valid", jsonschema is skipped. That is only sound if the two never disagree, so this file
checks them against each other on every conformance case, every example, and on strings built
to probe the regex dialects (Python's ``re`` and ECMA-262 differ on ``\\s``, ``\\d`` and ``$``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rra_tools.conformance import load_suite, materialise, suite_path
from rra_tools.io.errors import LoadError
from rra_tools.io.read.source import decode_text, parse_document
from rra_tools.validate.api import find_manifest, validate_path
from rra_tools.io.schemas import compiled_is_valid
from rra_tools.validate.schema_layer import FAST_PATH_MIN_VALUES, _ecma_regex, _validator, manifest_schema

ROOT = Path(__file__).resolve().parents[2]
SUITE = suite_path()
CASES = load_suite(SUITE)


def python_is_valid(data: Any) -> bool:
    return not any(True for _ in _validator().iter_errors(data))


def _patterns(node: Any) -> set[str]:
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("pattern"), str):
                found.add(item["pattern"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


PATTERNS = sorted(_patterns(manifest_schema()))


def test_compiled_validator_is_installed() -> None:
    # It is a dependency; without it large manifests fall back to the slow path silently.
    assert compiled_is_valid({"rra_version": "1.0"}) is False


@pytest.mark.parametrize("loaded", CASES, ids=[c.case.id for c in CASES])
def test_same_verdict_on_every_conformance_case(loaded, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    manifest = find_manifest(materialise(SUITE, loaded, tmp_path))
    if manifest is None:
        return  # a case about a missing or unreadable manifest: no document to compare
    check_same_verdict(manifest)


def check_same_verdict(manifest: Path) -> None:
    try:
        data = parse_document(decode_text(manifest.read_bytes())).data
    except (LoadError, OSError):
        return  # unreadable input never reaches the schema layer
    # Soundness: a "valid" from the pre-check must be jsonschema's verdict too. The converse may
    # fail harmlessly (jsonschema then runs): e.g. jsonschema-rs cannot hold a non-finite number.
    if compiled_is_valid(data):
        assert python_is_valid(data)
    elif python_is_valid(data):
        assert _has_non_finite(data), "the pre-check rejects a valid document: the fast path is lost"


@pytest.mark.parametrize("manifest", sorted(ROOT.glob("examples/**/rra.yaml")), ids=lambda p: p.parent.name)
def test_same_verdict_on_every_example(manifest: Path) -> None:
    check_same_verdict(manifest)


@pytest.mark.parametrize("name", ["digits-logreg", "gpu-resnet-cifar"])
def test_pre_check_accepts_the_valid_examples(name: str) -> None:
    data = parse_document((ROOT / "examples" / name / "rra.yaml").read_text()).data
    assert compiled_is_valid(data) is True


def _has_non_finite(node: Any) -> bool:
    if isinstance(node, float):
        return node != node or node in (float("inf"), float("-inf"))
    if isinstance(node, dict):
        return any(_has_non_finite(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_non_finite(v) for v in node)
    return False


#: Characters on which regex dialects are known to differ, plus ordinary ones.
TRICKY = ("\n\r\t \x0b\x0c\x1c\x1d\x1e\x1f\x7f\x85\xa0\u1680\u2000\u2028\u2029\u202f\u3000\ufeff"
          "\u0660\u0969\uff10\U0001d7ce0123456789X.-_/~:abcxyzAZ")


@settings(max_examples=300, deadline=None)
@given(pattern=st.sampled_from(PATTERNS), text=st.text(alphabet=TRICKY, max_size=12),
       stem=st.sampled_from(["", "10.1234/", "https://a", "s3://b", "0000-0002-1825-009", "2106.0968",
                             "1.0", "2024-01-0", "a" * 64, "/a/~0", "human", "x-"]))
def test_regex_dialects_agree_on_schema_patterns(pattern: str, text: str, stem: str) -> None:
    import jsonschema_rs

    compiled = jsonschema_rs.validator_for({"type": "string", "pattern": pattern})
    for candidate in (stem + text, text + stem, stem[:-1] + text if stem else text):
        ours = bool(_ecma_regex(pattern).search(candidate))
        assert compiled.is_valid(candidate) == ours, (pattern, candidate)


def test_trailing_line_break_does_not_satisfy_a_pattern() -> None:
    # Python's '$' also matches before a final newline; the standard's patterns are ECMA-262.
    sha = "a" * 64
    assert _ecma_regex("^[0-9a-f]{64}$").search(sha)
    assert not _ecma_regex("^[0-9a-f]{64}$").search(sha + "\n")


def test_non_ascii_digits_are_not_digits() -> None:
    # Python's \d accepts U+0660..U+0669; the schema says [0-9] so every implementation agrees.
    schema = json.dumps(manifest_schema())
    assert "\\\\d" not in schema and "\\\\S" not in schema
    assert not _ecma_regex("^[0-9]+\\.[0-9]+$").search("\u0661.\u0660")


def _large_manifest(n: int) -> dict[str, Any]:
    base: dict[str, Any] = parse_document((ROOT / "examples" / "digits-logreg" / "rra.yaml").read_text()).data
    template = base["launchers"][0]
    base["launchers"] = [dict(template, id=f"l-{i:05d}", depends_on=[]) for i in range(n)]
    base.pop("claims", None)
    base.pop("levels", None)
    return base


def test_large_manifest_takes_the_fast_path_and_still_reports_errors(tmp_path: Path) -> None:
    data = _large_manifest(FAST_PATH_MIN_VALUES // 10)
    doc = tmp_path / "rra.json"
    doc.write_text(json.dumps(data))
    assert parse_document(doc.read_text()).values >= FAST_PATH_MIN_VALUES
    clean = [d.code for d in validate_path(doc).diagnostics if d.code.startswith("RRA11")]
    assert clean == []
    # An error deep in the document: the pre-check fails, jsonschema locates it.
    data["launchers"][-1]["argv"] = "python train.py"
    doc.write_text(json.dumps(data))
    found = [(d.code, d.pointer, d.line) for d in validate_path(doc).diagnostics if d.code.startswith("RRA11")]
    last = len(data["launchers"]) - 1
    assert found == [("RRA112", f"/launchers/{last}/argv", 1)]
