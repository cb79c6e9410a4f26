"""The fast reader of plain block YAML against the located reader: same data wherever it reads.

The fast reader (rra_tools/io/read/blockyaml.py) is only allowed to answer when it is certain; on
every document it accepts, the located reader must give the same data (same types: 1, 1.0
and True differ), the same value count and no problems. It must also accept what manifests
are made of, or it would not make anything faster.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rra_tools.io.read.blockyaml import read_block_yaml
from rra_tools.io.errors import LoadError
from rra_tools.io.read.manifest import load_manifest_bytes
from rra_tools.io.read.source import parse_document

REPO = Path(__file__).resolve().parents[2]


def same(a: Any, b: Any) -> bool:
    """Equal with equal types all the way down (NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def check_agrees(text: str) -> bool:
    """Assert the fast reader agrees with the located one; True when it read ``text`` at all."""
    fast = read_block_yaml(text)
    if fast is None:
        return False
    try:
        located = parse_document(text, located=True)
    except LoadError as exc:
        raise AssertionError(f"fast reader accepted what the located reader refuses ({exc.problem.message}):\n"
                             f"{text}") from None
    assert not located.problems, f"fast reader accepted a document with problems:\n{text}"
    assert same(fast[0], located.data), f"data differ:\n{text}\nfast:    {fast[0]!r}\nlocated: {located.data!r}"
    assert fast[1] == located.values, text
    return True


# Fragments people and generators write, and near misses that must send the fast reader away.
SCALARS = [
    "a", "abc def", "x-y", "1", "-1", "+1", "0", "007", "0o17", "0x1F", "0X1F", "0b101", "1_000", "1.5", "-1.5",
    ".5", "1.", "1e3", "1E+3", "1e", "-.inf", ".Inf", ".nan", ".NaN", "nan", "inf", "~", "null", "Null", "NULL",
    "nULL", "true", "True", "TRUE", "tRue", "false", "yes", "no", "on", "off", "y", "2024-01-01",
    "12:30:45", "1:20", "https://x.org/a?b=c", "a#b", "a #b", "C#", "a: b", "a:", ":a", "-", "--x", "- x",
    "?x", "? x", "!tag x", "!!str 1", "!!int 3", "&a x", "*a", "|", ">", "%x", "@x", "`x", "(x)", "x)", "./p",
    "/abs", "a, b", "[x]", "x[0]", "{a}", "a}", "'q'", "\"q\"", "''", "\"\"", "'it''s'", "\"a\\\"b\"",
    "\"\\n\\t\"", "\"\\u00e9\"", "\"\\ud83d\\ude00\"", "\"\\x41\"", "\"\\N\"", "\"a #b\"", "'a #b'", "é",
    "\"é\"", "a\u2028b", "a\x85b", "\ufeffx", "a\tb", "...", "---", "a b ", "x  # c", "1e400",
    "123456789012345678901234567890", "[]", "[ ]", "{}", "{ }", "{a: 1}", "[a, b]", "[a,b]", "[ a , b ]",
    "[a, ]", "[, a]", "[a b, c]", "[\"a\", 'b', c]", "[1, 2.5, true, null, ~]", "[-1, +2, .5]", "[a: b]",
    "[a:b]", "[[a]]", "[{}]", "[a # c]", "[a] # c", "[a]#c", "[\"a\" , 'b']", "[0x1F, 0o7, 1_0]", "[-]",
    "[\"\\ud800\"]", "[é, ü]", "[a,\n  b]", "[a,\n b]", "[a,\nb]", "[\n    a, b]", "[a,\n      \"b\",\n   c]",
    "[a, # c\n  b]", "[\"a\n  b\"]", "[a\n  b]", "[a,\n\n  b]", "[a,\n  b] # c", "[a,\n  b]x", "\"a\" x", "'a' x", "\"a\"#c", "\"a\" #c",
    # the forms the row pattern reads by itself, and their neighbours (trailing spaces, keywords,
    # numbers with one dot, digits past 18, flows of numbers)
    "true  ", "nullx", "null x", "Falsey", "x1  ", "\"q\"  ", "\"a:b\"", "\"a#b\"", "1.5  ", "1.", "00.5", "1.2.3",
    "1234567890123456789", "123456789012345678", "12345678901234567890.5", "(a) b", "_a:b", "a'b\"c",
    "[0.001, 0.0003]", "[1., 00.5, 1.2.3]", "[007, 1, 123456789012345678901]", "[train-1, t, nullx, f]",
    "[ 1 ,2 , 3 ]", "[1, 2] # c", "[\"--x\", cfg/a.yaml, \"{y}\"]",
]
# Scalars that are in the fast reader's subset, drawn more often so that nesting is exercised.
GOOD = ["a", "x y", "1", "-2", "1.5", "true", "~", "null", "\"q\"", "'q'", "[a, 1]", "[]", "{}", "\"a\\nb\"",
        "https://x.org/a", "a # c", "0o17", "1e3", "[\"a\", 'b', c]", "[a,\n      b]", "é"]
WEIGHTED = GOOD * 6 + SCALARS
KEYS = ["a", "b", "id", "x-ext", "1", "1.0", "true", "\"q k\"", "'s k'", "\"a: b\"", "a b", "-a", "?a", "a.b",
        "a/b", "_a", "\"\"", "''", "\"it's\"", "'x''y'", "A"]
INDENTS = ["", " ", "  ", "   ", "    ", "      "]


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["key-value", "key", "dash-value", "dash-key-value", "dash-key", "dash",
                                     "comment", "blank", "scalar"]))
        indent = draw(st.sampled_from(INDENTS))
        key = draw(st.sampled_from(KEYS))
        scalar = draw(st.sampled_from(SCALARS))
        dash = draw(st.sampled_from(["- ", "-  ", "-"]))
        if kind == "key-value":
            line = f"{indent}{key}: {scalar}"
        elif kind == "key":
            line = f"{indent}{key}:" + draw(st.sampled_from(["", " ", " # c"]))
        elif kind == "dash-value":
            line = f"{indent}{dash}{scalar}"
        elif kind == "dash-key-value":
            line = f"{indent}{dash}{key}: {scalar}"
        elif kind == "dash-key":
            line = f"{indent}{dash}{key}:"
        elif kind == "dash":
            line = f"{indent}-"
        elif kind == "comment":
            line = f"{indent}# note"
        elif kind == "blank":
            line = indent
        else:
            line = f"{indent}{scalar}"
        lines.append(line)
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))


