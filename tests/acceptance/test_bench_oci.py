"""``rra bench reproduce`` over tasks that name their artifact by an OCI reference, against a real
registry (Distribution 2.8 on loopback): the reference is resolved to a digest, pulled and
verified once into the cache, and the cached tree is what the attempts run; a second benchmark
with the same cache pulls nothing."""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rra_tools.model.bench_results import BenchResults

from ..rra_cli import rra
from ..services.registry import RegistryService
from .test_bench_reproduce import observations, shell_artifact


def test_an_oci_reference_is_pulled_once_per_digest_and_scored(registry: RegistryService, tmp_path: Path) -> None:
    artifact = shell_artifact(tmp_path / "shell")
    ref = f"{registry.host}/bench/shell:v1"
    pushed = rra("push", str(artifact), ref)
    assert pushed.returncode == 0, pushed.stderr
    digest = pushed.stdout.split()[-1]
    assert digest.startswith("sha256:")
    by_digest = f"oci://{registry.host}/bench/shell@{digest}"
    data = {"bench_version": "1.0", "id": "oci", "repeats": 1, "papers": [
        {"id": "shell", "experiments": [{"id": "e1", "tasks": [
            {"id": "by-tag", "artifact": f"oci://{ref}", "claim": "score", "reference": observations(0.5, 0.5, 0.5)},
            {"id": "by-digest", "artifact": by_digest, "claim": "score",
             "reference": observations(0.5, 0.5, 0.5)}]}]}]}
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    cache = tmp_path / "cache"

    first = rra("bench", "reproduce", str(path), "-o", str(tmp_path / "out1"), "--cache", str(cache))
    assert first.returncode == 0, first.stderr
    # Both tasks need the same digest: one pull, then the cached tree.
    assert first.stderr.count("pulled and verified") == 1, first.stderr
    assert f"oci://{ref}: {digest} pulled and verified" in first.stderr
    assert f"{by_digest}: {digest} in the cache" in first.stderr
    tree = cache / "sha256" / digest.split(":", 1)[1]
    assert (tree / "rra.json").is_file()

    second = rra("bench", "reproduce", str(path), "-o", str(tmp_path / "out2"), "--cache", str(cache))
    assert second.returncode == 0, second.stderr
    assert "pulled" not in second.stderr, second.stderr
    assert second.stderr.count(f"{digest} in the cache") == 2

    for out in ("out1", "out2"):
        results = BenchResults.model_validate_json((tmp_path / out / "results.json").read_text(encoding="utf-8"))
        assert [(t.task, t.digest, t.artifact) for t in results.tasks] == [
            ("by-tag", digest, str(tree)), ("by-digest", digest, str(tree))]
        assert [a.state for t in results.tasks for a in t.attempts] == ["success", "success"]
    # The workspaces are copies: the cached tree keeps no run.
    assert not (tree / "runs").exists() and not (tree / "out").exists()


def test_two_benchmarks_sharing_a_cache_pull_a_digest_once(registry: RegistryService, tmp_path: Path) -> None:
    """Two processes start on an empty cache at once: the lock per digest lets one pull and the
    other wait for the verified tree."""
    ref = f"oci://{registry.host}/bench/shared:v1"
    assert rra("push", str(shell_artifact(tmp_path / "shell")), ref[len("oci://"):], "-q").returncode == 0
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"bench_version": "1.0", "id": "oci", "repeats": 1, "papers": [
        {"id": "p", "experiments": [{"id": "e", "tasks": [
            {"id": "t", "artifact": ref, "claim": "score", "reference": observations(0.5, 0.5, 0.5)}]}]}]}),
        encoding="utf-8")
    cache = tmp_path / "cache"

    def run(n: int) -> subprocess.CompletedProcess[str]:
        return rra("bench", "reproduce", str(path), "-o", str(tmp_path / f"out{n}"), "--cache", str(cache))

    with ThreadPoolExecutor(2) as pool:
        procs = list(pool.map(run, (1, 2)))
    assert [p.returncode for p in procs] == [0, 0], [p.stderr for p in procs]
    assert sum(p.stderr.count("pulled and verified") for p in procs) == 1, [p.stderr for p in procs]
    assert sum(p.stderr.count("in the cache") for p in procs) == 1
    assert [p.name for p in (cache / "sha256").iterdir() if p.is_dir()] and not list(cache.rglob(".*.pull-*"))


def test_a_reference_without_the_artifact_is_a_clear_error(registry: RegistryService, tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    ref = f"oci://{registry.host}/bench/absent:v1"
    path.write_text(json.dumps({"bench_version": "1.0", "id": "oci", "papers": [{"id": "p", "experiments": [
        {"id": "e", "tasks": [{"id": "t", "artifact": ref, "claim": "score",
                               "reference": observations(0.5, 0.5, 0.5)}]}]}]}), encoding="utf-8")
    proc = rra("bench", "reproduce", str(path), "-o", str(tmp_path / "out"))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"error: task p/e/t: artifact {ref!r}: "), proc.stderr
    assert "Traceback" not in proc.stderr
    # Nothing half-pulled is left in the default cache.
    assert not list((tmp_path / "out" / "artifacts").glob("sha256/*/"))


def test_packets_of_an_oci_artifact_keep_the_pull_out_of_the_packets(registry: RegistryService,
                                                                      tmp_path: Path) -> None:
    """The pulled tree holds the manifest's reference observations: 'rra bench packet' caches it
    beside the benchmark (bench-<id>/artifacts), never in the directory handed to people."""
    artifact = shell_artifact(tmp_path / "shell")
    ref = f"{registry.host}/bench/packet:v1"
    pushed = rra("push", str(artifact), ref)
    assert pushed.returncode == 0, pushed.stderr
    digest = pushed.stdout.split()[-1]
    data = {"bench_version": "1.0", "id": "oci-packets", "repeats": 1, "papers": [
        {"id": "shell", "experiments": [{"id": "e1", "tasks": [
            {"id": "t", "artifact": f"oci://{ref}", "claim": "score", "reference": observations(0.5, 0.5, 0.5)}]}]}]}
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    done = rra("bench", "packet", str(path), "--person", "ann", "--seed", "1", "--condition", "refined",
               "-o", str(tmp_path / "study"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"oci://{ref}: {digest} pulled and verified" in done.stderr
    assert (tmp_path / "bench-oci-packets" / "artifacts" / "sha256" / digest.split(":", 1)[1] / "rra.json").is_file()
    assert sorted(p.name for p in (tmp_path / "study").iterdir()) == ["packet-set.json", "packets", "state"]
    packet = tmp_path / "study" / "packets" / "ann" / "shell" / "e1" / "t"
    manifest = json.loads((packet / "rra.json").read_text(encoding="utf-8"))
    assert all(o["value"] == manifest["claims"][0]["reported"]["value"]
               for o in manifest["claims"][0]["reference"]["observations"])
