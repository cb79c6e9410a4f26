"""The four output formats of ``rra validate``: text, JSON, SARIF 2.1.0 and GitHub annotations.

Snapshots of every format for one fixed report live in ``tests/unit/snapshots/``; rewrite them
with ``RRA_UPDATE_SNAPSHOTS=1 pytest tests/unit/test_reporters.py`` and review the diff.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft4Validator, Draft202012Validator

import rra_tools
from rra_tools.validate import Diagnostic, Severity, ValidationReport, ValidationResult, validate_bytes
from rra_tools.validate.catalog import RULES, rule
from rra_tools.validate.reporters import render
from rra_tools.validate.reporters.github import escape_data, escape_property, render_github
from rra_tools.validate.reporters.json_report import render_json
from rra_tools.validate.reporters.sarif import FINGERPRINT_KEY, SRCROOT, render_sarif
from rra_tools.validate.reporters.text import render_text, token_end

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
REPORT_SCHEMA = ROOT / "schemas" / "rra-report-1.0.schema.json"
# The OASIS schema, vendored unchanged (origin in tests/data/README.md).
SARIF_SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"

MANIFEST = "artifacts/demo/rra.yaml"
BROKEN = """\
rra_version: "1.0"
id: demo
title: Demo artifact
paper:
  title: A paper
  authors: [{name: Ada Lovelace}]
code:
  license: MIT
  upstream: {url: "https://example.org/demo.git", commit: main}
environment:
  interpreter: {version: "3.11"}
launchers:
  - id: train
    argv: [python, train.py, --lr, "{lr}"]
    seeds: [0, 1, 2]
    resources: {timeout_s: 60, expected_runtime_s: 10}
    depends_on: [prep]