@st.composite
def blocks(draw: st.DrawFn, indent: int = 0, depth: int = 0) -> list[str]:
    """Lines of a block mapping or sequence at ``indent``, nested by the usual (and unusual) rules."""
    is_seq = draw(st.booleans())
    lines: list[str] = []
    pad = " " * indent
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from(["", pad + "# c", "# c", "   "])))
        nested = depth < 3 and draw(st.integers(0, 2)) == 0
        head = pad + (draw(st.sampled_from(["- ", "-  "])) if is_seq else draw(st.sampled_from(KEYS)) + ": ")
        if not nested:
            lines.append(head + draw(st.sampled_from(WEIGHTED)))
            continue
        if is_seq and draw(st.booleans()):
            # '- key: value' with the mapping's further keys under the first one
            inner = draw(blocks(len(head), depth + 1))
            lines.append(head + inner[0][len(head):] if inner[0].startswith(" " * len(head)) else head + inner[0])
            lines.extend(inner[1:])
            continue
        lines.append(head.rstrip(" ") + draw(st.sampled_from(["", " # c"])))
        step = draw(st.sampled_from([0, 1, 2, 4])) if not is_seq else draw(st.sampled_from([1, 2, 3]))
        lines.extend(draw(blocks(indent + step, depth + 1)))
    return lines


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_fast_reader_agrees_with_located_reader(text: str) -> None:
    check_agrees(text)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks(), st.sampled_from(["\n", ""]))
