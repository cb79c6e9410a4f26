"""``pack``: byte-identical packs from different checkouts, the deterministic tar format, layer
roles, media types and annotations, incompressible data stored plain, the round trip through
``unpack_layers``, and what a pack refuses (leaving nothing behind)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import random
import re
import shutil
import stat
import tarfile
from pathlib import Path

import pytest

from rra_tools.oci.compression import make_compressor
from rra_tools.oci.errors import ArtifactInvalid, PackError
from rra_tools.io.ignore import IgnoreRules
from rra_tools.oci.layout import read_index, resolve
from rra_tools.oci.verify import verify_layout
from rra_tools.oci.mediatypes import ARTIFACT_TYPE, REQUIRED_ANNOTATIONS
from rra_tools.oci.pack import PackResult, pack
from rra_tools.oci.tarball import Entry, header, write_tar
from rra_tools.oci.unpack import unpack_layers

from .oci_support import blob, copy_example, leftovers, manifest_of

REPO = Path(__file__).resolve().parents[2]
GPU_EXAMPLE = REPO / "examples" / "gpu-resnet-cifar"

_SHIPPED = """
data:
  - id: labels
    license: CC-BY-4.0
    access: public
    shipped: true
    files:
      - {{path: data/labels.csv, sha256: "{labels}"}}
  - id: features
    license: CC-BY-4.0
    access: public
    shipped: true
    files:
      - {{path: data/features.bin, sha256: "{features}"}}
  - id: imagenet
    license: custom
    access: registration
    url: https://example.org/imagenet.tar
    files:
      - {{path: data/imagenet.tar, sha256: "{imagenet}"}}
