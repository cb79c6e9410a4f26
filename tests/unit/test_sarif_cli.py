"""``rra validate -f sarif`` names a logical location only when there is a name to give: a finding
about the whole document (JSON pointer "") has none."""

from __future__ import annotations

import json
from pathlib import Path

from tests.rra_cli import rra


def test_no_empty_logical_location(tmp_path: Path) -> None:
    (tmp_path / "rra.yaml").write_text('rra_version: "1.0"\nid: demo\ntitle: t\npaper: {title: p}\n')
    done = rra("validate", "-f", "sarif", "rra.yaml", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    results = json.loads(done.stdout)["runs"][0]["results"]
    names = [logical["fullyQualifiedName"] for r in results for location in r["locations"]
             for logical in location.get("logicalLocations", [])]
    assert "" not in names
    assert "/paper" in names  # a finding inside the document keeps its pointer (paper lacks authors)
    whole = [r for r in results if r["ruleId"] == "RRA110" and "'code'" in r["message"]["text"]]
    assert whole and all("logicalLocations" not in location for r in whole for location in r["locations"])
