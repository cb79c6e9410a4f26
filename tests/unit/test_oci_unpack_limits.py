"""The unpacker's default bounds are the ones spec/05-packaging.md#size-limits states for the
reference reader, and each is enforced at its exact value: one byte over is refused with a
typed error naming the bound, never a crash of the file system below it."""

from __future__ import annotations

import dataclasses
import re
import tarfile
from pathlib import Path

import pytest

from rra_tools.oci.config import LayerEntry, read_config
from rra_tools.oci.errors import DocumentTooLarge, UnsafeLayer
from rra_tools.oci.layout import Descriptor, layout_opener, resolve
from rra_tools.oci.unpack import (
    DEFAULT_LIMITS,
    DEFAULT_MAX_RATIO,
    RATIO_SLACK_BYTES,
    UnpackLimits,
    check_ratio,
    unpack_layers,
)

from .oci_support import Layer, Member, build_layout, manifest_layer, tar_bytes
from .test_oci_unpack import _assert_nothing_left, _pax_record, _unpack, _with_pax

SPEC = Path(__file__).resolve().parents[2] / "spec" / "05-packaging.md"


def test_the_default_limits_are_the_specs() -> None:
    assert UnpackLimits(max_total_bytes=None, max_entries=1_000_000, max_name_bytes=4096,
                        max_meta_bytes=1024 * 1024, max_ratio=1000) == DEFAULT_LIMITS
    text = re.sub(r"\s+", " ", SPEC.read_text(encoding="utf-8"))
    assert (f"the reference reader allows {DEFAULT_LIMITS.max_entries:,} entries, names of "
            f"{DEFAULT_LIMITS.max_name_bytes:,} bytes and extended headers of "
            f"{DEFAULT_LIMITS.max_meta_bytes // 1024 // 1024} MiB") in text
    # A shared default must not be changed by one caller for all the others.
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT_LIMITS.max_entries = 5  # type: ignore[misc]


def test_a_name_one_byte_over_the_default_limit_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    name = "d/" * 2000 + "x" * 97  # 4097 bytes
    raw = _with_pax(_pax_record("path", name), Member("placeholder", data=b"abc"))
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", raw)])
    with pytest.raises(UnsafeLayer, match=r"an entry name is longer than 4096 bytes"):
        _unpack(layout, tmp_path / "out")
    _assert_nothing_left(tmp_path / "out")


@pytest.mark.parametrize("size, refused", [(1024 * 1024, False), (1024 * 1024 + 1, True)])
def test_an_extended_header_of_the_default_cap_is_read_and_one_byte_more_is_not(tmp_path: Path, size: int,
                                                                               refused: bool) -> None:
    # One record '<length> comment=ccc...\n' of exactly ``size`` bytes.
    records = _pax_record("comment", "c" * (size - len(str(size)) - len(" comment=\n")))
    assert len(records) == size
    raw = _with_pax(records, Member("a.py", data=b"abc"))
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", raw)])
    if refused:
        with pytest.raises(UnsafeLayer, match=f"an extended header of {size} bytes is larger than the cap of "
                                              f"{1024 * 1024}"):
            _unpack(layout, tmp_path / "out")
        _assert_nothing_left(tmp_path / "out")
    else:
        assert (_unpack(layout, tmp_path / "out").dest / "a.py").read_bytes() == b"abc"


def test_the_entry_limit_counts_every_entry_and_allows_exactly_its_number(tmp_path: Path) -> None:
    # The manifest layer holds one entry (rra.yaml); the code layer three, a shared directory
    # counted each time it appears.
    code = tar_bytes([Member("src", tarfile.DIRTYPE), Member("src", tarfile.DIRTYPE), Member("src/a.py", data=b"1")])
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", code)])
    result = _unpack(layout, tmp_path / "ok", limits=UnpackLimits(max_entries=4))
    assert (result.files, sorted(p.name for p in (tmp_path / "ok").rglob("*"))) == (2, ["a.py", "rra.yaml", "src"])
    with pytest.raises(UnsafeLayer, match=r"entry 'src/a.py' is past the limit of 3 entries"):
        _unpack(layout, tmp_path / "out", limits=UnpackLimits(max_entries=3))
    _assert_nothing_left(tmp_path / "out")


def test_unpack_results_are_values(tmp_path: Path) -> None:
    layout = build_layout(tmp_path / "layout", [manifest_layer()])
    _, manifest = resolve(layout, "v1")
    result = unpack_layers(layout, manifest, tmp_path / "out")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.files = 0  # type: ignore[misc]


def test_the_total_limit_allows_exactly_the_declared_sum(tmp_path: Path) -> None:
    raw = tar_bytes([Member("a.py", data=b"x" * 10_000)])
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", raw)])
    _, manifest = resolve(layout, "v1")
    _, config = read_config(layout_opener(layout), manifest)
    total = sum(entry.size for entry in config.layers)
    assert _unpack(layout, tmp_path / "ok", limits=UnpackLimits(max_total_bytes=total)).bytes > 10_000
    with pytest.raises(DocumentTooLarge, match=f"^the layers declare {total} bytes in all, more than the limit of "
                                               f"{total - 1}$"):
        _unpack(layout, tmp_path / "out", limits=UnpackLimits(max_total_bytes=total - 1))
    _assert_nothing_left(tmp_path / "out")


def test_the_ratio_bound_is_1000_times_the_blob_plus_1_mib_at_its_exact_value() -> None:
    # The bound of spec/05-packaging.md and docs/oci.md: a compressed layer may unpack to at
    # most 1,000 times its blob's size plus 1 MiB; a plain layer is not bounded by it.
    assert (DEFAULT_MAX_RATIO, RATIO_SLACK_BYTES, DEFAULT_LIMITS.max_ratio) == (1000, 1024 * 1024, 1000)
    assert (f"The reference reader allows {DEFAULT_MAX_RATIO:,} times the blob's size plus "
            f"{RATIO_SLACK_BYTES // 1024 // 1024} MiB") in re.sub(r"\s+", " ", SPEC.read_text(encoding="utf-8"))
    descriptor = Descriptor("application/vnd.rra.layer.v1.tar+zstd", "sha256:" + "a" * 64, 5000)
    bound = 1000 * 5000 + 1024 * 1024

    def layer(size: int, compression: str = "zstd") -> list[tuple[Descriptor, LayerEntry, str]]:
        return [(descriptor, LayerEntry("code", "sha256:" + "b" * 64, size), compression)]

    check_ratio(layer(bound), DEFAULT_LIMITS)
    check_ratio(layer(10 * bound, ""), DEFAULT_LIMITS)
    check_ratio(layer(10 * bound), UnpackLimits(max_ratio=None))
    with pytest.raises(DocumentTooLarge) as caught:
        check_ratio(layer(bound + 1), DEFAULT_LIMITS, "oci-layout:x")
    assert str(caught.value) == (
        f"oci-layout:x: layer sha256:{'a' * 64} (zstd) declares {bound + 1:,} unpacked bytes from 5,000 compressed, "
        f"more than 1000 times its size plus 1,048,576 bytes ({bound:,}): a decompression bomb? raise the bound "
        "with --max-ratio if you expect this (0: no bound)")
