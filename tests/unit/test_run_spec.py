"""The run path's plain view of a manifest (rra_tools.model.manifest_view) reads every document exactly as
the pydantic models do: same attribute names, same values, same defaults."""

from __future__ import annotations

from enum import Enum
import inspect
import math
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rra_tools.conformance import load_suite, materialise, suite_path
from rra_tools.io.errors import LoadError
from rra_tools.io.read.source import decode_text, parse_document
from rra_tools.model.manifest import Manifest
from rra_tools.model.manifest_view import read_manifest
from rra_tools.validate.api import find_manifest, validate_path

ROOT = Path(__file__).resolve().parents[2]
SUITE = suite_path()
VALID_CASES = [c for c in load_suite(SUITE) if not c.case.expect.codes]


def same(view: Any, model: Any, where: str = "manifest") -> None:
    """Every field of the dataclass ``view`` equals the model's attribute of that name."""
    if hasattr(view, "field_names"):  # a record class of rra_tools.model.manifest_view
        for name in view.field_names():
            same(getattr(view, name), getattr(model, name), f"{where}.{name}")
    elif isinstance(view, list):
        assert isinstance(model, list) and len(view) == len(model), where
        for i, (a, b) in enumerate(zip(view, model)):
            same(a, b, f"{where}[{i}]")
    elif isinstance(view, dict):
        assert isinstance(model, dict) and list(view) == list(model), where
        for key in view:
            same(view[key], model[key], f"{where}.{key}")
    elif isinstance(model, (str, list)) and isinstance(view, float) and where.endswith(".value"):
        # The one documented difference: the run path reads the answer of a string, set or list
        # claim (RRA 1.2) as NaN, since it computes with numbers only (manifest_view._number_of).
        assert math.isnan(view), (where, view, model)
    else:
        plain = model.value if isinstance(model, Enum) else model  # defaults keep their enum type
        assert view == plain and type(view) is type(plain), (where, view, plain)


def _check(manifest: Path) -> None:
    try:
        data = parse_document(decode_text(manifest.read_bytes())).data
    except LoadError:
        return
    try:
        model = Manifest.model_validate(data)
    except ValueError:
        return  # not a valid manifest: the run path refuses it before reading (test below)
    same(read_manifest(data), model)


@pytest.mark.parametrize("manifest", sorted(ROOT.glob("examples/*/rra.yaml")), ids=lambda p: p.parent.name)
def test_examples_read_alike(manifest: Path) -> None:
    _check(manifest)


@pytest.mark.parametrize("loaded", VALID_CASES, ids=[c.case.id for c in VALID_CASES])
def test_valid_conformance_cases_read_alike(loaded, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    manifest = find_manifest(materialise(SUITE, loaded, tmp_path))
    if manifest is not None and validate_path(manifest).valid:
        _check(manifest)


def test_defaults_match_the_models() -> None:
    minimal = parse_document((ROOT / "examples" / "digits-logreg" / "rra.yaml").read_text()).data
    launcher = {"id": "l", "argv": ["true"], "resources": {"timeout_s": 1, "expected_runtime_s": 1}}
    claim = {"id": "c", "paper_location": {"table": "1"}, "launcher": "l",
             "metric": {"name": "m", "unit": "", "direction": "higher"},
             "extract": {"output": "o", "regex": {"pattern": "x=(\\d+)"}},
             "reported": {"value": 1, "precision": 0},
             "reference": {"observations": [{"value": 1, "seed": s, "fingerprint": {"hardware": "h", "software": "s"}}
                                            for s in range(3)]}}
    data = {**minimal, "launchers": [launcher], "claims": [claim]}
    data.pop("evidence", None)
    data.pop("levels", None)
    same(read_manifest(data), Manifest.model_validate(data))


def test_rra_run_does_not_import_pydantic(tmp_path: Path) -> None:
    # The point of the plain view: `rra run` starts and records without building the models
    # (~0.2 s), lock comparison included.
    import shutil

    art = tmp_path / "art"
    shutil.copytree(ROOT / "examples" / "digits-logreg", art)
    text = (art / "rra.yaml").read_text()
    (art / "rra.yaml").write_text(text.replace('argv: ["python", "train.py"', 'argv: ["/bin/true", "train.py"'))
    probe = ("import sys; from rra_tools.run import execute, load_artifact, plan_runs, RunOptions\n"
             f"a = load_artifact({str(art)!r}); (p,) = plan_runs(a, 'train', seed=0)\n"
             "r = execute(p, RunOptions(gpus=[]))\n"
             "assert r.record['host']['lock']['path'] == 'requirements.lock', r.record\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_plain_view_defaults_are_the_models() -> None:
    from pydantic import BaseModel
    from pydantic_core import PydanticUndefined

    from rra_tools.model import manifest_view as spec
    from rra_tools.model.view_source import VIEW

    for name, model, fields in VIEW():
        plain = getattr(spec, name)
        assert sorted(plain.field_names()) == sorted(fields), name  # required fields come first
        defaults = {key: param.default for key, param in inspect.signature(plain).parameters.items()
                    if param.default is not inspect.Parameter.empty}
        for field in fields:
            info = model.model_fields[field]
            if info.default_factory is None and info.default is PydanticUndefined:
                assert field not in defaults, f"{name}.{field} is required by the model"
                continue
            expected = info.get_default(call_default_factory=True)
            if isinstance(expected, BaseModel):  # a nested model with its own defaults
                assert defaults[field] == getattr(spec, type(expected).__name__ + "Spec")(), field
                continue
            expected = expected.value if isinstance(expected, Enum) else expected
            assert defaults[field] == expected, f"{name}.{field}"


def test_generate_check_fails_when_the_run_view_drifts(tmp_path: Path) -> None:
    from .test_schema_sync import _generate

    copy = tmp_path / "checkout"
    for part in ("rra_tools", "schemas", "docs", "spec", "conformance"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    # A model's default changes: the run path's view no longer matches until regenerated.
    launchers = copy / "rra_tools" / "model" / "launchers.py"
    text = launchers.read_text(encoding="utf-8")
    assert "gpus: int = Field(default=0," in text
    launchers.write_text(text.replace("gpus: int = Field(default=0,", "gpus: int = Field(default=2,"), encoding="utf-8")
    proc = _generate(copy, "--check")
    assert proc.returncode == 1 and "stale: rra_tools/model/manifest_view.py" in proc.stdout.splitlines(), proc.stdout
    assert _generate(copy).returncode == 0
    generated = copy / "rra_tools" / "model" / "manifest_view.py"
    assert " gpus: int = 2, " in generated.read_text(encoding="utf-8")
    assert _generate(copy, "--check").returncode == 0
    # A hand edit of the generated module is drift too.
    edited = generated.read_text(encoding="utf-8").replace('run_records: str = "runs")', 'run_records: str = "records")')
    generated.write_text(edited, encoding="utf-8")
    proc = _generate(copy, "--check")
    assert proc.returncode == 1 and proc.stdout.splitlines()[0] == "stale: rra_tools/model/manifest_view.py", proc.stdout
