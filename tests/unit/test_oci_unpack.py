"""Safe unpacking: every hostile layer is refused with a typed error naming the blob and the entry,
and nothing is left behind — not at the destination, not next to it."""

from __future__ import annotations

import hashlib
import os
import stat
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest

from rra_tools.oci.compression import make_compressor
from rra_tools.oci.errors import (
    DigestMismatch,
    DocumentTooLarge,
    LayerRoleError,
    MediaTypeError,
    OCIError,
    SizeMismatch,
    UncompressedMismatch,
    UnpackError,
    UnsafeLayer,
)
from rra_tools.oci.layout import Descriptor, layout_opener, resolve
from rra_tools.oci.mediatypes import MAX_MANIFEST_BYTES
from rra_tools.oci.unpack import UnpackLimits, unpack_layers

from .oci_support import (
    MANIFEST_TEXT,
    Layer,
    Member,
    blob,
    build_layout,
    compress,
    leftovers,
    manifest_layer,
    tar_bytes,
)

HOSTILE: dict[str, tuple[list[Member], str, str]] = {
    # name: (members, entry named in the error, words of the message)
    "path-traversal": ([Member("src/../../evil.py", data=b"x")], "src/../../evil.py", "climbs out"),
    "absolute-path": ([Member("/tmp/evil.py", data=b"x")], "/tmp/evil.py", "absolute path"),
    "drive-letter": ([Member("C:/evil.py", data=b"x")], "C:/evil.py", "absolute path"),
    "drive-letter-alone": ([Member("C:", data=b"x")], "C:", "absolute path"),
    "escaping-symlink": ([Member("etc", tarfile.SYMTYPE, linkname="../../../etc")], "etc", "outside the destination"),
    "symlink-to-parent": ([Member("up", tarfile.SYMTYPE, linkname="..")], "up", "outside the destination"),
    # Each target stays inside by its text; resolved through the other link, 'chain' leaves.
    "symlink-chain": ([Member("x/y/lnk", tarfile.SYMTYPE, linkname="../.."),
                       Member("chain", tarfile.SYMTYPE, linkname="x/y/lnk/../../../etc/hostname")],
                      "chain", "which leads outside the destination through the symbolic link 'x/y/lnk'"),
    # The same with the link that makes it escape written after it.
    "symlink-chain-later": ([Member("chain", tarfile.SYMTYPE, linkname="x/y/lnk/../../../etc/hostname"),
                             Member("x/y/lnk", tarfile.SYMTYPE, linkname="../..")],
                            "chain", "through the symbolic link 'x/y/lnk'"),
    "symlink-loop": ([Member("a", tarfile.SYMTYPE, linkname="b"), Member("b", tarfile.SYMTYPE, linkname="a")],
                     "a", "which loops back to itself"),
    "symlink-too-deep": ([Member(f"l{i}", tarfile.SYMTYPE, linkname=f"l{i - 1}" if i else "ok.py")
                          for i in range(42)], "l40", "more than 40 symbolic links"),
    "absolute-symlink": ([Member("etc", tarfile.SYMTYPE, linkname="/etc")], "etc", "links must be relative"),
    "write-through-symlink": ([Member("d", tarfile.SYMTYPE, linkname="."), Member("d/x.py", data=b"x")],
                              "d/x.py", "lies below 'd', which is a symlink"),
    "hardlink-outside": ([Member("passwd", tarfile.LNKTYPE, linkname="../../etc/passwd")], "passwd", "hard link"),
    "hardlink-absolute": ([Member("passwd", tarfile.LNKTYPE, linkname="/etc/passwd")], "passwd", "hard link"),
    "hardlink-to-nothing": ([Member("h", tarfile.LNKTYPE, linkname="missing.py")], "h", "not a file unpacked"),
    "char-device": ([Member("null", tarfile.CHRTYPE)], "null", "device node"),
    "block-device": ([Member("sda", tarfile.BLKTYPE)], "sda", "device node"),
    "fifo": ([Member("pipe", tarfile.FIFOTYPE)], "pipe", "FIFO"),
    "duplicate-entry": ([Member("a.py", data=b"1"), Member("a.py", data=b"2")], "a.py", "duplicates an earlier entry"),
    "file-then-dir-below": ([Member("a", data=b"1"), Member("a/b.py", data=b"2")], "a/b.py", "which is a file"),
    "backslash": ([Member("..\\evil.py", data=b"x")], "..\\evil.py", "backslash"),
}


