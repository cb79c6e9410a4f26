"""Which error an unpack names when a layer is wrong in more than one way, and the exact words
of a link refused by its text as it arrives (before anything is created), rather than later
through the whole tree of links."""

from __future__ import annotations

import hashlib
import os
import tarfile
from pathlib import Path

import pytest

from rra_tools.oci.errors import UncompressedMismatch, UnsafeLayer

from .oci_support import Layer, Member, build_layout, compress, manifest_layer, tar_bytes
from .test_oci_unpack import _assert_nothing_left, _unpack


@pytest.mark.parametrize("compression", ["zstd", "gzip"])
def test_a_bomb_whose_blob_is_also_longer_than_its_descriptor_is_named_as_the_bomb(tmp_path: Path,
                                                                                 compression: str) -> None:
    # The decompressed excess shows after the first megabyte; reading the rest of the blob then
    # passes its descriptor's size too. The first problem found is the one named.
    raw = tar_bytes([Member("noise.bin", data=os.urandom(3_000_000))])
    blob = compress(raw, compression)
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer(
        "code", blob, compression, tar=raw, declared_size=2048, descriptor_size=len(blob) - 10)])
    with pytest.raises(UncompressedMismatch) as caught:
        _unpack(layout, tmp_path / "out")
    digest = "sha256:" + hashlib.sha256(blob).hexdigest()
    assert str(caught.value).startswith(f"layer {digest} decompresses to more than the 2048 bytes its config "
                                        "declares")
    _assert_nothing_left(tmp_path / "out")


@pytest.mark.parametrize("name, target", [("up", ".."), ("etc", "../../../etc"), ("a/b/c", "../../../x")])
def test_a_link_leaving_by_its_text_is_refused_as_it_arrives(tmp_path: Path, name: str, target: str) -> None:
    raw = tar_bytes([Member(name, tarfile.SYMTYPE, linkname=target)])
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", raw)])
    with pytest.raises(UnsafeLayer) as caught:
        _unpack(layout, tmp_path / "out")
    digest = "sha256:" + hashlib.sha256(raw).hexdigest()
    assert str(caught.value) == (f"layer {digest} entry {name!r} is a symbolic link to {target!r}, "
                                 "outside the destination")
    _assert_nothing_left(tmp_path / "out")
