"""An honest decompression bomb: a small compressed layer that declares, and holds, far more bytes.

The total bound (64 GiB by default) lets a 98 KB layer that expands to 3 GiB through; the ratio
bound refuses it from its declared sizes, before a byte of it is read. The layers here expand
to 24 MiB, generated and compressed in memory, so nothing large is written even without the bound.
"""

from __future__ import annotations

import hashlib
import subprocess
import tarfile
from pathlib import Path

import pytest

from rra_tools.oci.compression import make_compressor
from rra_tools.oci.unpack import DEFAULT_MAX_RATIO, RATIO_SLACK_BYTES
from tests.rra_cli import rra
from tests.unit.oci_support import Layer, build_layout, example_files_layer, manifest_layer

MIB = 1024 * 1024
ZEROS = 24 * MIB


def zeros_layer(size: int, kind: str) -> tuple[bytes, str, int]:
    """A ``kind`` layer holding one file of ``size`` zero bytes: (blob, diff_id, tar size), all honest."""
    info = tarfile.TarInfo("zeros.bin")
    info.size = size
    compressor = make_compressor(kind)
    digest = hashlib.sha256()
    parts: list[bytes] = []
    total = 0

    def feed(data: bytes) -> None:
        nonlocal total
        digest.update(data)
        total += len(data)
        parts.append(compressor.compress(data))

    feed(info.tobuf(tarfile.GNU_FORMAT))
    left = size
    while left:
        feed(bytes(min(left, MIB)))
        left -= min(left, MIB)
    feed(bytes(-size % 512 + 1024))
    parts.append(compressor.flush())
    return b"".join(parts), "sha256:" + digest.hexdigest(), total


def bomb_layout(tmp_path: Path, kind: str) -> tuple[Path, str, int, int]:
    blob, diff_id, size = zeros_layer(ZEROS, kind)
    layout = build_layout(tmp_path / "layout", [manifest_layer(), example_files_layer(),
                                                Layer("docs", blob, kind, declared_size=size, declared_diff_id=diff_id)])
    return layout, "sha256:" + hashlib.sha256(blob).hexdigest(), len(blob), size


def refused(done: subprocess.CompletedProcess[str], words: str) -> None:
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert words in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_the_cli_default_is_the_library_default() -> None:
    help_text = " ".join(rra("pull", "--help").stdout.split())
    assert f"[default: {DEFAULT_MAX_RATIO}; x>=0]" in help_text
    assert RATIO_SLACK_BYTES == MIB and "plus 1 MiB" in help_text


@pytest.mark.parametrize("kind", ["zstd", "gzip"])
def test_an_honest_bomb_is_refused_before_anything_is_written(tmp_path: Path, kind: str) -> None:
    layout, digest, blob_size, size = bomb_layout(tmp_path, kind)
    ratio = 20 if kind == "gzip" else DEFAULT_MAX_RATIO  # gzip itself stops near 1,030 times
    assert ratio * blob_size + RATIO_SLACK_BYTES < size
    output = tmp_path / "out"
    args = ["pull", f"oci-layout:{layout}:v1", "-o", str(output)]
    done = rra(*args, *(["--max-ratio", str(ratio)] if kind == "gzip" else []))
    refused(done, f"error: RRA805 oci-layout:{layout}:v1: layer {digest} ({kind}) declares {size:,} unpacked bytes from "
                  f"{blob_size:,} compressed, more than {ratio} times its size plus 1,048,576 bytes "
                  f"({ratio * blob_size + RATIO_SLACK_BYTES:,}): a decompression bomb? raise the bound with "
                  "--max-ratio if you expect this (0: no bound)")
    assert not output.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")] == []
    # The total bound alone (64 GiB by default) lets it through: the ratio is what stops it.
    assert size < 64 * 1024 ** 3
    roomy = rra(*args, "--max-ratio", "0")
    assert roomy.returncode == 0, roomy.stderr
    assert (output / "zeros.bin").stat().st_size == ZEROS


def test_validating_a_packed_bomb_refuses_it_with_rra805(tmp_path: Path) -> None:
    layout, digest, _, _ = bomb_layout(tmp_path, "zstd")
    done = rra("validate", f"oci-layout:{layout}:v1", "--format", "json")
    assert done.returncode == 1, done.stderr
    assert '"RRA805"' in done.stdout and f"layer {digest} (zstd) declares" in done.stdout, done.stdout
