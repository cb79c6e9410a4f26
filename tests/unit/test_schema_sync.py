"""The committed schemas are exactly what the models generate."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

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
    schema = copy / "schemas" / "rra-manifest-1.0.schema.json"
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
    assert proc.stdout.splitlines() == ["stale: schemas/rra-manifest-1.0.schema.json", "stale: docs/rules/RRA401.md",
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
