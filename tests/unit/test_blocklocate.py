"""The targeted locator against the located reader: the same position wherever it answers.

The locator (rra_tools/io/read/blocklocate.py) finds the position of one value of a document the
block reader read by looking along its pointer in the text; it may answer None (then
``SourceDocument.position`` re-reads the whole text with the located reader), never a different
position. Checked here for every pointer to every node, and a few absent ones, of generated
documents (those of test_blockyaml.py, and documents drawn from the block reader's subset, 4 in
5 of which it reads), of every YAML file of the repository and of hand-written documents of
each shape.

It refuses no shape the block reader accepts: the coverage tests below assert that it answers
for every node of the examples, of the repository's manifests and of a sweep-shaped document.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rra_tools.io.read.blocklocate import BlockLocator
from rra_tools.io.read.blockyaml import read_block_yaml
from rra_tools.io.read.source import Position, SourceDocument, _YamlBuilder, parse_document

from tests.rra_cli import rra
from .test_blockyaml import _emit, blocks, documents

REPO = Path(__file__).resolve().parents[2]


def pointers(data: Any) -> list[tuple[str | int, ...]]:
    """Every pointer to every node of ``data``, the document itself, and absent children of each
    node (a missing key, an index past the end, a child of a scalar)."""
    out: list[tuple[str | int, ...]] = [(), ("absent",)]
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), data)]
    while stack:
        pointer, node = stack.pop()
        if isinstance(node, dict):
            out.append((*pointer, "\x00absent"))
            children: list[tuple[str | int, Any]] = list(node.items())
        elif isinstance(node, list):
            out += [(*pointer, len(node)), (*pointer, -1), (*pointer, "0")]
            children = list(enumerate(node))
        else:
            out.append((*pointer, 0))
            children = []
        for part, child in children:
            out.append((*pointer, part))
            stack.append(((*pointer, part), child))
    return out


def check_locator(text: str) -> tuple[int, int] | None:
    """Assert every answer of the locator equals the located reader's; (refused, asked) for a
    text the block reader reads, else None."""
    fast = read_block_yaml(text)
    if fast is None:
        return None
    located = _YamlBuilder(text).build()
    locator = BlockLocator(text, fast[0])
    refused = asked = 0
    for pointer in pointers(fast[0]):
        asked += 1
        found = locator.position(pointer)
        if found is None:
            refused += 1
            continue
        expected = located.position(pointer)
        assert Position(*found) == expected, f"{pointer}: located {expected}, locator {found}\n{text}"
    return refused, asked


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_locator_agrees_on_generated_lines(text: str) -> None:
    check_locator(text)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks(), st.sampled_from(["\n", ""]))
def test_locator_agrees_on_nested_blocks(lines: list[str], end: str) -> None:
    check_locator("\n".join(lines) + end)


@settings(max_examples=300, deadline=None)
@given(st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10**6) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=12))
def test_locator_agrees_on_documents_from_data(data: Any) -> None:
    check_locator(_emit({"root": data}))


# Scalars and keys the block reader reads, so that most generated documents are read (the
# generators of test_blockyaml.py also draw what it refuses: about 1 in 30 and 1 in 5 are read).
READ_SCALARS = ["a", "x y", "1", "-2", "1.5", "true", "~", "null", "\"q\"", "'q'", "[a, 1]", "[]", "{}", "\"a\\nb\"",
                "https://x.org/a", "a # c", "0o17", "[\"a\", 'b', c]", "[a,\n      b]", "é", "x  ", "[ 1 ,2 ]  # c",
                "'it''s'", "\"a: b\"", "-x", "./p"]
READ_KEYS = ["a", "b", "id", "x-ext", "1", "true", "\"q k\"", "'s k'", "\"a: b\"", "a.b", "a/b", "_a", "\"é\""]


@st.composite
def read_blocks(draw: st.DrawFn, indent: int = 0, depth: int = 0) -> list[str]:
    """Lines of a block mapping or sequence at ``indent`` in the block reader's subset: empty
    values, nested blocks at any deeper indentation, indentless sequences, ``- key:`` items,
    comments and blank lines between entries."""
    is_seq = draw(st.booleans())
    pad = " " * indent
    lines: list[str] = []
    keys = draw(st.lists(st.sampled_from(READ_KEYS), min_size=1, max_size=4, unique=True))
    for key in keys:
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(["", pad + "# c", "# c", "   "])))
        head = pad + (draw(st.sampled_from(["- ", "-   "])) if is_seq else key + ": ")
        kind = draw(st.sampled_from(["scalar", "scalar", "empty", "nested"] if depth < 3 else ["scalar", "empty"]))
        if kind == "scalar":
            lines.append(head + draw(st.sampled_from(READ_SCALARS)))
        elif kind == "empty":
            lines.append(head.rstrip(" ") + draw(st.sampled_from(["", " ", "  # c"])))
        elif is_seq and draw(st.booleans()):
            inner = draw(read_blocks(len(head), depth + 1))
            if inner[0].startswith(" " * len(head)) and inner[0].strip() and not inner[0].lstrip().startswith("#"):
                lines.append(head + inner[0][len(head):])
                lines.extend(inner[1:])
            else:
                lines.append(head.rstrip(" "))
                lines.extend(inner)
        else:
            lines.append(head.rstrip(" ") + draw(st.sampled_from(["", " # c"])))
            step = draw(st.sampled_from([1, 2, 4] + ([0] if not is_seq else [])))
            inner = draw(read_blocks(indent + step, depth + 1))
            if step == 0 and not inner[0].lstrip(" ").startswith("-"):
                inner = [pad + "  " + line if line.strip() else line for line in inner]
            lines.extend(inner)
    return lines


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(read_blocks(), st.sampled_from(["\n", "", "\n\n# end\n"]))
def test_locator_agrees_on_documents_in_the_subset(lines: list[str], end: str) -> None:
    counts = check_locator("\n".join(lines) + end)
    if counts is not None:
        assert counts[0] == 0, "\n".join(lines)


# Each shape of the task, the located reader's answer for it worked out by experiment.
SHAPES = {
    "scalars on the key's line": 'a: x\nb: \'y\'\nc: "z"\nd: 1.5\ne: ~\nf: null\n',
    "flow sequences and empty collections": 'd: [a, "b", 3]\ne: {}\nf: []\ng: [ a , \'b\' ]  \nh: { }\n',
    "a block mapping below": "a:\n  b: 1\n  c:\n    d: 2\n",
    "a block sequence below": "a:\n  - 1\n  - 2\n",
    "an indentless sequence": "a:\n- 1\n- x: 2\n  y: 3\nb: 4\n",
    "sequence items of each kind": "-   a: 1\n    b: 2\n- \"q\": [1]\n- x\n-\n  z: 1\n-\n  - q\n- 'k': v\n",
    "empty values": "a:\nb: 1\nc:   \nd:  # c\ne:\n- \n- # c\n-\nf:",
    "an empty value before a sibling": "a:\n  b:\n  c: 1\n  d:\ne:\n",
    "an empty last item": "a:\n  -\n",
    "comments and blank lines before a nested block": "a:\n  # c\n\n  b: 1\nc: # c\n\n# c\n  - x\n",
    "quoted keys": "\"a b\": 1\n'k': 2\n\"x\":\n  'y': [z]\n",
    "trailing spaces and comments": "a: x   # c\nb: [a, b]  # c\nc: \"q\"  \nd:   \n  e: 1   \n",
    "root not at column 0": "\n\n# c\n  a: 1\n  b:\n    c: 1\n",
    "a root sequence": "# c\n- a\n- b: 1\n  c: [x]\n",
    "a root sequence not at column 0": "  - a\n  -\n    - b\n",
    "multi-line flow sequences": "a: [a,\n  \"b\",\n     3]\nb: [\n  x, y]\nc: 1\n",
    "non-ASCII before a value": "a: \"é\"\n\"ü\": [x, \"ß\", 'ø', y]\nb: x é\n\"😀\": [\"😀\", z]\n",
    "no final newline": "a:\n  b: [1, 2]",
    "a deeper sequence under a sequence item": "- a:\n  - 1\n  b: 2\n-\n    - x\n    -   y\n",
    "keys that look like other things": "1: a\ntrue: b\n1.0: c\na.b/c-d: e\n_x: f\n",
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_locator_agrees_on_each_shape(name: str) -> None:
    counts = check_locator(SHAPES[name])
    assert counts is not None, f"the block reader no longer reads {name!r}"
    assert counts[0] == 0, f"refused {counts[0]} of {counts[1]} pointers of {name!r}"


@pytest.mark.parametrize(("text", "pointer", "expected"), [
    # Spelled out, so that a mistake in both readers' tests would still show.
    ("a: x\n", ("a",), (1, 4, 1, 1)),
    ("a: [x, \"y\"]\n", ("a", 1), (1, 8)),
    ("a:\n  b: 1\n", ("a",), (2, 3, 1, 1)),
    ("a:\n- 1\n", ("a",), (2, 1, 1, 1)),
    ("a:\n  - k: 1\n", ("a", 0), (2, 5)),
    ("a:\nb: 1\n", ("a",), (1, 3, 1, 1)),
    ("- \n- x\n", (0,), (1, 2)),
    ("a:\n  # c\n\n  b: 1\n", ("a",), (4, 3, 1, 1)),
    ("a: [a,\n  b]\n", ("a", 1), (2, 3)),
])
def test_positions_of_the_shapes(text: str, pointer: tuple[str | int, ...], expected: tuple[int, ...]) -> None:
    fast = read_block_yaml(text)
    assert fast is not None
    assert BlockLocator(text, fast[0]).position(pointer) == expected


def repository_yaml() -> list[Path]:
    paths = [p for pattern in ("examples/**/*.yaml", "conformance/**/*.yaml", "tests/**/*.yaml")
             for p in sorted(REPO.glob(pattern))]
    return [p for p in paths if p.is_file()]


def test_every_yaml_file_of_the_repository() -> None:
    read = 0
    for path in repository_yaml():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        counts = check_locator(text)
        if counts is None:
            continue
        read += 1
        # Coverage: no shape the block reader accepts is refused.
        assert counts[0] == 0, f"refused {counts[0]} of {counts[1]} pointers of {path}"
    assert read >= 20


def sweep(launchers: int) -> str:
    """A manifest shaped like a generated sweep: long lists of similar mappings."""
    lines = ["rra_version: \"1.0\"", "id: sweep", "launchers:"]
    for i in range(launchers):
        lines += [f"- id: train-{i:05d}", f"  argv: [python, train.py, \"--seed\", \"{{seed}}\", cfg/{i}.yaml]",
                  "  env:", "    OMP_NUM_THREADS: \"1\"", "  seeds: [0, 1, 2]", "  depends_on: []",
                  "  outputs:", "  - id: metrics", f"    path: \"runs/{i}/metrics.json\"", "    format: json"]
    lines.append("claims:")
    for i in range(launchers):
        lines += [f"  - id: acc-{i:05d}", f"    launcher: train-{i:05d}", "    reported:", "      value: 80.0",
                  "    reference:", "      observations:", "        - value: 79.7", "          seed: 0",
                  "          fingerprint:", "            hardware: x86_64, 2 cores"]
    lines.append("levels: [available]")
    return "\n".join(lines) + "\n"


def test_a_sweep_is_located_whole() -> None:
    counts = check_locator(sweep(40))
    assert counts is not None and counts[0] == 0 and counts[1] > 2000


def test_unsure_falls_back_to_the_located_reader() -> None:
    # Data that disagree with the text (a key added after reading) make the locator unsure; the
    # document then answers from the located reader, for this pointer and every later one.
    text = "a: 1\nb:\n  c: [x, y]\n"
    doc = parse_document(text, located=False)
    assert doc._block_read
    assert doc.position(("b", "c", 1)) == Position(3, 10)
    assert doc._positions is None  # found by the locator
    doc.data["b"]["extra"] = 1
    assert doc.position(("b", "c", 1)) == Position(3, 10)
    assert doc._positions is not None and not doc._block_read


def test_a_json_document_is_not_located_as_block_yaml() -> None:
    doc = parse_document('{"a": [1, 2]}', located=False)
    assert not doc._block_read
    assert doc.position(("a", 1)) == Position(1, 11)


def test_the_document_start_is_its_first_key() -> None:
    for text, start in [("# c\n\n  a: 1\n", (3, 3)), ("- a\n", (1, 1)), ("# c\n- a\n", (1, 1))]:
        fast = parse_document(text, located=False)
        located = parse_document(text, located=True)
        assert isinstance(fast, SourceDocument) and fast._block_read
        assert fast.position(()) == located.position(()) == Position(*start)
        assert fast._positions is None


def test_a_finding_is_located_without_re_reading_the_manifest(tmp_path: Path) -> None:
    # Through the real CLI: the finding's file:line:col and caret, with a spy (a sitecustomize
    # module on PYTHONPATH) counting the located reader's builds in the rra process.
    example = REPO / "examples" / "digits-logreg"
    for name in os.listdir(example):
        (tmp_path / name).write_bytes((example / name).read_bytes())
    manifest = tmp_path / "rra.yaml"
    text = manifest.read_text(encoding="utf-8")
    assert "    launcher: train\n" in text
    manifest.write_text(text.replace("    launcher: train\n", "    launcher: trian\n"), encoding="utf-8")
    line = text[: text.index("    launcher: train\n")].count("\n") + 1
    out, builds = validate_counting_builds(manifest, tmp_path)
    assert f"rra.yaml:{line}:15: error[RRA201] launcher 'trian' is not declared" in out, out
    assert f"{line} |     launcher: trian\n" + " " * (len(str(line)) + 3) + " " * 14 + "^^^^^" in out, out
    assert builds == 0, "the manifest was re-read by the located reader"


def validate_counting_builds(manifest: Path, tmp_path: Path) -> tuple[str, int]:
    """``rra validate MANIFEST`` (expected to find something) through the real CLI: its output,
    and how many times the located reader built a document in that process, counted by a spy (a
    sitecustomize module on PYTHONPATH that wraps the build and writes the count at exit)."""
    spy = tmp_path / "spy"
    spy.mkdir()
    counts = tmp_path / "builds.txt"
    (spy / "sitecustomize.py").write_text(
        "import atexit, os\n"
        "import rra_tools.io.read.source as source\n"
        "calls = []\n"
        "original = source._YamlBuilder.build\n"
        "def build(self):\n"
        "    calls.append(1)\n"
        "    return original(self)\n"
        "source._YamlBuilder.build = build\n"
        "def report():\n"
        "    open(os.environ['RRA_TEST_BUILDS'], 'w').write(str(len(calls)))\n"
        "atexit.register(report)\n"
        # rra validate's fast path ends the process with os._exit (no atexit): count there too.
        "exit_now = os._exit\n"
        "def _exit(code):\n"
        "    report()\n"
        "    exit_now(code)\n"
        "os._exit = _exit\n",
        encoding="utf-8")
    path = os.pathsep.join([str(spy), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    done = rra("validate", str(manifest), env={"PYTHONPATH": path, "RRA_TEST_BUILDS": str(counts)})
    assert done.returncode == 1, done.stderr
    return done.stdout + done.stderr, int(counts.read_text())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0, 1, 2, 5, 700, 16383, 16384, 16385, 40000]), min_size=1, max_size=6),
       st.lists(st.integers(0, 10**6), min_size=1, max_size=20))
def test_line_index_counts_as_splitting_does(lengths: list[int], picks: list[int]) -> None:
    # Lines of these lengths (long ones span the 16 KiB blocks of the tables); every offset asked
    # must get the line and column that splitting the text gives.
    from rra_tools.io.read.lineindex import LineIndex

    text = "\n".join("x" * n for n in lengths)
    index = LineIndex(text)
    offsets = {0, len(text)} | {p % (len(text) + 1) for p in picks} | {m for m in (16383, 16384, 16385, 32768)
                                                                        if m <= len(text)}
    for offset in sorted(offsets):
        before = text[:offset]
        expected = (before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1)
        assert index.line_col(offset) == expected, offset