def _unpack(layout: Path, dest: Path, **kwargs: Any) -> Any:
    _, manifest = resolve(layout, "v1")
    return unpack_layers(layout, manifest, dest, **kwargs)


def _assert_nothing_left(dest: Path) -> None:
    assert not dest.exists()
    assert leftovers(dest.parent) == []


@pytest.mark.parametrize("case", sorted(HOSTILE))
@pytest.mark.parametrize("compression", ["", "zstd"])
def test_hostile_layer_is_refused_and_nothing_is_left(tmp_path: Path, case: str, compression: str) -> None:
    members, entry, words = HOSTILE[case]
    raw = tar_bytes([Member("ok.py", data=b"fine"), *members])
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", compress(raw, compression),
                                                                         compression, tar=raw)])
    dest = tmp_path / "out" / "artifact"
    with pytest.raises(UnsafeLayer) as caught:
        _unpack(layout, dest)
    layer_digest = "sha256:" + hashlib.sha256(compress(raw, compression)).hexdigest()
    assert caught.value.digest == layer_digest and caught.value.entry == entry
    assert words in str(caught.value) and layer_digest in str(caught.value)
    _assert_nothing_left(dest)


def test_duplicate_across_layers_is_refused_but_shared_directories_are_not(tmp_path: Path) -> None:
    code = tar_bytes([Member("src", tarfile.DIRTYPE, mode=0o755), Member("src/a.py", data=b"1")])
    docs = tar_bytes([Member("src", tarfile.DIRTYPE, mode=0o755), Member("src/README.md", data=b"2")])
    layout = build_layout(tmp_path / "ok", [manifest_layer(), Layer("code", code), Layer("docs", docs)])
    _unpack(layout, tmp_path / "ok-out")
    assert sorted(p.name for p in (tmp_path / "ok-out" / "src").iterdir()) == ["README.md", "a.py"]
    clash = tar_bytes([Member("rra.yaml", data=b"not the manifest")])
    layout = build_layout(tmp_path / "bad", [manifest_layer(), Layer("code", clash)])
    with pytest.raises(UnsafeLayer, match="'rra.yaml' duplicates an earlier entry"):
        _unpack(layout, tmp_path / "bad-out")
    _assert_nothing_left(tmp_path / "bad-out")


def test_in_tree_links_are_unpacked(tmp_path: Path) -> None:
    raw = tar_bytes([Member("lib", tarfile.DIRTYPE), Member("lib/a.py", data=b"A"),
                     Member("alias.py", tarfile.SYMTYPE, linkname="lib/a.py"),
                     Member("lib/up", tarfile.SYMTYPE, linkname=".."),
                     Member("copy.py", tarfile.LNKTYPE, linkname="lib/a.py")])
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", raw)])
    dest = tmp_path / "out"
    _unpack(layout, dest)
    assert (dest / "alias.py").read_bytes() == b"A" and (dest / "alias.py").is_symlink()
    assert (dest / "copy.py").read_bytes() == b"A" and (dest / "copy.py").stat().st_nlink == 2


def test_a_link_chain_across_layers_is_refused_and_half_of_it_is_harmless(tmp_path: Path) -> None:
    code = tar_bytes([Member("x/y/lnk", tarfile.SYMTYPE, linkname="../..")])
    docs = tar_bytes([Member("doc", tarfile.SYMTYPE, linkname="x/y/lnk/../../../etc/hostname")])
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", code), Layer("docs", docs)])
    with pytest.raises(UnsafeLayer) as caught:
        _unpack(layout, tmp_path / "out")
    assert caught.value.entry == "doc" and caught.value.digest == "sha256:" + hashlib.sha256(docs).hexdigest()
    _assert_nothing_left(tmp_path / "out")
    # Without the code layer 'x/y/lnk' is not there: 'doc' dangles inside the destination.
    _unpack(layout, tmp_path / "docs-only", only_roles=["manifest", "docs"])
    assert (tmp_path / "docs-only" / "doc").is_symlink() and not (tmp_path / "docs-only" / "x").exists()


