"""Faults between us and a real registry: crashes, 500s, tampered storage, oversized documents, memory.

Everything here runs against Distribution 2.8 started by the test setup; faults are real (the
process is killed, its files are overwritten) or injected by a loopback proxy that forwards to it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rra_tools.oci.pack import pack
from rra_tools.oci.pull import fetch_layout
from rra_tools.oci.push import push_layout
from rra_tools.oci.registry import (
    IntegrityError,
    Progress,
    Reference,
    RegistryClient,
    RegistryError,
    RetryPolicy,
    TooLargeError,
)

from ..rra_cli import rra
from ..services.registry import FaultProxy, RegistryService

REPO = Path(__file__).resolve().parents[2]
DIGITS = REPO / "examples" / "digits-logreg"
EPOCH = {"SOURCE_DATE_EPOCH": "1700000000"}
FAST = RetryPolicy(attempts=3, backoff_s=0.05, max_backoff_s=0.2)
MIB = 1024 * 1024


def repo_name() -> str:
    return f"f/{uuid.uuid4().hex[:12]}"


def random_file(path: Path, size: int) -> str:
    """Write ``size`` random bytes to ``path`` in 1 MiB pieces; return 'sha256:<hex>'."""
    digest = hashlib.sha256()
    with open(path, "wb") as out:
        left = size
        while left:
            chunk = os.urandom(min(MIB, left))
            digest.update(chunk)
            out.write(chunk)
            left -= len(chunk)
    return "sha256:" + digest.hexdigest()


def write_layout(root: Path, layer_sizes: list[int], *, config: bytes | None = None, tag: str = "v1") -> dict[str, Any]:
    """A plain OCI image layout (not an RRA) with random layers; returns its manifest descriptor."""
    blobs = root / "blobs" / "sha256"
    blobs.mkdir(parents=True)

    def put(data: bytes) -> dict[str, Any]:
        digest = hashlib.sha256(data).hexdigest()
        (blobs / digest).write_bytes(data)
        return {"digest": "sha256:" + digest, "size": len(data)}

    layers = []
    for size in layer_sizes:
        scratch = blobs / ".scratch"
        digest = random_file(scratch, size)
        scratch.rename(blobs / digest[7:])
        layers.append({"mediaType": "application/vnd.test.layer.v1.tar", "digest": digest, "size": size})
    config_descriptor = {"mediaType": "application/vnd.test.config.v1+json",
                         **put(config if config is not None else json.dumps({"id": uuid.uuid4().hex}).encode())}
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "artifactType": "application/vnd.test.artifact.v1", "config": config_descriptor, "layers": layers}
    descriptor = {"mediaType": manifest["mediaType"], **put(json.dumps(manifest).encode()),
                  "annotations": {"org.opencontainers.image.ref.name": tag}}
    (root / "oci-layout").write_text('{"imageLayoutVersion":"1.0.0"}')
    (root / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [descriptor]}))
    return descriptor


def test_a_push_interrupted_by_a_registry_crash_resumes_without_reuploading(tmp_path: Path) -> None:
    service = RegistryService(tmp_path / "registry")
    service.start()
    try:
        layout = tmp_path / "layout"
        write_layout(layout, [48 * MIB, 3 * MIB, 2 * MIB, 1 * MIB])
        manifest = json.loads((layout / "blobs" / "sha256" / json.loads((layout / "index.json").read_text())
                               ["manifests"][0]["digest"][7:]).read_bytes())
        big = manifest["layers"][0]["digest"]
        ref = Reference.parse(f"{service.host}/{repo_name()}:v1")

        def crash_after_big(event: Progress) -> None:
            if event.event == "done" and event.digest == big:
                service.kill()  # the big blob is committed; everything after it meets a dead registry

        # One worker: the largest blob goes first, then the others, deterministically.
        first = RegistryClient(service.host, retry=FAST, progress=crash_after_big, workers=1)
        with pytest.raises(RegistryError, match="failed after 3 attempts: .*connection refused"):
            push_layout(layout, ref, first)
        assert first.stats.uploaded == [big]

        service.start()
        second = RegistryClient(service.host, retry=FAST, workers=1)
        result = push_layout(layout, ref, second)
        assert big in result.skipped and big not in result.uploaded
        assert sorted(result.uploaded) == sorted([manifest["config"]["digest"],
                                                  *(layer["digest"] for layer in manifest["layers"][1:])])
        assert result.bytes_uploaded < 10 * MIB
        fetched = fetch_layout(ref, tmp_path / "fetched", second)
        assert fetched.digest == result.digest
    finally:
        service.stop()


def test_500_answers_are_retried_until_the_registry_answers(registry: RegistryService, tmp_path: Path) -> None:
    layout = tmp_path / "layout"
    write_layout(layout, [2 * MIB, 1 * MIB])
    faults = {"head": 1, "upload-start": 1, "blob-put": 2, "manifest-put": 1, "manifest-get": 1, "blob-get": 2}
    with FaultProxy(registry.host, failures=faults) as proxy:
        ref = f"{proxy.host}/{repo_name()}:v1"
        pushed = rra("push", str(layout), ref)
        assert pushed.returncode == 0, pushed.stderr
        assert "retry 1/5: " in pushed.stderr and "500 UNKNOWN injected fault; retrying in" in pushed.stderr
        pulled = rra("pull", ref, "-o", str(tmp_path / "fetched"), "--layout")
        assert pulled.returncode == 0, pulled.stderr
    assert proxy.injected == sum(faults.values())
    for blob in (layout / "blobs" / "sha256").iterdir():
        assert (tmp_path / "fetched" / "blobs" / "sha256" / blob.name).read_bytes() == blob.read_bytes()


def test_a_registry_that_keeps_failing_is_given_up_on(registry: RegistryService, tmp_path: Path) -> None:
    layout = tmp_path / "layout"
    write_layout(layout, [1 * MIB])
    with FaultProxy(registry.host, failures={"blob-put": 100}) as proxy:
        pushed = rra("push", str(layout), f"{proxy.host}/{repo_name()}:v1", "--retries", "2")
    assert pushed.returncode == 1
    assert pushed.stderr.count("retry 1/2: ") >= 1
    assert "failed after 2 attempts" in pushed.stderr.splitlines()[-1]


@pytest.fixture(scope="module")
def scratch_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryService]:
    """A registry of its own for the tests that overwrite its storage: blobs are shared across
    repositories, so tampering with the session's registry would break other tests."""
    service = RegistryService(tmp_path_factory.mktemp("scratch-registry"))
    service.start()
    try:
        yield service
    finally:
        service.stop()


