"""The fast reader's bounds: how deep and how large a document it reads before leaving it to the
located reader, which alone reports the limits of spec/01-overview.md#limits (RRA006, RRA007).

tests/unit/test_blockyaml.py checks that whatever the fast reader reads, it reads as the located
reader does; these tests check where it stops reading, which that comparison cannot see (a
reader that gives up is always right there), and that a document past a limit still gets its
finding through the loader.
"""

from __future__ import annotations

import pytest

from rra_tools.io.read.blockyaml import read_block_yaml
from rra_tools.io.errors import LoadError
from rra_tools.io.limits import MAX_DEPTH, MAX_NODES
from rra_tools.io.read.manifest import load_manifest_bytes
from rra_tools.io.read.source import parse_document


def _mappings(depth: int) -> str:
    return "".join(f"{' ' * i}k:\n" for i in range(depth - 1)) + " " * (depth - 1) + "k: 1\n"


def _sequences(depth: int) -> str:
    return "".join(f"{' ' * i}-\n" for i in range(depth - 1)) + " " * (depth - 1) + "- 1\n"


def _items(depth: int) -> str:
    # A sequence of mappings of sequences ...: '- k:' opens two levels at once.
    lines = [" " * (2 * i) + "- k:" for i in range(depth // 2)]
    lines.append(" " * (2 * (depth // 2)) + ("- 1" if depth % 2 else ""))
    return "\n".join(lines) + "\n"


def _keyed_items(depth: int) -> str:
    # The same under a key: here the odd levels are the mappings '- k:' opens.
    return "a:\n" + _items(depth - 1)


def _depth(node: object) -> int:
    if isinstance(node, dict):
        return 1 + max(map(_depth, node.values()), default=0)
    if isinstance(node, list):
        return 1 + max(map(_depth, node), default=0)
    return 0


@pytest.mark.parametrize("shape", [_mappings, _sequences, _items, _keyed_items])
def test_nesting_is_read_up_to_two_levels_below_the_limit(shape: object) -> None:
    assert MAX_DEPTH == 64
    for depth in range(MAX_DEPTH - 4, MAX_DEPTH + 3):
        text = shape(depth)  # type: ignore[operator]
        fast = read_block_yaml(text)
        if depth <= MAX_DEPTH - 2:
            assert fast is not None, depth
            located = parse_document(text, located=True)
            assert _depth(fast[0]) == _depth(located.data) == depth
            assert fast == (located.data, located.values)
        else:
            assert fast is None, depth  # near or past the limit: the located reader decides
        if depth > MAX_DEPTH:
            with pytest.raises(LoadError) as info:
                load_manifest_bytes(text.encode())
            assert info.value.problem.code == "RRA007"
        else:
            assert _depth(load_manifest_bytes(text.encode()).data) == depth


# Forms the fast reader must read itself (else it speeds nothing up, and the comparison with the
# located reader, which only sees what it reads, cannot tell) and forms it must leave.
@pytest.mark.parametrize("text", [
    "a: ['x', 1]\n",                       # single-quoted items, no double quote: the general flow path
    "a: [x, 'y''s', 2]\n",
    "a: [\"x\", 'y']\n",
    "a:\n- [1,\n  2]\n",                     # a flow sequence over lines, indented past its entry
    "a:\n  b: [1,\n   2]\n",
    "'a b': 1\n'c': [2]\n",                # single-quoted keys
    "\"a b\": 1\n",
    "-\n- 1\n",                            # an empty entry, then one more
    "a:\n-\n- 1\n",                         # the same in a sequence at its key's column
    "a:\n  -\n  - 1\nb: 2\n",
    "a:\n- 1\nb: 2\n",                      # a key after a sequence at its key's column
    "a: -1\nb: -x\n",                        # a short value after a dash
    "url: http://x.org/y\n",                 # a colon inside a plain value
])
def test_forms_the_fast_reader_reads(text: str) -> None:
    fast = read_block_yaml(text)
    assert fast is not None, text
    located = parse_document(text, located=True)
    assert fast == (located.data, located.values)


@pytest.mark.parametrize("text", [
    # Lines inside a flow sequence must be indented past the block it is in (YAML 1.2, 7.4 and
    # 8.2.3); libyaml reads these anyway, the fast reader leaves them to it.
    "a: [1,\n2]\n",
    "a:\n  b: [1,\n  2]\n",
    "- [1,\n2]\n",
])
def test_forms_the_fast_reader_leaves(text: str) -> None:
    assert read_block_yaml(text) is None
    assert parse_document(text, located=True).data is not None


_KEYWORDS = {"null": None, "Null": None, "NULL": None, "true": True, "True": True, "TRUE": True,
             "false": False, "False": False, "FALSE": False}


@pytest.mark.parametrize("word", sorted(_KEYWORDS))
def test_the_nine_keywords_wherever_they_are_written(word: str) -> None:
    # As a mapping value, a sequence entry, a flow item (alone, with plain items and with quoted
    # ones), and after a quoted key: the row pattern, _inline and both flow paths.
    text = (f"a: {word}\nb:\n- {word}\n- k: {word}\nc: [{word}]\nd: [x, {word}]\ne: ['x', {word}]\n"
            f"'f': {word}\n")
    fast = read_block_yaml(text)
    assert fast is not None
    value = _KEYWORDS[word]
    assert fast[0] == {"a": value, "b": [value, {"k": value}], "c": [value], "d": ["x", value],
                       "e": ["x", value], "f": value}
    assert all(type(v) is type(value) for v in (fast[0]["a"], fast[0]["b"][0], fast[0]["e"][1]))
    located = parse_document(text, located=True)
    assert fast == (located.data, located.values)


# Last in this file: each of these documents holds a million values (about 2 s each to read).
def test_a_million_values_are_read_and_one_more_is_left_to_the_located_reader() -> None:
    assert MAX_NODES // 2 == 1_000_000
    # 'k:' (1), its sequence (1), then '- a: 1' = a mapping and its value (2 each).
    read = read_block_yaml("k:\n" + "- a: 1\n" * 499_999)
    assert read is not None
    assert read[1] == 1_000_000 and len(read[0]["k"]) == 499_999 and read[0]["k"][-1] == {"a": 1}
    assert read_block_yaml("k:\n" + "- a: 1\n" * 500_000) is None
    # '- 1' = one value each, counted at the end of the document.
    read = read_block_yaml("k:\n" + "- 1\n" * 999_998)
    assert read is not None and read[1] == 1_000_000
    assert read_block_yaml("k:\n" + "- 1\n" * 999_999) is None
