"""Every YAML example in spec/ is checked, and every spec anchor the rule catalog links to exists.

Each fenced ```yaml block in spec/*.md starts with a marker line saying what it is:

* ``# rra: manifest`` -- a complete manifest; validating it (without an artifact root) gives no
  diagnostic at all;
* ``# rra: fragment <DefName>`` -- one object of the manifest; it is valid against the schema's
  ``$defs/<DefName>``;
* ``# rra: invalid RRA123[,RRA456]`` -- a complete manifest whose diagnostics have exactly these
  codes;
* ``# rra: taskset`` / ``# rra: references`` -- a benchmark task set (part 7) or its private
  references file; it is valid against schemas/rra-taskset-1.0.schema.json or
  schemas/rra-bench-references-1.0.schema.json.

A block without a marker fails: an example nobody checks is an example that rots. Fenced ```json
blocks (run records) must parse, and a run record must carry the fields validators read.
"""

from __future__ import annotations

import json
import re
import subprocess
import unicodedata
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from rra_tools import SPEC_VERSION
from rra_tools.io.read.source import parse_document
from rra_tools.validate import validate_bytes
from rra_tools.validate.catalog import RULES

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "spec"
SCHEMA = REPO / "schemas" / f"rra-manifest-{SPEC_VERSION}.schema.json"

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)[^`]*$")
_MARKER = re.compile(
    r"^#\s*rra:\s*(?:(?P<manifest>manifest)|fragment\s+(?P<fragment>[A-Za-z][A-Za-z0-9_]*)"
    r"|invalid\s+(?P<invalid>RRA\d{3}(?:\s*,\s*RRA\d{3})*)|(?P<taskset>taskset|references))\s*$"
)
_YAML_INFO = {"yaml", "yml"}

#: Anchors other documents link to, beyond those the rule catalog names.
DOCUMENTED_ANCHORS = {
    "spec/01-overview.md": ["manifest-files", "limits"],
    "spec/02-manifest.md": [
        "identifiers-and-references", "paths", "digests", "paper", "code", "environment", "data",
        "launchers", "claims", "changes", "discrepancies", "guide", "review", "evidence", "levels-field",
        "extensions",
    ],
    "spec/03-versioning.md": ["major-versions", "minor-versions", "fields-and-versions", "extensions"],
    "spec/04-levels.md": [
        "levels", "reference-observations", "acceptance-interval", "stable-and-variable-claims", "run-records",
    ],
}


@dataclass(frozen=True)
class Block:
    """One fenced YAML block of a spec file."""

    file: Path
    index: int
    line: int
    text: str

    @property
    def marker(self) -> str:
        return self.text.split("\n", 1)[0].strip()

    @property
    def where(self) -> str:
        return f"{self.file.relative_to(REPO)}:{self.line}"


def _fenced(text: str) -> list[tuple[int, str, str]]:
    """(first line number, info string, body) of every fenced block of Markdown ``text``."""
    blocks: list[tuple[int, str, str]] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, fence, info = opening["indent"], opening["fence"], opening["info"].lower()
        body: list[str] = []
        j = i + 1
        while j < len(lines):
            stripped = lines[j].strip()
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                break
            line = lines[j]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            j += 1
        blocks.append((i + 2, info, "\n".join(body) + "\n"))
        i = j + 1
    return blocks


def _blocks() -> list[Block]:
    out: list[Block] = []
    for file in sorted(SPEC.glob("*.md")):
        yaml_blocks = [b for b in _fenced(file.read_text(encoding="utf-8")) if b[1] in _YAML_INFO]
        out.extend(Block(file, index, line, body) for index, (line, _, body) in enumerate(yaml_blocks))
    return out


BLOCKS = _blocks()


def _block_id(block: Block) -> str:
    kind = _MARKER.match(block.marker)
    label = "unmarked"
    if kind is not None:
        label = "manifest" if kind["manifest"] else kind["taskset"] or (
            f"fragment-{kind['fragment']}" if kind["fragment"] else "invalid-" + re.sub(r"\s", "", kind["invalid"]))
    return f"{block.file.stem}#{block.index}-L{block.line}-{label}"


@cache
def _schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return loaded


def _diagnostics(block: Block) -> list[Any]:
    result = validate_bytes(block.text.encode("utf-8"), name=block.where, root=None)
    return list(result.diagnostics)


def _describe(diagnostics: list[Any]) -> str:
    return "\n".join(f"  {d.code} {d.severity.label} {d.pointer or '/'}: {d.message}" for d in diagnostics) or "  none"


def test_spec_has_examples() -> None:
    assert SPEC.is_dir(), f"{SPEC} is missing"
    assert len(BLOCKS) >= 10, f"expected the spec to hold YAML examples, found {len(BLOCKS)}"


@pytest.mark.parametrize("block", BLOCKS, ids=_block_id)
def test_spec_example(block: Block) -> None:
    kind = _MARKER.match(block.marker)
    assert kind is not None, (
        f"{block.where}: the YAML block's first line is {block.marker!r}; it must be a marker: "
        "'# rra: manifest', '# rra: fragment <DefName>' or '# rra: invalid RRA123[,RRA456]'"
    )
    if kind["taskset"]:
        name = "taskset" if kind["taskset"] == "taskset" else "bench-references"
        schema = json.loads((REPO / "schemas" / f"rra-{name}-1.0.schema.json").read_text(encoding="utf-8"))
        errors = list(Draft202012Validator(schema).iter_errors(parse_document(block.text).data))
        assert not errors, f"{block.where}: not a valid {name}: " + "; ".join(e.message for e in errors)
    elif kind["manifest"]:
        diagnostics = _diagnostics(block)
        assert not diagnostics, f"{block.where}: the example manifest is not clean:\n{_describe(diagnostics)}"
    elif kind["invalid"]:
        expected = {c.strip() for c in kind["invalid"].split(",")}
        diagnostics = _diagnostics(block)
        got = {d.code for d in diagnostics}
        assert got == expected, (
            f"{block.where}: expected exactly {sorted(expected)}, got {sorted(got)}:\n{_describe(diagnostics)}"
        )
    else:
        name = kind["fragment"]
        defs = _schema()["$defs"]
        assert name in defs, f"{block.where}: no definition {name!r} in the schema; known: {sorted(defs)}"
        data = parse_document(block.text).data
        validator = Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": defs})
        errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
        assert not errors, f"{block.where}: the fragment is not a valid {name}:\n" + "\n".join(
            f"  /{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors
        )


def _json_blocks() -> list[Block]:
    out: list[Block] = []
    for file in sorted(SPEC.glob("*.md")):
        found = [b for b in _fenced(file.read_text(encoding="utf-8")) if b[1] == "json"]
        out.extend(Block(file, index, line, body) for index, (line, _, body) in enumerate(found))
    return out


_RUN_RECORD_FIELDS = {"launcher": (str,), "seed": (int, type(None)), "exit_status": (int,), "status": (str,),
                      "metrics": (dict,)}


@pytest.mark.parametrize("block", _json_blocks(), ids=lambda b: f"{b.file.stem}#json{b.index}-L{b.line}")
def test_spec_json_example(block: Block) -> None:
    """JSON examples (run records) parse, and a run record has the fields validators read."""
    data = json.loads(block.text)
    if isinstance(data, dict) and "launcher" in data:
        for name, types in _RUN_RECORD_FIELDS.items():
            assert isinstance(data.get(name), types), f"{block.where}: run record field {name!r} is missing or mistyped"
        assert data["status"] in {"completed", "failed", "timeout", "interrupted"}, block.where


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to '-'.

    >>> slug("Identifiers and references")
    'identifiers-and-references'
    >>> slug("Limits (v1.0)")
    'limits-v10'
    """
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip().lower())
    text = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return text.replace(" ", "-")


def anchors(file: Path) -> set[str]:
    """Anchors of every heading of the Markdown ``file`` (headings inside fences do not count)."""
    text = file.read_text(encoding="utf-8")
    found: set[str] = set()
    counts: dict[str, int] = {}
    fence: str | None = None
    for line in text.split("\n"):
        opening = _FENCE.match(line)
        if opening is not None:
            mark = opening["fence"]
            if fence is None:
                fence = mark
            elif line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            continue
        if fence is not None:
            continue
        heading = re.match(r"^ {0,3}#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$", line)
        if heading is None:
            continue
        base = slug(heading.group(1))
        n = counts.get(base, 0)
        counts[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def _catalog_links() -> list[tuple[str, str, str]]:
    links = []
    from rra_tools.validate.catalog import TASKSET_RULES

    for rule in [*RULES.values(), *TASKSET_RULES.values()]:
        file, _, anchor = rule.section.partition("#")
        links.append((rule.code, file, anchor))
    return links


@pytest.mark.parametrize(("code", "file", "anchor"), _catalog_links(), ids=lambda v: str(v))
def test_catalog_section_exists(code: str, file: str, anchor: str) -> None:
    path = REPO / file
    assert path.is_file(), f"{code} links to {file}, which does not exist"
    if anchor:
        assert anchor in anchors(path), f"{code} links to {file}#{anchor}, but {file} has no such heading"


@pytest.mark.parametrize(
    ("file", "anchor"), [(f, a) for f, names in DOCUMENTED_ANCHORS.items() for a in names], ids=lambda v: str(v)
)
def test_documented_anchor_exists(file: str, anchor: str) -> None:
    assert anchor in anchors(REPO / file), f"{file} has no heading with anchor #{anchor}"


# Through the real command: what a reader who pipes an example into ``rra validate -`` sees.
_CHECKED = [b for b in BLOCKS if (m := _MARKER.match(b.marker)) is not None and not m["fragment"]
            and not m["taskset"]]


def _expected_codes(block: Block) -> set[str]:
    kind = _MARKER.match(block.marker)
    assert kind is not None
    return {c.strip() for c in kind["invalid"].split(",")} if kind["invalid"] else set()


def _cli_codes(result: dict[str, Any]) -> set[str]:
    return {d["code"] for d in result["diagnostics"]}


@pytest.mark.parametrize("block", _CHECKED, ids=_block_id)
def test_spec_example_through_cli_stdin(block: Block, tmp_path: Path) -> None:
    """Standard input has no artifact root: the working directory's files play no part."""
    from tests.rra_cli import rra_command

    done = subprocess.run([*rra_command(), "validate", "-", "-f", "json"], input=block.text, capture_output=True,
                          text=True, cwd=tmp_path, timeout=120, check=False)
    assert done.returncode in (0, 1), f"{block.where}: {done.stdout}{done.stderr}"
    [result] = json.loads(done.stdout)["results"]
    assert _cli_codes(result) == _expected_codes(block), f"{block.where}: {done.stdout}"
    assert done.returncode == (0 if result["valid"] else 1), block.where
    assert result["input"] == "-" and result["files_checked"] is False


def test_spec_examples_through_cli_manifest_only(tmp_path: Path) -> None:
    """``--manifest-only`` gives every example's stated result for manifest files whose
    artifact files are absent (a registry checking a manifest before its files arrive)."""
    from tests.rra_cli import rra

    names = []
    for n, block in enumerate(_CHECKED):
        folder = tmp_path / f"example-{n}"
        folder.mkdir()
        (folder / "rra.yaml").write_text(block.text, encoding="utf-8")
        names.append(folder.name)
    done = rra("validate", "--manifest-only", "-f", "json", *names, cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # some examples are invalid by design
    results = json.loads(done.stdout)["results"]
    assert [r["input"] for r in results] == names
    for block, result in zip(_CHECKED, results, strict=True):
        assert _cli_codes(result) == _expected_codes(block), f"{block.where}: {result}"
        assert result["files_checked"] is False
    text = rra("validate", "--manifest-only", names[0], cwd=tmp_path).stdout
    assert text.endswith(f"; artifact files not checked for {names[0]} (manifest only: no artifact root)\n")
    with_files = rra("validate", "-f", "json", names[0], cwd=tmp_path)
    assert "files_checked" not in json.loads(with_files.stdout)["results"][0]


def test_manifest_only_refuses_packed_artifacts(tmp_path: Path) -> None:
    from tests.rra_cli import rra

    done = rra("validate", "--manifest-only", "oci-layout:somewhere", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == ("error: --manifest-only checks a manifest without its files; 'oci-layout:somewhere' is "
                           "a packed artifact, which is always checked with its files\n")
