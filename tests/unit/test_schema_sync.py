"""The committed schemas are exactly what the models generate."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rra_tools import SPEC_VERSION
from rra_tools.model.schema import SCHEMA_BASE_URL, generated_schemas

ROOT = Path(__file__).resolve().parents[2]


def test_committed_schemas_match_models() -> None:
    stale = [name for name, text in generated_schemas().items()
             if not (ROOT / "schemas" / name).exists() or (ROOT / "schemas" / name).read_text() != text]
    assert not stale, f"{stale} differ from the models: run 'python -m rra_tools._generate' to regenerate"


def _generate(copy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # PYTHONPATH makes the copy's package the one imported, so its ROOT is the copy.
    return subprocess.run([sys.executable, "-m", "rra_tools._generate", *args], cwd=copy, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(copy)}, check=False)


def test_generate_check_mode_reports_drift(tmp_path: Path) -> None:
    copy = tmp_path / "checkout"
    for part in ("rra_tools", "schemas", "docs", "spec", "conformance"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    assert _generate(copy, "--check").returncode == 0
    # Drift of each kind: a schema, a rule page, a generated block inside a hand-written page.
    schema = copy / "schemas" / f"rra-manifest-{SPEC_VERSION}.schema.json"
    schema.write_text(schema.read_text(encoding="utf-8").replace('"title"', '"tittle"', 1), encoding="utf-8")
    (copy / "docs" / "rules" / "RRA401.md").unlink()
    environment = copy / "docs" / "environment.md"
    environment.write_text(environment.read_text(encoding="utf-8").replace("| lock-digest-mismatch |", "| lock-digest-mismatched |", 1),
                           encoding="utf-8")
    # ... and a field table of the spec that states another default than the model's.
    spec = copy / "spec" / "02-manifest.md"
    spec.write_text(spec.read_text(encoding="utf-8").replace("| no, `cpython` |", "| no, `pypy` |", 1),
                    encoding="utf-8")
    readme = copy / "conformance" / "v1.0" / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8").replace("- `RRA008`:", "- `RRA009`:", 1), encoding="utf-8")
    proc = _generate(copy, "--check")
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [f"stale: schemas/rra-manifest-{SPEC_VERSION}.schema.json", "stale: docs/rules/RRA401.md",
                                        "stale: docs/environment.md", "stale: spec/02-manifest.md",
                                        "stale: conformance/v1.0/README.md",
                                        "run 'python -m rra_tools._generate' to regenerate"], proc.stdout
    # Without --check the generator repairs the copy, and leaves the real checkout alone.
    assert _generate(copy).returncode == 0
    assert _generate(copy, "--check").returncode == 0
    assert schema.read_bytes() == (ROOT / "schemas" / schema.name).read_bytes()


def test_schema_identity() -> None:
    schema = json.loads((ROOT / "schemas" / "rra-manifest-1.0.schema.json").read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"{SCHEMA_BASE_URL}/1.0/manifest.schema.json"
    assert schema["additionalProperties"] is False and "^x-" in schema["patternProperties"]
    # Optional fields are omitted, never null: no null type anywhere in the standard.
    assert '"null"' not in json.dumps(schema)


#: Released schemas, frozen byte for byte (spec/03-versioning.md#compatibility): a release never
#: changes them, whatever the models become. A new minor version adds a new file beside them.
FROZEN = {
    "rra-manifest-1.0.schema.json": "02774727010a176f1640690beecc0db4a7e120d47c4293f35d32caa36c466345",
    "rra-manifest-1.1.schema.json": "cdc43472fcffb09d53989a666bc43fecdab046956f9e8d5cb5d307a9090f095d",
    "rra-run-record-1.0.schema.json": "fa66dc97cf7a70e2b7709d5f565857596efbccadf8d83c746c7e343174b94029",
}


@pytest.mark.parametrize("name", sorted(FROZEN))
def test_released_schema_is_frozen(name: str) -> None:
    digest = hashlib.sha256((ROOT / "schemas" / name).read_bytes()).hexdigest()
    assert digest == FROZEN[name], f"{name} is a released schema and must not change"


def test_current_manifest_schema_is_generated_and_released_ones_are_not() -> None:
    names = set(generated_schemas())
    assert f"rra-manifest-{SPEC_VERSION}.schema.json" in names
    assert not names & set(FROZEN), "a frozen schema would be overwritten by the generator"
    schema = json.loads((ROOT / "schemas" / f"rra-manifest-{SPEC_VERSION}.schema.json").read_text())
    assert schema["$id"] == f"{SCHEMA_BASE_URL}/{SPEC_VERSION}/manifest.schema.json"


def _added_marks(node: object, path: str = "") -> dict[str, str]:
    marks: dict[str, str] = {}
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "x-rra-added":
                marks[path] = value
            else:
                marks.update(_added_marks(value, f"{path}/{key}"))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            marks.update(_added_marks(value, f"{path}/{index}"))
    return marks


def test_fields_added_in_1_1_are_marked_and_absent_from_1_0() -> None:
    new = json.loads((ROOT / "schemas" / "rra-manifest-1.1.schema.json").read_text())
    old = json.loads((ROOT / "schemas" / "rra-manifest-1.0.schema.json").read_text())
    marks = _added_marks(new)
    assert marks == {
        "/$defs/Environment/properties/package": "1.1",
        "/$defs/Extract/properties/stream": "1.1",
        "/$defs/Launcher/properties/repeats": "1.1",
        "/$defs/Launcher/properties/secrets": "1.1",
        "/$defs/Observation/properties/provenance": "1.1",
        "/$defs/Observation/properties/repeat": "1.1",
        "/$defs/Parameter/properties/secret": "1.1",
    }
    for pointer in marks:
        _, _, definition, _, field = pointer.split("/")
        assert field not in old["$defs"][definition]["properties"], f"{field} exists in 1.0"
    # Every field of 1.0 is still there in 1.1 (a minor version only adds).
    for definition, body in old["$defs"].items():
        for field in body.get("properties", {}):
            assert field in new["$defs"][definition]["properties"], f"{definition}.{field} was removed"


def test_fields_added_in_1_2_are_marked_and_1_1_kept() -> None:
    new = json.loads((ROOT / "schemas" / "rra-manifest-1.2.schema.json").read_text())
    old = json.loads((ROOT / "schemas" / "rra-manifest-1.1.schema.json").read_text())
    marks = {k: v for k, v in _added_marks(new).items() if v == "1.2"}
    assert marks == {"/$defs/Claim/properties/kind": "1.2"}
    assert "kind" not in old["$defs"]["Claim"]["properties"]
    # The values of a claim widen (number, string, or a list of both); 1.1 said number.
    assert old["$defs"]["Reported"]["properties"]["value"] == {"description": "The number as printed.",
                                                               "title": "Value", "type": "number"}
    kinds = [branch.get("type") for branch in new["$defs"]["Reported"]["properties"]["value"]["anyOf"]]
    assert kinds == ["number", "string", "array"]
    for definition, body in old["$defs"].items():
        for field in body.get("properties", {}):
            assert field in new["$defs"][definition]["properties"], f"{definition}.{field} was removed"
