"""Acceptance tests over the bundled examples.

* every valid example (``examples/<name>/``) validates with zero findings and meets the levels
  it claims;
* every broken example (``examples/broken/<name>/``) produces exactly the codes and the exit
  status its ``expected.json`` names, in the JSON report and in SARIF;
* ``examples/digits-logreg``'s launcher is run for real and reproduces the reference
  observation recorded for seed 0, which shows the observations come from real runs.

The examples are discovered from the directory listing, so a new example is tested as soon
as it is added.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ..rra_cli import rra_command

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
BROKEN = EXAMPLES / "broken"
MANIFEST_NAMES = ("rra.yaml", "rra.yml", "rra.json")

# Every artifact: a directory of examples/ holding a manifest, and the bench demo's artifacts
# (examples/bench-demo is a benchmark, not an artifact: tests/acceptance/test_bench_demo.py runs it).
VALID = sorted([p.name for p in EXAMPLES.iterdir() if p.is_dir() and p.name not in ("broken", "bench-demo")]
               + [f"bench-demo/artifacts/{p.name}" for p in (EXAMPLES / "bench-demo" / "artifacts").iterdir()
                  if p.is_dir()])
BROKEN_CASES = sorted(p.name for p in BROKEN.iterdir() if p.is_dir())


def run_rra(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the real ``rra`` command from the repository root (paths stay relative)."""
    return subprocess.run([*rra_command(), *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120, check=False)


def validate_json(rel: str) -> tuple[int, dict[str, Any]]:
    """Exit status and parsed JSON report of ``rra validate --format json <rel>``."""
    proc = run_rra("validate", "--format", "json", rel)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        pytest.fail(f"rra validate --format json {rel} printed no JSON ({exc}):\n"
                    f"stdout: {proc.stdout[:2000]}\nstderr: {proc.stderr[:2000]}")
    return proc.returncode, report


def load_expected(name: str) -> dict[str, Any]:
    path = BROKEN / name / "expected.json"
    assert path.is_file(), f"{path.relative_to(REPO)} is missing: every broken example needs one"
    expected: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return expected


def load_manifest(directory: Path) -> dict[str, Any]:
    from ruamel.yaml import YAML

    data: dict[str, Any] = YAML(typ="safe", pure=True).load((directory / "rra.yaml").read_text(encoding="utf-8"))
    return data


def report_schema_validator() -> Any:
    from jsonschema import Draft202012Validator

    schema = json.loads((REPO / "schemas" / "rra-report-1.0.schema.json").read_text(encoding="utf-8"))
    return Draft202012Validator(schema)


def describe(result: dict[str, Any]) -> str:
    lines = [f"{d['code']} {d['severity']} {d.get('pointer', '')}: {d['message']}" for d in result["diagnostics"]]
    return "\n".join(lines) or "(no findings)"


# --------------------------------------------------------------------------------------
# Valid examples
# --------------------------------------------------------------------------------------


def test_examples_are_discovered() -> None:
    assert {"digits-logreg", "gpu-resnet-cifar", "bench-demo/artifacts/nbayes"} <= set(VALID)
    assert len(BROKEN_CASES) >= 20


@pytest.mark.parametrize("name", VALID)
def test_valid_example_has_zero_findings(name: str) -> None:
    directory = EXAMPLES / name
    assert any((directory / m).is_file() for m in MANIFEST_NAMES), f"examples/{name} has no manifest"
    code, report = validate_json(f"examples/{name}")
    errors = sorted(report_schema_validator().iter_errors(report), key=str)
    assert not errors, f"JSON report does not match its schema: {errors[0].message}"
    (result,) = report["results"]
    assert result["counts"] == {"error": 0, "warning": 0, "info": 0}, describe(result)
    assert result["diagnostics"] == [], describe(result)
    assert report["counts"] == {"error": 0, "warning": 0, "info": 0}
    assert result["valid"] is True
    assert code == 0
    claimed, met = result["levels"]["claimed"], result["levels"]["met"]
    assert claimed, f"examples/{name} claims no level"
    assert set(claimed) <= set(met), f"claimed {claimed}, met {met}"


@pytest.mark.parametrize("name", VALID)
def test_valid_example_manifest_points_editors_at_the_schema(name: str) -> None:
    text = (EXAMPLES / name / "rra.yaml").read_text(encoding="utf-8")
    version = re.search(r'^rra_version: "(\d+\.\d+)"$', text, re.M)
    assert version is not None
    up = "../" * (name.count("/") + 2)
    schema = f"schemas/rra-manifest-{version.group(1)}.schema.json"  # the schema of the manifest's own version
    assert text.splitlines()[0] == f"# yaml-language-server: $schema={up}{schema}"
    assert (EXAMPLES / name / f"{up}{schema}").resolve().is_file()


# --------------------------------------------------------------------------------------
# Broken examples
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", BROKEN_CASES)
def test_broken_expected_json_is_consistent(name: str) -> None:
    from rra_tools.validate.catalog import RULES
    from rra_tools.validate.diagnostics import Severity

    expected = load_expected(name)
    assert set(expected) == {"codes", "exit", "description"}
    codes = expected["codes"]
    assert codes and len(set(codes)) == len(codes), "codes must be a non-empty set"
    assert all(c in RULES for c in codes), f"unknown code in {codes}"
    assert isinstance(expected["description"], str) and expected["description"].strip()
    # The exit status follows from the codes' default severities.
    if "RRA001" in codes:
        want = 2
    elif any(RULES[c].severity == Severity.ERROR for c in codes):
        want = 1
    else:
        want = 0
    assert expected["exit"] == want, f"codes {codes} give exit {want}, expected.json says {expected['exit']}"


@pytest.mark.parametrize("name", BROKEN_CASES)
def test_broken_example_reports_expected_codes(name: str) -> None:
    expected = load_expected(name)
    code, report = validate_json(f"examples/broken/{name}")
    (result,) = report["results"]
    got = {d["code"] for d in result["diagnostics"]}
    assert got == set(expected["codes"]), f"{name}: {expected['description']}\n{describe(result)}"
    assert code == expected["exit"], f"{name}: exit {code}, expected {expected['exit']}\n{describe(result)}"
    errors = sorted(report_schema_validator().iter_errors(report), key=str)
    assert not errors, f"JSON report does not match its schema: {errors[0].message}"
    assert result["valid"] is (code != 1 and code != 2)


@pytest.mark.parametrize("name", BROKEN_CASES)
def test_broken_example_sarif(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """SARIF 2.1.0 of each broken example, in-process through click's runner (fast)."""
    from click.testing import CliRunner

    from rra_tools.cli.main import cli

    expected = load_expected(name)
    monkeypatch.chdir(REPO)
    outcome = CliRunner().invoke(cli, ["validate", "--format", "sarif", f"examples/broken/{name}"],
                                 catch_exceptions=False)
    assert outcome.exit_code == expected["exit"]
    sarif = json.loads(outcome.stdout)
    assert sarif["version"] == "2.1.0"
    (run,) = sarif["runs"]
    assert run["tool"]["driver"]["name"] == "rra"
    got = {r["ruleId"] for r in run.get("results", [])}
    assert got == set(expected["codes"])


def test_broken_fixtures_are_intact() -> None:
    """The cases that depend on odd bytes or file types on disk still have them."""
    assert (BROKEN / "empty-file" / "rra.yaml").stat().st_size == 0
    raw = (BROKEN / "non-utf8" / "rra.yaml").read_bytes()
    assert b"\xe9" in raw
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    link = BROKEN / "symlink-escape" / "requirements.lock"
    assert link.is_symlink(), "symlink-escape/requirements.lock must be a symlink (check out with symlinks)"
    assert os.readlink(link) == "/etc/hostname"
    assert (BROKEN / "not-a-regular-file" / "locks").is_dir()
    assert not any((BROKEN / "dir-without-manifest" / m).exists() for m in MANIFEST_NAMES)


# --------------------------------------------------------------------------------------
# digits-logreg: the observations come from real runs
# --------------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def substitute(template: str, values: dict[str, Any]) -> str:
    """Replace ``{name}`` placeholders; ``{{`` and ``}}`` are literal braces."""

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "{{":
            return "{"
        if match.group(0) == "}}":
            return "}"
        return str(values[match.group(1)])

    return _PLACEHOLDER.sub(one, template)


def json_pointer(document: Any, pointer: str) -> Any:
    """Resolve an RFC 6901 JSON pointer."""
    node = document
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def run_digits_seed(tmp_path: Path, seed: int) -> tuple[float, float]:
    """Run digits-logreg's claim launcher for ``seed`` in a copy; (obtained, recorded) values."""
    source = EXAMPLES / "digits-logreg"
    artifact = tmp_path / "digits-logreg"
    shutil.copytree(source, artifact, ignore=shutil.ignore_patterns("results", "__pycache__"))
    manifest = load_manifest(artifact)
    (claim,) = manifest["claims"]
    launcher = next(item for item in manifest["launchers"] if item["id"] == claim["launcher"])
    assert seed in launcher["seeds"]
    values = {name: spec["default"] for name, spec in launcher.get("parameters", {}).items()}
    values["seed"] = seed
    argv = [substitute(arg, values) for arg in launcher["argv"]]
    assert argv[0] == "python"
    argv[0] = sys.executable  # the interpreter running the tests has the locked packages
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), **launcher.get("env", {})}
    cwd = artifact / launcher.get("cwd", ".")
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=launcher["resources"]["timeout_s"], check=False)
    assert proc.returncode == 0, f"launcher failed:\n{proc.stdout}\n{proc.stderr}"
    assert f"seed={seed}" in proc.stdout
    output = next(o for o in launcher["outputs"] if o["id"] == claim["extract"]["output"])
    assert output["format"] == "json"
    metrics = json.loads((artifact / substitute(output["path"], values)).read_text(encoding="utf-8"))
    obtained = float(json_pointer(metrics, claim["extract"]["json_pointer"])) * claim["extract"].get("scale", 1.0)
    (recorded,) = [o["value"] for o in claim["reference"]["observations"] if o["seed"] == seed]
    return obtained, float(recorded)


