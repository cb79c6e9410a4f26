"""rra lock, rra env check, rra env create and rra sbom end to end, with real installs from the index.

These tests resolve and download tiny pure-Python packages (six, idna) from the package index
through uv; they need the index to be reachable (as .ci/run does).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rra_tools.env.artifact import update_lock_block
from rra_tools.env.create import MARKER
from rra_tools.env.locks import read_lock
from rra_tools.io.digest import sha256_file

from ..rra_cli import rra

REPO = Path(__file__).resolve().parents[2]
DIGITS = REPO / "examples/digits-logreg"
GPU = REPO / "examples/gpu-resnet-cifar"
SIX_WHEEL = "4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274"


def uv() -> str:
    from rra_tools.env.resolve import find_uv

    return find_uv()


@pytest.fixture
def digits(tmp_path: Path) -> Path:
    copy = tmp_path / "digits"
    shutil.copytree(DIGITS, copy, ignore=shutil.ignore_patterns("results", "__pycache__"))
    return copy


@pytest.fixture
def cache(tmp_path: Path) -> dict[str, str]:
    return {"RRA_CACHE_DIR": str(tmp_path / "cache")}


def small_venv(where: Path, *requirements: str) -> Path:
    subprocess.run([uv(), "venv", "--quiet", "--python", sys.executable, str(where)], check=True)
    python = where / "bin" / "python"
    subprocess.run([uv(), "pip", "install", "--quiet", "--python", str(python), *requirements], check=True)
    return python


def requirements_lock(artifact: Path, body: str) -> None:
    (artifact / "requirements.lock").write_text(body)
    update_lock_block(artifact / "rra.yaml", "requirements.lock", "requirements-hashes",
                      sha256_file(artifact / "requirements.lock"))


def test_lock_from_declared_requirements(digits: Path) -> None:
    (digits / "requirements.txt").write_text("six==1.17.0\n")
    done = rra("lock", str(digits))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("wrote pylock.toml: 1 packages, sha256 ")
    lock = read_lock(digits / "pylock.toml")
    (six,) = lock.packages
    assert (six.name, six.version) == ("six", "1.17.0")
    assert ("sha256", SIX_WHEEL) in six.hashes
    text = (digits / "rra.yaml").read_text()
    assert f"sha256: {sha256_file(digits / 'pylock.toml')}" in text
    assert "    path: pylock.toml\n    format: pylock\n" in text
    assert "# No data section" in text  # comments kept
    assert rra("validate", str(digits)).returncode == 0


def test_lock_from_pyproject_and_environment_yml(digits: Path) -> None:
    (digits / "requirements.txt").unlink()  # the example's own; this test declares in the other two
    (digits / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\ndependencies = ["six==1.17.0"]\n')
    (digits / "environment.yml").write_text("dependencies:\n  - python=3.11\n  - pip:\n      - idna==3.10\n")
    done = rra("lock", str(digits))
    assert done.returncode == 0, done.stderr
    assert "resolved from: pyproject.toml, environment.yml (pip section)" in done.stdout
    lock = read_lock(digits / "pylock.toml")
    assert sorted((p.name, p.version) for p in lock.packages) == [("idna", "3.10"), ("six", "1.17.0")]


def test_lock_output_must_stay_inside_the_artifact(digits: Path) -> None:
    (digits / "requirements.txt").write_text("six==1.17.0\n")
    done = rra("lock", str(digits), "-o", "../outside.toml")
    assert done.returncode == 2
    assert done.stderr == "error: path '../outside.toml' leads out of the artifact (parent)\n"
    assert not (digits.parent / "outside.toml").exists()


def test_lock_without_the_index_fails_clearly(digits: Path, tmp_path: Path) -> None:
    (digits / "requirements.txt").write_text("idna\n")
    before = (digits / "rra.yaml").read_bytes()
    done = rra("lock", str(digits), env={"UV_OFFLINE": "1", "UV_CACHE_DIR": str(tmp_path / "empty-uv-cache")})
    assert done.returncode == 1
    assert "needs the package index, which could not be reached" in done.stderr
    assert (digits / "rra.yaml").read_bytes() == before
    assert not (digits / "pylock.toml").exists()


def test_lock_from_env_then_check_and_create(digits: Path, tmp_path: Path, cache: dict[str, str]) -> None:
    python = small_venv(tmp_path / "venv", "six==1.17.0", "idna==3.10")
    done = rra("lock", str(digits), "--from-env", "--python", str(python))
    assert done.returncode == 0, done.stderr
    lock = read_lock(digits / "pylock.toml")
    assert sorted((p.name, p.version) for p in lock.packages) == [("idna", "3.10"), ("six", "1.17.0")]
    assert all(p.hashes for p in lock.packages)

    checked = rra("env", "check", str(digits), "--python", str(python), "-f", "json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert json.loads(checked.stdout)["diagnostics"] == []

    subprocess.run([uv(), "pip", "install", "--quiet", "--python", str(python), "idna==3.9", "certifi"], check=True)
    checked = rra("env", "check", str(digits), "--python", str(python), "-f", "json")
    assert checked.returncode == 1
    found = [(d["code"], d["message"]) for d in json.loads(checked.stdout)["diagnostics"]]
    assert ("RRA704", "idna is '3.9', the lock pins '3.10'") in found
    assert any(code == "RRA705" and message.startswith("certifi ") for code, message in found)

    created = rra("env", "create", str(digits), env=cache)
    assert created.returncode == 0, created.stderr
    new_python = created.stdout.strip()
    assert new_python.startswith(cache["RRA_CACHE_DIR"])
    checked = rra("env", "check", str(digits), "--python", new_python, "-f", "json")
    assert checked.returncode == 0 and json.loads(checked.stdout)["diagnostics"] == [], checked.stdout


def test_lock_from_current_env_checks_clean(digits: Path) -> None:
    done = rra("lock", str(digits), "--from-env")
    assert done.returncode == 0, done.stderr
    checked = rra("env", "check", str(digits), "-f", "json")
    report: dict[str, Any] = json.loads(checked.stdout)
    assert checked.returncode == 0
    assert report["diagnostics"] == [], report


def test_env_create_installs_and_reuses(digits: Path, cache: dict[str, str]) -> None:
    requirements_lock(digits, f"six==1.17.0 \\\n    --hash=sha256:{SIX_WHEEL}\n")
    first = rra("env", "create", str(digits), env=cache)
    assert first.returncode == 0, first.stderr
    assert first.stderr.startswith("built ")
    python = Path(first.stdout.strip())
    digest = sha256_file(digits / "requirements.lock")
    assert python == Path(cache["RRA_CACHE_DIR"]) / "envs" / digest[:16] / "bin" / "python"
    assert (python.parent.parent / MARKER).is_file()
    version = subprocess.run([str(python), "-c", "import six; print(six.__version__, six.__cached__)"],
                             capture_output=True, text=True, check=True, env={"PYTHONDONTWRITEBYTECODE": "1"})
    number, cached = version.stdout.split()
    assert number == "1.17.0"
    # Bytecode was compiled at install: runs (which never write bytecode) do not recompile.
    assert Path(cached).is_file()
    # Warm cache: nothing is resolved, installed or rewritten. A build would first remove the
    # directory (taking the sentinel with it) and write a new marker (a new inode, by the atomic
    # write). How fast the warm path is, is measured by benchmarks/bench_run.py (b), not here.
    marker = python.parent.parent / MARKER
    sentinel = python.parent.parent / "sentinel-of-the-test"
    sentinel.write_text("kept\n")
    before = marker.stat()
    second = rra("env", "create", str(digits), env=cache)
    assert second.returncode == 0 and second.stderr.startswith("reused "), second.stderr
    assert Path(second.stdout.strip()) == python
    after = marker.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns), "the marker was rewritten"
    assert sentinel.read_text() == "kept\n", "the environment was rebuilt"
    sentinel.unlink()

    # An environment built by an older rra (a marker without this env format) is rebuilt once.
    old = json.loads(marker.read_text())
    del old["env_format"]
    marker.write_text(json.dumps(old))
    third = rra("env", "create", str(digits), env=cache)
    assert third.returncode == 0 and third.stderr.startswith("built "), third.stderr
    assert "env_format" in json.loads(marker.read_text())


def test_env_create_refuses_a_hash_the_index_does_not_serve(digits: Path, cache: dict[str, str]) -> None:
    wrong = SIX_WHEEL[:-1] + ("5" if SIX_WHEEL[-1] != "5" else "6")
    requirements_lock(digits, f"six==1.17.0 \\\n    --hash=sha256:{wrong}\n")
    done = rra("env", "create", str(digits), env=cache)
    assert done.returncode == 1
    assert "refused, a downloaded file does not match the lock's hash" in done.stderr
    assert wrong in done.stderr
    envs = Path(cache["RRA_CACHE_DIR"]) / "envs"
    assert not any(p.is_dir() for p in envs.iterdir())  # nothing half-built is left to be reused


def test_env_create_refuses_a_tampered_lock(digits: Path, cache: dict[str, str]) -> None:
    lock = digits / "requirements.lock"
    lock.write_text(lock.read_text().replace("numpy==2.4.6", "numpy==2.4.5"))
    done = rra("env", "create", str(digits), env=cache)
    assert done.returncode == 1
    assert "refusing to build from a lock the manifest does not pin" in done.stderr


def test_env_check_gpu_inventory_override() -> None:
    inventory = json.dumps([{"index": 0, "name": "NVIDIA H200", "driver_version": "570.1",
                             "memory_total_mib": 143771, "cuda_version": "12.8"}])
    done = rra("env", "check", str(GPU), "-f", "json", env={"RRA_GPU_INVENTORY": inventory})
    assert done.returncode == 1
    found = {d["code"] for d in json.loads(done.stdout)["diagnostics"]}
    assert "RRA706" in found and "RRA708" not in found and "RRA709" not in found
    text = rra("env", "check", str(GPU), "--no-gpu", env={"RRA_GPU_INVENTORY": inventory})
    assert "RRA706" not in text.stdout
    bad = rra("env", "check", str(GPU), env={"RRA_GPU_INVENTORY": "nope"})
    assert bad.returncode == 2 and bad.stderr.startswith("error: RRA_GPU_INVENTORY is not JSON")


@pytest.mark.parametrize("example", [DIGITS, GPU], ids=lambda p: p.name)
def test_sbom_cli_is_byte_identical_and_valid(example: Path, tmp_path: Path) -> None:
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    first, second = tmp_path / "a.cdx.json", tmp_path / "b.cdx.json"
    assert rra("sbom", str(example), "-o", str(first)).returncode == 0
    assert rra("sbom", str(example), "-o", str(second)).returncode == 0
    assert first.read_bytes() == second.read_bytes()
    assert rra("sbom", str(example)).stdout == first.read_text()
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(first.read_text()) is None


def test_missing_artifact_is_a_usage_error(tmp_path: Path) -> None:
    done = rra("env", "check", str(tmp_path / "nope"))
    assert done.returncode == 2
    assert done.stderr == (f"error: cannot open {str(tmp_path / 'nope')!r}: No such file or directory\n"
                           "hint: check the path\n")


def test_universal_lock_markers_are_honoured(digits: Path, cache: dict[str, str]) -> None:
    (digits / "requirements.txt").write_text("click==8.1.8\n")
    assert rra("lock", str(digits)).returncode == 0
    colorama = read_lock(digits / "pylock.toml").by_name()["colorama"][0]
    assert colorama.marker == "sys_platform == 'win32'"
    created = rra("env", "create", str(digits), env=cache)
    assert created.returncode == 0, created.stderr
    checked = rra("env", "check", str(digits), "--python", created.stdout.strip(), "-f", "json")
    # colorama is for Windows only: neither installed nor reported missing here.
    assert checked.returncode == 0 and json.loads(checked.stdout)["diagnostics"] == [], checked.stdout



def test_run_inside_the_locked_environment(tmp_path: Path, cache: dict[str, str]) -> None:
    import hashlib

    root = tmp_path / "art"
    root.mkdir()
    lock = f"six==1.17.0 \\\n    --hash=sha256:{SIX_WHEEL}\n"
    (root / "requirements.lock").write_text(lock)
    (root / "job.py").write_text(
        "import json, os, sys, six\n"
        "os.makedirs('out', exist_ok=True)\n"
        "json.dump({'prefix': sys.prefix, 'six': six.__version__}, open('out/env.json', 'w'))\n")
    manifest = {
        "rra_version": "1.0", "id": "locked-run", "title": "Run in the locked environment",
        "paper": {"title": "T", "authors": [{"name": "T"}]},
        "code": {"license": "MIT", "tree": {"path": "."}},
        "environment": {"interpreter": {"version": "3.11"},
                        "lock": {"path": "requirements.lock", "format": "requirements-hashes",
                                 "sha256": hashlib.sha256(lock.encode()).hexdigest()}},
        "launchers": [{"id": "job", "argv": ["python", "job.py"], "stochastic": False,
                       "resources": {"timeout_s": 60, "expected_runtime_s": 1},
                       "outputs": [{"id": "env", "path": "out/env.json", "format": "json"}]}],
    }
    (root / "rra.yaml").write_text(json.dumps(manifest, indent=1))
    done = rra("run", str(root), "job", "--env", "locked", env=cache)
    assert done.returncode == 0, done.stderr
    assert "environment: " in done.stderr and "(built, 1 package(s))" in done.stderr
    (record_path,) = root.glob("runs/job/*/record.json")
    record = json.loads(record_path.read_text())
    env_dir = Path(cache["RRA_CACHE_DIR"]) / "envs" / hashlib.sha256(lock.encode()).hexdigest()[:16]
    written = json.loads((root / "out/env.json").read_text())
    assert (written["prefix"], written["six"]) == (str(env_dir), "1.17.0")
    assert record["environment"]["VIRTUAL_ENV"] == str(env_dir)
    assert record["host"]["environment"] == "locked"
    assert record["host"]["packages"] == 1
    assert record["host"]["lock"] == {"path": "requirements.lock", "sha256": manifest["environment"]["lock"]["sha256"],
                                      "matches": True, "missing": [], "extra": 0}
    again = rra("run", str(root), "job", "--env", "locked", env=cache)
    assert again.returncode == 0 and "(reused, 1 package(s))" in again.stderr
