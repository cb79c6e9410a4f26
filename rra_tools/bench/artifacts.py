"""Artifacts named by an OCI reference: resolved to a digest, pulled, verified and unpacked once
per digest into a cache directory, whose tree then serves every task (and every cell) naming it.

A task's ``artifact`` that starts with ``oci://`` is a registry reference
(``oci://HOST[:PORT]/REPO:TAG`` or ``...@sha256:<hex>``); anything else is a path. A tag is
resolved to its manifest digest first; the pull is then made by that digest, so the manifest is
checked against it and every blob against its own (:func:`rra_tools.oci.pull.pull`). The tree
lands in ``<cache>/<algorithm>/<hex>/`` only when everything matched, so a directory there is a
verified pull and is used as it is. A lock per digest (a thread lock and an ``flock`` on
``<cache>/<algorithm>/<hex>.lock``) makes two tasks, threads or processes that need the same
digest pull it once: the second waits and finds the tree.
"""

from __future__ import annotations

import fcntl
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import RRAError
from .errors import BenchError

if TYPE_CHECKING:
    from ..oci.registry import RegistryClient

__all__ = ["OCI_PREFIX", "ArtifactCache", "CachedArtifact", "is_reference"]

#: What starts a task's artifact that is a registry reference rather than a path.
OCI_PREFIX = "oci://"

#: Called after each reference is resolved: the reference, its digest, and whether it was pulled
#: now (False: the cache held it).
OnFetch = Callable[[str, str, bool], None]


def is_reference(artifact: str) -> bool:
    """Whether a task's ``artifact`` names an OCI reference (``oci://...``)."""
    return artifact.startswith(OCI_PREFIX)


def _default_client(host: str) -> RegistryClient:
    # Imported here: the registry client pulls in requests, which a task set of paths never needs.
    from ..oci.registry import RegistryClient

    return RegistryClient(host)


@dataclass(frozen=True)
class CachedArtifact:
    """A reference resolved and its verified tree in the cache."""

    reference: str
    digest: str
    root: Path
    pulled: bool


@dataclass
class ArtifactCache:
    """The cache directory and how to reach registries.

    ``client`` makes the registry client of a host (default: :class:`RegistryClient` with its
    defaults: plain HTTP on loopback only)."""

    directory: Path
    client: Callable[[str], RegistryClient] = field(default=_default_client)
    on_fetch: OnFetch | None = None
    _locks: dict[str, threading.Lock] = field(default_factory=dict, repr=False)
    #: References already resolved by this cache: a tag is resolved once, and a task set naming
    #: it in several tasks sees one digest.
    _done: dict[str, CachedArtifact] = field(default_factory=dict, repr=False)
    _guard: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _lock(self, digest: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(digest, threading.Lock())

    def fetch(self, text: str) -> CachedArtifact:
        """Resolve ``text`` (``oci://...``) to its digest and return the verified tree of that
        digest, pulling it when the cache does not hold it; BenchError naming the reference."""
        with self._guard:
            done = self._done.get(text)
        if done is not None:
            return CachedArtifact(text, done.digest, done.root, False)
        from ..oci.pull import pull
        from ..oci.registry import Reference

        try:
            source = Reference.parse(text)
            with self.client(source.registry) as client:
                digest = source.digest or client.get_manifest(source.repository, source.reference).digest
                algorithm, _, hexdigest = digest.partition(":")
                root = self.directory / algorithm / hexdigest
                with self._lock(digest):
                    root.parent.mkdir(parents=True, exist_ok=True)
                    with open(root.parent / f"{hexdigest}.lock", "a+b") as lock:
                        # Another process pulling the same digest holds it until its tree is in place.
                        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
                        pulled = not root.is_dir()
                        if pulled:
                            pull(source.with_digest(digest), root, client)
        except BenchError:
            raise
        except RRAError as exc:
            raise BenchError(f"artifact {text!r}: {exc.describe()}", exc.hint) from None
        except OSError as exc:
            raise BenchError(f"artifact {text!r}: cache {str(self.directory)!r}: {exc.strerror or exc}") from None
        if self.on_fetch is not None:
            self.on_fetch(text, digest, pulled)
        result = CachedArtifact(text, digest, root, pulled)
        with self._guard:
            self._done[text] = result
        return result
