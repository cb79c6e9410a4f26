"""Every rule has a page, every page's example fires its rule and its fix clears it, pages are in sync.

Each example is written as an artifact directory: ``BASE_FILES`` and the rule's own files and
links, plus ``rra.yaml`` holding the example merged onto ``BASE_MANIFEST`` (or, for a raw example,
the example itself). The few rules an example cannot show as a file are special-cased below,
each with its reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rra_tools.cli.main import cli
from rra_tools.cli.rules_cmd import _offline, render_explain, render_rules
from rra_tools.validate import validate_path
from rra_tools.validate.catalog import ENV_RULES, REVIEW_RULES, RULES, TASKSET_RULES
from rra_tools.validate.config import Config
from rra_tools.validate.result import ValidationResult
from rra_tools.validate.rule_docs import (
    BASE_FILES,
    BASE_MANIFEST,
    RuleDoc,
    generated_rule_pages,
    load_docs,
    merge_manifest,
    rule_doc,
)

REPO = Path(__file__).resolve().parents[2]
DOCS = load_docs()

#: RRA001: the example is an artifact directory without any manifest file.
NO_MANIFEST = "RRA001"
#: RRA004: the example writes each ``\xNN`` escape as the single byte it stands for.
BYTE_ESCAPES = "RRA004"
#: RRA008: the example is the base manifest validated with a time budget of zero.
BUDGET = "RRA008"
#: Rules no RRA 1.0 manifest can fire; their examples are illustrations (see their pages).
CANNOT_FIRE_IN_1_0 = {
    "RRA115": "every keyword of the 1.0 schema maps to RRA110-RRA114",
}
#: Packaging rules (RRA8xx) judge a packed artifact, not a manifest: their examples are console
#: sessions, and tests/unit/test_oci_validate.py builds each situation and checks the rule fires.
PACKAGED = {code for code, rule in RULES.items() if rule.section.startswith("spec/05-packaging.md")}


def _write_artifact(root: Path, doc: RuleDoc, manifest: bytes | None, *, fixed: bool = False) -> Path:
    for rel, text in {**BASE_FILES, **doc.files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    links = doc.fix_links if fixed and doc.fix_links is not None else doc.links
    for rel, target in links.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)
    if manifest is not None:
        (root / "rra.yaml").write_bytes(manifest)
    return root


def _escapes_to_bytes(text: str) -> bytes:
    return re.sub(rb"\\x([0-9a-fA-F]{2})", lambda m: bytes([int(m[1], 16)]), text.encode("utf-8"))


def _run_example(tmp_path: Path, code: str) -> ValidationResult:
    doc = DOCS[code]
    text = doc.example if doc.raw else merge_manifest(doc.example)
    if code == NO_MANIFEST:
        manifest = None
    elif code == BUDGET:
        manifest = BASE_MANIFEST.encode("utf-8")
    elif code == BYTE_ESCAPES:
        manifest = _escapes_to_bytes(text)
    else:
        manifest = text.encode("utf-8")
    root = _write_artifact(tmp_path, doc, manifest)
    return validate_path(root, config=Config(extend_select=frozenset({code})),
                         time_budget_s=0.0 if code == BUDGET else None)


def _run_fix(tmp_path: Path, code: str) -> ValidationResult:
    doc = DOCS[code]
    root = _write_artifact(tmp_path, doc, merge_manifest(doc.fix).encode("utf-8"), fixed=True)
    return validate_path(root, config=Config(extend_select=frozenset({code})))


def _shown(result: ValidationResult) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in result.diagnostics]


def _example_params() -> list[object]:
    return [pytest.param(code, marks=pytest.mark.xfail(strict=True, reason=CANNOT_FIRE_IN_1_0[code]))
            if code in CANNOT_FIRE_IN_1_0 else code for code in sorted(set(RULES) - PACKAGED)]


def test_every_rule_has_docs_and_a_page() -> None:
    from rra_tools.env.check import ENV_RULES
    from rra_tools.validate.catalog import REVIEW_RULES, TASKSET_RULES

    assert sorted(DOCS) == sorted({*RULES, *TASKSET_RULES})
    assert not set(RULES) & set(ENV_RULES), "validator rules and env check codes share one code space"
    assert not (set(RULES) | set(ENV_RULES)) & set(TASKSET_RULES), "task-set codes have a range of their own"
    assert sorted(generated_rule_pages()) == [
        "README.md", *(f"{code}.md" for code in sorted({*RULES, *ENV_RULES, *REVIEW_RULES, *TASKSET_RULES}))]


def test_each_rule_is_read_from_the_file_beside_its_check() -> None:
    # The docs of the semantic rules sit next to the module that reports them.
    from rra_tools.validate.rules import load_all

    for check in load_all():
        module = Path(sys.modules[check.run.__module__].__file__ or "")
        for code in check.codes:
            assert f"\n[{code}]\n" in module.with_suffix(".toml").read_text(encoding="utf-8"), code
    assert all(rule_doc(code) == doc for code, doc in DOCS.items())


@pytest.mark.parametrize(("text", "message"), [
    ("[RRA999]\nwhat = 'w'\nwhy = 'y'\nexample = 'e'\nfix = 'f'\n", "x.toml: [RRA999] documents no code of the catalog"),
    ("[RRA401]\nwhat = 'w'\nwhy = 'y'\nexample = 'e'\n", "x.toml: [RRA401]: 'fix' must be given as text"),
    ("[RRA401]\nwhat = 'w'\nwhy = 'y'\nexample = 'e'\nfix = 'f'\nwhy_not = 1\n",
     "x.toml: [RRA401]: unknown field(s) 'why_not'"),
    ("[RRA401]\nwhat = 'w'\nwhy = 'y'\nexample = 'e'\nfix = 'f'\nfiles = ['a']\n",
     "x.toml: [RRA401]: 'files' must be a table of path = text"),
])
def test_malformed_documentation_is_refused(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "x.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as raised:
        load_docs(tmp_path)
    assert str(raised.value) == message


def test_an_environment_code_takes_documentation_like_a_rule(tmp_path: Path) -> None:
    from rra_tools.validate.rule_docs import env_code_page

    (tmp_path / "environment.toml").write_text("""\
