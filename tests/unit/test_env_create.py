"""rra env create's offline parts: the hash-pinned requirements derived from a lock, the cache key."""

from __future__ import annotations

from pathlib import Path

import pytest

from rra_tools.env.create import CACHE_VAR, CreateError, cache_root, create_env, hashed_requirements
from rra_tools.env.locks import parse_conda_lock, parse_pylock, read_lock

REPO = Path(__file__).resolve().parents[2]


def test_requirements_from_a_requirements_lock() -> None:
    lock = read_lock(REPO / "examples/digits-logreg/requirements.lock", "requirements-hashes")
    lines = hashed_requirements(lock).splitlines()
    assert len(lines) == 7
    assert lines[0] == ("cloudpickle==3.1.3 "
                        "--hash=sha256:1654f4f18e416447210a63c5c25a135d65a292156aa5fa519dfa4baf7726dddb")


def test_requirements_keep_markers_and_every_file_hash() -> None:
    lock = parse_pylock('''lock-version = "1.0"
[[packages]]
name = "colorama"
version = "0.4.6"
marker = "sys_platform == 'win32'"
wheels = [{ url = "https://x/a.whl", hashes = { sha256 = "aa" } }]
sdist = { url = "https://x/a.tar.gz", hashes = { sha256 = "bb" } }
''')
    assert hashed_requirements(lock) == ("colorama==0.4.6 ; sys_platform == 'win32' "
                                         "--hash=sha256:aa --hash=sha256:bb\n")


def test_unhashed_and_conda_packages_are_refused() -> None:
    lock = parse_pylock('lock-version = "1.0"\n[[packages]]\nname = "mine"\nversion = "0.1"\n'
                        'directory = { path = "..", editable = true }\n', "pylock.toml")
    with pytest.raises(CreateError, match=r"^pylock.toml:2: mine \(directory \.\.\) has no hashes and cannot be "
                       r"installed hash-checked$"):
        hashed_requirements(lock)
    conda = parse_conda_lock("package:\n  - name: python\n    version: '3.11'\n    hash: {md5: aa}\n", "c.yml")
    with pytest.raises(CreateError, match="conda-lock install"):
        hashed_requirements(conda)


def test_cache_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(CACHE_VAR, str(tmp_path))
    assert cache_root() == tmp_path
    monkeypatch.delenv(CACHE_VAR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "rra"


def test_digest_mismatch_is_refused_before_anything_runs(tmp_path: Path) -> None:
    lock = tmp_path / "r.lock"
    lock.write_text("six==1.17.0 --hash=sha256:00\n")
    with pytest.raises(CreateError, match="refusing to build from a lock the manifest does not pin"):
        create_env(lock, "requirements-hashes", cache=tmp_path / "cache", expected_sha256="0" * 64)
    assert not (tmp_path / "cache").exists()


def test_uv_compiles_bytecode_only_for_python_3_7_and_later(tmp_path: Path) -> None:
    # uv's compiler script needs py_compile.PycInvalidationMode (Python 3.7): an environment of a
    # paper's Python 3.6 is compiled by its own compileall instead (mapreduce-figures' lock).
    from rra_tools.env.create import uv_compiles_for

    for text, compiles in (("home = /x\nversion_info = 3.6.15\n", False), ("version = 3.6.9\n", False),
                           ("version_info = 3.7.16\n", True), ("version_info = 3.12.1.final.0\n", True),
                           ("home = /x\n", True)):
        (tmp_path / "pyvenv.cfg").write_text(text)
        assert uv_compiles_for(tmp_path) is compiles, text
    assert uv_compiles_for(tmp_path / "missing") is True
