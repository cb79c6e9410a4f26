"""Hostile artifacts and registries against ``rra pull``, through the real CLI and a real registry.

Each test pushes a hand-built artifact (tests/unit/oci_support.py) to Distribution 2.8 started by
the test setup, or puts a loopback fault proxy in front of it, and checks that the pull refuses
or tolerates what it meets with one clear line on standard error: never a traceback, never a
file written outside the output, never a byte unpacked beyond the limits.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tarfile
import uuid
from pathlib import Path

import pytest

from rra_tools.oci.compression import make_compressor
from rra_tools.oci.pull import fetch_layout
from rra_tools.oci.registry import Reference, RegistryClient, RetryPolicy

from ..rra_cli import rra, rra_command
from ..services.registry import FaultProxy, RegistryService
from ..unit.oci_support import Layer, Member, build_layout, example_files_layer, manifest_layer, tar_bytes

MIB = 1024 * 1024


def _ref(registry: RegistryService | FaultProxy) -> str:
    return f"{registry.host}/hostile/{uuid.uuid4().hex[:12]}:v1"


def _push(layout: Path, ref: str) -> None:
    pushed = rra("push", str(layout), ref, "--quiet")
    assert pushed.returncode == 0, pushed.stderr


def _refused(result: subprocess.CompletedProcess[str], words: str) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert words in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr  # one line


def _nothing_left(output: Path) -> None:
    assert not output.exists()
    assert [p.name for p in output.parent.iterdir() if p.name.startswith(f".{output.name}.")] == []


def test_a_link_chain_is_refused_and_no_host_file_is_reachable(registry: RegistryService, tmp_path: Path) -> None:
    # 'chain' comes first: when it is met, 'x/y/lnk' does not exist yet and its text looks inside.
    code = tar_bytes([Member("chain", tarfile.SYMTYPE, linkname="x/y/lnk/../../../etc/hostname"),
                      Member("x/y/lnk", tarfile.SYMTYPE, linkname="../..")])
    layout = build_layout(tmp_path / "layout", [manifest_layer(), example_files_layer(), Layer("docs", code)])
    ref = _ref(registry)
    _push(layout, ref)
    output = tmp_path / "out" / "copy"
    pulled = rra("pull", ref, "-o", str(output), "--quiet")
    digest = "sha256:" + hashlib.sha256(code).hexdigest()
    _refused(pulled, f"error: RRA808 layer {digest} entry 'chain' is a symbolic link to "
                     "'x/y/lnk/../../../etc/hostname', which leads outside the destination "
                     "through the symbolic link 'x/y/lnk'")
    _nothing_left(output)
    validated = rra("validate", f"oci://{ref}", "--format", "json")
    assert validated.returncode == 1 and '"RRA808"' in validated.stdout, validated.stdout + validated.stderr


def _zeros_layer(size: int) -> tuple[bytes, str, int]:
    """A zstd layer holding one file of ``size`` zero bytes: (blob, diff_id, tar size), all honest."""
    info = tarfile.TarInfo("zeros.bin")
    info.size = size
    compressor = make_compressor("zstd")
    digest = hashlib.sha256()
    parts: list[bytes] = []
    total = 0

    def feed(data: bytes) -> None:
        nonlocal total
        digest.update(data)
        total += len(data)
        parts.append(compressor.compress(data))

    feed(info.tobuf(tarfile.GNU_FORMAT, "utf-8", "surrogateescape"))
    chunk = bytes(MIB)
    left = size
    while left:
        feed(chunk[:min(left, MIB)])
        left -= min(left, MIB)
    feed(bytes(-size % 512 + 1024))
    parts.append(compressor.flush())
    return b"".join(parts), "sha256:" + digest.hexdigest(), total


def test_what_a_pull_unpacks_is_bounded_before_anything_is_fetched(registry: RegistryService,
                                                                   tmp_path: Path) -> None:
    blob, diff_id, size = _zeros_layer(64 * MIB)
    assert len(blob) < 64 * 1024  # a few kilobytes that honestly expand to 64 MiB
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", blob, "zstd",
                                                                        declared_size=size, declared_diff_id=diff_id)])
    with FaultProxy(registry.host) as proxy:
        ref = _ref(proxy)
        _push(layout, ref)
        proxy.counts.clear()
        output = tmp_path / "small"
        pulled = rra("pull", ref, "-o", str(output), "--max-unpacked-bytes", "10MB", "--quiet")
        _refused(pulled, f"unpacks to {size + len(manifest_layer().blob):,} bytes, more than the limit of "
                         "10,000,000; raise it with --max-unpacked-bytes if you expect this")
        _nothing_left(output)
        assert proxy.counts.get("blob-get") == 1  # the config; no layer was fetched
        # Within the total bound, the layer still expands thousands of times: the ratio refuses it.
        proxy.counts.clear()
        bomb = rra("pull", ref, "-o", str(output), "--quiet")
        _refused(bomb, f"from {len(blob):,} compressed, more than 1000 times its size plus 1,048,576 bytes")
        _nothing_left(output)
        assert proxy.counts.get("blob-get") == 1  # the config; no layer was fetched
        many = rra("pull", ref, "-o", str(output), "--max-entries", "1", "--max-ratio", "0", "--quiet")
        _refused(many, "is past the limit of 1 entries")
        _nothing_left(output)
        roomy = rra("pull", ref, "-o", str(output), "--max-unpacked-bytes", "100MiB", "--max-ratio", "0", "--quiet")
        assert roomy.returncode == 0, roomy.stderr
        assert (output / "zeros.bin").stat().st_size == 64 * MIB


def test_a_pull_refuses_what_the_disk_cannot_hold(tmp_path: Path) -> None:
    raw = tar_bytes([Member("a.py", data=b"x")])
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", raw, declared_size=2 ** 62)])
    output = tmp_path / "out"
    pulled = rra("pull", f"oci-layout:{layout}:v1", "-o", str(output), "--max-unpacked-bytes", "0")
    _refused(pulled, f"bytes (its layers and their unpacked files) but {tmp_path} has ")
    _nothing_left(output)
    default = rra("pull", f"oci-layout:{layout}:v1", "-o", str(output))
    _refused(default, "more than the limit of 68,719,476,736")


def test_an_artifact_of_another_type_is_not_unpacked(registry: RegistryService, tmp_path: Path) -> None:
    layout = build_layout(tmp_path / "layout", [manifest_layer(), example_files_layer()],
                          edit_manifest=lambda m: m.update(artifactType="application/vnd.example.model.v1"))
    with FaultProxy(registry.host) as proxy:
        ref = _ref(proxy)
        _push(layout, ref)
        proxy.counts.clear()
        output = tmp_path / "copy"
        pulled = rra("pull", ref, "-o", str(output), "--quiet")
        _refused(pulled, f"error: RRA806 {ref} is not an RRA artifact: its artifactType is "
                         "'application/vnd.example.model.v1', not 'application/vnd.rra.artifact.v1'; "
                         "'rra pull --layout' fetches any artifact as it is")
        _nothing_left(output)
        assert proxy.counts.get("blob-get") == 1
        fetched = rra("pull", ref, "-o", str(tmp_path / "as-is"), "--layout", "--quiet")
        assert fetched.returncode == 0, fetched.stderr


def test_concurrent_pulls_into_one_directory_one_wins(registry: RegistryService, tmp_path: Path) -> None:
    # Layers big enough that both pulls pass the "output is empty" check before either finishes.
    data = tar_bytes([Member(f"data/part{i}.bin", data=os.urandom(4 * MIB)) for i in range(8)])
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", data)])
    ref = _ref(registry)
    _push(layout, ref)
    output = tmp_path / "shared"
    for round_ in range(2):
        runs = [subprocess.Popen([*rra_command(), "pull", ref, "-o", str(output), "--quiet"], text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)]
        results = [(run.wait(timeout=300), *run.communicate()) for run in runs]
        codes = sorted(code for code, _, _ in results)
        assert codes == [0, 1, 1], results
        for code, _, err in results:
            assert "Traceback" not in err, err
            if code == 1:
                assert err.startswith("error: ") and err.count("\n") == 1, err
                # Which of the three checks a loser meets depends on timing; each is one clear line.
                assert "was filled by someone else while unpacking" in err or "exists and is not empty" in err, err
        assert sorted(p.name for p in (output / "data").iterdir()) == [f"part{i}.bin" for i in range(8)]
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".shared.")] == []
        if round_ == 0:
            import shutil

            shutil.rmtree(output)
            output.mkdir()  # the second round: an empty directory given as the output


@pytest.fixture(scope="module")
def small_ref(registry: RegistryService, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small valid artifact pushed once for the tests that only fetch it."""
    layout = build_layout(tmp_path_factory.mktemp("small") / "layout", [manifest_layer(), example_files_layer()])
    ref = _ref(registry)
    _push(layout, ref)
    return ref


