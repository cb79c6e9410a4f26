"""RRA216 through the real CLI: a corrupt hunk, a patch writing outside the code tree, and a
series out of step with its change records, on a copy of the conformance 'gpu' base."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tests.rra_cli import rra

REPO = Path(__file__).resolve().parents[2]
GPU = REPO / "conformance" / "v1.0" / "bases" / "gpu"
PATCH = "patches/0002-smooth-target.patch"


@pytest.fixture
def art(tmp_path: Path) -> Path:
    copy = tmp_path / "art"
    shutil.copytree(GPU, copy)
    return copy


def put_patch(art: Path, text: str) -> None:
    """Replace the second patch and its recorded digest (so RRA304 stays quiet)."""
    old = hashlib.sha256((art / PATCH).read_bytes()).hexdigest()
    (art / PATCH).write_text(text)
    manifest = art / "rra.yaml"
    manifest.write_text(manifest.read_text().replace(old, hashlib.sha256(text.encode()).hexdigest()))


def findings(art: Path) -> list[tuple[str, str, str]]:
    done = rra("validate", "-f", "json", str(art))
    report = json.loads(done.stdout)
    return [(d["code"], d["message"], d.get("pointer", "")) for f in report["results"] for d in f["diagnostics"]]


def test_the_base_is_clean(art: Path) -> None:
    assert findings(art) == []


def test_corrupt_hunk(art: Path) -> None:
    put_patch(art, "--- a/src/losses.py\n+++ b/src/losses.py\n@@ -10,3 +10,3 @@\n-    target = smooth(one_hot)\n"
                   "+    target = smooth(teacher_probs)\n     return kl_div(student_log_probs, target)\n")
    assert findings(art) == [("RRA216", f"patch {PATCH!r} is not a well-formed unified diff: line 3: the hunk is "
                                        "truncated (1 old and 1 new line(s) missing at the end of the file)",
                              "/code/patches/1/path")]


def test_paths_outside_the_code_tree(art: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (art / "src" / "vendor").symlink_to(outside)
    hunk = "@@ -1 +1 @@\n-a\n+b\n"
    put_patch(art, "".join(f"--- a/{p}\n+++ b/{p}\n{hunk}" for p in ("../up/x.py", ".git/hooks/pre-commit",
                                                                      "src/vendor/x.py")))
    got = findings(art)
    # The escaping link itself, which rra pack would ship, is RRA302.
    assert {code for code, _, _ in got} == {"RRA216", "RRA302"}
    assert [message for code, message, _ in got if code == "RRA216"] == [
        f"patch {PATCH!r} touches '../up/x.py', which uses '..' to leave the code tree",
        f"patch {PATCH!r} touches '.git/hooks/pre-commit', which is inside .git (applying it would change the "
        "repository itself, e.g. its hooks)",
        f"patch {PATCH!r} touches 'src/vendor/x.py', which resolves through a symlink outside the artifact root "
        f"(to {str(outside.resolve() / 'x.py')!r})",
    ]


def test_series_out_of_step_with_the_change_records(art: Path) -> None:
    manifest = art / "rra.yaml"
    text = manifest.read_text()
    manifest.write_text(text.replace("      change: pin-loader\n", "      change: smoothing-target\n", 1))
    assert findings(art) == [
        ("RRA216", "patch 'patches/0001-pin-loader.patch' names change 'smoothing-target', whose patch is "
                   "'patches/0002-smooth-target.patch'", "/code/patches/0/change"),
        ("RRA216", "patches 'patches/0001-pin-loader.patch' (entry 0) and 'patches/0002-smooth-target.patch' "
                   "(entry 1) both name change 'smoothing-target'; a change record has one patch",
         "/code/patches/1/change"),
    ]
