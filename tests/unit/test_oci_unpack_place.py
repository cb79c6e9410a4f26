"""What another writer at the destination does to an unpack (two pulls into one directory): the
unpack that finds the place taken says so with a clear error and leaves what is there as it is;
nothing of its own is left behind. The other writer acts while the layers are read, through the
blob opener, as a second process would."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rra_tools.oci.errors import UnpackError, UnsafeLayer
from rra_tools.oci.layout import Descriptor, layout_opener, resolve
from rra_tools.oci.unpack import unpack_layers

from .oci_support import Layer, Member, build_layout, leftovers, manifest_layer, tar_bytes


def _unpack_while(tmp_path: Path, dest: Path, meanwhile: Callable[[], None],
                  members: list[Member] | None = None) -> Any:
    raw = tar_bytes(members or [Member("a.py", data=b"x")])
    layout = build_layout(tmp_path / "layout", [manifest_layer(), Layer("code", raw)])
    _, manifest = resolve(layout, "v1")
    inner = layout_opener(layout)
    opened: list[str] = []

    def opener(descriptor: Descriptor) -> Any:
        opened.append(descriptor.digest)
        if len(opened) == 3:  # the config, the manifest layer, then the code layer
            meanwhile()
        return inner(descriptor)

    return unpack_layers(opener, manifest, dest)


TAKEN = "was filled by someone else while unpacking (another pull into the same directory?); it was left as it is"


def test_a_directory_filled_meanwhile_is_left_as_it_is(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    dest.mkdir()  # empty: allowed when the unpack starts

    def other() -> None:
        (dest / "theirs.txt").write_text("theirs")

    with pytest.raises(UnpackError) as caught:
        _unpack_while(tmp_path, dest, other)
    assert str(caught.value) == f"{str(dest)!r} {TAKEN}"
    assert sorted(p.name for p in dest.iterdir()) == ["theirs.txt"]
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("kind", ["file", "link-to-directory", "directory"])
def test_a_place_taken_meanwhile_is_left_as_it_is(tmp_path: Path, kind: str) -> None:
    dest = tmp_path / "out"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep")

    def other() -> None:
        if kind == "file":
            dest.write_text("theirs")
        elif kind == "link-to-directory":
            os.symlink(elsewhere, dest)
        else:
            dest.mkdir()
            (dest / "theirs.txt").write_text("theirs")

    with pytest.raises(UnpackError) as caught:
        _unpack_while(tmp_path, dest, other)
    assert str(caught.value) == f"{str(dest)!r} {TAKEN}"
    assert dest.is_symlink() == (kind == "link-to-directory") and dest.is_file() == (kind == "file")
    assert sorted(p.name for p in elsewhere.iterdir()) == ["keep.txt"]
    assert leftovers(tmp_path) == []


def test_an_empty_destination_removed_meanwhile_is_made_again(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    dest.mkdir()
    result = _unpack_while(tmp_path, dest, dest.rmdir)
    assert result.dest == dest and (dest / "a.py").read_bytes() == b"x"
    assert leftovers(tmp_path) == []


def test_missing_parents_of_the_destination_are_made(tmp_path: Path) -> None:
    dest = tmp_path / "a" / "b" / "out"
    result = _unpack_while(tmp_path, dest, lambda: None)
    assert result.dest == dest and (dest / "a.py").read_bytes() == b"x"
    assert leftovers(dest.parent) == []


def test_a_failed_unpack_whose_temporary_directory_is_gone_still_says_why_it_failed(tmp_path: Path) -> None:
    # The clean-up of a failed unpack removes its temporary directory; when that cannot be done
    # (someone removed it meanwhile: a tmp cleaner, a second 'rra pull' clearing the place), the
    # unpack's own error is what the user must see, not the clean-up's FileNotFoundError.
    dest = tmp_path / "out"

    def cleaner() -> None:
        (found,) = (p for p in tmp_path.iterdir() if ".rra-unpack-" in p.name)
        shutil.rmtree(found)

    with pytest.raises(UnsafeLayer) as caught:
        _unpack_while(tmp_path, dest, cleaner, [Member("../evil.py", data=b"x")])
    assert "'../evil.py'" in str(caught.value) and "climbs out" in str(caught.value)
    assert not dest.exists() and leftovers(tmp_path) == [] and not (tmp_path / "evil.py").exists()
