"""The layers contract of pyproject.toml holds, and it really catches an import that goes up or
closes a circle (checked by import-linter on a copy of the package with one bad import planted)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(package_parent: Path) -> subprocess.CompletedProcess[str]:
    assert LINT_IMPORTS.is_file(), "lint-imports is missing: pip install -e '.[test]'"
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", str(ROOT / "pyproject.toml")], capture_output=True,
                          text=True, env=env, cwd=package_parent, timeout=300, check=False)


def test_contracts_have_no_exemptions() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    assert all("ignore_imports" not in contract for contract in config["contracts"])
    [layers] = [c for c in config["contracts"] if c.get("id") == "layers"]  # the package's; wings have their own
    # Top first; a layer may hold siblings ("a | b"). The design's order of the main layers:
    position = {name.strip("() "): i for i, layer in enumerate(layers["layers"]) for name in layer.split("|")}
    order = ["cli", "bench", "builder", "oci", "run", "env", "validate", "io", "model", "errors"]
    assert [position[f"rra_tools.{name}"] for name in order] == sorted(position[f"rra_tools.{name}"]
                                                                      for name in order)
    assert position["rra_tools.cli"] < position["rra_tools.conformance"] < position["rra_tools.validate"]


def test_the_package_keeps_its_layers() -> None:
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("module", "planted", "broken"), [
    # validate is below oci: validating a packed artifact lives in oci, not in validate.
    ("rra_tools/validate/engine.py", "from ..oci import validation", "rra_tools.validate is not allowed to import"),
    # Inside one package: oci.layout is read by oci.verify, so layout importing verify is a circle.
    ("rra_tools/oci/layout.py", "from . import verify", "No cycles are allowed in rra_tools.oci"),
], ids=["upward", "circle"])
def test_a_planted_import_breaks_a_contract(tmp_path: Path, module: str, planted: str, broken: str) -> None:
    shutil.copytree(ROOT / "rra_tools", tmp_path / "rra_tools", ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{planted}  # noqa: E402\n", encoding="utf-8")
    done = _lint(tmp_path)
    assert done.returncode == 1 and broken in done.stdout, done.stdout + done.stderr
