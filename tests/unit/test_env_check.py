"""rra env check's comparisons: interpreter, packages against the lock, GPUs against the hardware block."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rra_tools.env.artifact import update_lock_block
from rra_tools.io.artifact import load_artifact
from rra_tools.env.check import ENV_RULES, check_environment, check_hardware
from rra_tools.env.live import GPU_INVENTORY_VAR, Gpu, InstalledDist, LiveEnv, LiveEnvError, gpu_inventory, inspect_python
from rra_tools.validate.diagnostics import Severity

REPO = Path(__file__).resolve().parents[2]
DIGITS = REPO / "examples/digits-logreg"
GPU = REPO / "examples/gpu-resnet-cifar"

DIGITS_PINS = {"cloudpickle": "3.1.3", "joblib": "1.6.0", "narwhals": "2.29.0", "numpy": "2.4.6",
               "scikit-learn": "1.9.1", "scipy": "1.17.1", "threadpoolctl": "3.8.0"}
MARKERS = {"python_version": "3.11", "python_full_version": "3.11.7", "sys_platform": "linux",
           "platform_machine": "x86_64", "implementation_name": "cpython", "os_name": "posix",
           "platform_system": "Linux", "platform_release": "", "platform_version": "",
           "platform_python_implementation": "CPython", "implementation_version": "3.11.7"}


def live(dists: dict[str, str], version: str = "3.11.7", implementation: str = "cpython") -> LiveEnv:
    return LiveEnv(executable="/x/bin/python", implementation=implementation, python_version=version,
                   markers={**MARKERS, "python_full_version": version,
                            "python_version": ".".join(version.split(".")[:2])},
                   dists={n: InstalledDist(name=n, version=v) for n, v in dists.items()})


def codes(diagnostics: list[object]) -> list[str]:
    return [d.code for d in diagnostics]  # type: ignore[attr-defined]


def test_matching_environment_has_no_findings() -> None:
    artifact = load_artifact(DIGITS)
    assert check_environment(artifact, live({**DIGITS_PINS, "pip": "24.0"}), None) == []


def test_every_package_mismatch_is_reported() -> None:
    artifact = load_artifact(DIGITS)
    dists = {**DIGITS_PINS, "numpy": "2.4.5", "requests": "2.32.0"}
    del dists["scipy"]
    found = check_environment(artifact, live(dists), None)
    assert [(d.code, d.name, d.severity, d.message, d.line) for d in found] == [
        ("RRA704", "package-version-mismatch", Severity.ERROR, "numpy is '2.4.5', the lock pins '2.4.6'", 10),
        ("RRA703", "package-missing", Severity.ERROR, "scipy '1.17.1' is locked but not installed", 14),
        ("RRA705", "package-extra", Severity.WARNING, "requests '2.32.0' is installed but not in the lock", None),
    ]
    assert all(d.file == "requirements.lock" and d.url.endswith(d.code) for d in found)


def test_interpreter_mismatch() -> None:
    artifact = load_artifact(DIGITS)
    found = check_environment(artifact, live(DIGITS_PINS, version="3.12.1", implementation="pypy"), None)
    assert [(d.code, d.message, d.pointer) for d in found] == [
        ("RRA702", "interpreter is 'pypy', the manifest needs 'cpython'", "/environment/interpreter/name"),
        ("RRA702", "Python is '3.12.1', the manifest needs '3.11'", "/environment/interpreter/version"),
    ]


def test_tampered_lock_is_reported(tmp_path: Path) -> None:
    copy = tmp_path / "digits"
    shutil.copytree(DIGITS, copy)
    lock = copy / "requirements.lock"
    lock.write_text(lock.read_text().replace("numpy==2.4.6", "numpy==2.4.7"))
    found = check_environment(load_artifact(copy), live(DIGITS_PINS), None)
    assert codes(found) == ["RRA701", "RRA704"]
    assert found[0].message.startswith("lock file 'requirements.lock' has sha256 ")


def test_unreadable_and_missing_lock(tmp_path: Path) -> None:
    copy = tmp_path / "digits"
    shutil.copytree(DIGITS, copy)
    (copy / "requirements.lock").write_text("numpy>=2 --hash=sha256:00\n")
    found = check_environment(load_artifact(copy), live(DIGITS_PINS), None)
    assert codes(found) == ["RRA701", "RRA700"]
    assert (found[1].file, found[1].line) == ("requirements.lock", 1)
    (copy / "requirements.lock").unlink()
    assert codes(check_environment(load_artifact(copy), live(DIGITS_PINS), None)) == ["RRA700"]


A100 = {"name": "NVIDIA A100-SXM4-80GB", "driver_version": "550.54.15", "memory_total_mib": 81920,
        "cuda_version": "12.4"}


def gpus(*entries: dict[str, object]) -> list[Gpu]:
    return [Gpu(index=i, name=str(e["name"]), driver_version=str(e["driver_version"]),
                memory_total_mib=float(e["memory_total_mib"]),  # type: ignore[arg-type]
                cuda_version=str(e["cuda_version"])) for i, e in enumerate(entries)]


def test_gpu_requirements_met() -> None:
    artifact = load_artifact(GPU)
    assert list(check_hardware(artifact, gpus(A100, A100, A100, A100))) == []


def test_gpu_mismatches() -> None:
    artifact = load_artifact(GPU)
    found = list(check_hardware(artifact, gpus({**A100, "name": "NVIDIA H200", "driver_version": "470.1",
                                                "cuda_version": "11.4", "memory_total_mib": 143771})))
    assert [(d.code, d.message) for d in found] == [
        ("RRA706", "4 x 'A100-SXM4-80GB' needed, 0 found (present: NVIDIA H200)"),
        ("RRA708", "GPU 0 driver is '470.1', at least '530.30.02' needed"),
        ("RRA709", "the driver supports CUDA '11.4', at least '12.1' needed"),
    ]
    small = list(check_hardware(artifact, gpus(*[{**A100, "memory_total_mib": 40960}] * 4)))
    assert codes(small) == ["RRA707"] * 4
    assert codes(list(check_hardware(artifact, None))) == ["RRA710"]
    # A CPU artifact needs no GPU, so nothing is said about the machine's.
    assert list(check_hardware(load_artifact(DIGITS), None)) == []


def test_gpu_inventory_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(GPU_INVENTORY_VAR, json.dumps([{"index": 3, **A100}]))
    assert gpu_inventory() == [Gpu(3, "NVIDIA A100-SXM4-80GB", "550.54.15", 81920.0, "12.4")]
    monkeypatch.setenv(GPU_INVENTORY_VAR, "[]")
    assert gpu_inventory() == []
    monkeypatch.setenv(GPU_INVENTORY_VAR, "{")
    with pytest.raises(LiveEnvError, match="RRA_GPU_INVENTORY is not JSON"):
        gpu_inventory()
    monkeypatch.setenv(GPU_INVENTORY_VAR, '[{"index": 0}]')
    with pytest.raises(LiveEnvError, match=r"RRA_GPU_INVENTORY\[0\] needs at least a string 'name'"):
        gpu_inventory()


def test_inspect_this_interpreter() -> None:
    import sys
    from importlib.metadata import version

    env = inspect_python(sys.executable)
    assert env.python_version == ".".join(map(str, sys.version_info[:3]))
    assert env.dists["pydantic"].version == version("pydantic")
    assert env.markers["python_version"] == f"{sys.version_info[0]}.{sys.version_info[1]}"
    with pytest.raises(LiveEnvError, match="cannot run the interpreter"):
        inspect_python("/nonexistent/python")


def test_rule_table_is_in_the_environment_range() -> None:
    assert all(code.startswith("RRA7") and len(code) == 6 for code in ENV_RULES)
    assert len({r.name for r in ENV_RULES.values()}) == len(ENV_RULES)


def test_update_lock_block_keeps_the_rest(tmp_path: Path) -> None:
    copy = tmp_path / "digits"
    shutil.copytree(DIGITS, copy)
    before = (copy / "rra.yaml").read_text()
    update_lock_block(copy / "rra.yaml", "pylock.toml", "pylock", "a" * 64)
    after = (copy / "rra.yaml").read_text()
    expected = (before.replace("path: requirements.lock", "path: pylock.toml")
                .replace("format: requirements-hashes", "format: pylock")
                .replace("26efabac5206e037224da8762faa84ef435c9f85bdf32812490ae7ad57f800e4", "a" * 64, 1))
    assert after == expected
    assert load_artifact(copy).manifest.environment.lock is not None


FAKE_SMI = """#!/bin/sh
if [ "$1" = "--query-gpu=index,name,driver_version,memory.total" ]; then
  echo "0, NVIDIA H200, 570.86.15, 143771"
  echo "1, NVIDIA H200, 570.86.15, 143771"
