"""The conformance suite: our validator passes every case; every rule has an invalid case;
a third-party JSON Schema validator agrees on every case tagged 'schema'; JUnit output parses."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from rra_tools.cli.main import cli
from rra_tools.conformance import in_process_impl, load_suite, materialise, run_suite, suite_path
from rra_tools.conformance.cases import CaseError
from rra_tools.conformance.coverage import CLASS_TAGS, NOT_EXPRESSIBLE, covered_codes, uncovered_block, uncovered_codes
from rra_tools.conformance.report import render_junit
from rra_tools.validate.catalog import RULES

SUITE = suite_path()
CASES = load_suite(SUITE)
ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "schemas" / "rra-manifest-1.0.schema.json"


def test_suite_files_validate_against_their_schema() -> None:
    from jsonschema import Draft202012Validator

    from rra_tools.io.read.source import parse_document

    validator = Draft202012Validator(json.loads((ROOT / "schemas" / "rra-conformance-1.0.schema.json").read_text()))
    for path in sorted((SUITE / "cases").glob("*.yaml")):
        errors = list(validator.iter_errors(parse_document(path.read_text()).data))
        assert not errors, f"{path.name}: {errors[0].message}"


@pytest.mark.parametrize("loaded", CASES, ids=[c.case.id for c in CASES])
def test_our_validator_passes_case_with_strict_codes(loaded, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    [outcome] = run_suite(SUITE, [loaded], in_process_impl, strict_codes=True)
    assert outcome.passed, outcome.message


def test_every_rule_has_an_invalid_case() -> None:
    covered = covered_codes(CASES)
    missing = sorted(set(RULES) - covered - set(NOT_EXPRESSIBLE))
    assert not missing, f"rules without a conformance case: {missing}"
    assert not covered & set(NOT_EXPRESSIBLE), "a case covers an exempted rule: drop the exemption"
    assert uncovered_codes(RULES, CASES) == sorted(NOT_EXPRESSIBLE)
    assert [c for c in RULES if c.startswith("RRA8")] and not set(uncovered_codes(RULES, CASES)) & \
        {c for c in RULES if c.startswith("RRA8")}


def test_readme_lists_the_codes_without_a_case() -> None:
    readme = (SUITE / "README.md").read_text(encoding="utf-8")
    assert uncovered_block(RULES, CASES) in readme, "run 'python -m rra_tools._generate'"


def test_readme_lists_the_rra11_cases_that_pin_the_optional_edge_cases() -> None:
    from rra_tools.conformance.coverage import PINNED_SECTIONS, pinned_block

    readme = (SUITE / "README.md").read_text(encoding="utf-8")
    optional = readme.split("### Optional cases", 1)[1].split("## Running the suite", 1)[0]
    assert pinned_block(CASES) in optional, "run 'python -m rra_tools._generate'"
    pinned = [c.case.id for c in CASES if set(c.case.sections) & set(PINNED_SECTIONS) and "rra-1-1" in c.case.tags]
    assert {"rra11-integer-valued-float-seed", "rra11-regex-ecma-named-group"} <= set(pinned)
    assert all(f"| `{ident}` |" in optional for ident in pinned)


def test_every_case_has_exactly_one_class_tag() -> None:
    wrong = {c.case.id: sorted(CLASS_TAGS & set(c.case.tags)) for c in CASES
             if len(CLASS_TAGS & set(c.case.tags)) != 1}
    assert not wrong, f"cases need exactly one of {sorted(CLASS_TAGS)}: {wrong}"


def test_every_manifest_section_has_a_valid_case() -> None:
    sections = {"paper", "code", "environment", "data", "launchers", "claims", "changes", "discrepancies",
                "guide", "review", "evidence", "levels"}
    covered = {s.split("#")[1] for c in CASES if c.case.expect.verdict == "valid" for s in c.case.sections if "#" in s}
    assert not sections - covered, f"sections without a valid case: {sorted(sections - covered)}"


SCHEMA_CASES = [c for c in CASES if "schema" in c.case.tags]


@pytest.fixture(scope="module")
def third_party_verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """check-jsonschema's verdict on every 'schema' case, from one run over all their manifests."""
    tool = shutil.which("check-jsonschema") or str(Path(sys.executable).parent / "check-jsonschema")
    assert Path(tool).exists() or shutil.which(tool), "check-jsonschema is a test dependency: pip install -e '.[test]'"
    base = tmp_path_factory.mktemp("schema-cases")
    manifests: dict[str, str] = {}
    for loaded in SCHEMA_CASES:
        dest = materialise(SUITE, loaded, base / loaded.case.id)
        manifests[str(dest / loaded.case.manifest_name)] = loaded.case.id
    proc = subprocess.run([tool, "--schemafile", str(SCHEMA), "--output-format", "json", *manifests],
                          capture_output=True, text=True)
    report = json.loads(proc.stdout)
    failed = {e["filename"] for e in report["errors"]} | {e["filename"] for e in report["parse_errors"]}
    assert proc.returncode == (1 if failed else 0), proc.stderr
    return {case_id: "invalid" if path in failed else "valid" for path, case_id in manifests.items()}


