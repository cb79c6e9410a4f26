"""Fingerprint of the host a run takes place on: OS, CPU, interpreter, packages, accelerators."""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any

    from .gpus import GpuInfo

__all__ = ["compare_with_lock", "env_site_dirs", "host_fingerprint", "lock_match", "package_set"]


_DIST_INFO = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)\.dist-info$")


@lru_cache(maxsize=4)
def package_set(site_dirs: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """Sorted 'name==version' of the distributions installed in ``site_dirs`` (default: this
    interpreter's sys.path), names normalised as in PEP 503.

    ``*.dist-info`` directories name their distribution and version (PEP 427), so those are
    read from the directory name; anything else (``*.egg-info``) from its metadata. Nothing is
    imported or executed, so this also reads another environment's site-packages.
    """
    lines = set()
    for entry in dict.fromkeys(sys.path if site_dirs is None else site_dirs):
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            # A site directory holds far more modules than distributions: the suffix is tested first.
            match = _DIST_INFO.match(name) if name.endswith(".dist-info") else None
            if match:
                lines.add(f"{_normalise(match['name'])}=={match['version']}")
            elif name.endswith(".egg-info"):
                from importlib.metadata import PathDistribution  # rare, and 13 ms to import

                dist = PathDistribution(Path(entry or ".", name))
                dist_name = dist.metadata["Name"] if dist.metadata is not None else None
                if dist_name:
                    lines.add(f"{_normalise(dist_name)}=={dist.version}")
    return tuple(sorted(lines))


def env_site_dirs(env_dir: Path) -> tuple[str, ...]:
    """The site-packages directories of a virtual environment (``lib/python*/site-packages``)."""
    return tuple(sorted(str(p) for p in env_dir.glob("lib*/python*/site-packages") if p.is_dir()))


def compare_with_lock(packages: Sequence[str], locked: Sequence[tuple[str, str | None]], path: str,
                      sha256: str) -> dict[str, Any]:
    """How ``packages`` ('name==version' lines) compare with the lock's (name, version) pairs.

    >>> compare_with_lock(["numpy==2.1.3", "pip==24.0"], [("NumPy", "2.1.3"), ("scipy", "1.14.1")],
    ...                   "requirements.lock", "0" * 64)["missing"]
    ['scipy==1.14.1']
    """
    installed = dict(line.split("==", 1) for line in packages)
    missing = []
    names = set()
    for name, version in locked:
        key = _normalise(name)
        names.add(key)
        have = installed.get(key)
        if have is None:
            missing.append(f"{key}=={version}")
        elif version is not None and have != version:
            missing.append(f"{key}=={version} (installed: {have})")
    extra = sum(1 for key in installed if key not in names)
    return {"path": path, "sha256": sha256, "matches": not missing, "missing": sorted(missing), "extra": extra}


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_match(root: Path, lock: Any, packages: Sequence[str]) -> dict[str, Any] | None:
    """Compare ``packages`` with the manifest's lock block ``lock`` (path, format); None when
    there is no pip lock to compare with or it cannot be read. Packages whose environment
    marker is false here (e.g. Windows-only ones) are not expected."""
    from ..io.digest import sha256_file
    from ..io.paths import resolve_inside

    if lock is None or str(lock.format) == "conda-lock":
        return None
    resolved = resolve_inside(root, lock.path, kind="file")
    if resolved.path is None:
        return None
    try:
        sha = sha256_file(resolved.path)
    except OSError:
        return None
    locked = _locked_packages(resolved.path, str(lock.format), lock.path, sha)
    if locked is None:
        return None
    expected = [(name, version) for name, version, marker in locked if not marker]
    if len(expected) < len(locked):  # its package's import, on the locks whose packages have markers
        from ..env.markers import marker_applies

        expected = [(name, version) for name, version, marker in locked if marker_applies(marker)]
    return compare_with_lock(packages, expected, lock.path, sha)


def _locked_packages(path: Path, fmt: str, display: str, sha: str) -> list[tuple[str, str | None, str | None]] | None:
    """(name, version, marker) of each package of the lock, or None when it cannot be read.

    Parsing a lock needs ``packaging`` and the lock readers (about 40 ms of imports on every
    ``rra run``), so the result is cached by the lock's digest under the cache directory; the
    cache is a pure function of the file's bytes, and failing to write it changes nothing.
    """
    from ..io.cache import read_json_entry, write_json_entry

    key = f"{sha}-{fmt}"
    cached = read_json_entry("locks", key)
    try:
        if isinstance(cached, list):
            return [(str(n), None if v is None else str(v), None if m is None else str(m)) for n, v, m in cached]
    except (ValueError, TypeError):
        pass
    from ..env.locks import LockError, read_lock

    try:
        locked = read_lock(path, fmt, display=display)
    except (LockError, OSError):
        return None
    rows = [(p.name, p.version, p.marker) for p in locked.packages]
    write_json_entry("locks", key, rows)
    return rows


def _python_version() -> str:
    """platform.python_version(): the first word of sys.version ('3.11.9', '3.13.0rc1'), with a
    '.0' added to a two-part one."""
    version = sys.version.split(None, 1)[0]
    return f"{version}.0" if version.count(".") == 1 else version


def host_fingerprint(gpus: Sequence[GpuInfo] = (), *, packages: Sequence[str] | None = None,
                     environment: str = "current", lock: dict[str, Any] | None = None,
                     python: str | None = None) -> dict[str, Any]:
    """The current host's fingerprint (a run record's ``host`` object) with the given
    accelerator inventory; ``packages`` is the run's package set (default: this interpreter's),
    ``python`` the run's interpreter ('cpython 3.13.0'; default: this one's: a locked environment
    may be built with another Python than rra's, from the manifest's interpreter version)."""
    packages = package_set() if packages is None else packages
    digest = hashlib.sha256("".join(line + "\n" for line in packages).encode("utf-8")).hexdigest()
    # What platform.system(), release(), machine(), python_implementation() and python_version()
    # answer on a POSIX host, read without importing platform (1 ms of every rra run).
    uname = os.uname()
    host: dict[str, Any] = {
        "os": f"{uname.sysname} {uname.release}".strip(),
        "machine": uname.machine or "unknown",
        "cpus": os.cpu_count() or 1,
        "python": python or f"{sys.implementation.name} {_python_version()}",
        "packages_digest": digest,
        "packages": len(packages),
        "gpus": [g.as_record() for g in gpus],
        "environment": environment,
    }
    if lock is not None:
        host["lock"] = lock
    return host


def env_python(env_dir: Path) -> str | None:
    """The interpreter of a virtual environment, from its pyvenv.cfg ('cpython 3.13.0'), or None."""
    try:
        text = (env_dir / "pyvenv.cfg").read_text(encoding="utf-8")
    except OSError:
        return None
    fields = {key.strip(): value.strip() for key, value in
              (line.split("=", 1) for line in text.splitlines() if "=" in line)}
    # uv writes version_info (3.12.1.final.0 from some builds), venv writes version: X.Y.Z as
    # platform.python_version() gives it.
    found = re.match(r"\d+\.\d+(?:\.\d+)?", fields.get("version_info") or fields.get("version") or "")
    implementation = fields.get("implementation", "cpython").lower()
    return f"{implementation} {found.group(0)}" if found else None