def pushed_artifact(registry: RegistryService, tmp_path: Path, data_size: int = 0) -> tuple[str, Path, dict[str, Any]]:
    """A fresh artifact (unique content, so no other test shares its blobs), packed and pushed."""
    artifact = tmp_path / "artifact"
    shutil.copytree(DIGITS, artifact, ignore=shutil.ignore_patterns("results", "runs", "__pycache__"))
    marker = uuid.uuid4().hex
    (artifact / "unique.txt").write_text(marker)
    for name in ("rra.yaml", "README.md"):  # the manifest, config and docs layers differ too
        with open(artifact / name, "a", encoding="utf-8") as handle:
            handle.write(f"\n<!-- {marker} -->\n" if name.endswith(".md") else f"\n# {marker}\n")
    if data_size:
        random_file(artifact / "weights.bin", data_size)
    layout = tmp_path / "layout"
    pack(artifact, layout, ref_name="v1", environ=EPOCH)
    ref = f"{registry.host}/{repo_name()}:v1"
    pushed = rra("push", str(layout), ref, "-q")
    assert pushed.returncode == 0, pushed.stderr
    descriptor = json.loads((layout / "index.json").read_bytes())["manifests"][0]
    manifest = json.loads((layout / "blobs" / "sha256" / descriptor["digest"][7:]).read_bytes())
    return ref, layout, {"descriptor": descriptor, "manifest": manifest}


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


@pytest.mark.parametrize("same_size", [True, False], ids=["same-size", "other-size"])
def test_a_tampered_blob_is_refused_and_nothing_is_written(scratch_registry: RegistryService, tmp_path: Path,
                                                           same_size: bool) -> None:
    ref, _, info = pushed_artifact(scratch_registry, tmp_path)
    layer = max(info["manifest"]["layers"], key=lambda x: x["size"])
    stored = scratch_registry.blob_file(layer["digest"])
    original = stored.read_bytes()
    stored.write_bytes(bytes(b ^ 0x55 for b in original) if same_size else original + b"x")
    target = tmp_path / "pulled" / "out"
    pulled = rra("pull", ref, "-o", str(target))
    assert pulled.returncode == 1
    assert layer["digest"] in pulled.stderr.splitlines()[-1]
    # The unpacking pull hashes each layer as it streams in: the unpacker names the altered blob.
    assert ("; the blob was altered" if same_size else f"its descriptor says {layer['size']}") in pulled.stderr
    assert not target.exists() and leftovers(target.parent) == []


def test_a_tampered_manifest_is_refused(scratch_registry: RegistryService, tmp_path: Path) -> None:
    ref, _, info = pushed_artifact(scratch_registry, tmp_path)
    digest = info["descriptor"]["digest"]
    stored = scratch_registry.blob_file(digest)
    stored.write_bytes(stored.read_bytes().replace(b'"schemaVersion":2', b'"schemaVersion":2 ', 1))
    for source in (ref, f"{ref.rsplit(':', 1)[0]}@{digest}"):
        target = tmp_path / "out"
        pulled = rra("pull", source, "-o", str(target))
        assert pulled.returncode == 1
        assert f"does not match digest {digest}" in pulled.stderr
        assert not target.exists()