def test_nested_blocks_agree(lines: list[str], end: str) -> None:
    check_agrees("\n".join(lines) + end)


@settings(max_examples=300, deadline=None)
@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=12))
def test_documents_from_data_agree(data: Any) -> None:
    # Block-style YAML as the benchmark's and init's writers emit it (keys quoted when needed).
    text = _emit({"root": data})
    check_agrees(text)


def _emit(node: Any, indent: int = 0) -> str:
    pad = " " * indent
    out = []
    for key, value in node.items():
        k = json.dumps(key)
        if isinstance(value, dict) and value:
            out.append(f"{pad}{k}:\n" + _emit(value, indent + 2))
        elif isinstance(value, list) and value:
            out.append(f"{pad}{k}:")
            for item in value:
                if isinstance(item, dict) and item:
                    body = _emit(item, indent + 2)
                    out.append(pad + "- " + body[indent + 2:].rstrip("\n"))
                elif isinstance(item, list) and item:
                    out.append(f"{pad}- {json.dumps(item)}")
                else:
                    out.append(f"{pad}- {json.dumps(item)}")
        else:
            out.append(f"{pad}{k}: {json.dumps(value)}")
    return "\n".join(out) + "\n"


def repository_yaml() -> list[Path]:
    paths = sorted(REPO.glob("examples/**/*.yaml")) + sorted(REPO.glob("conformance/**/*.yaml"))
    return [p for p in paths if p.is_file()]


def test_every_yaml_file_of_the_repository_agrees() -> None:
    read = 0
    for path in repository_yaml():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        read += check_agrees(text)
    # The fast reader must read what manifests are written as, or it speeds nothing up.
    assert read >= len(repository_yaml()) // 2


def test_the_examples_are_read_fast() -> None:
    for name in ("digits-logreg", "gpu-resnet-cifar"):
        text = (REPO / "examples" / name / "rra.yaml").read_text(encoding="utf-8")
        assert read_block_yaml(text) is not None, name


@pytest.mark.parametrize("text", [
    "a: 1\na: 2\n",               # duplicate key: the located reader reports it
    "a: &x 1\nb: *x\n",           # anchors and aliases
    "a: !!str 1\n",               # tags
    "a: |\n  x\n",                # block scalars
    "a: b\n  c\n",                # a multi-line plain scalar
    "a:\tb\n",                    # tabs
    "---\na: 1\n",                # document markers
    "a: {b: 1}\n",                # flow mappings
    "a: [[1]]\n",                 # nested flow
    "a: 1\r\nb: 2\r\n",           # CR LF
    "",                           # empty
    "# only a comment\n",
    "a\n",                        # a bare scalar document
    "\"\": 1\n",                  # an empty quoted key (valid YAML, rare enough to leave)
    "a: 1\n'': 2\n",
])
def test_fast_reader_gives_up(text: str) -> None:
    assert read_block_yaml(text) is None


def test_deep_nesting_is_left_to_the_located_reader() -> None:
    deep = "".join(f"{' ' * i}k:\n" for i in range(200)) + " " * 200 + "k: 1\n"
    assert read_block_yaml(deep) is None
    with pytest.raises(LoadError) as info:
        load_manifest_bytes(deep.encode())
    assert info.value.problem.code == "RRA007"


def test_positions_are_found_on_demand() -> None:
    text = "a: 1\nlaunchers:\n- id: x\n  argv: [python, t.py]\n"
    loaded = load_manifest_bytes(text.encode())
    assert loaded.source._positions is None  # read by the fast reader: no positions yet
    pos = loaded.position(("launchers", 0, "argv", 1))
    assert pos is not None and (pos.line, pos.column) == (4, 18)


