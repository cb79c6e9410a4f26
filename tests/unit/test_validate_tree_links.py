"""``rra validate DIR`` judges every symbolic link that ``rra pack`` would ship, named or not.

A link no manifest path goes through is still packed and followed by every reader of the
unpacked copy; a chain of links can lead out although each link's text stays inside.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.rra_cli import rra

BASE = Path(__file__).resolve().parents[2] / "conformance" / "v1.0" / "bases" / "minimal"
HINT = ("replace the link by what it points to, remove it, or list it in .rraignore: 'rra pack' refuses it "
        "and no unpacked copy could follow it")


def artifact(tmp_path: Path) -> Path:
    (tmp_path / "outside.txt").write_text("a file of the host\n")
    root = tmp_path / "art"
    shutil.copytree(BASE, root)
    return root


def located(root: Path) -> list[tuple[str, str, str, str | None, str | None]]:
    done = rra("validate", "--format", "json", str(root))
    assert done.returncode in (0, 1), done.stderr
    results = json.loads(done.stdout)["results"]
    return [(d["code"], d["message"], d["file"], d.get("pointer") or None, d.get("hint"))
            for d in results[0]["diagnostics"]]


def test_an_unnamed_link_chain_leaving_the_root_is_a_located_finding(tmp_path: Path) -> None:
    root = artifact(tmp_path)
    (root / "a" / "b").mkdir(parents=True)
    os.symlink("../..", root / "a" / "b" / "lnk")  # the root itself: inside
    os.symlink("a/b/lnk/../../outside.txt", root / "c")  # inside by its text, outside through lnk
    os.symlink("../outside.txt", root / "d")
    os.symlink("d", root / "e")  # a link to a link to outside
    assert located(root) == [
        ("RRA302", "symbolic link 'c' -> 'a/b/lnk/../../outside.txt' leads outside the artifact through "
                   "the symbolic link 'a/b/lnk'", str(root / "c"), None, HINT),
        ("RRA302", "symbolic link 'd' -> '../outside.txt' leads outside the artifact", str(root / "d"), None, HINT),
        ("RRA302", "symbolic link 'e' -> 'd' leads outside the artifact", str(root / "e"), None, HINT),
    ]
    text = rra("validate", str(root))
    assert text.returncode == 1
    assert f"{root / 'c'}: error[RRA302] symbolic link 'c' -> 'a/b/lnk/../../outside.txt'" in text.stdout


def test_links_left_out_of_the_pack_are_not_judged(tmp_path: Path) -> None:
    root = artifact(tmp_path)
    (root / "scratch").mkdir()
    os.symlink("../../outside.txt", root / "scratch" / "host")
    os.symlink("/etc", root / ".git")  # version-control metadata is never packed
    (root / ".rraignore").write_text("scratch/\n")
    assert located(root) == []
    (root / ".rraignore").write_text("# nothing left out\n")
    assert [(c, f) for c, _, f, _, _ in located(root)] == [("RRA302", str(root / "scratch" / "host"))]


@pytest.mark.parametrize("target", ["../outside.txt", "/etc"])
def test_an_ignore_file_leading_out_is_not_read_and_is_reported(tmp_path: Path, target: str) -> None:
    root = artifact(tmp_path)
    (tmp_path / "outside.txt").write_text("*\n")  # would ignore everything if it were read
    os.symlink(target, root / ".rraignore")
    assert [(c, f) for c, _, f, _, _ in located(root)] == [("RRA302", str(root / ".rraignore"))]


def test_a_link_a_manifest_path_goes_through_is_reported_once_at_the_path(tmp_path: Path) -> None:
    root = artifact(tmp_path)
    os.symlink("../outside.txt", root / "CITATION.cff")
    manifest = root / "rra.yaml"
    manifest.write_text(manifest.read_text().replace("paper:\n", "paper:\n  citation_file: CITATION.cff\n", 1))
    got = located(root)
    assert [(c, f, p) for c, _, f, p, _ in got if c == "RRA302"] == [
        ("RRA302", str(manifest), "/paper/citation_file")]


def test_links_inside_the_root_are_clean(tmp_path: Path) -> None:
    root = artifact(tmp_path)
    (root / "a" / "b").mkdir(parents=True)
    os.symlink("../..", root / "a" / "b" / "lnk")
    os.symlink("a/b/lnk/requirements.lock", root / "lock")
    os.symlink("lock", root / "lock2")
    assert located(root) == []


def test_an_unreadable_directory_is_a_warning_for_validate_and_a_clear_error_for_pack() -> None:
    # Root reads every directory: the commands run as 'nobody', through setpriv (util-linux).
    import subprocess
    import tempfile

    from tests.rra_cli import rra_command

    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run rra as another user (run the suite as root, as .ci/run does)")
    base = Path(tempfile.mkdtemp(prefix="rra-unreadable-", dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        root = base / "art"
        shutil.copytree(BASE, root)
        (root / "locked").mkdir(mode=0o000)
        (base / "out").mkdir(mode=0o777)
        os.chmod(base / "out", 0o777)
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        done = subprocess.run([*nobody, *rra_command(), "validate", str(root)], capture_output=True, text=True,
                              cwd=base, timeout=300, check=False)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
        assert (f"{root / 'locked'}: warning[RRA302] directory 'locked' cannot be read (Permission denied), so "
                "the symbolic links in it were not checked") in done.stdout
        packed = subprocess.run([*nobody, *rra_command(), "pack", str(root), "-o", str(base / "out" / "layout")],
                                capture_output=True, text=True, cwd=base, timeout=300, check=False)
        assert packed.returncode != 0 and "Traceback" not in packed.stderr, packed.stderr
        assert ("error: directory 'locked' cannot be read (Permission denied); make it readable or list it in "
                ".rraignore") in packed.stderr
    finally:
        if (base / "art" / "locked").is_dir():
            os.chmod(base / "art" / "locked", 0o755)
        shutil.rmtree(base, ignore_errors=True)