def test_a_manifest_over_the_cap_is_refused_before_reading(registry: RegistryService, tmp_path: Path) -> None:
    # Distribution 2.8 itself refuses to store or serve manifests over 4 MiB (our default cap),
    # so the cap is exercised with a smaller one against a real manifest.
    ref, _, info = pushed_artifact(registry, tmp_path)
    size = info["descriptor"]["size"]
    client = RegistryClient(registry.host)
    with pytest.raises(TooLargeError) as caught:
        fetch_layout(Reference.parse(ref), tmp_path / "out", client, max_manifest_bytes=size - 1)
    assert str(caught.value) == f"manifest 'v1' is {size} bytes, more than the cap of {size - 1}"
    assert not (tmp_path / "out").exists() and client.stats.downloads == 0


def test_a_config_over_the_cap_is_refused(registry: RegistryService, tmp_path: Path) -> None:
    from rra_tools.oci.mediatypes import MAX_CONFIG_BYTES

    client = RegistryClient(registry.host)
    name = repo_name()
    big = tmp_path / "config"
    digest = random_file(big, MAX_CONFIG_BYTES + 1)
    client.upload_blob(name, digest, MAX_CONFIG_BYTES + 1, big)
    media_type = "application/vnd.oci.image.manifest.v1+json"
    manifest = {"schemaVersion": 2, "mediaType": media_type,
                "config": {"mediaType": "application/vnd.rra.config.v1+json", "digest": digest,
                           "size": MAX_CONFIG_BYTES + 1}, "layers": []}
    client.put_manifest(name, "v1", json.dumps(manifest).encode(), media_type)
    before = client.stats.downloads
    with pytest.raises(TooLargeError, match=f"blob {digest} is {MAX_CONFIG_BYTES + 1} bytes, more than the cap"):
        fetch_layout(Reference.parse(f"{registry.host}/{name}:v1"), tmp_path / "out", client)
    assert client.stats.downloads == before and not (tmp_path / "out").exists()


def test_a_tampered_config_is_refused_too(scratch_registry: RegistryService, tmp_path: Path) -> None:
    ref, _, info = pushed_artifact(scratch_registry, tmp_path)
    config = info["manifest"]["config"]
    stored = scratch_registry.blob_file(config["digest"])
    stored.write_bytes(stored.read_bytes().replace(b"digits", b"DIGITS", 1))
    with pytest.raises(IntegrityError, match=f"blob {config['digest']} does not match digest"):
        fetch_layout(Reference.parse(ref), tmp_path / "out", RegistryClient(scratch_registry.host))


PEAK = """
import resource, subprocess, sys
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(proc.returncode, peak, proc.stderr.replace(chr(10), ' | '))
"""


def peak_rss_kib(*args: str) -> int:
    """Peak resident memory of ``rra ARGS`` alone: measured by a fresh parent whose only child it is."""
    script = Path(sys.executable).with_name("rra")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "rra_tools"]
    out = subprocess.run([sys.executable, "-c", PEAK, *command, *args], capture_output=True, text=True, check=True,
                         timeout=900).stdout.split(" ", 2)
    assert out[0] == "0", out[2]
    return int(out[1])


@pytest.mark.slow
def test_push_and_pull_of_a_300_mib_blob_stay_under_256_mib(registry: RegistryService, tmp_path: Path) -> None:
    artifact = tmp_path / "artifact"
    shutil.copytree(DIGITS, artifact, ignore=shutil.ignore_patterns("results", "runs", "__pycache__"))
    random_file(artifact / "weights.bin", 320 * MIB)
    layout = tmp_path / "layout"
    pack(artifact, layout, ref_name="v1", environ=EPOCH)
    ref = f"{registry.host}/{repo_name()}:v1"
    push_kib = peak_rss_kib("push", str(layout), ref, "-q")
    out = tmp_path / "out"
    pull_kib = peak_rss_kib("pull", ref, "-o", str(out), "-q")
    assert (out / "weights.bin").stat().st_size == 320 * MIB
    assert push_kib < 256 * 1024, f"rra push peaked at {push_kib // 1024} MiB"
    assert pull_kib < 256 * 1024, f"rra pull peaked at {pull_kib // 1024} MiB"


def test_validate_reports_a_tampered_layer_as_a_finding(scratch_registry: RegistryService, tmp_path: Path) -> None:
    ref, _, info = pushed_artifact(scratch_registry, tmp_path)
    layer = max(info["manifest"]["layers"], key=lambda x: x["size"])
    stored = scratch_registry.blob_file(layer["digest"])
    stored.write_bytes(bytes(b ^ 0x55 for b in stored.read_bytes()))
    checked = rra("validate", f"oci://{ref}", "-f", "json")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    result = json.loads(checked.stdout)["results"][0]
    assert [d["code"] for d in result["diagnostics"]] == ["RRA803"]
    assert layer["digest"] in result["diagnostics"][0]["message"]