"""


def _rich_artifact(root: Path) -> Path:
    """digits-logreg plus shipped data (text and random), a fetched data file that is present,
    run records, outputs, nested code, an executable, a symlink, VCS metadata and .rraignore."""
    copy_example(root)
    files = {
        "data/labels.csv": b"id,label\n" + b"".join(b"%d,%d\n" % (i, i % 10) for i in range(2000)),
        "data/features.bin": random.Random(7).randbytes(300_000),
        "data/imagenet.tar": b"licensed elsewhere\n",
        "runs/train-seed0.json": json.dumps({"launcher": "train", "seed": 0, "exit_status": 0,
                                             "status": "completed", "metrics": {}}).encode(),
        "results/seed-0/metrics.json": b'{"test": {"accuracy": 0.97}}\n',
        "src/pkg/deep/module.py": b"VALUE = 1\n" * 50,
        "src/" + "long-name-" * 12 + ".py": b"# a name longer than 100 bytes\n",
        "scripts/run.sh": b"#!/bin/sh\nexec python train.py \"$@\"\n",
        "scratch/tmp.log": b"ignored\n",
        "notes.tmp": b"ignored\n",
        ".git/HEAD": b"ref: refs/heads/main\n",
        ".rraignore": b"# local junk\nscratch/\n*.tmp\n",
    }
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    os.chmod(root / "scripts" / "run.sh", 0o755)
    os.symlink("deep/module.py", root / "src" / "pkg" / "alias.py")
    digests = {name: hashlib.sha256(files[f"data/{file}"]).hexdigest()
               for name, file in (("labels", "labels.csv"), ("features", "features.bin"), ("imagenet", "imagenet.tar"))}
    with open(root / "rra.yaml", "a", encoding="utf-8") as handle:
        handle.write(_SHIPPED.format(**digests))
    return root


def _perturb(root: Path, seed: int) -> None:
    """What a different checkout does: other mtimes, a restrictive umask, another owner."""
    rng = random.Random(seed)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                os.utime(path, (rng.randrange(10**9), rng.randrange(10**9)), follow_symlinks=False)
                continue
            info = path.stat()
            if stat.S_ISDIR(info.st_mode):
                os.chmod(path, 0o700)
            else:
                os.chmod(path, 0o700 if info.st_mode & 0o111 else 0o600)
            os.utime(path, (rng.randrange(10**9), rng.randrange(10**9)))
        if os.geteuid() == 0:
            for name in [".", *dirnames, *filenames]:
                os.chown(Path(dirpath) / name, 1234 + seed, 4321 + seed, follow_symlinks=False)


def _copy_in_reverse(src: Path, dst: Path) -> Path:
    """Copy a tree creating its entries in reverse order, so directory listings differ."""
    entries = sorted(src.rglob("*"), reverse=True)
    dst.mkdir()
    for path in entries:
        target = dst / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():
            os.symlink(os.readlink(path), target)
        elif path.is_dir():
            target.mkdir(exist_ok=True)
        else:
            shutil.copy2(path, target)
    return dst


def _blobs(layout: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((layout / "blobs" / "sha256").iterdir())}


@pytest.fixture()
def rich(tmp_path: Path) -> Path:
    return _rich_artifact(tmp_path / "artifact")


def _pack(artifact: Path, out: Path, **kwargs: object) -> PackResult:
    return pack(artifact, out, ref_name="v1", environ={}, **kwargs)  # type: ignore[arg-type]


def test_two_checkouts_pack_byte_identical(tmp_path: Path) -> None:
    first = _rich_artifact(tmp_path / "one")
    # The second checkout is made in another order (so directory order differs) and perturbed.
    second = _copy_in_reverse(first, tmp_path / "two")
    _perturb(first, 1)
    _perturb(second, 2)
    os.utime(second / "rra.yaml", (5, 5))
    a = _pack(first, tmp_path / "out-one")
    b = _pack(second, tmp_path / "out-two")
    assert a.manifest.digest == b.manifest.digest
    blobs_a, blobs_b = _blobs(tmp_path / "out-one"), _blobs(tmp_path / "out-two")
    assert blobs_a.keys() == blobs_b.keys()
    for name in blobs_a:
        assert blobs_a[name] == blobs_b[name], name
    assert (tmp_path / "out-one" / "index.json").read_bytes() == (tmp_path / "out-two" / "index.json").read_bytes()
    # gzip is deterministic in the same way.
    c = _pack(first, tmp_path / "gz-one", compression="gzip")
    d = _pack(second, tmp_path / "gz-two", compression="gzip")
    assert c.manifest.digest == d.manifest.digest != a.manifest.digest


def test_source_date_epoch_sets_mtimes_and_created(rich: Path, tmp_path: Path) -> None:
    result = pack(rich, tmp_path / "out", environ={"SOURCE_DATE_EPOCH": "1700000000"})
    manifest, _ = manifest_of(tmp_path / "out")
    assert manifest["annotations"]["org.opencontainers.image.created"] == "2023-11-14T22:13:20Z"
    code = next(layer for layer in result.layers if layer.role == "code")
    with tarfile.open(fileobj=io.BytesIO(_tar_of(tmp_path / "out", code.descriptor.digest,
                                                  code.descriptor.mediaType))) as tar:
        assert {m.mtime for m in tar.getmembers()} == {1700000000}
    with pytest.raises(PackError, match="SOURCE_DATE_EPOCH is 'yesterday'"):
        pack(rich, tmp_path / "bad", environ={"SOURCE_DATE_EPOCH": "yesterday"})


def _tar_of(layout: Path, digest: str, media_type: str) -> bytes:
    raw = blob(layout, digest).read_bytes()
    if media_type.endswith("+zstd"):
        import zstandard

        return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)).read()
    if media_type.endswith("+gzip"):
        return gzip.decompress(raw)
    return raw


def test_tar_streams_are_normalised(rich: Path, tmp_path: Path) -> None:
    result = _pack(rich, tmp_path / "out")
    for layer in result.layers:
        data = _tar_of(tmp_path / "out", layer.descriptor.digest, layer.descriptor.mediaType)
        assert hashlib.sha256(data).hexdigest() == layer.diff_id[7:]
        assert len(data) == layer.uncompressed_size and data.endswith(bytes(1024))
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            members = tar.getmembers()
            assert tar.pax_headers == {}
        names = [m.name for m in members]
        assert names == sorted(names, key=lambda n: [p.encode() for p in n.split("/")]), layer.role
        for m in members:
            assert (m.uid, m.gid, m.uname, m.gname, m.mtime, m.pax_headers) == (0, 0, "", "", 0, {}), m.name
            expected = {tarfile.DIRTYPE: 0o755, tarfile.SYMTYPE: 0o777}.get(
                m.type, 0o755 if m.name == "scripts/run.sh" else 0o644)
            assert m.mode == expected, m.name
            assert m.type in (tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE)
    raw_headers = _tar_of(tmp_path / "out", result.layers[1].descriptor.digest, result.layers[1].descriptor.mediaType)
    assert raw_headers[257:265] == b"ustar  \x00"  # GNU magic, never PAX


def test_long_names_and_big_sizes_use_gnu_encodings() -> None:
    long = "d/" + "x" * 150
    head = header(Entry(long, "file", size=3), 0)
    assert len(head) == 3 * 512 and head[156:157] == b"L" and head[512:512 + len(long)] == long.encode()
    big = header(Entry("big.bin", "file", size=9 * 1024 ** 3), 0)
    assert big[124] == 0x80 and int.from_bytes(big[125:136], "big") == 9 * 1024 ** 3
    with tarfile.open(fileobj=io.BytesIO(head + b"abc" + bytes(509) + bytes(1024))) as tar:
        [member] = tar.getmembers()
        assert member.name == long and member.size == 3


def test_gzip_header_carries_no_time_name_or_os() -> None:
    comp = make_compressor("gzip")
    data = comp.compress(b"hello " * 100) + comp.flush()
    assert data[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    assert gzip.decompress(data) == b"hello " * 100


def test_layers_by_role_with_media_types_and_annotations(rich: Path, tmp_path: Path) -> None:
    result = _pack(rich, tmp_path / "out")
    roles = [(layer.role, layer.dataset) for layer in result.layers]
    assert roles == [("manifest", None), ("code", None), ("environment", None), ("docs", None),
                     ("data", "labels"), ("data", "features"), ("records", None)]
    manifest, _ = manifest_of(tmp_path / "out")
    assert manifest["artifactType"] == ARTIFACT_TYPE
    assert manifest["config"]["mediaType"] == "application/vnd.rra.config.v1+json"
    for descriptor, layer in zip(manifest["layers"], result.layers):
        assert descriptor["annotations"]["dev.rra.layer.role"] == layer.role
        assert descriptor["annotations"].get("dev.rra.layer.dataset") == layer.dataset
        assert descriptor["mediaType"].startswith(f"application/vnd.rra.layer.v1.{layer.role}.tar")
    annotations = manifest["annotations"]
    assert set(REQUIRED_ANNOTATIONS) <= set(annotations)
    assert annotations["dev.rra.validation"] == "passed" and annotations["dev.rra.id"] == "digits-logreg"
    assert annotations["org.opencontainers.image.licenses"] == "Apache-2.0"
    assert annotations["org.opencontainers.image.created"] == "1970-01-01T00:00:00Z"
    files = _files_by_role(tmp_path / "out", result)
    assert files["manifest"] == {"rra.yaml"}
    assert files["environment"] == {"requirements.lock"}
    assert files["docs"] == {"README.md", "CITATION.cff"}
    assert files["data:labels"] == {"data/labels.csv"} and files["data:features"] == {"data/features.bin"}
    assert files["records"] == {"runs/train-seed0.json", "results/seed-0/metrics.json"}
    assert "train.py" in files["code"] and ".rraignore" in files["code"] and "src/pkg/alias.py" in files["code"]
    everything = set().union(*files.values())
    # Left out: the fetched (unshipped) data file, VCS metadata, what .rraignore names.
    assert not everything & {"data/imagenet.tar", ".git/HEAD", "scratch/tmp.log", "notes.tmp"}
    config = json.loads(blob(tmp_path / "out", manifest["config"]["digest"]).read_bytes())
    assert [row["role"] for row in config["layers"]] == [r for r, _ in roles]
    assert config["manifest_file"] == "rra.yaml" and config["manifest"]["id"] == "digits-logreg"


def _files_by_role(layout: Path, result: PackResult) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for layer in result.layers:
        key = layer.role if layer.dataset is None else f"data:{layer.dataset}"
        with tarfile.open(fileobj=io.BytesIO(_tar_of(layout, layer.descriptor.digest,
                                                      layer.descriptor.mediaType))) as tar:
            out[key] = {m.name for m in tar.getmembers() if not m.isdir()}
    return out


def test_incompressible_data_is_stored_plain(rich: Path, tmp_path: Path) -> None:
    result = _pack(rich, tmp_path / "out")
    by = {layer.dataset or layer.role: layer for layer in result.layers}
    assert by["features"].descriptor.mediaType == "application/vnd.rra.layer.v1.data.tar"
    assert by["features"].diff_id == by["features"].descriptor.digest  # plain: its own uncompressed form
    assert by["labels"].descriptor.mediaType == "application/vnd.rra.layer.v1.data.tar+zstd"
    assert by["labels"].ratio < 0.5 and by["code"].descriptor.mediaType.endswith("+zstd")


def test_pack_unpack_round_trip_gives_the_same_tree(rich: Path, tmp_path: Path) -> None:
    _pack(rich, tmp_path / "out")
    assert verify_layout(tmp_path / "out") == []
    _, manifest = resolve(tmp_path / "out", "v1")
    result = unpack_layers(tmp_path / "out", manifest, tmp_path / "unpacked")
    excluded = {"data/imagenet.tar", ".git", ".git/HEAD", "scratch", "scratch/tmp.log", "notes.tmp"}
    assert _tree(tmp_path / "unpacked") == {k: v for k, v in _tree(rich).items() if k not in excluded}
    assert result.files == len([k for k, v in _tree(rich).items() if v[0] == "file" and k not in excluded])
    only = unpack_layers(tmp_path / "out", manifest, tmp_path / "docs-only", only_roles={"manifest", "docs"})
    assert only.roles == ("manifest", "docs")
    assert set(_tree(tmp_path / "docs-only")) == {"rra.yaml", "README.md", "CITATION.cff"}


def _tree(root: Path) -> dict[str, tuple[str, object, int]]:
    out: dict[str, tuple[str, object, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path), 0)
            elif path.is_dir():
                out[rel] = ("dir", None, 0)
            else:
                mode = stat.S_IMODE(path.stat().st_mode)
                out[rel] = ("file", path.read_bytes(), 0o755 if mode & 0o100 else 0o644)
    return out


def test_round_trip_keeps_modes_exactly(rich: Path, tmp_path: Path) -> None:
    _pack(rich, tmp_path / "out")
    _, manifest = resolve(tmp_path / "out", "v1")
    old = os.umask(0o077)
    try:
        unpack_layers(tmp_path / "out", manifest, tmp_path / "unpacked")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "unpacked" / "scripts" / "run.sh").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "unpacked" / "train.py").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "unpacked" / "src").stat().st_mode) == 0o755


def test_invalid_artifact_is_refused_unless_forced(tmp_path: Path) -> None:
    artifact = copy_example(tmp_path / "artifact")
    (artifact / "requirements.lock").write_text("tampered\n")
    with pytest.raises(ArtifactInvalid) as caught:
        _pack(artifact, tmp_path / "out")
    assert "RRA304" in {d.code for d in caught.value.result.diagnostics}
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []
    forced = _pack(artifact, tmp_path / "out", force=True)
    assert forced.forced
    manifest, _ = manifest_of(tmp_path / "out")
    assert manifest["annotations"]["dev.rra.validation"] == "forced"


@pytest.mark.parametrize("kind", ["fifo", "escaping-link", "absolute-link", "link-chain"])
def test_unpackable_files_are_refused(tmp_path: Path, kind: str) -> None:
    artifact = copy_example(tmp_path / "artifact")
    if kind == "fifo":
        os.mkfifo(artifact / "pipe")
        message = "'pipe' is a FIFO"
    elif kind == "escaping-link":
        os.symlink("../../etc/passwd", artifact / "passwd")
        message = "symbolic link 'passwd' points outside the artifact"
    elif kind == "absolute-link":
        os.symlink("/etc/passwd", artifact / "passwd")
        message = "symbolic link 'passwd' points outside the artifact"
    else:
        # Each target stays inside by its text; through 'x/y/lnk' (the root), 'passwd' leaves it.
        (artifact / "x" / "y").mkdir(parents=True)
        os.symlink("../..", artifact / "x" / "y" / "lnk")
        os.symlink("x/y/lnk/../../../etc/passwd", artifact / "passwd")
        message = ("symbolic link 'passwd' ('x/y/lnk/../../../etc/passwd') leads outside the artifact through "
                   "the symbolic link 'x/y/lnk'; an unpacked copy could not follow it")
    with pytest.raises(PackError, match=re.escape(message) if kind == "link-chain" else message):
        _pack(artifact, tmp_path / "out")
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []
    (artifact / ".rraignore").write_text("pipe\npasswd\n")
    _pack(artifact, tmp_path / "out")  # excluded, so packable


def test_interrupted_pack_leaves_nothing(rich: Path, tmp_path: Path) -> None:
    def interrupt(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _pack(rich, tmp_path / "out", progress=interrupt)
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def test_progress_reports_every_content_byte(rich: Path, tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    _pack(rich, tmp_path / "out", progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1] and all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))


def test_adding_to_an_existing_layout_and_replacing_a_ref(tmp_path: Path) -> None:
    first = copy_example(tmp_path / "digits")
    out = tmp_path / "out"
    one = pack(first, out, ref_name="digits")
    two = pack(GPU_EXAMPLE, out, ref_name="gpu")
    names = {(d.annotations or {}).get("org.opencontainers.image.ref.name"): d.digest
             for d in read_index(out).manifests}
    assert names == {"digits": one.manifest.digest, "gpu": two.manifest.digest}
    assert verify_layout(out) == []
    (first / "train.py").write_text("print('changed')\n")
    three = pack(first, out, ref_name="digits")
    names = {(d.annotations or {}).get("org.opencontainers.image.ref.name"): d.digest
             for d in read_index(out).manifests}
    assert names == {"digits": three.manifest.digest, "gpu": two.manifest.digest}
    assert leftovers(tmp_path) == []


def test_output_that_is_not_a_layout_is_refused(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file.txt").write_text("mine\n")
    with pytest.raises(PackError, match="exists and is not an OCI image layout"):
        pack(copy_example(tmp_path / "artifact"), tmp_path / "busy")
    with pytest.raises(PackError, match="does not follow the OCI grammar"):
        pack(tmp_path / "artifact", tmp_path / "out", ref_name="bad name")


def test_output_inside_the_artifact_is_not_packed(tmp_path: Path) -> None:
    artifact = copy_example(tmp_path / "artifact")
    result = pack(artifact, artifact / "dist", ref_name="v1", environ={})
    assert all(not name.startswith("dist") for names in _files_by_role(artifact / "dist", result).values()
               for name in names)
    assert result.manifest.digest == pack(copy_example(tmp_path / "again"), tmp_path / "o2", ref_name="v1",
                                          environ={}).manifest.digest


@pytest.mark.parametrize(("pattern", "path", "is_dir", "ignored"), [
    ("*.log", "a/b/run.log", False, True),
    ("/build", "build", True, True),
    ("/build", "src/build", True, False),
    ("data/*.bin", "data/x.bin", False, True),
    ("data/*.bin", "data/sub/x.bin", False, False),
    ("data/**/*.bin", "data/sub/deep/x.bin", False, True),
    ("cache/", "cache", False, False),
    ("cache/", "cache", True, True),
    ("*.log\n!keep.log", "keep.log", False, False),
    ("file[0-9].txt", "file7.txt", False, True),
    ("# comment\n\n", "comment", False, False),
])
def test_ignore_patterns_follow_gitignore(pattern: str, path: str, is_dir: bool, ignored: bool) -> None:
    assert IgnoreRules.parse(pattern).ignored(path, is_dir) is ignored


def test_write_tar_refuses_a_file_that_changed(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"12345")
    with pytest.raises(PackError, match="shrank"):
        write_tar([Entry("f", "file", size=10, source=path)], 0, lambda view: None)
    with pytest.raises(PackError, match="grew"):
        write_tar([Entry("f", "file", size=2, source=path)], 0, lambda view: None)
