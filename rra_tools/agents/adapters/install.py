"""Installing an agent's pinned version into a cached, read-only tree that cells mount.

The tree of an adapter is ``<cache>/<name>-<version>/``, where ``<cache>`` is ``RRA_AGENTS_CACHE``,
else ``$XDG_CACHE_HOME/rra/agents``, else ``~/.cache/rra/agents``:

- npm packages: ``npm install --prefix TREE PACKAGE@VERSION`` (Node and npm from the system:
  Debian's ``nodejs`` and ``npm``), the program under ``node_modules/.bin/``;
- PyPI packages: a virtual environment made with the evaluator's base interpreter (which every
  sandbox shows) and ``pip install PACKAGE==VERSION`` into it, the program under ``bin/``.

The tree is complete only when its marker file (``.rra-agent.json``: name, package, version) is
there: it is written last, after the install succeeded and the tree was made read-only (no write
bit anywhere but for that one file's moment), so an interrupted install is never taken for a finished one and is started over.
A lock per tree makes two installs at once (two benchmarks, CI and a person) do the work once. A
tree is installed in place (not renamed into place) because a virtual environment's scripts
name its path.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .base import Adapter, AdapterError

__all__ = ["INSTALL_TIMEOUT_S", "MARKER", "AgentStatus", "cache_root", "install", "installed", "status", "tree"]

#: The file that says a tree is complete.
MARKER = ".rra-agent.json"
#: The longest an install may take.
INSTALL_TIMEOUT_S = 1800


def cache_root() -> Path:
    """Where agents' trees are kept (see the module docstring)."""
    given = os.environ.get("RRA_AGENTS_CACHE")
    if given:
        return Path(given).expanduser().resolve()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return (Path(base) / "rra" / "agents").resolve()


def tree(adapter: Adapter) -> Path:
    """The tree ``adapter`` installs into."""
    return cache_root() / f"{adapter.name}-{adapter.version}"


def _marker(adapter: Adapter) -> dict[str, str]:
    return {"name": adapter.name, "package": adapter.package, "version": adapter.version,
            "installer": adapter.installer}


def installed(adapter: Adapter) -> bool:
    """Whether ``adapter``'s tree is complete (its marker names this package and version)."""
    if adapter.installer == "none":
        return True
    try:
        found = json.loads((tree(adapter) / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(found == _marker(adapter) and (tree(adapter) / adapter.program).exists())


@dataclass(frozen=True)
class AgentStatus:
    """One row of ``rra bench agents``."""

    name: str
    summary: str
    package: str
    version: str
    installer: str
    installed: bool
    tree: Path | None


def status(adapter: Adapter) -> AgentStatus:
    """What ``rra bench agents`` says of ``adapter``."""
    return AgentStatus(adapter.name, adapter.summary, adapter.package, adapter.version, adapter.installer,
                       installed(adapter), None if adapter.installer == "none" else tree(adapter))


def _writable(root: Path) -> None:
    # A read-only tree cannot be removed until its directories may be written again.
    for directory, dirs, _files in os.walk(root):
        os.chmod(directory, os.stat(directory).st_mode | stat.S_IWUSR)
        for name in dirs:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode | stat.S_IWUSR)


def _read_only(root: Path) -> None:
    write = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
    for directory, _dirs, files in os.walk(root, topdown=False):
        for name in files:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode & ~write)
        os.chmod(directory, os.stat(directory).st_mode & ~write)


def _run(argv: list[str], what: str, cwd: Path) -> None:
    try:
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AdapterError(f"{what} failed: {exc}") from None
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr.strip() or proc.stdout.strip()).splitlines()[-8:])
        raise AdapterError(f"{what} failed (exit status {proc.returncode}):\n{tail}",
                           "check that the package registry can be reached (npm config get registry; pip config list)")


def _install_npm(adapter: Adapter, target: Path) -> None:
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise AdapterError(f"{adapter.name} needs Node.js and npm, and they are not on PATH",
                           "install them (Debian: apt-get install nodejs npm)")
    _run([npm, "install", "--prefix", str(target), f"{adapter.package}@{adapter.version}", "--no-audit", "--no-fund",
          "--no-update-notifier", "--loglevel=error"], f"npm install {adapter.package}@{adapter.version}", target)


def _install_pypi(adapter: Adapter, target: Path) -> None:
    # The base interpreter, not the evaluator's venv: the agent's environment is its own, and
    # the base installation is shown in every sandbox (rra's own Python needs it there).
    base = getattr(sys, "_base_executable", None) or sys.executable
    _run([base, "-m", "venv", str(target)], f"python -m venv {target}", target.parent)
    _run([str(target / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
          f"{adapter.package}=={adapter.version}"], f"pip install {adapter.package}=={adapter.version}", target)


def install(adapter: Adapter, *, force: bool = False) -> Path:
    """Install ``adapter``'s pinned version into its tree (nothing to do when it is complete,
    unless ``force``); the tree. AdapterError when the install fails or needs what is missing."""
    if adapter.installer == "none":
        raise AdapterError(f"the adapter {adapter.name!r} installs nothing", "it runs the task set's own command")
    target = tree(adapter)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed(adapter) and not force:
            return target
        if target.exists():
            _writable(target)
            shutil.rmtree(target)
        target.mkdir()
        try:
            if adapter.installer == "npm":
                _install_npm(adapter, target)
            else:
                _install_pypi(adapter, target)
            if not (target / adapter.program).exists():
                raise AdapterError(f"{adapter.package} {adapter.version} installed no {adapter.program!r}")
            _read_only(target)
            # The marker last, into the one directory left writable for it a moment.
            os.chmod(target, os.stat(target).st_mode | stat.S_IWUSR)
            (target / MARKER).write_text(json.dumps(_marker(adapter), indent=1) + "\n", encoding="utf-8")
            no_write = ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
            os.chmod(target / MARKER, 0o444)
            os.chmod(target, os.stat(target).st_mode & no_write)
        except BaseException:
            _writable(target)
            shutil.rmtree(target, ignore_errors=True)
            raise
    return target