def test_directories_modes_and_counts_whatever_the_umask(tmp_path: Path) -> None:
    raw = tar_bytes([Member("empty", tarfile.DIRTYPE, mode=0o700),
                     Member("deep/er/run.sh", data=b"#!/bin/sh\n", mode=0o4700),  # parents only implied
                     Member("deep/er/notes.txt", data=b"12345", mode=0o600),
                     Member("alias", tarfile.SYMTYPE, linkname="deep/er/notes.txt")])
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", raw)])
    dest = tmp_path / "out"
    old = os.umask(0o077)
    try:
        result = _unpack(layout, dest)
    finally:
        os.umask(old)

    def mode(rel: str) -> int:
        return stat.S_IMODE((dest / rel).stat().st_mode)

    assert mode(".") == 0o755  # the root too, though it was made as a private temporary directory
    assert (dest / "empty").is_dir() and list((dest / "empty").iterdir()) == [] and mode("empty") == 0o755
    assert mode("deep") == mode("deep/er") == 0o755
    assert mode("deep/er/run.sh") == 0o755 and mode("deep/er/notes.txt") == 0o644
    manifest_bytes = len(MANIFEST_TEXT.encode("utf-8"))
    assert result.files == 3 and result.bytes == manifest_bytes + len(b"#!/bin/sh\n") + 5
    assert result.roles == ("manifest", "code")


def test_parents_implied_below_an_existing_directory_are_made(tmp_path: Path) -> None:
    # 'src' exists once 'src/a.py' is in; 'src/pkg' and 'src/pkg/sub' are only implied by the
    # entry after it, and must be made all the same.
    raw = tar_bytes([Member("src/a.py", data=b"a"), Member("src/pkg/sub/b.py", data=b"b")])
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", raw)])
    dest = tmp_path / "out"
    _unpack(layout, dest)
    assert (dest / "src" / "pkg" / "sub" / "b.py").read_bytes() == b"b"
    assert stat.S_IMODE((dest / "src" / "pkg").stat().st_mode) == 0o755


@pytest.mark.parametrize(("packed", "unpacked"), [
    (0o666, 0o644), (0o7666, 0o644), (0o602, 0o644), (0o020, 0o644),  # no execute bit: 0644
    (0o100, 0o755), (0o010, 0o755), (0o001, 0o755), (0o4711, 0o755),  # any execute bit: 0755
])
def test_a_file_gets_0755_for_any_execute_bit_else_0644(tmp_path: Path, packed: int, unpacked: int) -> None:
    # spec/05-packaging.md, deterministic tar streams: "0755 for a file with any execute bit",
    # whatever else the header says (write, setuid, sticky).
    raw = tar_bytes([Member("f", data=b"f", mode=packed)])
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", raw)])
    _unpack(layout, tmp_path / "out")
    assert stat.S_IMODE((tmp_path / "out" / "f").stat().st_mode) == unpacked


