"""``rra pack`` and ``rra validate oci-layout:`` end to end, in real processes, and the layout read
by other OCI tools: skopeo (inspect, copy) and umoci (ls)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ..rra_cli import rra

REPO = Path(__file__).resolve().parents[2]
DIGITS = REPO / "examples" / "digits-logreg"
GPU = REPO / "examples" / "gpu-resnet-cifar"


def tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed (.ci/run installs it)")
    return found


@pytest.fixture
def digits(tmp_path: Path) -> Path:
    copy = tmp_path / "digits"
    shutil.copytree(DIGITS, copy, ignore=shutil.ignore_patterns("results", "runs", "__pycache__"))
    return copy


def test_pack_prints_digest_and_layer_table(digits: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = rra("pack", str(digits), "-o", str(out), "--ref-name", "v1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"packed into {out}:v1"
    assert lines[1].startswith("manifest sha256:") and lines[1].endswith(" bytes)")
    assert lines[2].split() == ["role", "media", "type", "size", "uncompressed", "ratio", "files"]
    roles = [line.split()[0] for line in lines[3:]]
    assert roles == ["manifest", "code", "environment", "docs"]
    assert all("application/vnd.rra.layer.v1." in line and line.split()[-2].endswith("%") for line in lines[3:])
    index = json.loads((out / "index.json").read_text())
    assert lines[1].split()[1] == index["manifests"][0]["digest"]
    again = rra("pack", str(digits), "-o", str(tmp_path / "again"), "--ref-name", "v1", "--format", "json")
    data = json.loads(again.stdout)
    assert data["manifest"]["digest"] == index["manifests"][0]["digest"]  # deterministic across runs
    assert [layer["role"] for layer in data["layers"]] == roles and data["forced"] is False
    assert all(layer["diff_id"].startswith("sha256:") and layer["uncompressed_size"] > 0 for layer in data["layers"])


def test_invalid_artifact_is_refused_with_findings_unless_forced(digits: Path, tmp_path: Path) -> None:
    text = (digits / "rra.yaml").read_text()
    (digits / "rra.yaml").write_text(text.replace("seeds: [0, 1, 2, 3, 4]", "seeds: [0, 1, 2, 3, 4, 4]")
                                     .replace("sha256: 26efab", "sha256: 00efab"))
    out = tmp_path / "out"
    refused = rra("pack", str(digits), "-o", str(out))
    assert refused.returncode == 1
    assert "error[RRA304]" in refused.stdout and "warning[RRA511]" in refused.stdout
    assert "1 input(s) checked: 0 clean; 2 error(s), 1 warning(s)" in refused.stdout  # RRA304 and RRA601
    assert refused.stderr == ("error: not packed: the artifact has 2 validation error(s); fix them, or pass "
                              "--force to pack anyway\n")
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["digits"]
    forced = rra("pack", str(digits), "-o", str(out), "--ref-name", "v1", "--force")
    assert forced.returncode == 0, forced.stderr
    assert "error[RRA304]" in forced.stdout and "forced: the artifact has validation errors" in forced.stdout
    check = rra("validate", f"oci-layout:{out}:v1")
    assert check.returncode == 1
    assert "warning[RRA812]" in check.stdout and "error[RRA304]" in check.stdout


def test_cannot_pack_is_a_usage_error(digits: Path, tmp_path: Path) -> None:
    os.mkfifo(digits / "pipe")
    proc = rra("pack", str(digits), "-o", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("error: 'pipe' is a FIFO, which cannot be packed; remove it or list it in "
                                   ".rraignore")


def test_validate_good_and_tampered_layouts(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert rra("pack", str(GPU), "-o", str(out), "--ref-name", "v1").returncode == 0
    good = rra("validate", f"oci-layout:{out}:v1")
    assert good.returncode == 0, good.stdout
    manifest = json.loads((out / "blobs" / "sha256" / json.loads((out / "index.json").read_text())
                           ["manifests"][0]["digest"][7:]).read_bytes())
    layer = manifest["layers"][1]["digest"]
    path = out / "blobs" / "sha256" / layer[7:]
    data = bytearray(path.read_bytes())
    data[-20] ^= 0xFF
    path.write_bytes(bytes(data))
    bad = rra("validate", f"oci-layout:{out}:v1")
    assert bad.returncode == 1
    assert f"error[RRA803] layer {layer} has digest sha256:" in bad.stdout


def test_skopeo_and_umoci_read_the_layout(digits: Path, tmp_path: Path) -> None:
    skopeo, umoci = tool("skopeo"), tool("umoci")
    out = tmp_path / "out"
    assert rra("pack", str(digits), "-o", str(out), "--ref-name", "v1").returncode == 0
    raw = subprocess.run([skopeo, "inspect", "--raw", f"oci:{out}:v1"], capture_output=True, text=True, check=True)
    index = json.loads((out / "index.json").read_text())
    digest = index["manifests"][0]["digest"]
    assert raw.stdout.encode() == (out / "blobs" / "sha256" / digest[7:]).read_bytes()
    assert json.loads(raw.stdout)["artifactType"] == "application/vnd.rra.artifact.v1"
    copy = tmp_path / "copy"
    subprocess.run([skopeo, "copy", "--quiet", f"oci:{out}:v1", f"oci:{copy}:v1"], capture_output=True, text=True,
                   check=True)
    copied = {p.name: p.read_bytes() for p in (copy / "blobs" / "sha256").iterdir()}
    original = {p.name: p.read_bytes() for p in (out / "blobs" / "sha256").iterdir()}
    assert copied == original  # every blob, byte for byte: skopeo changed nothing
    assert rra("validate", f"oci-layout:{copy}:v1").returncode == 0
    listed = subprocess.run([umoci, "ls", "--layout", str(out)], capture_output=True, text=True, check=True)
    assert listed.stdout.split() == ["v1"]


def test_pack_then_unpack_a_local_layout_without_a_registry(digits: Path, tmp_path: Path) -> None:
    # The embedded default: pack -> validate -> unpack, all on disk.
    assert rra("pack", str(digits), "-o", str(tmp_path / "layout"), "--ref-name", "v1").returncode == 0
    assert rra("validate", f"oci-layout:{tmp_path / 'layout'}:v1").returncode == 0
    done = rra("pull", f"oci-layout:{tmp_path / 'layout'}:v1", "-o", str(tmp_path / "copy"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"unpacked oci-layout:{tmp_path / 'layout'}:v1 sha256:")
    assert subprocess.run(["diff", "-r", str(digits), str(tmp_path / "copy")]).returncode == 0
    only = rra("pull", f"oci-layout:{tmp_path / 'layout'}", "-o", str(tmp_path / "code"), "--only", "manifest,code")
    assert only.returncode == 0, only.stderr
    assert (tmp_path / "code" / "train.py").is_file() and not (tmp_path / "code" / "README.md").exists()
    # A tampered layer: refused, naming the digest, and nothing left at the output.
    layer = max((tmp_path / "layout" / "blobs" / "sha256").iterdir(), key=lambda p: p.stat().st_size)
    layer.write_bytes(layer.read_bytes()[:-1] + bytes([layer.read_bytes()[-1] ^ 1]))
    bad = rra("pull", f"oci-layout:{tmp_path / 'layout'}:v1", "-o", str(tmp_path / "bad"))
    assert bad.returncode == 1 and f"sha256:{layer.name}" in bad.stderr
    assert not (tmp_path / "bad").exists()
