"""Fingerprint of the host a run takes place on: OS, CPU, interpreter, packages, accelerators."""

from __future__ import annotations

import hashlib
import os
import platform
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from ..model.run_record import GpuInfo, Host

__all__ = ["host_fingerprint", "package_set"]


_DIST_INFO = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)\.dist-info$")


@lru_cache(maxsize=1)
def package_set() -> tuple[str, ...]:
    """Sorted 'name==version' of the distributions installed for this interpreter (PEP 503 names).

    ``*.dist-info`` directories name their distribution and version (PEP 427), so those are
    read from the directory name; anything else (``*.egg-info``) from its metadata.
    """
    import sys
    from importlib.metadata import PathDistribution

    lines = set()
    for entry in dict.fromkeys(sys.path):
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            match = _DIST_INFO.match(name)
            if match:
                lines.add(f"{_normalise(match['name'])}=={match['version']}")
            elif name.endswith(".egg-info"):
                dist = PathDistribution(Path(entry or ".", name))
                dist_name = dist.metadata["Name"] if dist.metadata is not None else None
                if dist_name:
                    lines.add(f"{_normalise(dist_name)}=={dist.version}")
    return tuple(sorted(lines))


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def host_fingerprint(gpus: Sequence[GpuInfo] = ()) -> Host:
    """The current host's fingerprint with the given accelerator inventory."""
    packages = package_set()
    digest = hashlib.sha256("".join(line + "\n" for line in packages).encode("utf-8")).hexdigest()
    return Host(
        os=f"{platform.system()} {platform.release()}".strip(),
        machine=platform.machine() or "unknown",
        cpus=os.cpu_count() or 1,
        python=f"{platform.python_implementation().lower()} {platform.python_version()}",
        packages_digest=digest,
        packages=len(packages),
        gpus=list(gpus),
    )