def test_modes_while_unpacking(tmp_path: Path) -> None:
    # Until its last byte is in, a file being unpacked carries no permission beyond its owner's
    # (0600), so a half-written file never looks finished; its mode (0644 here) is set once it is
    # whole. A directory, given in the layer or only implied, has its mode (0755, less the umask
    # until the end) from the start. The blob handle looks at the temporary tree between the
    # reads that fill the file.
    data = b"x" * (3 * 1024 * 1024 + 7)  # several reads of the 1 MiB chunk
    raw = tar_bytes([Member("d", tarfile.DIRTYPE, mode=0o700), Member("d/e/big.bin", data=data, mode=0o644)])
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", raw)])
    _, manifest = resolve(layout, "v1")
    inner = layout_opener(layout)
    files: list[tuple[int, int]] = []  # (size, mode) of the file between reads
    dirs: list[tuple[int, int]] = []  # modes of 'd' (in the layer) and 'd/e' (implied)

    class Watching:
        def __init__(self, handle: Any) -> None:
            self.handle = handle

        def __enter__(self) -> Watching:
            return self

        def __exit__(self, *exc: object) -> None:
            self.handle.close()

        def read(self, n: int = -1) -> bytes:
            for partial in tmp_path.glob(".out.rra-unpack-*/d/e/big.bin"):
                info = partial.stat()
                files.append((info.st_size, stat.S_IMODE(info.st_mode)))
                dirs.append((stat.S_IMODE(partial.parent.parent.stat().st_mode),
                             stat.S_IMODE(partial.parent.stat().st_mode)))
            return bytes(self.handle.read(n))

    dest = tmp_path / "out"
    old = os.umask(0o022)
    try:
        unpack_layers(lambda descriptor: Watching(inner(descriptor)), manifest, dest)  # type: ignore[arg-type,return-value]
    finally:
        os.umask(old)
    assert {mode for size, mode in files if size < len(data)} == {0o600}
    assert set(dirs) == {(0o755, 0o755)}
    big = dest / "d" / "e" / "big.bin"
    assert stat.S_IMODE(big.stat().st_mode) == 0o644 and big.read_bytes() == data


@pytest.mark.parametrize("delta", [-1, 1])
def test_blob_size_disagreeing_with_descriptor_is_refused(tmp_path: Path, delta: int) -> None:
    raw = tar_bytes([Member("a.py", data=b"print(1)\n" * 100)])
    layer = Layer("code", raw, descriptor_size=len(raw) + delta)
    layout = build_layout(tmp_path / "layout", [manifest_layer(), layer])
    with pytest.raises(SizeMismatch) as caught:
        _unpack(layout, tmp_path / "out")
    assert caught.value.digest == "sha256:" + hashlib.sha256(raw).hexdigest()
    _assert_nothing_left(tmp_path / "out")


@pytest.mark.parametrize("compression", ["", "zstd", "gzip"])
def test_tampered_blob_is_refused_naming_its_digest(tmp_path: Path, compression: str) -> None:
    raw = tar_bytes([Member("a.py", data=b"print('hello')\n" * 400)])
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", compress(raw, compression),
                                                                         compression, tar=raw)])
    digest = "sha256:" + hashlib.sha256(compress(raw, compression)).hexdigest()
    path = blob(layout, digest)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x20
    path.write_bytes(bytes(data))
    with pytest.raises(DigestMismatch) as caught:
        _unpack(layout, tmp_path / "out")
    assert type(caught.value) is DigestMismatch  # the root cause, even when the stream is corrupt too
    assert caught.value.digest == digest and digest in str(caught.value) and "altered" in str(caught.value)
    _assert_nothing_left(tmp_path / "out")


def test_uncompressed_digest_is_verified(tmp_path: Path) -> None:
    raw = tar_bytes([Member("a.py", data=b"x")])
    wrong = "sha256:" + "0" * 64
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", compress(raw, "zstd"), "zstd",
                                                                         tar=raw, declared_diff_id=wrong)])
    with pytest.raises(UncompressedMismatch, match="but its config declares sha256:0000"):
        _unpack(layout, tmp_path / "out")
    _assert_nothing_left(tmp_path / "out")


