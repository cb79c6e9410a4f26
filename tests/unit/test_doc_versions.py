"""Issue 25 item 5: the documentation's links carry the version the tool prints. A rule's docs
link in the README, the docs and the spec names the standard's version (or a placeholder); the
README's ``rra validate`` session is what the tool prints; docs/ci.md shows the ``$schema`` line
``rra init`` writes (the installed schema's path, item 6) and names no older schema."""

from __future__ import annotations

import re
from pathlib import Path

from rra_tools import SPEC_VERSION

from ..rra_cli import rra

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), *sorted((REPO / "spec").glob("*.md"))]


def test_every_rule_docs_link_names_the_version_the_tool_prints() -> None:
    found = {(str(path.relative_to(REPO)), version) for path in DOCS
             for version in re.findall(r"https://rra\.dev/rules/([^/\s`]+)/", path.read_text(encoding="utf-8"))}
    assert found, "no docs link found: the pattern is stale"
    assert {(where, v) for where, v in found if v not in (SPEC_VERSION, "<major.minor>")} == set()


def test_the_readme_validate_session_is_what_the_tool_prints() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    session = re.search(r"```console\n\$ rra validate (\S+)\n(.*?)```", text, re.S)
    assert session is not None
    done = rra("validate", session.group(1), cwd=REPO, env={"NO_COLOR": "1"})
    assert done.returncode == 1
    assert done.stdout == session.group(2)
    assert f"  = docs: https://rra.dev/rules/{SPEC_VERSION}/RRA201\n" in done.stdout


def test_docs_ci_shows_the_schema_line_rra_init_writes() -> None:
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    shown = re.search(r"^# yaml-language-server: \$schema=(\S+)\n", text, re.M)
    assert shown is not None
    assert shown.group(1).startswith("/") and shown.group(1).endswith(f"/rra_tools/_schemas/rra-manifest-{SPEC_VERSION}.schema.json")
    assert "rra schema --path" in text
    old = {v for v in re.findall(r"schemas/(\d+\.\d+)/|rra-manifest-(\d+\.\d+)\.schema", text) for v in v if v}
    assert old <= {SPEC_VERSION}, old