@pytest.mark.parametrize("text", [
    "id: x\nseed: " + "1" * 5000 + "\n",                  # fast reader: gives up, located reader: finding
    "id: x\nseeds: [1, " + "2" * 5000 + "]\n",
    '{"id": "x", "seed": ' + "1" * 5000 + "}\n",          # JSON: the YAML reader locates it
])
def test_an_integer_too_long_to_convert_is_a_located_finding(text: str) -> None:
    # Python refuses to convert more than 4,300 digits (quadratic time); a traceback before. Both
    # readers read such a literal as a 4,300-digit stand-in of its sign (spec/02-manifest.md#numbers),
    # and the validator reports it where it is, as out of range (RRA114), checking the rest.
    from rra_tools.validate import validate_bytes

    loaded = load_manifest_bytes(text.encode())
    value = loaded.data["seed"] if "seeds" not in loaded.data else loaded.data["seeds"][1]
    assert len(str(value)) == 4300
    name = "rra.json" if text.startswith("{") else "rra.yaml"
    [found] = [d for d in validate_bytes(text.encode(), name=name, root=None).diagnostics if d.code == "RRA114"]
    assert found.line == (2 if not text.startswith("{") else 1)
    assert found.message == ("an integer of 4300 digits or more is out of range: integers must lie between "
                             "-2^63 and 2^63-1")


def test_the_ascii_check_refuses_what_the_pattern_refuses() -> None:
    # An ASCII text is checked by deleting its safe bytes; every other text by _UNSAFE. Each
    # ASCII character alone, and inside a line, must get the pattern's answer.
    from rra_tools.io.read.blockyaml import _UNSAFE, _unsafe

    for code in range(128):
        for text in (chr(code), f"a: b{chr(code)}c\nd: e\n"):
            assert _unsafe(text) == (_UNSAFE.search(text) is not None), repr(text)
    assert _unsafe("a: \u2028\n") and not _unsafe("a: \u00e9\n")  # not ASCII: the pattern decides


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x7F)))
def test_the_ascii_check_on_any_ascii_text(text: str) -> None:
    from rra_tools.io.read.blockyaml import _UNSAFE, _unsafe

    assert _unsafe(text) == (_UNSAFE.search(text) is not None)


def test_repeated_flow_sequences_are_separate_lists() -> None:
    # Each distinct flow sequence is read once; every place it is written gets a list of its own.
    from rra_tools.io.read.blockyaml import _FLOW_MEMO

    text = "".join(f"k{i}: [0, {i % 3}, x]\n" for i in range(10)) + \
        "".join(f"m{i}: [{i}]\n" for i in range(_FLOW_MEMO + 10))
    read = read_block_yaml(text)
    assert read is not None
    data, count = read
    assert data == parse_document(text).data
    assert count == 1 + 10 * 4 + (_FLOW_MEMO + 10) * 2
    lists = [data[f"k{i}"] for i in range(10)] + [data[f"m{i}"] for i in range(_FLOW_MEMO + 10)]
    assert len({id(value) for value in lists}) == len(lists)
    data["k0"].append("changed")
    assert data["k3"] == [0, 0, "x"]


def _read_in_chunks(text: str, chunk: int) -> Any:
    import rra_tools.io.read.blockyaml as blockyaml

    default = blockyaml._CHUNK
    blockyaml._CHUNK = chunk
    try:
        return read_block_yaml(text)
    finally:
        blockyaml._CHUNK = default


def _check_chunks(text: str) -> None:
    # The rows are found a chunk of lines at a time; where the chunks end never changes what is
    # read. Only a flow sequence written over lines that goes on in the next chunk makes the
    # reader give up (the located reader then reads it).
    whole = read_block_yaml(text)
    for chunk in (1, 3, 17, 64):
        small = _read_in_chunks(text, chunk)
        if small is None:
            assert whole is None or any(line.rstrip(" ").endswith(("[", ",")) for line in text.split("\n")), \
                (chunk, text)
        else:
            assert whole is not None and same(small[0], whole[0]) and small[1] == whole[1], (chunk, text)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_chunks_do_not_change_what_is_read(text: str) -> None:
    _check_chunks(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks(), st.sampled_from(["\n", ""]))