@pytest.mark.parametrize("verified", [False, True], ids=["hashed-here", "blobs-verified"])
@pytest.mark.parametrize("compression", ["", "zstd"])
def test_sizes_and_uncompressed_digests_are_checked_even_for_verified_blobs(tmp_path: Path, compression: str,
                                                                            verified: bool) -> None:
    # blobs_verified (pull, which has just checked each blob) skips hashing the blob again, and
    # a plain layer is hashed once at most: neither may skip the checks that remain.
    raw = tar_bytes([Member("a.py", data=b"x" * 3000)])
    blob_bytes = compress(raw, compression)
    wrong = "sha256:" + "0" * 64
    layout = build_layout(tmp_path / "diff", [manifest_layer(), Layer("code", blob_bytes, compression, tar=raw,
                                                                       declared_diff_id=wrong)])
    actual = "sha256:" + hashlib.sha256(raw).hexdigest()
    with pytest.raises(UncompressedMismatch) as caught:
        _unpack(layout, tmp_path / "out", blobs_verified=verified)
    assert str(caught.value).endswith(f"decompresses to {actual} but its config declares {wrong}")
    assert caught.value.actual == actual
    layout = build_layout(tmp_path / "size", [manifest_layer(), Layer("code", blob_bytes, compression, tar=raw,
                                                                       descriptor_size=len(blob_bytes) - 1)])
    with pytest.raises(SizeMismatch, match="is larger than the"):
        _unpack(layout, tmp_path / "out", blobs_verified=verified)
    layout = build_layout(tmp_path / "short", [manifest_layer(), Layer("code", blob_bytes, compression, tar=raw,
                                                                        declared_size=len(raw) - 1)])
    with pytest.raises((UncompressedMismatch, SizeMismatch)):
        _unpack(layout, tmp_path / "out", blobs_verified=verified)
    _assert_nothing_left(tmp_path / "out")
    good = build_layout(tmp_path / "good", [manifest_layer(), Layer("code", blob_bytes, compression, tar=raw)])
    assert _unpack(good, tmp_path / "out", blobs_verified=verified).bytes > 3000


def _bomb(size: int) -> bytes:
    """A zstd tar stream holding one file of ``size`` zero bytes, compressed as it is generated."""
    comp = make_compressor("zstd")
    info = tarfile.TarInfo("zeros.bin")
    info.size = size
    head = info.tobuf(tarfile.GNU_FORMAT)
    parts = [comp.compress(head)]
    zeros = bytes(4 * 1024 * 1024)
    left = size
    while left:
        n = min(left, len(zeros))
        parts.append(comp.compress(zeros[:n]))
        left -= n
    parts.append(comp.compress(bytes(1024)))
    parts.append(comp.flush())
    return b"".join(parts)


def test_decompression_bomb_is_refused_early(tmp_path: Path) -> None:
    bomb = _bomb(1_000_000_000)
    assert len(bomb) < 1_000_000  # a few tens of kilobytes on disk
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("data", bomb, "zstd", tar=b"",
                                                                         dataset="zeros", declared_size=1024)])
    # CPU time of this process, not wall time (which load inflates): the refusal comes after the
    # first window of output (0.002 s); inflating and hashing 0.9 of its 1 GB takes 2.2 s.
    start = time.process_time()
    with pytest.raises(UncompressedMismatch, match="decompresses to more than the 1024 bytes"):
        _unpack(layout, tmp_path / "out")
    spent = time.process_time() - start
    assert spent < 0.5, f"took {spent:.2f} s of CPU: the bomb was inflated before it was refused"
    _assert_nothing_left(tmp_path / "out")


def test_total_size_limit_is_enforced_before_unpacking(tmp_path: Path) -> None:
    raw = tar_bytes([Member("a.py", data=b"x" * 10_000)])
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", raw)])
    with pytest.raises(DocumentTooLarge, match="more than the limit of 1000"):
        _unpack(layout, tmp_path / "out", limits=UnpackLimits(max_total_bytes=1000))
    with pytest.raises(UnsafeLayer, match="past the limit of 1 entries"):
        _unpack(layout, tmp_path / "out", limits=UnpackLimits(max_entries=1))
    _assert_nothing_left(tmp_path / "out")


def test_oversized_manifest_and_config_are_refused_before_reading(tmp_path: Path) -> None:
    layout = build_layout(tmp_path / "layout", [manifest_layer()])
    index = (layout / "index.json").read_text()
    import json

    data = json.loads(index)
    real = data["manifests"][0]["size"]
    data["manifests"][0]["size"] = MAX_MANIFEST_BYTES + 1
    (layout / "index.json").write_text(json.dumps(data))
    with pytest.raises(DocumentTooLarge, match=f"is {MAX_MANIFEST_BYTES + 1} bytes, more than the cap"):
        resolve(layout, "v1")
    data["manifests"][0]["size"] = real
    (layout / "index.json").write_text(json.dumps(data))
    _, manifest = resolve(layout, "v1")
    manifest["config"]["size"] = 40_000_000
    with pytest.raises(DocumentTooLarge, match="config sha256:[0-9a-f]+ is 40000000 bytes, more than the cap"):
        unpack_layers(layout, manifest, tmp_path / "out")
    _assert_nothing_left(tmp_path / "out")


