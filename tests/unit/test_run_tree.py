"""``rra_tools.run.tree``: the metadata snapshot behind the stray-write check and the state of a
declared output, on real trees: what is listed, what is left out (allowed places, version
control, what a link points at), and what an unreadable directory does to the walk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from rra_tools.run.tree import output_state, stray_writes, take_snapshot
from tests.acceptance.test_run_outputs import _without_dac_override


def _lstat(path: Path) -> tuple[int, int, int, int]:
    info = os.lstat(path)
    return (info.st_size, info.st_mtime_ns, info.st_ino, info.st_mode)


def _tree(root: Path) -> None:
    for rel in ("a.txt", "sub/b.txt", "out/x.json", "out/deep/y.json", "outer/z.txt", "out.txt", ".git/HEAD",
                "sub/.hg/store", "allowed-dir/q"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    os.symlink("sub", root / "dirlink")
    os.symlink("missing", root / "sub" / "dangling")


def test_a_snapshot_lists_files_and_links_outside_the_allowed_places(tmp_path: Path) -> None:
    _tree(tmp_path)
    snap = take_snapshot(tmp_path, ["out", "/allowed-dir/", "", "/"])
    assert sorted(snap) == ["a.txt", "dirlink", "out.txt", "outer/z.txt", "sub/b.txt", "sub/dangling"]
    # A link's own metadata, never its target's (the link is not followed, so 'dirlink/b.txt'
    # is not listed either).
    assert snap["dirlink"] == _lstat(tmp_path / "dirlink") != _lstat(tmp_path / "sub")
    assert snap["a.txt"] == _lstat(tmp_path / "a.txt")


def test_an_allowed_path_can_be_a_single_file(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert sorted(take_snapshot(tmp_path, ["a.txt", "sub/b.txt", "out", "outer", "allowed-dir", "out.txt"])) == \
        ["dirlink", "sub/dangling"]


def test_many_allowed_names_in_one_directory_hide_nothing_else(tmp_path: Path) -> None:
    # Entries come in the directory's order; an allowed one met early must not end the listing.
    for i in range(12):
        (tmp_path / f"keep{i}").write_text("k")
        (tmp_path / f"out{i}").write_text("o")
    snap = take_snapshot(tmp_path, [f"out{i}" for i in range(12)])
    assert sorted(snap) == sorted(f"keep{i}" for i in range(12))


def test_stray_writes_are_created_changed_and_removed_paths() -> None:
    before = {"same": (1, 1, 1, 0), "changed": (1, 1, 2, 0), "removed": (1, 1, 3, 0)}
    after = {"same": (1, 1, 1, 0), "changed": (1, 2, 2, 0), "created": (0, 1, 4, 0)}
    assert stray_writes(before, after) == ["changed", "created", "removed"]
    assert stray_writes(before, dict(before)) == []


def test_the_state_of_a_file_a_directory_a_link_and_nothing(tmp_path: Path) -> None:
    _tree(tmp_path)
    info = os.lstat(tmp_path / "a.txt")
    assert output_state(tmp_path / "a.txt") == {
        "": (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_mode)}
    assert output_state(tmp_path / "nothing") is None
    link = os.lstat(tmp_path / "dirlink")
    assert output_state(tmp_path / "dirlink") == {
        "": (link.st_size, link.st_mtime_ns, link.st_ctime_ns, link.st_ino, link.st_mode)}
    state = output_state(tmp_path / "out")
    assert state is not None and sorted(state) == ["", "deep", "deep/y.json", "x.json"]
    deep = os.lstat(tmp_path / "out" / "deep" / "y.json")
    assert state["deep/y.json"] == (deep.st_size, deep.st_mtime_ns, deep.st_ctime_ns, deep.st_ino, deep.st_mode)
    # Version-control names are only left out of the stray-write snapshot, not out of an output.
    assert sorted(output_state(tmp_path / "sub") or {}) == ["", ".hg", ".hg/store", "b.txt", "dangling"]


_SNAPSHOT = "import json, sys; from rra_tools.run.tree import take_snapshot; " \
            "print(json.dumps(sorted(take_snapshot(__import__('pathlib').Path(sys.argv[1]), []))))"


def test_unreadable_directories_are_passed_over_and_the_walk_goes_on(tmp_path: Path) -> None:
    # Ten directories the walker may not list, ten it may, in the order the file system gives.
    # As root the snapshot is taken by a process without the capabilities that let root
    # ignore file modes.
    for i in range(10):
        (tmp_path / f"open{i}").mkdir()
        (tmp_path / f"open{i}" / "f").write_text("f")
        (tmp_path / f"locked{i}").mkdir()
        (tmp_path / f"locked{i}" / "hidden").write_text("h")
        (tmp_path / f"locked{i}").chmod(0)
    try:
        proc = subprocess.run([sys.executable, "-c", _SNAPSHOT, str(tmp_path)], capture_output=True, text=True,
                              timeout=60, preexec_fn=_without_dac_override if os.geteuid() == 0 else None)
    finally:
        for i in range(10):
            (tmp_path / f"locked{i}").chmod(0o755)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == sorted(f"open{i}/f" for i in range(10))


def test_an_entry_that_cannot_be_looked_at_is_passed_over_and_its_siblings_are_not(tmp_path: Path) -> None:
    # An entry whose own path is longer than the system allows (PATH_MAX, 4,096 bytes on Linux)
    # is listed by its directory but cannot be lstat'ed by path: it is passed over, as one that
    # vanished between the listing and its lstat would be, and the walk goes on with its
    # siblings. Long and short names alternate, so whatever order the directory gives, some
    # short name comes after a long one.
    deep = tmp_path
    while len(str(deep)) < 3900:
        deep = deep / ("d" * 200)
    deep.mkdir(parents=True)
    long_len = 4096 - len(str(deep))  # with the '/', one byte past the limit
    assert long_len <= 255  # a name the filesystem takes
    fd = os.open(deep, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i in range(10):
            os.close(os.open(f"{i}".ljust(long_len, "x"), os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
            os.close(os.open(f"short{i}", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
    finally:
        os.close(fd)
    assert len(os.listdir(deep)) == 20
    rel = deep.relative_to(tmp_path).as_posix()
    assert sorted(take_snapshot(tmp_path, [])) == [f"{rel}/short{i}" for i in range(10)]
    top = tmp_path / ("d" * 200)
    listed = output_state(top)
    assert listed is not None
    below = deep.relative_to(top).as_posix()
    assert sorted(k for k in listed if "short" in k or k.endswith("x")) == [f"{below}/short{i}" for i in range(10)]