else
  echo "| NVIDIA-SMI 570.86.15    Driver Version: 570.86.15    CUDA Version: 12.8     |"
fi
"""


def test_gpu_inventory_from_nvidia_smi(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    smi = tmp_path / "nvidia-smi"
    smi.write_text(FAKE_SMI)
    smi.chmod(0o755)
    monkeypatch.delenv(GPU_INVENTORY_VAR, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert gpu_inventory() == [Gpu(0, "NVIDIA H200", "570.86.15", 143771.0, "12.8"),
                               Gpu(1, "NVIDIA H200", "570.86.15", 143771.0, "12.8")]
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert gpu_inventory() is None


def test_update_lock_block_touches_only_the_values(tmp_path: Path) -> None:
    manifest = tmp_path / "rra.yaml"
    text = ('environment:\n  interpreter: {version: "3.11"}\n  lock:\n    path: "old.lock"   # quoted\n'
            "    format: requirements-hashes\n    sha256: '" + "0" * 64 + "'\n"
            "launchers:\n- id: x\n  argv: [a,   b]\n")
    manifest.write_text(text)
    update_lock_block(manifest, "pylock.toml", "pylock", "b" * 64)
    assert manifest.read_text() == text.replace('"old.lock"', '"pylock.toml"').replace(
        "requirements-hashes", "pylock").replace("0" * 64, "b" * 64)


def test_update_lock_block_adds_a_missing_block(tmp_path: Path) -> None:
    manifest = tmp_path / "rra.yaml"
    manifest.write_text("# keep me\nenvironment:\n  interpreter:\n    version: '3.11'  # and me\n")
    update_lock_block(manifest, "pylock.toml", "pylock", "c" * 64)
    assert manifest.read_text() == ("# keep me\nenvironment:\n  interpreter:\n    version: '3.11'  # and me\n"
                                    "  lock:\n    path: pylock.toml\n    format: pylock\n    sha256: " + "c" * 64 + "\n")