def test_layer_table_and_media_types_are_checked(tmp_path: Path) -> None:
    raw = tar_bytes([Member("a.py", data=b"x")])
    layout = build_layout(tmp_path / "roles", [manifest_layer(), Layer("code", raw)],
                          edit_config=lambda c: c["layers"][1].update(role="docs"))
    with pytest.raises(LayerRoleError, match="role 'code' in its media type but 'docs' in the config"):
        _unpack(layout, tmp_path / "out")
    layout = build_layout(tmp_path / "types", [manifest_layer(), Layer("code", raw)],
                          edit_manifest=lambda m: m["layers"][1].update(mediaType="application/x-tar"))
    with pytest.raises(MediaTypeError, match="'application/x-tar', which is not an RRA layer type"):
        _unpack(layout, tmp_path / "out")
    layout = build_layout(tmp_path / "first", [Layer("code", raw), manifest_layer()])
    with pytest.raises(LayerRoleError, match="the first layer is not the manifest layer"):
        _unpack(layout, tmp_path / "out")
    _assert_nothing_left(tmp_path / "out")


def test_destination_must_be_new_or_empty(tmp_path: Path) -> None:
    layout = build_layout(tmp_path / "layout", [manifest_layer()])
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("mine")
    with pytest.raises(UnpackError, match="exists"):
        _unpack(layout, tmp_path / "full")
    assert (tmp_path / "full" / "x").read_text() == "mine"
    (tmp_path / "empty").mkdir()
    _unpack(layout, tmp_path / "empty")
    assert (tmp_path / "empty" / "rra.yaml").is_file()


def test_multi_frame_zstd_and_multi_member_gzip_are_read(tmp_path: Path) -> None:
    raw = tar_bytes([Member("a.py", data=b"a" * 5000), Member("b.py", data=b"b" * 5000)])
    half = len(raw) // 2
    zstd = compress(raw[:half], "zstd") + compress(raw[half:], "zstd")
    gz = compress(raw[:half], "gzip") + compress(raw[half:], "gzip")
    for kind, data in (("zstd", zstd), ("gzip", gz)):
        layout = build_layout(tmp_path / kind, [manifest_layer(), Layer("code", data, kind, tar=raw)])
        _unpack(layout, tmp_path / f"{kind}-out")
        assert (tmp_path / f"{kind}-out" / "b.py").read_bytes() == b"b" * 5000


def test_pax_and_gnu_long_names_are_understood(tmp_path: Path) -> None:
    import io

    long = "pkg/" + "n" * 120 + ".py"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo(long)
        info.size = 3
        tar.addfile(info, io.BytesIO(b"abc"))
        evil = tarfile.TarInfo("innocent.py")
        evil.pax_headers = {"path": "../escaped.py"}
        evil.size = 1
        tar.addfile(evil, io.BytesIO(b"x"))
    raw = buffer.getvalue()
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", raw)])
    with pytest.raises(UnsafeLayer) as caught:
        _unpack(layout, tmp_path / "out")
    assert caught.value.entry == "../escaped.py"  # the PAX path, not the header's decoy
    good = tar_bytes([Member(long, data=b"abc")])  # GNU ././@LongLink
    layout = build_layout(tmp_path / "good", [manifest_layer(), Layer("code", good)])
    _unpack(layout, tmp_path / "good-out")
    assert (tmp_path / "good-out" / long).read_bytes() == b"abc"


def _pax_record(key: str, value: str) -> bytes:
    body = f" {key}={value}\n".encode()
    digits = len(str(len(body)))
    length = len(body) + digits if len(str(len(body) + digits)) == digits else len(body) + digits + 1
    return str(length).encode() + body


