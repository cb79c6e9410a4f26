"""rra_tools.io.unidiff against what real git writes and what git apply refuses.

Every well-formed diff here is written by git itself (diff, format-patch, binary, modes,
renames, quoted names) and also passes ``git apply --check``; every malformed one is refused by
``git apply --check`` too, so the parser and the tool the spec names agree.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rra_tools.io.unidiff import DiffProblem, parse_unified_diff


def git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    done = subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@example.org", "-c", "core.quotepath=true",
                           *args], cwd=repo, input=stdin, capture_output=True, check=True)
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "src").mkdir()
    (root / "src" / "losses.py").write_text("".join(f"line {n}\n" for n in range(1, 21)))
    (root / "run.sh").write_text("echo run\n")
    (root / "old name.txt").write_text("kept\n" * 5)
    (root / "blob.bin").write_bytes(bytes(range(256)))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "upstream")
    return root


def applies(repo: Path, patch: bytes) -> bool:
    return subprocess.run(["git", "apply", "--check", "-"], cwd=repo, input=patch, capture_output=True,
                          check=False).returncode == 0


def test_git_diff_of_every_kind_parses_and_applies(repo: Path) -> None:
    text = (repo / "src" / "losses.py").read_text().replace("line 3\n", "line three\n").replace("line 18\n", "")
    (repo / "src" / "losses.py").write_text(text + "no newline at end")
    (repo / "run.sh").chmod(0o755)
    git(repo, "mv", "old name.txt", "new\tname.txt")
    (repo / "blob.bin").write_bytes(bytes(reversed(range(256))))
    (repo / "src" / "new.py").write_text("print('new')\n")
    (repo / "src" / "empty.py").write_text("")
    git(repo, "add", "-A")
    patch = git(repo, "diff", "--cached", "--binary", "--full-index", "-M")
    git(repo, "reset", "-q", "--hard")
    assert applies(repo, patch)
    parsed = parse_unified_diff(patch)
    assert sorted(parsed.paths) == ["blob.bin", "new\tname.txt", "old name.txt", "run.sh", "src/empty.py",
                                    "src/losses.py", "src/new.py"]
    assert parsed.files == 6 and parsed.hunks == 3  # the rename is one section


def test_format_patch_series_with_mail_headers_and_signature(repo: Path) -> None:
    for n in range(2):
        (repo / "src" / "losses.py").write_text(f"first line, edit {n}\n" + "".join(f"line {k}\n" for k in range(2, 21)))
        git(repo, "commit", "-qam", f"edit {n}\n\nA message body\n--- that looks like a diff line\n")
    series = git(repo, "format-patch", "--stdout", "HEAD~2")
    assert b"\n-- \n" in series  # the signature after each patch
    parsed = parse_unified_diff(series)
    assert (parsed.paths, parsed.files, parsed.hunks) == (["src/losses.py"], 2, 2)


MALFORMED = {
    "short hunk": (b"--- a/src/losses.py\n+++ b/src/losses.py\n@@ -3,3 +3,3 @@\n-line 3\n+line three\n line 4\n",
                   "line 3: the hunk is truncated (1 old and 1 new line(s) missing at the end of the file)"),
    "long hunk": (b"--- a/src/losses.py\n+++ b/src/losses.py\n@@ -3,1 +3,1 @@\n-line 3\n-line 4\n+line three\n",
                  "line 5: the hunk of line 3 has more lines than its header counts"),
    "garbage in hunk": (b"--- a/src/losses.py\n+++ b/src/losses.py\n@@ -3,2 +3,2 @@\n-line 3\n+line three\n"
                        b"*line 4\n", "line 6: the hunk of line 3 ends early: 1 old and 1 new line(s) fewer than "
                                      "its header counts"),
    "no hunk": (b"--- a/src/losses.py\n+++ b/src/losses.py\nline 3\n",
                "line 3: the '---'/'+++' pair is not followed by a hunk ('@@ -a,b +c,d @@')"),
    "not a diff": (b"Pinned numpy to 1.26.\n", "no file section: not a unified diff ('diff --git' or '---'/'+++' "
                                              "lines with hunks)"),
    "stray hunk": (b"@@ -3,1 +3,1 @@\n-line 3\n+line three\n",
                   "line 1: a hunk outside a file section (no '---'/'+++' lines before it)"),
    "no prefix": (b"--- losses.py\n+++ losses.py\n@@ -3 +3 @@\n-line 3\n+line three\n",
                  "line 1: path 'losses.py' has no leading directory (a/, b/) for -p1 to strip"),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_diffs_are_refused_like_git_apply_does(name: str, repo: Path) -> None:
    patch, message = MALFORMED[name]
    with pytest.raises(DiffProblem) as caught:
        parse_unified_diff(patch)
    assert str(caught.value) == message
    assert not applies(repo, patch)


def test_the_fixed_hunk_applies(repo: Path) -> None:
    patch = b"--- a/src/losses.py\n+++ b/src/losses.py\n@@ -3,2 +3,2 @@\n-line 3\n+line three\n line 4\n"
    assert parse_unified_diff(patch).paths == ["src/losses.py"]
    assert applies(repo, patch)


def test_paths_are_reported_as_written_for_the_rule_to_judge() -> None:
    patch = b"--- a/../outside.py\n+++ b/../outside.py\n@@ -1 +1 @@\n-a\n+b\n" \
            b"diff --git a/.git/hooks/post-checkout b/.git/hooks/post-checkout\nnew file mode 100755\n" \
            b"--- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1 @@\n+echo owned\n"
    assert parse_unified_diff(patch).paths == ["../outside.py", ".git/hooks/post-checkout"]