@pytest.mark.parametrize("loaded", SCHEMA_CASES, ids=[c.case.id for c in SCHEMA_CASES])
def test_third_party_schema_validator_agrees(loaded, third_party_verdicts: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    assert third_party_verdicts[loaded.case.id] == loaded.case.expect.verdict


def test_cli_prints_table_and_writes_junit(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    result = CliRunner().invoke(cli, ["conformance", "run", "--strict-codes", "--junit", str(junit)])
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1].split()
    assert last[0] == "all" and last[-1] == "100.0%" and last[1] == last[2] == str(len(CASES))
    tree = ET.parse(junit)
    assert int(tree.getroot().get("tests", "0")) == len(CASES)
    assert tree.getroot().get("failures") == "0"


def test_external_implementation_protocol_and_failures(tmp_path: Path) -> None:
    # Our own CLI, run as an external command, passes; an implementation that accepts everything fails.
    good = CliRunner().invoke(cli, ["conformance", "run", "--tags", "versioning", "--strict-codes", "--impl",
                                    f"{sys.executable} -m rra_tools validate --format json"])
    assert good.exit_code == 0, good.output
    liar = tmp_path / "liar.py"
    liar.write_text('import json; print(json.dumps({"verdict": "valid", "codes": []}))\n')
    bad = CliRunner().invoke(cli, ["conformance", "run", "--impl", f"{sys.executable} {liar}"])
    assert bad.exit_code == 1
    assert "FAIL launcher-without-argv" in bad.output and "verdict 'valid', expected 'invalid'" in bad.output
    junit = render_junit(run_suite(SUITE, CASES[:2], lambda p: in_process_impl(p)))
    assert ET.fromstring(junit.split("\n", 1)[1]).tag == "testsuites"


def test_broken_case_files_are_reported(tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "x.yaml").write_text("description: d\ncases:\n  - id: Bad Id\n")
    with pytest.raises(CaseError, match="x.yaml"):
        load_suite(tmp_path)
    result = CliRunner().invoke(cli, ["conformance", "run", "--suite", str(tmp_path)])
    assert result.exit_code == 2 and "error: cases/x.yaml" in result.output


def _anchors(markdown: str) -> set[str]:
    """GitHub's anchors of the headings: lower case, punctuation dropped, spaces to dashes."""
    import re

    return {re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            for line in markdown.splitlines() if line.startswith("#")}


def test_every_section_a_case_names_exists() -> None:
    missing = set()
    for loaded in CASES:
        for section in loaded.case.sections:
            page, _, anchor = section.partition("#")
            path = ROOT / page
            if not path.is_file() or (anchor and anchor not in _anchors(path.read_text(encoding="utf-8"))):
                missing.add((loaded.case.id, section))
    assert not missing, sorted(missing)


def test_every_taskset_code_has_a_case() -> None:
    """Issue 25 item 7: RRA950 (an unreadable task set), RRA955 (too few observations from the
    manifest) and RRA959 (information only: expected in ``expect.info``) had no case."""
    from rra_tools.validate.catalog import TASKSET_RULES

    assert sorted(set(TASKSET_RULES) - covered_codes(CASES)) == []
    by_id = {c.case.id: c.case for c in CASES}
    assert by_id["taskset-unreadable"].taskset_text is not None
    assert by_id["taskset-oci-artifact-not-checked"].expect.info == ["RRA959"]


def test_info_codes_are_judged_when_the_implementation_reports_them(tmp_path: Path) -> None:
    from rra_tools.conformance.runner import Reported, _judge, command_impl

    (case,) = [c for c in CASES if c.case.id == "taskset-oci-artifact-not-checked"]
    assert _judge(case, Reported("valid", frozenset(), info=frozenset({"RRA959"})), True).passed
    wrong = _judge(case, Reported("valid", frozenset(), info=frozenset()), True)
    assert not wrong.passed and wrong.message == "info codes differ: missing ['RRA959'], unexpected []"
    assert _judge(case, Reported("valid", frozenset(), info=None), True).passed  # not said: not judged
    assert _judge(case, Reported("valid", frozenset(), info=frozenset()), False).passed  # codes not strict
    # The short JSON form may say its info codes; an RRA report always does.
    said = tmp_path / "said.py"
    said.write_text('import json; print(json.dumps({"verdict": "valid", "codes": [], "info": ["RRA103"]}))\n')
    assert command_impl(f"{sys.executable} {said}")("x").info == frozenset({"RRA103"})


def test_a_case_gives_taskset_or_taskset_text_not_both(tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "x.yaml").write_text(
        'description: d\ncases:\n  - {id: both, description: d, sections: [spec/07-task-sets.md], tags: [taskset], base: minimal, '
        'taskset: {"id": "a"}, taskset_text: "id: a", expect: {verdict: invalid}}\n')
    with pytest.raises(CaseError, match="gives both taskset and taskset_text"):
        load_suite(tmp_path)
