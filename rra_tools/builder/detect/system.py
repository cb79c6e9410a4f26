"""What a repository says about the system around Python: ``apt.txt`` (the list repo2docker and
Binder read: one Debian package per line) and a ``Dockerfile``'s base image."""

from __future__ import annotations

import re
from typing import Any

from .findings import Finding
from .repo import RawRepo

__all__ = ["detect_system"]

_APT_NAME = re.compile(r"[a-z0-9][a-z0-9+.\-]+")
_FROM = re.compile(r"^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?\s*$", re.IGNORECASE)
_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")


def detect_system(repo: RawRepo) -> tuple[dict[str, Any], list[Finding]]:
    """(``environment`` fields to write: ``system_packages``; findings, the base image among them)."""
    fields: dict[str, Any] = {}
    found: list[Finding] = []
    apt = repo.text("apt.txt")
    if apt is not None:
        packages = []
        for number, raw in enumerate(apt.splitlines(), 1):
            line = raw.split("#", 1)[0].strip()
            if line and _APT_NAME.fullmatch(line):
                packages.append({"name": line, "manager": "apt"})
                found.append(Finding("system-package", line, "apt.txt", number))
        if packages:
            fields["system_packages"] = packages
    dockerfile = repo.text("Dockerfile")
    if dockerfile is not None:
        stages: set[str] = set()
        last: tuple[str, int] | None = None
        for number, line in enumerate(dockerfile.splitlines(), 1):
            match = _FROM.match(line)
            if match is None:
                continue
            image, alias = match.group(1), match.group(2)
            if image not in stages:  # FROM an earlier stage is not a base image
                last = (image, number)
            if alias:
                stages.add(alias)
        if last is not None:
            image, number = last
            # Reported, never written as environment.image: that is the image the launchers run
            # in, which is this base plus the Dockerfile's own steps, pinned once it is built.
            pinned = "pinned by digest" if _DIGEST.search(image) else "pinned by tag only"
            found.append(Finding("base-image", image, "Dockerfile", number,
                                 f"the final stage's base image, {pinned}; environment.image is the built "
                                 "image, pinned by digest after building"))
    return fields, found
