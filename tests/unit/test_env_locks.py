"""Reading locks: pip requirements with --hash, PEP 751 pylock.toml, conda-lock; errors with lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from rra_tools.env.locks import LockError, detect_format, parse_conda_lock, parse_pylock, parse_requirements, read_lock

REPO = Path(__file__).resolve().parents[2]
SIX_WHEEL = "4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274"
SIX_SDIST = "ff70335d468e7eb6ec65b95b99d3a2836546063f63acc5171de367e834932a81"


def test_digits_requirements_lock_has_seven_packages() -> None:
    lock = read_lock(REPO / "examples/digits-logreg/requirements.lock", "requirements-hashes")
    assert lock.format == "requirements-hashes"
    assert [(p.name, p.version) for p in lock.packages] == [
        ("cloudpickle", "3.1.3"), ("joblib", "1.6.0"), ("narwhals", "2.29.0"), ("numpy", "2.4.6"),
        ("scikit-learn", "1.9.1"), ("scipy", "1.17.1"), ("threadpoolctl", "3.8.0"),
    ]
    sklearn = lock.by_name()["scikit-learn"][0]
    assert sklearn.hashes == (("sha256", "52a0703bbc07ad27f560fa63fa68e4c54dd735bfbbf65b4dd3c225dc7547b6df"),)
    assert sklearn.line == 12


def test_gpu_example_pylock() -> None:
    lock = read_lock(REPO / "examples/gpu-resnet-cifar/pylock.toml")
    assert lock.format == "pylock"
    assert len(lock.packages) == 25
    assert lock.requires_python == "==3.10.*"
    assert lock.by_name()["typing-extensions"][0].version == "4.12.2"
    assert all(p.hashes for p in lock.packages)


def test_requirements_names_normalised_markers_and_continuations() -> None:
    text = (
        "# comment\n"
        "--index-url https://pypi.org/simple\n"
        "Typing_Extensions==4.12.2 ; python_version >= '3.8' \\\n"
        f"    --hash=sha256:{SIX_WHEEL} \\\n"
        f"    --hash=sha256:{SIX_SDIST}  # two files\n"
        f"six==1.17.0 --hash=sha256:{SIX_WHEEL.upper()}\n"
    )
    lock = parse_requirements(text, "r.lock")
    first, second = lock.packages
    assert first.name == "typing-extensions" and first.version == "4.12.2"
    assert first.marker == 'python_version >= "3.8"'
    assert first.hashes == (("sha256", SIX_WHEEL), ("sha256", SIX_SDIST))
    assert first.line == 3
    assert second.line == 6 and second.hashes == (("sha256", SIX_WHEEL),)


def test_requirements_every_problem_with_its_line() -> None:
    text = "six>=1 --hash=sha256:aa\nidna==3.7\n-r other.txt\nnot a requirement!\n"
    with pytest.raises(LockError) as info:
        parse_requirements(text, "r.lock")
    lines = str(info.value).splitlines()
    assert lines[:3] == [
        "r.lock:1: requirement 'six>=1' is not pinned with '==' (a lock pins exact versions)",
        "r.lock:2: requirement 'idna==3.7' has no --hash",
        "r.lock:3: option '-r' is not allowed in a lock: every package must be listed with its hashes",
    ]
    # The reason after the colon is packaging's wording, which varies between its versions.
    assert lines[3].startswith("r.lock:4: invalid requirement 'not a requirement!': ") and len(lines) == 4
    assert [p.line for p in info.value.problems] == [1, 2, 3, 4]


def test_pylock_errors() -> None:
    with pytest.raises(LockError) as info:
        parse_pylock('lock-version = "1.0"\n[[packages]\n', "p.toml")
    assert info.value.problems[0].line == 2
    assert str(info.value).startswith("p.toml:2: invalid TOML")
    text = 'lock-version = "2.0"\n\n[[packages]]\nname = "six"\nversion = "1.17.0"\n\n[[packages]]\nversion = "1"\n'
    with pytest.raises(LockError) as info:
        parse_pylock(text, "p.toml")
    assert str(info.value).splitlines() == [
        "p.toml:1: unsupported lock-version '2.0'; this tool reads 1.x",
        "p.toml:3: package 'six' has no wheels, sdist, archive, directory or vcs source",
        "p.toml:7: packages[1] has no 'name'",
    ]


def test_pylock_sources_and_markers() -> None:
    text = f'''lock-version = "1.0"
[[packages]]
name = "Six"
version = "1.17.0"
marker = "sys_platform == 'linux'"
wheels = [{{ name = "six-1.17.0-py2.py3-none-any.whl", url = "https://x/six.whl", hashes = {{ sha256 = "{SIX_WHEEL}" }} }}]
sdist = {{ url = "https://x/six-1.17.0.tar.gz", hashes = {{ sha256 = "{SIX_SDIST}" }} }}

[[packages]]
name = "local-thing"
version = "0.1"
directory = {{ path = "../src", editable = true }}
'''
    lock = parse_pylock(text, "pylock.toml")
    six, local = lock.packages
    assert six.name == "six" and six.marker == "sys_platform == 'linux'"
    assert [f.name for f in six.files] == ["six-1.17.0-py2.py3-none-any.whl", "six-1.17.0.tar.gz"]
    assert local.source == "directory" and local.editable and local.location == "../src" and not local.hashes


def test_conda_lock() -> None:
    text = f"""version: 1
metadata:
  platforms: [linux-64]
package:
  - name: python
    version: 3.11.7
    manager: conda
    platform: linux-64
    url: https://conda.anaconda.org/conda-forge/linux-64/python-3.11.7.conda
    hash:
      md5: 0123456789abcdef0123456789abcdef
      sha256: {SIX_SDIST}
  - name: Six
    version: 1.17.0
    manager: pip
    platform: linux-64
    url: https://files.pythonhosted.org/six-1.17.0-py2.py3-none-any.whl
    hash:
      sha256: {SIX_WHEEL}
  - name: broken
    manager: pip
"""
    with pytest.raises(LockError) as info:
        parse_conda_lock(text, "conda-lock.yml")
    assert str(info.value) == "conda-lock.yml:20: package[2] needs 'name' and 'version'"
    lock = parse_conda_lock(text.split("  - name: broken")[0], "conda-lock.yml")
    python, six = lock.packages
    assert (python.source, python.manager, python.platform, python.line) == ("conda", "conda", "linux-64", 5)
    assert (six.name, six.source, six.hashes) == ("six", "index", (("sha256", SIX_WHEEL),))


def test_read_lock_unreadable(tmp_path: Path) -> None:
    with pytest.raises(LockError, match=r"missing.lock: cannot read the lock file"):
        read_lock(tmp_path / "missing.lock", "requirements-hashes", display="missing.lock")
    bad = tmp_path / "bad.lock"
    bad.write_bytes(b"six==1.0\n\xff\n")
    with pytest.raises(LockError, match=r"bad.lock:2: not UTF-8"):
        read_lock(bad, "requirements-hashes", display="bad.lock")


def test_detect_format() -> None:
    assert detect_format(Path("pylock.toml")) == "pylock"
    assert detect_format(Path("conda-lock.yml")) == "conda-lock"
    assert detect_format(Path("requirements.lock")) == "requirements-hashes"