[RRA701]
what = "The lock changed."
why = "Other packages."
lang = "console"
intro = "A session:"
example = '''
$ rra env check
error[RRA701] ...
'''
fix = '''
$ rra lock
'''
""", encoding="utf-8")
    page = env_code_page("RRA701", load_docs(tmp_path)["RRA701"])
    assert page.startswith(env_code_page("RRA701").rstrip("\n") + "\n\n## What it checks\n\nThe lock changed.\n")
    assert page.endswith("A session:\n\n```console\n$ rra env check\nerror[RRA701] ...\n```\n\n"
                         "## Use instead\n\n```console\n$ rra lock\n```\n")


def test_a_code_documented_twice_is_refused(tmp_path: Path) -> None:
    entry = "[RRA401]\nwhat = 'w'\nwhy = 'y'\nexample = 'e'\nfix = 'f'\n"
    (tmp_path / "a.toml").write_text(entry, encoding="utf-8")
    (tmp_path / "b.toml").write_text(entry, encoding="utf-8")
    with pytest.raises(ValueError, match=r"^b.toml: \[RRA401\] is documented in another file too$"):
        load_docs(tmp_path)


def test_env_check_codes_are_explained_by_code_and_by_name() -> None:
    from rra_tools.cli.rules_cmd import render_explain

    page = render_explain("rra703")
    assert page is not None and page.startswith("# RRA703 — package-missing\n")
    assert "`rra env check`" in page
    assert render_explain("accelerator-memory-low") == render_explain("RRA707")
    assert render_explain("RRA799") is None


def test_generated_block_replaces_only_its_lines() -> None:
    from rra_tools._generate import with_block

    text = "intro\n<!-- generated: t -->\nold\n<!-- end generated: t -->\noutro\n"
    assert with_block(text, "t", "new\n") == "intro\n<!-- generated: t -->\nnew\n<!-- end generated: t -->\noutro\n"
    with pytest.raises(ValueError, match="markers of the generated block 'u'"):
        with_block(text, "u", "x\n")


def test_base_manifest_is_clean(tmp_path: Path) -> None:
    root = _write_artifact(tmp_path, RuleDoc("", "", "", ""), BASE_MANIFEST.encode("utf-8"))
    result = validate_path(root, config=Config(select=frozenset({"ALL"})))
    assert _shown(result) == []


@pytest.mark.parametrize("code", _example_params())
def test_example_reports_its_rule_and_nothing_else(tmp_path: Path, code: str) -> None:
    result = _run_example(tmp_path, code)
    assert {d.code for d in result.diagnostics} == {code}, _shown(result)


@pytest.mark.parametrize("code", sorted(set(RULES) - PACKAGED))
def test_fix_is_clean(tmp_path: Path, code: str) -> None:
    assert _shown(_run_fix(tmp_path, code)) == []


def test_merge_replaces_sections_in_place_and_appends_new_ones() -> None:
    merged = merge_manifest("# a comment\ntitle: Other\nlevels: [available]\n")
    keys = [line.split(":")[0] for line in merged.splitlines() if re.match(r"^[a-z_]+:", line)]
    base_keys = [line.split(":")[0] for line in BASE_MANIFEST.splitlines() if re.match(r"^[a-z_]+:", line)]
    assert keys == [*base_keys, "levels"]
    assert "# a comment\ntitle: Other\n" in merged and "refined artifact" not in merged


def test_pages_have_every_section() -> None:
    pages = generated_rule_pages()
    for code, rule in RULES.items():
        page = pages[f"{code}.md"]
        assert page.startswith(f"# {code} — {rule.name}\n\n{rule.summary}\n"), code
        for heading in ("## What it checks", "## Why it matters", "## Example", "## Use instead",
                        "## Configuration"):
            assert f"\n{heading}\n" in page, (code, heading)
        assert f"(../../{rule.section})" in page and f"Added in RRA {rule.added}" in page
        assert ("extend-select" in page) == (not rule.enabled), code
        assert f"[{code}]({code}.md)" in pages["README.md"]


def test_generated_pages_are_committed() -> None:
    proc = subprocess.run([sys.executable, "-m", "rra_tools._generate", "--check"], cwd=REPO,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"{proc.stdout}{proc.stderr}\nrun 'python -m rra_tools._generate'"


def test_rules_lists_every_code() -> None:
    """Through the real command: the validator's rules, rra env check's, rra review's and rra bench
    check's codes, all explainable."""
    from rra_tools.validate.catalog import ENV_RULES, REVIEW_RULES, TASKSET_RULES
    from tests.rra_cli import rra

    every = sorted([*RULES, *ENV_RULES, *REVIEW_RULES, *TASKSET_RULES])
    assert {f"RRA7{n:02d}" for n in range(12)} <= set(ENV_RULES)
    result = rra("rules")
    assert result.returncode == 0
    listed = [line.split()[0] for line in result.stdout.splitlines()[1:]]
    assert listed == every
    assert render_rules("text") == result.stdout
    as_json = json.loads(rra("rules", "--format", "json").stdout)
    assert [item["code"] for item in as_json] == every
    assert {item["code"] for item in as_json if item["checked_by"] == "rra env check"} == set(ENV_RULES)
    assert {item["code"] for item in as_json if item["checked_by"] == "rra bench check"} == set(TASKSET_RULES)
    assert {item["code"] for item in as_json if item["checked_by"] == "rra review"} == set(REVIEW_RULES)
    assert "RRA930  change-without-evidence" in result.stdout
    assert "RRA954  task-claim-unknown" in result.stdout
    assert render_explain("task-claim-unknown") == _offline(generated_rule_pages()["RRA954.md"])
    assert "RRA701  lock-digest-mismatch" in result.stdout
    assert all(render_explain(code) is not None for code in every)


