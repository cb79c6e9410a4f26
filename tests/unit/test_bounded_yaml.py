"""YAML rra did not write is read within the one loader's bounds (rra_tools/io/read/bounded_yaml.py):
the round-trip edits of a manifest (builder/manifest_edit.py, env/artifact.py) check the text
before ruamel reads it, and a billion laughs or 100,000-deep nesting is an error naming the file."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rra_tools.builder.manifest_edit import EditError, edit_manifest
from rra_tools.env.artifact import update_lock_block
from rra_tools.io.artifact import ArtifactError
from rra_tools.io.read.bounded_yaml import YamlBoundsError, check_yaml, load_yaml

LAUGHS = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * 10)}]\n" for level in range(1, 9))
DEEP = "a: " + "[" * 100_000 + "]" * 100_000 + "\n"


def test_within_bounds_the_data_is_the_data() -> None:
    assert load_yaml("dependencies:\n  - python=3.11\n  - pip: [numpy==1.26]\n", "environment.yml") == {
        "dependencies": ["python=3.11", {"pip": ["numpy==1.26"]}]}
    assert load_yaml("  \n", "environment.yml") is None


@pytest.mark.parametrize(("text", "reason"), [(LAUGHS + "b: *a8\n", "environment.yml:7: document expands to more than"),
                                               (DEEP, "environment.yml:1: nesting is deeper than 64 levels")])
def test_bombs_are_refused_quickly(text: str, reason: str) -> None:
    start = time.monotonic()
    with pytest.raises(YamlBoundsError, match=reason):
        check_yaml(text, "environment.yml")
    assert time.monotonic() - start < 2


@pytest.mark.parametrize("text", [LAUGHS + "b: *a8\n", DEEP])
def test_a_manifest_edit_refuses_a_bomb(tmp_path: Path, text: str) -> None:
    manifest = tmp_path / "rra.yaml"
    manifest.write_text(text)
    with pytest.raises(EditError, match="cannot be read for editing: .*rra.yaml"):
        edit_manifest(manifest, lambda document: None)
    with pytest.raises(ArtifactError, match="cannot record the lock: .*rra.yaml"):
        update_lock_block(manifest, "pylock.toml", "pylock", "0" * 64)
    assert manifest.read_text() == text
