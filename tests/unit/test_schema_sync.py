"""The committed schemas are exactly what the models generate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rra_tools.model.schema import SCHEMA_BASE_URL, generated_schemas

ROOT = Path(__file__).resolve().parents[2]


def test_committed_schemas_match_models() -> None:
    stale = [name for name, text in generated_schemas().items()
             if not (ROOT / "schemas" / name).exists() or (ROOT / "schemas" / name).read_text() != text]
    assert not stale, f"{stale} differ from the models: run 'python -m rra_tools._generate' to regenerate"


def test_generate_check_mode_reports_drift(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "rra_tools._generate", "--check"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_schema_identity() -> None:
    schema = json.loads((ROOT / "schemas" / "rra-manifest-1.0.schema.json").read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"{SCHEMA_BASE_URL}/1.0/manifest.schema.json"
    assert schema["additionalProperties"] is False and "^x-" in schema["patternProperties"]
    # Optional fields are omitted, never null: no null type anywhere in the standard.
    assert '"null"' not in json.dumps(schema)