@pytest.mark.parametrize("value", [
    "\u00b2".encode("latin-1"),  # a superscript two: str.isdigit() says yes, float() says no
    "\u0663".encode(),  # an Arabic-Indic three, in UTF-8
    b"9" * 5000,
    b"-1",
    b"1e400",
    b"Wed, 21 Oct 2015 07:28:00 GMT",  # an HTTP-date in the past: no wait
    b"Fri, 31 Dec 9999 23:59:59 GMT",  # far in the future: the wait is capped
    b"soon",
    b"",
], ids=["superscript", "arabic-indic", "5000-digits", "negative", "float-overflow", "date-past", "date-future",
        "text", "empty"])
def test_any_retry_after_is_tolerated(registry: RegistryService, small_ref: str, tmp_path: Path,
                                      value: bytes) -> None:
    faults = {"manifest-get": 1, "blob-get": 1}
    with FaultProxy(registry.host, failures=faults, fault_status=429, fault_headers={"Retry-After": value}) as proxy:
        source = Reference.parse(small_ref.replace(registry.host, proxy.host))
        policy = RetryPolicy(attempts=3, backoff_s=0.01, max_backoff_s=0.2)
        with RegistryClient(source.registry, retry=policy) as client:
            fetch_layout(source, tmp_path / "fetched", client)
            assert client.stats.retries == 2
    assert proxy.injected == 2