levels: [available]
x-note: draft
colour: blue
"""


def _at(text: str, line_start: str, token: str) -> tuple[int, int]:
    """1-based line and column of the last ``token`` on the first line starting with ``line_start``."""
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith(line_start):
            return number, line.rindex(token) + 1
    raise AssertionError(f"no line starts with {line_start!r}")


def _diag(code: str, message: str, pointer: str, where: tuple[int, int] | None, *, hint: str | None = None,
          file: str | None = MANIFEST, severity: Severity | None = None) -> Diagnostic:
    r = rule(code)
    line, column = where if where is not None else (None, None)
    return Diagnostic(r.code, r.name, severity if severity is not None else r.severity, message, pointer,
                      file, line, column, hint, r.url)


def fixed_report() -> ValidationReport:
    """Findings in BROKEN written out by hand, so the snapshots change only when a reporter does."""
    b = BROKEN
    diagnostics = [
        _diag("RRA401", "commit 'main' is not a full 40-hex commit id", "/code/upstream/commit",
              _at(b, "  upstream:", "main"), hint="use the full 40-hex commit id ('git rev-parse HEAD')"),
        _diag("RRA204", "placeholder {lr} is not defined", "/launchers/0/argv/3",
              _at(b, "    argv:", '"{lr}"'), hint="declare parameter 'lr' under parameters"),
        _diag("RRA201", "launcher 'prep' is not declared", "/launchers/0/depends_on/0",
              _at(b, "    depends_on:", "prep"), hint="declared launcher ids: 'train'"),
        _diag("RRA111", "unknown field 'colour'", "/colour", _at(b, "colour:", "colour"),
              hint="extensions must start with 'x-'"),
        _diag("RRA404", "environment has no lock file; packages are not pinned with hashes", "/environment",
              _at(b, "  interpreter:", "interpreter"), hint="add lock: {path, format, sha256}"),
        _diag("RRA602", "'runs/bad.json' is not a run record: expected an object", "",
              None, file="artifacts/demo/runs/bad.json"),
        _diag("RRA103", "extension field 'x-note' is ignored", "/x-note", _at(b, "x-note:", "x-note")),
    ]
    demo = ValidationResult(input="artifacts/demo", manifest=MANIFEST,
                            diagnostics=sorted(diagnostics, key=Diagnostic.sort_key),
                            levels_claimed=["available"], levels_met=[], source_text=BROKEN)
    missing = ValidationResult(input="artifacts/missing", unreadable=True, diagnostics=[
        _diag("RRA001", "cannot open 'artifacts/missing': No such file or directory", "", None,
              file=None, hint="check the path")])
    return ValidationReport([demo, missing])


def single(d: Diagnostic, source: str | None = None, input: str = MANIFEST) -> ValidationReport:  # noqa: A002
    return ValidationReport([ValidationResult(input=input, manifest=MANIFEST, diagnostics=[d], source_text=source)])


def engine_reports() -> dict[str, ValidationReport]:
    """Reports the validator itself produced, for checks that must hold whatever the rules say."""
    json_manifest = json.dumps({"rra_version": "1.0", "id": "x", "colour": "blue", "levels": ["gold"]}, indent=2)
    return {
        "broken-yaml": ValidationReport([validate_bytes(BROKEN.encode(), name=MANIFEST, root=None)]),
        "broken-json": ValidationReport([validate_bytes(json_manifest.encode(), name="j/rra.json", root=None)]),
        "syntax": ValidationReport([validate_bytes(b"a: [1,\n", name="s/rra.yaml", root=None)]),
        "stdin": ValidationReport([validate_bytes(b"colour: blue\n", name="<stdin>", root=None)]),
        "empty": ValidationReport([]),
    }


def all_reports() -> dict[str, ValidationReport]:
    return {"fixed": fixed_report(), **engine_reports()}


def check_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("RRA_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOTS.mkdir(exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        return
    assert path.exists(), f"snapshot {name} is missing: run with RRA_UPDATE_SNAPSHOTS=1 to write it"
    with open(path, encoding="utf-8", newline="") as handle:
        expected = handle.read()
    assert text == expected, f"{name} differs: rerun with RRA_UPDATE_SNAPSHOTS=1 if the change is intended"


def sarif_validator() -> Draft4Validator:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    Draft4Validator.check_schema(schema)
    return Draft4Validator(schema)


def sarif_of(report: ValidationReport) -> dict[str, Any]:
    log: dict[str, Any] = json.loads(render_sarif(report))
    return log


# --- JSON -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(all_reports()))
def test_json_is_valid_against_the_report_schema(name: str) -> None:
    validator = Draft202012Validator(json.loads(REPORT_SCHEMA.read_text(encoding="utf-8")))
    data = json.loads(render_json(all_reports()[name]))
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(data)]
    assert errors == []


def test_json_content_and_layout() -> None:
    text = render_json(fixed_report())
    data = json.loads(text)
    assert text == json.dumps(data, indent=2) + "\n"
    assert list(data) == ["tool", "results", "counts"]
    assert data["tool"] == {"name": "rra", "version": rra_tools.__version__, "spec_version": rra_tools.SPEC_VERSION}
    assert data["counts"] == {"error": 5, "warning": 2, "info": 1}
    demo, missing = data["results"]
    assert demo["valid"] is False and demo["counts"] == {"error": 4, "warning": 2, "info": 1}
    assert demo["levels"] == {"claimed": ["available"], "met": []}
    first = demo["diagnostics"][0]
    assert list(first) == ["code", "name", "severity", "message", "pointer", "file", "line", "column", "hint", "url"]
    assert first["code"] == "RRA401" and first["line"] == 9 and first["column"] == 59
    # Unknown values are left out, never null: the unreadable input has no manifest, levels or position.
    assert "null" not in text
    assert set(missing) == {"input", "valid", "counts", "diagnostics"}
    assert set(missing["diagnostics"][0]) == {"code", "name", "severity", "message", "pointer", "hint", "url"}


def test_json_leaves_out_level_names_the_schema_does_not_know() -> None:
    result = ValidationResult(input="a", manifest="a/rra.yaml", levels_claimed=["gold", "reproduced"],
                              levels_met=["available"])
    data = json.loads(render_json(ValidationReport([result])))
    assert data["results"][0]["levels"] == {"claimed": ["reproduced"], "met": ["available"]}


def test_json_reporter_does_not_import_pydantic() -> None:
    code = ("import sys\n"
            "from rra_tools.validate import validate_bytes, ValidationReport\n"
            "from rra_tools.validate.reporters import render\n"
            "render(ValidationReport([validate_bytes(b'colour: blue', name='x', root=None)]), 'json')\n"
            "assert 'pydantic' not in sys.modules, 'pydantic was imported'\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr


def test_json_snapshot() -> None:
    data = json.loads(render_json(fixed_report()))
    data["tool"]["version"] = "VERSION"
    check_snapshot("report.json", json.dumps(data, indent=2) + "\n")


# --- SARIF ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(all_reports()))
def test_sarif_is_valid_against_the_oasis_schema(name: str) -> None:
    validator = sarif_validator()
    log = sarif_of(all_reports()[name])
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(log)]
    assert errors == []


def test_sarif_driver_lists_every_rule_of_the_catalog() -> None:
    log = sarif_of(ValidationReport([]))
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json" and log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "rra" and driver["version"] == driver["semanticVersion"] == rra_tools.__version__
    assert [r["id"] for r in driver["rules"]] == list(RULES)
    by_id = {r["id"]: r for r in driver["rules"]}
    assert by_id["RRA201"]["name"] == "unknown-reference"
    assert by_id["RRA201"]["helpUri"] == RULES["RRA201"].url
    assert by_id["RRA201"]["shortDescription"]["text"] == RULES["RRA201"].summary
    assert by_id["RRA201"]["properties"]["section"] == RULES["RRA201"].section
    assert "references" in by_id["RRA201"]["properties"]["tags"]
    levels = {r["id"]: r["defaultConfiguration"]["level"] for r in driver["rules"]}
    assert (levels["RRA201"], levels["RRA402"], levels["RRA503"]) == ("error", "warning", "note")
    assert by_id["RRA103"]["defaultConfiguration"]["enabled"] is False
    assert run["results"] == []


@pytest.mark.parametrize("name", sorted(all_reports()))
def test_sarif_meets_code_scanning_constraints(name: str) -> None:
    log = sarif_of(all_reports()[name])
    assert len(log["runs"]) == 1
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    root = run["originalUriBaseIds"][SRCROOT]["uri"]
    assert root.startswith("file:///") and root.endswith("/")
    for result in run["results"]:
        assert len(result["ruleId"]) <= 255
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("error", "warning", "note")
        assert re.fullmatch(r"[0-9a-f]{64}", result["partialFingerprints"][FINGERPRINT_KEY])


def test_sarif_results() -> None:
    run = sarif_of(fixed_report())["runs"][0]
    results = {r["ruleId"]: r for r in run["results"]}
    assert [r["ruleId"] for r in run["results"]] == [
        "RRA401", "RRA204", "RRA201", "RRA111", "RRA404", "RRA602", "RRA103", "RRA001"]
    ref = results["RRA201"]
    assert ref["level"] == "error"
    assert ref["message"]["text"] == "launcher 'prep' is not declared\nhint: declared launcher ids: 'train'"
    (location,) = ref["locations"]
    assert location["physicalLocation"] == {
        "artifactLocation": {"uri": "artifacts/demo/rra.yaml", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 17, "startColumn": 18},
    }
    assert location["logicalLocations"] == [{"fullyQualifiedName": "/launchers/0/depends_on/0"}]
    assert results["RRA103"]["level"] == "note"
    assert results["RRA103"]["message"]["text"] == "extension field 'x-note' is ignored"
    # Without a line there is no region; without a file the input path stands in.
    assert "region" not in results["RRA602"]["locations"][0]["physicalLocation"]
    assert results["RRA001"]["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "artifacts/missing", "uriBaseId": "%SRCROOT%"}}
    assert run["columnKind"] == "unicodeCodePoints"


def test_sarif_fingerprints_are_stable_and_distinct(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def prints(report: ValidationReport) -> list[str]:
        return [r["partialFingerprints"][FINGERPRINT_KEY] for r in sarif_of(report)["runs"][0]["results"]]

    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    monkeypatch.chdir(tmp_path / "one")
    first = prints(fixed_report())
    assert first == prints(fixed_report())
    assert len(set(first)) == len(first)
    # Another checkout directory and moved lines keep each finding's identity ...
    monkeypatch.chdir(tmp_path / "two")
    assert prints(fixed_report()) == first
    d = fixed_report().results[0].diagnostics[0]
    moved = dataclasses.replace(d, line=(d.line or 0) + 10, column=1)
    assert prints(single(moved)) == first[:1]
    # ... while another message, pointer or file makes another finding.
    changes: list[dict[str, Any]] = [{"message": d.message + "!"}, {"pointer": "/code"}, {"file": "other/rra.yaml"}]
    for changed in changes:
        assert prints(single(dataclasses.replace(d, **changed))) != first[:1]


def test_sarif_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path.resolve() / "repo"
    repo.mkdir()
    monkeypatch.chdir(repo)

    def location(file: str, input: str = "x") -> dict[str, Any]:  # noqa: A002
        d = _diag("RRA111", "unknown field 'colour'", "/colour", (3, 1), file=file)
        loc: dict[str, Any] = sarif_of(single(d, input=input))["runs"][0]["results"][0]["locations"][0]
        return loc

    run = sarif_of(ValidationReport([]))["runs"][0]
    assert run["originalUriBaseIds"][SRCROOT]["uri"] == repo.as_uri() + "/"
    assert location(str(repo / "a" / "rra.yaml"))["physicalLocation"]["artifactLocation"] == {
        "uri": "a/rra.yaml", "uriBaseId": "%SRCROOT%"}
    assert location("./a/../b/rra.yaml")["physicalLocation"]["artifactLocation"]["uri"] == "b/rra.yaml"
    assert location("my dir/rra#1.yaml")["physicalLocation"]["artifactLocation"]["uri"] == "my%20dir/rra%231.yaml"
    outside = tmp_path.resolve() / "elsewhere" / "rra.yaml"
    for name in (str(outside), "../elsewhere/rra.yaml"):
        assert location(name)["physicalLocation"]["artifactLocation"] == {"uri": outside.as_uri()}
    stdin = location("<stdin>", input="-")
    assert "physicalLocation" not in stdin and stdin["logicalLocations"] == [{"fullyQualifiedName": "/colour"}]


def test_sarif_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    text = render_sarif(fixed_report())
    log = json.loads(text)
    assert text == json.dumps(log, indent=2) + "\n"
    run = log["runs"][0]
    assert run["originalUriBaseIds"][SRCROOT]["uri"] == Path.cwd().as_uri() + "/"
    run["originalUriBaseIds"][SRCROOT]["uri"] = "file:///SRCROOT/"
    driver = run["tool"]["driver"]
    driver["version"] = driver["semanticVersion"] = "VERSION"
    # Every rule is listed (checked above); the snapshot keeps those that fired, so that editing
    # another rule's summary does not change it.
    fired = {result["ruleId"] for result in run["results"]}
    driver["rules"] = [r for r in driver["rules"] if r["id"] in fired]
    check_snapshot("report.sarif.json", json.dumps(log, indent=2) + "\n")


# --- GitHub workflow commands -----------------------------------------------------------------

PROPERTY = r"[A-Za-z]+=[^,:\r\n]*"
COMMAND = re.compile(rf"::(?P<command>error|warning|notice)(?: (?P<props>{PROPERTY}(?:,{PROPERTY})*))?"
                     r"::(?P<data>[^\r\n]*)")


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """Split one workflow command into its name, unescaped properties and unescaped message."""
    match = COMMAND.fullmatch(line)
    assert match is not None, f"not a workflow command: {line!r}"

    def unescape(text: str) -> str:
        assert re.fullmatch(r"(?:[^%]|%25|%0D|%0A|%3A|%2C)*", text), f"stray '%' in {text!r}"
        for escaped, plain in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
            text = text.replace(escaped, plain)
        return text

    props = dict(p.split("=", 1) for p in match["props"].split(",")) if match["props"] else {}
    return match["command"], {k: unescape(v) for k, v in props.items()}, unescape(match["data"])


@pytest.mark.parametrize("name", sorted(all_reports()))
def test_github_lines_follow_the_workflow_command_grammar(name: str) -> None:
    report = all_reports()[name]
    lines = render_github(report).splitlines()
    assert len(lines) == sum(len(r.diagnostics) for r in report.results) + 1
    for line in lines:
        command, props, _ = parse_command(line)
        assert set(props) <= {"file", "line", "col", "title"}
        assert "col" not in props or "line" in props
        assert all(props[k].isdigit() for k in ("line", "col") if k in props)
    command, props, message = parse_command(lines[-1])
    assert (command, props["title"]) == ("notice", "rra validate")
    assert message.startswith(f"{len(report.results)} input(s) checked")


def test_github_annotations() -> None:
    lines = render_github(fixed_report()).splitlines()
    assert lines[2] == (
        "::error file=artifacts/demo/rra.yaml,line=17,col=18,title=RRA201 unknown-reference"
        "::launcher 'prep' is not declared%0Aat: /launchers/0/depends_on/0"
        "%0Ahint: declared launcher ids: 'train'%0Adocs: https://rra.dev/rules/1.2/RRA201")
    commands = {parse_command(line)[1].get("title", "").split(" ")[0]: parse_command(line) for line in lines}
    assert commands["RRA404"][0] == "warning" and commands["RRA103"][0] == "notice"
    # Unknown positions are left out; an unreadable input is annotated on its path.
    assert commands["RRA602"][1] == {"file": "artifacts/demo/runs/bad.json", "title": "RRA602 run-record-unreadable"}
    assert commands["RRA001"][1]["file"] == "artifacts/missing"
    assert lines[-1] == "::notice title=rra validate::2 input(s) checked: 0 clean; 5 error(s), 2 warning(s), 1 info"


def test_github_escapes_messages_and_properties() -> None:
    message = "value 'a,b: 100%'\nnext line\r::error::injected"
    d = _diag("RRA113", message, "/a", (2, 3), file="odd,dir:1/100%/rra.yaml", hint=None)
    line = render_github(single(d)).splitlines()[0]
    assert line == ("::error file=odd%2Cdir%3A1/100%25/rra.yaml,line=2,col=3,title=RRA113 invalid-value"
                    "::value 'a,b: 100%25'%0Anext line%0D::error::injected%0Aat: /a"
                    "%0Adocs: https://rra.dev/rules/1.2/RRA113")
    command, props, data = parse_command(line)
    assert props["file"] == "odd,dir:1/100%/rra.yaml"
    assert data.split("\nat: ")[0] == message
    assert escape_data("%0A\r\n") == "%250A%0D%0A"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_github_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    check_snapshot("report.github.txt", render_github(fixed_report()))


# --- text -------------------------------------------------------------------------------------


def test_text_block_with_caret_under_the_token() -> None:
    d = fixed_report().results[0].diagnostics[2]
    assert d.code == "RRA201"
    assert render_text(single(d, BROKEN)) == (
        "artifacts/demo/rra.yaml:17:18: error[RRA201] launcher 'prep' is not declared\n"
        "17 |     depends_on: [prep]\n"
        "                      ^^^^\n"
        "  = at: /launchers/0/depends_on/0\n"
        "  = hint: declared launcher ids: 'train'\n"
        "  = docs: https://rra.dev/rules/1.2/RRA201\n"
        "\n"
        "1 input(s) checked: 0 clean; 1 error(s), 0 warning(s), 0 info\n"
    )


@pytest.mark.parametrize(("line", "token", "flow", "expected"), [
    ("colour: blue", "colour", False, "colour"),
    ("colour: blue", "blue", False, "blue"),
    ("title: hello, world  # note", "hello", False, "hello, world"),
    ("url: https://x.org/a:b", "https", False, "https://x.org/a:b"),
    ("  upstream: {url: x, commit: main}", "main", False, "main"),
    ("  upstream: {url: x, commit: main}", "{", False, "{url: x, commit: main}"),
    ("    depends_on: [prep, other]", "prep", False, "prep"),
    ('    argv: [python, "{lr}", x]', '"', False, '"{lr}"'),
    ("name: 'it''s', x", "'", False, "'it''s'"),
    ('msg: "a \\" b" # c', '"', False, '"a \\" b"'),
    ('msg: "unclosed and  ', '"', False, '"unclosed and'),
    ('  "seeds": [1, 2],', "1", True, "1"),
    ('  "count": 12,', "12", True, "12"),
    ("  - id: train", "-", False, "-"),
    ("text: |", "|", False, "|"),
    ("key:", ":", False, ":"),
])
def test_caret_spans_the_token(line: str, token: str, flow: bool, expected: str) -> None:
    start = line.index(token)
    assert line[start:token_end(line, start + 1, flow=flow)] == expected


def test_caret_past_the_end_of_the_line_is_one_character() -> None:
    assert token_end("abc", 4) == 4


def test_text_caret_keeps_tabs_and_wide_characters_aligned() -> None:
    source = "title:\t日本語 x\n"
    d = _diag("RRA113", "bad", "/title", (1, 12))
    lines = render_text(single(d, source)).splitlines()
    assert lines[1] == "1 | title:\t日本語 x"
    assert lines[2] == "    " + "      \t" + "      " + " " + "^"


def test_text_does_not_pass_control_characters_to_the_terminal() -> None:
    source = 'title: "\x1b[2J\u202ebad"\n'
    d = _diag("RRA113", "value '\x1b[2J' is bad", "/title\x07", (1, 8), hint="see\x1b]8;;")
    text = render_text(single(d, source))
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert '1 | title: "\u241b[2J\ufffdbad"' in text
    assert text.splitlines()[2] == " " * len('1 | title: ') + "^" * 10


def test_text_quotes_only_the_manifest() -> None:
    d = _diag("RRA602", "bad record", "", (2, 1), file="artifacts/demo/runs/bad.json")
    assert render_text(single(d, BROKEN, input="artifacts/demo")).splitlines()[:2] == [
        "artifacts/demo/runs/bad.json:2:1: warning[RRA602] bad record", "  = docs: https://rra.dev/rules/1.2/RRA602"]


def test_text_colour_only_when_asked() -> None:
    report = fixed_report()
    assert "\x1b" not in render_text(report)
    coloured = render_text(report, color=True)
    assert "\x1b[1;31merror[RRA401]\x1b[0m" in coloured
    assert "\x1b[36m^^^^^^\x1b[0m" in coloured  # the info finding's carets under 'x-note'
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == render_text(report)


def test_text_from_the_validator_points_at_the_key() -> None:
    result = validate_bytes(b"rra_version: '1.0'\nid: x\ncolour: blue\n", name="t/rra.yaml", root=None)
    text = render_text(ValidationReport([result]))
    assert "t/rra.yaml:3:1: error[RRA111] unknown field 'colour'\n3 | colour: blue\n    ^^^^^^\n" in text


def test_text_snapshot() -> None:
    check_snapshot("report.txt", render_text(fixed_report()))


# --- dispatcher -------------------------------------------------------------------------------


def test_render_dispatches_every_format() -> None:
    report = fixed_report()
    assert render(report, "text") == render_text(report)
    assert render(report, "json") == render_json(report)
    assert render(report, "sarif") == render_sarif(report)
    assert render(report, "github") == render_github(report)
    with pytest.raises(ValueError, match="unknown format 'xml'"):
        render(report, "xml")


def test_a_long_source_line_is_quoted_as_a_window_around_the_finding(tmp_path: Path) -> None:
    # A minified JSON manifest is one line; quoting all of it would print megabytes.
    from rra_tools.io.read.source import parse_document
    from rra_tools.validate import validate_path
    from rra_tools.validate.reporters.text import QUOTE_WIDTH

    example = Path(__file__).resolve().parents[2] / "examples" / "digits-logreg"
    data = {"x-pad": "p" * 400, **parse_document((example / "rra.yaml").read_text()).data}
    data["levels"] = ["bogus"]  # the last key: its value sits hundreds of columns in
    for name in ("train.py", "requirements.lock", "CITATION.cff", "README.md"):
        (tmp_path / name).write_bytes((example / name).read_bytes())
    (tmp_path / "rra.json").write_text(json.dumps(data))
    lines = render_text(ValidationReport([validate_path(tmp_path / "rra.json")])).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("1 | "))
    quote, carets = lines[at], lines[at + 1]
    assert "error[RRA113]" in lines[at - 1]
    assert quote.startswith("1 | …") and len(quote) <= len("1 | ") + QUOTE_WIDTH + 2
    start = carets.index("^")
    assert quote[start:start + len(carets.strip())] == '"bogus"'


def test_validation_leaves_the_garbage_collector_as_it_found_it() -> None:
    import gc

    raw = (Path(__file__).resolve().parents[2] / "examples" / "digits-logreg" / "rra.yaml").read_bytes()
    assert gc.isenabled()
    validate_bytes(raw)
    assert gc.isenabled()
    gc.disable()
    try:
        validate_bytes(raw)
        assert not gc.isenabled()  # a caller that turned it off keeps it off
    finally:
        gc.enable()


def test_source_lines_are_split_once_per_text_and_follow_a_new_text() -> None:
    # The text reporter quotes a line per finding; a 10,000-launcher manifest with hundreds of
    # findings was split hundreds of times. The split is kept with the text it came from.
    result = ValidationResult(input="rra.yaml", source_text="a: 1\r\nb: 2\rc: 3\n")
    assert [result.source_line(n) for n in (0, 1, 2, 3, 4, 5)] == [None, "a: 1", "b: 2", "c: 3", "", None]
    kept = result._lines
    assert result.source_line(2) == "b: 2" and result._lines is kept
    result.source_text = "x: 9\n"  # an embedded manifest's text replaces the outer one (oci/validation)
    assert result.source_line(1) == "x: 9" and result.source_line(3) is None
    result.source_text = None
    assert result.source_line(1) is None