def test_digits_launcher_reproduces_recorded_observation_seed_0(tmp_path: Path) -> None:
    obtained, recorded = run_digits_seed(tmp_path, 0)
    assert obtained == pytest.approx(recorded, abs=1e-9, rel=0)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_digits_launcher_reproduces_recorded_observation_other_seeds(tmp_path: Path, seed: int) -> None:
    obtained, recorded = run_digits_seed(tmp_path, seed)
    assert obtained == pytest.approx(recorded, abs=1e-9, rel=0)


def test_digits_observations_name_the_lock_they_ran_with() -> None:
    manifest = load_manifest(EXAMPLES / "digits-logreg")
    from rra_tools.io.digest import sha256_file

    lock = manifest["environment"]["lock"]
    assert sha256_file(EXAMPLES / "digits-logreg" / lock["path"]) == lock["sha256"]
    for claim in manifest["claims"]:
        seeds = [o["seed"] for o in claim["reference"]["observations"]]
        assert sorted(seeds) == sorted(next(la["seeds"] for la in manifest["launchers"] if la["id"] == claim["launcher"]))
        for observation in claim["reference"]["observations"]:
            assert f"lock sha256:{lock['sha256'][:12]}" in observation["fingerprint"]["software"]


def test_unknown_field_suggests_the_intended_name() -> None:
    _, report = validate_json("examples/broken/unknown-field")
    (diagnostic,) = report["results"][0]["diagnostics"]
    assert diagnostic["pointer"] == "/launchers/0/descripton"
    assert "did you mean 'description'" in (diagnostic.get("hint") or "") + diagnostic["message"]