def test_the_cli_retries_after_an_unreadable_retry_after(registry: RegistryService, small_ref: str,
                                                         tmp_path: Path) -> None:
    with FaultProxy(registry.host, failures={"manifest-get": 1}, fault_status=429,
                    fault_headers={"Retry-After": "\u00b2".encode("latin-1")}) as proxy:
        pulled = rra("pull", small_ref.replace(registry.host, proxy.host), "-o", str(tmp_path / "copy"))
    assert pulled.returncode == 0, pulled.stderr
    assert "retry 1/5: " in pulled.stderr and "429" in pulled.stderr and "Traceback" not in pulled.stderr


def test_a_blob_cut_off_while_streaming_is_fetched_whole_instead(registry: RegistryService, tmp_path: Path) -> None:
    # rra pull unpacks each layer as it arrives; a connection lost mid-blob cannot be resumed
    # there, so the pull starts over the way --layout works (whole blobs, each retried), then unpacks.
    data = os.urandom(3 * MIB)
    code = tar_bytes([Member("weights.bin", data=data)])
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", code)])
    with FaultProxy(registry.host, cut_blobs=1) as proxy:
        ref = _ref(proxy)
        _push(layout, ref)
        pulled = rra("pull", ref, "-o", str(tmp_path / "copy"))
    assert pulled.returncode == 0, pulled.stderr
    assert proxy.injected == 1
    assert "the connection broke after" in pulled.stderr or "connection ended after" in pulled.stderr, pulled.stderr
    assert "fetching every blob whole, then unpacking" in pulled.stderr and "Traceback" not in pulled.stderr
    assert (tmp_path / "copy" / "weights.bin").read_bytes() == data
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".copy.")] == []
