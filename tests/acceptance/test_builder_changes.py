"""``rra change record`` and ``rra change verify`` through the real command, on a small git
repository whose README command is wrong and whose numpy pin no longer installs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.preserve_fixture import make_artifact, repair
from tests.rra_cli import rra

README_WHY = "The README passes --epoch; train.py only accepts --epochs."
PIN_WHY = "numpy 1.16 has no wheel for Python 3.11."


@pytest.fixture()
def artifact(tmp_path: Path) -> Path:
    root, _ = make_artifact(tmp_path / "init-scale")
    repair(root)
    return root


def record_both(root: Path) -> None:
    first = rra("change", "record", "fix-readme", "README.md", "-C", str(root), "--kind", "config",
                "--rationale", README_WHY, "--alters-method", "no",
                "--evidence", "train.py: error: unrecognized arguments: --epoch 3")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "recorded change fix-readme: patches/0001-fix-readme.patch (1 file(s): README.md)\n"
    second = rra("change", "record", "pin-numpy", "-C", str(root), "--kind", "dependency-pin",
                 "--rationale", PIN_WHY, "--alters-method", "no",
                 "--evidence", "ERROR: No matching distribution found for numpy==1.16.0")
    assert second.returncode == 0, second.stderr
    assert second.stdout == ("recorded change pin-numpy: patches/0002-pin-numpy.patch "
                             "(1 file(s): requirements.txt)\n")


def test_two_changes_are_recorded_and_verified(artifact: Path) -> None:
    record_both(artifact)
    manifest = (artifact / "rra.yaml").read_text()
    # The user's comments and flow mappings survive the edit.
    assert "# The refined artifact of the initialisation-scale study.\n" in manifest
    assert "  license: MIT   # from LICENSE\n" in manifest
    assert "# the README says --epoch" in manifest
    assert "    patch: patches/0002-pin-numpy.patch\n" in manifest
    assert '    alters_method: "no"\n' in manifest
    patch = (artifact / "patches/0002-pin-numpy.patch").read_text()
    assert "-numpy==1.16.0\n+numpy==1.26.4\n" in patch
    assert "README" not in patch
    done = rra("change", "verify", "-C", str(artifact))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok: 2 patch(es) apply cleanly; tree digest ")
    assert rra("validate", str(artifact), "--ignore", "RRA502,RRA404").returncode == 0


def test_an_edit_after_recording_fails_verify_naming_the_path(artifact: Path) -> None:
    record_both(artifact)
    with (artifact / "train.py").open("a") as handle:
        handle.write("# tuned\n")
    done = rra("change", "verify", "-C", str(artifact))
    assert done.returncode == 1
    assert "differing path(s): train.py (content differs)" in done.stderr
    assert "hint: record the remaining change with 'rra change record', or undo the edit" in done.stderr


def test_a_tampered_patch_fails_verify(artifact: Path) -> None:
    record_both(artifact)
    patch = artifact / "patches/0001-fix-readme.patch"
    patch.write_text(patch.read_text().replace("+python train.py --epochs 3", "+python train.py --epochs 4"))
    done = rra("change", "verify", "-C", str(artifact))
    assert done.returncode == 1
    assert done.stderr.startswith("error: patch patches/0001-fix-readme.patch was changed after it was recorded: ")


def test_a_tampered_patch_with_its_digest_updated_fails_on_the_tree(artifact: Path) -> None:
    import hashlib

    record_both(artifact)
    patch = artifact / "patches/0001-fix-readme.patch"
    old = hashlib.sha256(patch.read_bytes()).hexdigest()
    patch.write_text(patch.read_text().replace("+python train.py --epochs 3", "+python train.py --epochs 4"))
    manifest = artifact / "rra.yaml"
    manifest.write_text(manifest.read_text().replace(old, hashlib.sha256(patch.read_bytes()).hexdigest()))
    done = rra("change", "verify", "-C", str(artifact))
    assert done.returncode == 1
    assert "differing path(s): README.md (content differs)" in done.stderr


def test_a_patch_that_no_longer_applies_is_named(artifact: Path) -> None:
    import hashlib

    record_both(artifact)
    patch = artifact / "patches/0002-pin-numpy.patch"
    old = hashlib.sha256(patch.read_bytes()).hexdigest()
    patch.write_text(patch.read_text().replace("-numpy==1.16.0", "-numpy==1.15.0"))
    manifest = artifact / "rra.yaml"
    manifest.write_text(manifest.read_text().replace(old, hashlib.sha256(patch.read_bytes()).hexdigest()))
    done = rra("change", "verify", "-C", str(artifact))
    assert done.returncode == 1
    assert done.stderr.startswith("error: patch patches/0002-pin-numpy.patch does not apply cleanly on ")


def test_a_record_without_rationale_is_refused(artifact: Path) -> None:
    before = (artifact / "rra.yaml").read_bytes()
    done = rra("change", "record", "fix-readme", "README.md", "-C", str(artifact), "--kind", "config",
               "--alters-method", "no", "--evidence", "x")
    assert done.returncode == 2
    assert done.stderr == ("error: change 'fix-readme' has no rationale: a repair nobody can explain is not "
                           "reviewable\nhint: say why the change was needed with --rationale TEXT\n")
    assert (artifact / "rra.yaml").read_bytes() == before
    assert not (artifact / "patches").exists()


def test_nothing_to_record_is_an_error(artifact: Path) -> None:
    record_both(artifact)
    done = rra("change", "record", "more", "-C", str(artifact), "--kind", "other", "--rationale", "r",
               "--alters-method", "no", "--evidence", "e")
    assert done.returncode == 2
    assert done.stderr.startswith("error: nothing to record: the working tree equals the upstream commit with "
                                  "the 2 recorded patch(es)\n")


def test_a_record_whose_files_differ_from_its_patch_fails_verify(artifact: Path) -> None:
    """A record may not name one file and patch another (issue 23 item 7): its patch and digest
    untouched, only its 'files' edited, verify names the record and both lists."""
    record_both(artifact)
    manifest = artifact / "rra.yaml"
    text = manifest.read_text()
    edited = text.replace("    files:\n      - requirements.txt\n", "    files:\n      - train.py\n", 1)
    assert edited != text
    manifest.write_text(edited)
    done = rra("change", "verify", "-C", str(artifact))
    assert done.returncode == 1
    assert done.stderr.startswith("error: change 'pin-numpy' lists files ['train.py'] but its patch "
                                  "patches/0002-pin-numpy.patch touches ['requirements.txt']\n"), done.stderr