@pytest.mark.parametrize("selector", ["RRA201", "unknown-reference", "rra201"])
def test_explain_prints_the_page(selector: str) -> None:
    result = CliRunner().invoke(cli, ["explain", selector])
    assert result.exit_code == 0
    assert result.output == _offline(generated_rule_pages()["RRA201.md"])


def test_explain_has_no_link_that_only_works_in_a_checkout() -> None:
    """Issue 25: rra explain linked to ../../spec/..., dead outside a checkout. What it prints
    comes from the package; a relative link becomes its text, a section of the standard is named
    with the version the tool prints, and the example manifest the example builds on is printed."""
    from rra_tools import SPEC_VERSION

    relative = re.compile(r"\]\((?!https?://)[^)]*\)")
    for code in [*RULES, *ENV_RULES, *REVIEW_RULES, *TASKSET_RULES]:
        page = render_explain(code)
        assert page is not None and not relative.search(page), (code, relative.findall(page or ""))
    page = render_explain("RRA201")
    assert page is not None
    assert (f"- Specification: spec/02-manifest.md#identifiers-and-references of the RRA {SPEC_VERSION} standard\n"
            in page)
    assert "Top-level sections not shown are those of the example manifest printed at the end.\n" in page
    assert page.count("## The example manifest\n") == 1 and BASE_MANIFEST.splitlines()[1] in page
    # The generated page in docs/rules/ keeps its links, which work there.
    assert "](../../spec/02-manifest.md#identifiers-and-references)" in generated_rule_pages()["RRA201.md"]


def test_explain_unknown_rule_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["explain", "RRA999"])
    assert result.exit_code == 2
    assert "unknown rule 'RRA999'" in result.output
    assert render_explain("RRA999") is None


def test_spec_rule_catalog_lists_every_code_with_its_name_and_severity() -> None:
    from rra_tools.env.check import ENV_RULES
    from rra_tools.validate.catalog import REVIEW_RULES, TASKSET_RULES

    spec = (REPO / "spec" / "06-rules.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(RRA\d{3})` \| ([a-z0-9-]+) \| (\w+) \| ([a-z, -]+) \|", spec, re.M)
    assert [code for code, *_ in rows] == sorted({*RULES, *ENV_RULES, *REVIEW_RULES, *TASKSET_RULES})
    for code, name, severity, reported_by in rows:
        rule = RULES.get(code) or ENV_RULES.get(code) or REVIEW_RULES.get(code) or TASKSET_RULES[code]
        assert (name, severity) == (rule.name, rule.severity.label), code
        assert reported_by == ("environment check" if code in ENV_RULES else "task-set check" if code in TASKSET_RULES
                               else "review" if code in REVIEW_RULES
                               else "validator" if RULES[code].enabled else "validator, when selected"), code


def test_a_rule_section_without_its_heading_is_refused(tmp_path: Path) -> None:
    from rra_tools.validate.rule_docs import catalog_table

    shutil.copytree(REPO / "spec", tmp_path / "spec")
    overview = tmp_path / "spec" / "01-overview.md"
    overview.write_text(overview.read_text(encoding="utf-8").replace("\n## Limits\n", "\n## Bounds\n"),
                        encoding="utf-8")
    with pytest.raises(ValueError, match=r"^section 'spec/01-overview.md#limits' names no heading of the "
                                         r"specification$"):
        catalog_table(tmp_path / "spec")