def test_chunks_do_not_change_nested_blocks(lines: list[str], end: str) -> None:
    _check_chunks("\n".join(lines) + end)


def test_chunks_over_the_repository_and_a_long_document() -> None:
    for path in repository_yaml():
        try:
            _check_chunks(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            continue
    # Longer than one default chunk, with a flow sequence over lines near its end.
    from rra_tools.io.read.blockyaml import _CHUNK

    items = "".join(f"- id: item-{i}\n  seeds: [0, 1]\n  note: \"n {i}\"\n" for i in range(_CHUNK // 20))
    text = f"items:\n{items}tail: [a,\n  b]\n"
    assert len(text) > 2 * _CHUNK
    assert check_agrees(text)


def test_a_key_written_many_times_is_one_string() -> None:
    # As json's decoder does: the 10k manifest's 680,000 keys are a few dozen strings, which
    # keeps its peak memory (and the time spent touching new memory) down.
    read = read_block_yaml("a:\n- seed: 1\n  value: x\n- seed: 2\n  value: y\n")
    assert read is not None
    first, second = read[0]["a"]
    assert [k1 is k2 for k1, k2 in zip(first, second)] == [True, True]


def test_a_value_written_many_times_is_one_string() -> None:
    read = read_block_yaml('a:\n- unit: "%"\n  hw: x86_64, 2 cores\n  v: 79.7\n  n: 1000000\n'
                           '- unit: "%"\n  hw: x86_64, 2 cores\n  v: 79.7\n  n: 1000000\n- v: 79.70\n')
    assert read is not None
    first, second, third = read[0]["a"]
    assert first["unit"] is second["unit"] and first["hw"] is second["hw"]
    assert first["v"] is second["v"] and first["n"] is second["n"]  # numbers are converted once each
    assert first == second == {"unit": "%", "hw": "x86_64, 2 cores", "v": 79.7, "n": 1000000}
    assert third == {"v": 79.7} and type(third["v"]) is float


@pytest.mark.parametrize(("text", "read"), [
    ("a: 9223372036854775807\n", {"a": 2**63 - 1}),
    ("a: -9223372036854775808\n", {"a": -(2**63)}),
    ("a: 0x7fffffffffffffff\n", {"a": 2**63 - 1}),
    ("a: [1, 0o777]\n", {"a": [1, 511]}),
    ("a: 9223372036854775808\n", None),
    ("a: -9223372036854775809\n", None),
    ("a: 0x8000000000000000\n", None),
    ("a: [1, 0x8000000000000000]\n", None),
    ("- 99999999999999999999\n", None),
])
def test_integers_outside_64_bits_are_left_to_the_located_reader(text: str, read: Any) -> None:
    # A document the fast reader reads holds no integer outside the range a manifest may carry,
    # so the validator need not look for one; RRA114 needs the located reader's positions anyway.
    fast = read_block_yaml(text)
    assert (fast[0] if fast is not None else None) == read
    doc = parse_document(text, located=False)
    assert doc.integers_in_range == (read is not None)


def test_unsafe_characters_are_the_complement_of_what_libyaml_prints() -> None:
    # _UNSAFE is spelt as a short positive class (a negated one over the printable ranges took
    # 3 ms to compile at every start-up): it must find exactly the characters outside them.
    import re

    from rra_tools.io.read.blockyaml import _UNSAFE

    printable = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
    every = "".join(map(chr, range(0x110000)))
    assert [m.start() for m in _UNSAFE.finditer(every)] == [m.start() for m in printable.finditer(every)]