def _with_pax(records: bytes, member: Member) -> bytes:
    """A tar stream whose only entry carries this PAX extended header, written byte for byte."""
    import io

    ext = tarfile.TarInfo("././@PaxHeader")
    ext.type = tarfile.XHDTYPE
    ext.size = len(records)
    out = io.BytesIO()
    out.write(ext.tobuf(tarfile.USTAR_FORMAT, "utf-8", "surrogateescape"))
    out.write(records + bytes(-len(records) % 512))
    out.write(tar_bytes([member]))
    return out.getvalue()


@pytest.mark.parametrize(("records", "words"), ids=["5000-digits", "arabic-indic", "superscript", "negative",
                                                     "long-length", "arabic-indic-length"], argvalues=[
    (_pax_record("size", "9" * 5000), ("a PAX size record is '9999999999999999999999999999999999999999...', "
                                       "not a decimal number of at most 20 ASCII digits")),
    (_pax_record("size", "\u0663"), "a PAX size record is '\u0663', not a decimal number"),  # Arabic-Indic 3
    (_pax_record("size", "\u00b2"), "a PAX size record is '\u00b2', not a decimal number"),  # superscript 2
    (_pax_record("size", "-1"), "a PAX size record is '-1', not a decimal number"),
    (b"9" * 5000 + b" path=a.py\n", "a PAX header is malformed"),
    ("\u0663\u0663 path=a.py\n".encode(), "a PAX header is malformed"),
])
def test_pax_numbers_of_any_length_or_script_are_refused_cleanly(tmp_path: Path, records: bytes,
                                                                  words: str) -> None:
    raw = _with_pax(records, Member("a.py", data=b"abc"))
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", raw)])
    with pytest.raises(UnsafeLayer) as caught:
        _unpack(layout, tmp_path / "out", limits=UnpackLimits(max_meta_bytes=10_000))
    assert words in str(caught.value)
    _assert_nothing_left(tmp_path / "out")


def test_an_honest_pax_size_is_read(tmp_path: Path) -> None:
    raw = _with_pax(_pax_record("size", "3"), Member("a.py", data=b"abc"))
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", raw)])
    _unpack(layout, tmp_path / "out")
    assert (tmp_path / "out" / "a.py").read_bytes() == b"abc"


def test_corrupt_header_and_truncated_stream_are_refused(tmp_path: Path) -> None:
    raw = bytearray(tar_bytes([Member("a.py", data=b"x" * 600)]))
    raw[0] ^= 1  # name changes, checksum no longer matches
    layout = build_layout(tmp_path / "sum", [manifest_layer(), Layer("code", bytes(raw))])
    with pytest.raises(UnsafeLayer, match="checksum"):
        _unpack(layout, tmp_path / "out")
    truncated = tar_bytes([Member("a.py", data=b"x" * 6000)])[:1536]
    layout = build_layout(tmp_path / "cut", [manifest_layer(), Layer("code", truncated)])
    with pytest.raises(UnsafeLayer, match="ends inside an entry"):
        _unpack(layout, tmp_path / "out")
    _assert_nothing_left(tmp_path / "out")


def test_a_blob_opener_works_like_a_layout(tmp_path: Path) -> None:
    raw = tar_bytes([Member("a.py", data=b"x")])
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", raw)])
    _, manifest = resolve(layout, "v1")
    opened: list[str] = []
    inner = layout_opener(layout)

    def opener(descriptor: Descriptor) -> Any:
        opened.append(descriptor.digest)
        return inner(descriptor)

    result = unpack_layers(opener, manifest, tmp_path / "out")
    assert result.roles == ("manifest", "code") and len(opened) == 3  # config + two layers


def test_hostile_digest_cannot_name_a_path(tmp_path: Path) -> None:
    layout = build_layout(tmp_path / "layout", [manifest_layer()])
    _, manifest = resolve(layout, "v1")
    manifest["config"]["digest"] = "sha256:../../../../etc/passwd"
    with pytest.raises(OCIError, match="expected 'sha256:' and 64 lower-case hex digits"):
        unpack_layers(layout, manifest, tmp_path / "out")
