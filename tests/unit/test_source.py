"""Reading YAML/JSON with positions: YAML 1.2 resolution, bounds, duplicate keys, JSON positions."""

from __future__ import annotations

import math

import pytest

from rra_tools.io.errors import LoadError
from rra_tools.io.read.source import Position, decode_text, parse_document


def problem(text: str) -> tuple[str, str, int | None, int | None]:
    with pytest.raises(LoadError) as info:
        parse_document(text)
    p = info.value.problem
    return p.code, p.message, p.line, p.column


def test_yaml_12_core_schema() -> None:
    doc = parse_document("a: yes\nb: 2024-01-01\nc: 0o17\nd: 0x1F\ne: -.inf\nf: ~\ng: 1_000\nh: 'true'\ni: True\nj: 1e3\n")
    assert doc.data == {"a": "yes", "b": "2024-01-01", "c": 15, "d": 31, "e": -math.inf, "f": None,
                        "g": "1_000", "h": "true", "i": True, "j": 1000.0}


def test_positions_of_values_and_keys() -> None:
    doc = parse_document("launchers:\n  - id: train\n    argv: [python, t.py]\n")
    assert doc.position(("launchers", 0, "argv", 1)) == Position(3, 20)
    pos = doc.position(("launchers", 0, "id"))
    assert pos is not None and (pos.key_line, pos.key_column, pos.line, pos.column) == (2, 5, 2, 9)
    # A pointer past the document falls back to the deepest existing ancestor.
    assert doc.position(("launchers", 0, "missing", 3)) == doc.position(("launchers", 0))


def test_duplicate_keys_are_all_reported_and_first_value_kept() -> None:
    doc = parse_document("a: 1\nb: 2\na: 3\nb: 4\n")
    assert doc.data == {"a": 1, "b": 2}
    assert [(p.code, p.line, p.column) for p in doc.problems] == [("RRA005", 3, 1), ("RRA005", 4, 1)]
    assert doc.problems[0].message == "duplicate key 'a' (first at line 1); the first value is kept"


def test_json_is_parsed_fast_and_located_lazily() -> None:
    doc = parse_document('{"a": {"b": [10, 20]},\n "c": 1}')
    assert doc.data == {"a": {"b": [10, 20]}, "c": 1}
    assert doc.position(("a", "b", 1)) == Position(1, 18)
    assert doc.position(("c",)) == Position(2, 7, 2, 2)


def test_json_duplicate_keys_are_located() -> None:
    doc = parse_document('{"a": 1,\n "a": 2}')
    assert [(p.code, p.line, p.column) for p in doc.problems] == [("RRA005", 2, 2)]


def test_syntax_error_is_one_located_problem() -> None:
    code, message, line, column = problem("a: [1,\n b: }\n")
    assert (code, line, column) == ("RRA002", 2, 5)
    assert message.startswith("YAML syntax error: ")


@pytest.mark.parametrize("text, code", [
    ("", "RRA003"),
    ("# only a comment\n", "RRA003"),
    ("a: !!python/object:os.system x\n", "RRA002"),
    ("a: !custom 1\n", "RRA002"),
    ("---\na: 1\n---\nb: 2\n", "RRA002"),
    ("a: *nowhere\n", "RRA002"),
    ("? [a, b]\n: 1\n", "RRA002"),
])
def test_unsupported_documents(text: str, code: str) -> None:
    assert problem(text)[0] == code


def test_alias_expansion_is_bounded() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 10)}]")
    code, message, _, _ = problem("\n".join(lines) + "\n")
    assert code == "RRA006" and "aliases are counted" in message


def test_nesting_is_bounded_without_recursion() -> None:
    code, message, line, column = problem("[" * 5000 + "]" * 5000)
    assert (code, line, column) == ("RRA007", 1, 65)
    assert message == "nesting is deeper than 64 levels"


def test_json_nesting_is_bounded() -> None:
    assert problem("{\"a\": " * 100 + "1" + "}" * 100)[0] == "RRA007"


def test_decode_rejects_binary_and_bad_utf8_with_location() -> None:
    with pytest.raises(LoadError) as info:
        decode_text(b"a: 1\nb: \xff\n")
    assert (info.value.problem.code, info.value.problem.line, info.value.problem.column) == ("RRA004", 2, 4)
    with pytest.raises(LoadError) as info:
        decode_text(b"a\x00b")
    assert info.value.problem.message == "file is binary: it contains a NUL byte"
    assert decode_text("\ufeffa: 1".encode()) == "a: 1"


@pytest.mark.parametrize("text", ["a: !!set {b: null}\n", "a: !!python/dict {b: 1}\n", "a: !custom [1]\n",
                                  "!!omap\n- a: 1\n"])
def test_tags_on_collections_are_refused(text: str) -> None:
    code, message, _, _ = problem(text)
    assert code == "RRA002" and message.startswith("unsupported YAML tag")


def test_core_collection_tags_are_accepted() -> None:
    assert parse_document("a: !!map {b: !!seq [1]}\n").data == {"a": {"b": [1]}}
