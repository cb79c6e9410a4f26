"""Finding an installed Python of the version a manifest names, to build its locked environment
with.

A lock is resolved for the manifest's interpreter version (``uv pip compile --python-version``);
installed under another version, its pins may have no wheel and build from source (numpy 1.15 on
Python 3.11), or not install at all. So the environment is built with an interpreter of that
version when one is installed here: found on ``PATH`` (``python3.9``), under pyenv's versions
(``$PYENV_ROOT/versions/3.9.*``: pyenv's shims answer only for the version pyenv has selected,
so they are skipped), or as one of uv's managed Pythons. Each candidate is asked its version (it
is run with ``-I -c``, nothing of the artifact's); none is downloaded. Without one, the caller
falls back to its own interpreter and says so.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

__all__ = ["find_interpreter"]

_VERSION = re.compile(r"(\d+)\.(\d+)")


def _version_of(executable: str) -> tuple[int, int] | None:
    try:
        done = subprocess.run([executable, "-I", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                              capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    found = _VERSION.fullmatch(done.stdout.strip()) if done.returncode == 0 else None
    return (int(found.group(1)), int(found.group(2))) if found else None


def _candidates(major: int, minor: int) -> list[str]:
    name = f"python{major}.{minor}"
    found: list[str] = []
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if folder and "shims" not in Path(folder).parts:  # a pyenv shim answers for one version only
            path = Path(folder) / name
            if path.is_file() and os.access(path, os.X_OK):
                found.append(str(path))
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    if pyenv.is_dir():
        for version in sorted(pyenv.glob(f"{major}.{minor}.*"), reverse=True):
            found.append(str(version / "bin" / name))
    uv = shutil.which("uv")
    if uv is not None:
        try:
            done = subprocess.run([uv, "python", "find", "--no-python-downloads", f"{major}.{minor}"],
                                  capture_output=True, text=True, timeout=30, check=False,
                                  env={k: v for k, v in os.environ.items() if k != "PYENV_VERSION"})
            if done.returncode == 0 and done.stdout.strip():
                found.append(done.stdout.strip())
        except (OSError, subprocess.SubprocessError):
            pass
    return list(dict.fromkeys(found))


@cache
def find_interpreter(version: str) -> str | None:
    """An installed interpreter of ``version`` ('3.9' or '3.9.18': major and minor count), or
    None when none is found."""
    wanted = _VERSION.match(version)
    if wanted is None:
        return None
    major, minor = int(wanted.group(1)), int(wanted.group(2))
    for candidate in _candidates(major, minor):
        if Path(candidate).is_file() and _version_of(candidate) == (major, minor):
            return candidate
    return None
