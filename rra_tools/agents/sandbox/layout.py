"""What a cell can see: the mounts of its sandbox, the same for every backend.

A sandbox starts from nothing and gets only what is listed here:

- the system's programs and libraries, read-only (``/usr`` and the merged-usr links or
  directories ``/bin``, ``/lib``, ``/lib64``, ``/sbin``), and a few files of ``/etc`` that programs
  need to start (never ``/etc/shadow``, keys or the resolver: there is no DNS inside);
- the Python that runs ``rra`` (its environment, its base installation and the ``rra_tools``
  package), read-only, so that a reproducer can call ``rra run``;
- the reproducer's own installation and any hand-over the condition gives, read-only;
- the cell's workspace, read-write, at the same path as on the host (paths in the run records
  written inside then mean the same outside);
- the directories an agent keeps its transcript and settings in (the cell's ``transcript/``
  beside the workspace, outside it), read-write, when an adapter asks for them: the transcript
  is then on the host as it is written, and stays there however the cell ends;
- ``/run/rra``: the cell's init program and the metering proxy's Unix socket, read-only;
- a private ``/tmp`` (the home directory lives there) and ``/proc``, ``/dev`` of the sandbox.

Paths are visible at their host paths. A path under a user's home (a pyenv Python, say) makes
that one directory visible, and nothing beside it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from ...model.cell import SandboxMount

__all__ = ["ETC_FILES", "INSIDE_HOME", "INSIDE_RUN", "INSIDE_TMP", "SYSTEM_LINKS", "cell_mounts", "python_paths"]

#: Where the init program and the proxy's socket appear inside the sandbox.
INSIDE_RUN = "/run/rra"
#: The sandbox's private temporary directory (a tmpfs of its own, never the host's /tmp).
INSIDE_TMP = "/tmp"  # noqa: S108
#: The home directory inside, on that tmpfs (agents write their settings there).
INSIDE_HOME = "/tmp/home"  # noqa: S108

#: Top-level system directories: bound when they are directories, recreated as links when
#: they are links (a merged-/usr system).
SYSTEM_LINKS = ("bin", "lib", "lib32", "lib64", "libx32", "sbin")

#: Files and directories of /etc a program may need to start; the rest of /etc stays out.
ETC_FILES = ("passwd", "group", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime",
             "alternatives", "ssl/certs", "ssl/openssl.cnf", "ca-certificates", "mime.types", "os-release", "debian_version",
             "python3", "python3.11", "python3.12", "python3.13", "gitconfig", "magic", "magic.mime")


def python_paths() -> list[Path]:
    """The evaluator's Python as a reproducer inside needs it: the environment's prefix, the base
    installation, and the directory holding ``rra_tools`` (an editable install lives outside
    site-packages)."""
    import rra_tools

    found: list[Path] = [Path(sys.prefix), Path(sys.base_prefix)]
    package = Path(rra_tools.__file__).resolve().parent
    if not any(package.is_relative_to(p) for p in found):
        found.append(package)
        # A source checkout keeps the published schemas beside the package, not in it.
        if (package.parent / "schemas").is_dir():
            found.append(package.parent / "schemas")
    return _outermost(p.resolve() for p in found)


def _outermost(paths: Iterable[Path]) -> list[Path]:
    unique = sorted(set(paths), key=lambda p: len(p.parts))
    kept: list[Path] = []
    for path in unique:
        if not any(path.is_relative_to(k) for k in kept):
            kept.append(path)
    return kept


def _system_mounts() -> list[SandboxMount]:
    mounts = [SandboxMount(source="/usr", target="/usr", mode="ro", role="system")]
    for name in SYSTEM_LINKS:
        path = Path("/") / name
        if path.is_dir() and not path.is_symlink():
            mounts.append(SandboxMount(source=str(path), target=str(path), mode="ro", role="system"))
    for name in ETC_FILES:
        path = Path("/etc") / name
        if path.exists():
            mounts.append(SandboxMount(source=str(path), target=str(path), mode="ro", role="system"))
    return mounts


def cell_mounts(workspace: Path, run_dir: Path, readonly: Sequence[Path] = (),
                with_python: bool = True, writable: Sequence[Path] = ()) -> list[SandboxMount]:
    """Every mount of a cell (see the module docstring): ``run_dir`` is the host directory shown
    as ``/run/rra``; ``readonly`` the reproducer's installation and hand-over paths; ``writable``
    an agent's transcript directories (role 'transcript')."""
    mounts = _system_mounts()
    extra = [Path(p).resolve() for p in readonly]
    inside_usr = [p for p in (python_paths() if with_python else []) if not p.is_relative_to("/usr")]
    for path in _outermost([*inside_usr, *extra]):
        if path.is_relative_to("/usr") or not path.exists():
            continue
        role = "rra" if path in inside_usr else "reproducer"
        mounts.append(SandboxMount(source=str(path), target=str(path), mode="ro", role=role))
    mounts.append(SandboxMount(source=str(run_dir.resolve()), target=INSIDE_RUN, mode="ro", role="proxy"))
    ws = workspace.resolve()
    mounts.append(SandboxMount(source=str(ws), target=str(ws), mode="rw", role="workspace"))
    for path in writable:
        resolved = Path(path).resolve()
        mounts.append(SandboxMount(source=str(resolved), target=str(resolved), mode="rw", role="transcript"))
    return mounts


def system_links() -> list[tuple[str, str]]:
    """(link, target) for the top-level system links of a merged-/usr host."""
    links = []
    for name in SYSTEM_LINKS:
        path = Path("/") / name
        if path.is_symlink():
            links.append((str(path), os.readlink(path)))
    return links
