"""The locked environment is built with an installed Python of the manifest's version: how one is
found (PATH, pyenv's versions; shims skipped), and None when there is none."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from rra_tools.env.interpreters import find_interpreter


def fake_python(path: Path, version: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {version}\n")
    path.chmod(0o755)
    return path


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    find_interpreter.cache_clear()
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + str(tmp_path / "shims"))


def test_path_then_pyenv_versions_and_never_a_shim(tmp_path: Path) -> None:
    fake_python(tmp_path / "shims" / "python3.8", "3.8")  # a shim: skipped
    assert find_interpreter("3.8") is None
    pyenv = fake_python(tmp_path / "pyenv/versions/3.8.18/bin/python3.8", "3.8")
    assert find_interpreter.__wrapped__("3.8.1") == str(pyenv)  # major.minor count
    on_path = fake_python(tmp_path / "bin" / "python3.8", "3.8")
    assert find_interpreter.__wrapped__("3.8") == str(on_path)


def test_a_candidate_of_another_version_is_not_taken(tmp_path: Path) -> None:
    fake_python(tmp_path / "bin" / "python3.7", "3.9")  # named 3.7, answers 3.9
    assert find_interpreter("3.7") is None
    assert find_interpreter("not a version") is None


def test_this_interpreter_is_found_by_its_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / name).symlink_to(sys.executable)
    assert find_interpreter(f"{sys.version_info[0]}.{sys.version_info[1]}") == str(tmp_path / "bin" / name)
