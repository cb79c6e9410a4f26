"""The tree digest's definition, and the artifact's own files it leaves out."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from rra_tools.builder.patches import TreeEntry, own_paths, tree_digest, tree_entries


def test_tree_digest_is_the_sha256_of_sorted_mode_digest_path_lines(tmp_path: Path) -> None:
    (tmp_path / "b.py").write_bytes(b"print(1)\n")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "run.sh").write_bytes(b"#!/bin/sh\n")
    os.chmod(tmp_path / "a" / "run.sh", 0o755)
    os.symlink("b.py", tmp_path / "link")
    (tmp_path / "rra.yaml").write_text("ignored")
    (tmp_path / "patches").mkdir()
    (tmp_path / "patches" / "0001-x.patch").write_text("ignored")
    entries = tree_entries(tmp_path, own_paths("rra.yaml", {}))
    script, code, target = (hashlib.sha256(d).hexdigest() for d in (b"#!/bin/sh\n", b"print(1)\n", b"b.py"))
    assert entries == {"a/run.sh": TreeEntry("100755", script), "b.py": TreeEntry("100644", code),
                       "link": TreeEntry("120000", target)}
    lines = f"100755 {script} a/run.sh\0" f"100644 {code} b.py\0" f"120000 {target} link\0"
    assert tree_digest(entries) == hashlib.sha256(lines.encode()).hexdigest()


def test_own_paths_follow_the_manifest() -> None:
    data = {"evidence": {"run_records": "evidence/runs/"}, "environment": {"lock": {"path": "./pylock.toml"}},
            "guide": {"path": "REPRODUCE.md"}}
    assert own_paths("rra.yaml", data) == ("rra.yaml", "patches", ".rra", ".rraignore", "evidence/runs", "pylock.toml",
                                           "REPRODUCE.md")


def test_declared_outputs_are_not_code() -> None:
    # What a run writes (a declared output) is the artifact's, not code the patch series must
    # explain: a template stands for the directory before its first placeholder.
    launchers = [{"id": "a", "outputs": [{"path": "results.csv"}, {"path": "figs/{seed}/curve.png"},
                                         {"path": "./tables/t1.json"}, {"path": "{seed}.npy"},
                                         {"path": "../outside.csv"}, {"path": "out_{seed}.csv"}]},
                 {"id": "b", "outputs": [{"path": "results.csv"}]}]
    assert own_paths("rra.yaml", {"launchers": launchers}) == (
        "rra.yaml", "patches", ".rra", ".rraignore", "runs", "results.csv", "figs", "tables/t1.json")
