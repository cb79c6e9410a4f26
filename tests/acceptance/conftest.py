"""Shared fixtures of the acceptance tests: real services started by the test setup."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ..services.podman import PodmanService, podman_service
from ..services.registry import RegistryService, registry_binary
from ..services.slurm import SlurmCluster, slurm_cluster


@pytest.fixture(scope="session")
def podman() -> Iterator[PodmanService]:
    """Podman's Docker-compatible API service with the busybox test image; fails if podman is missing."""
    with podman_service() as service:
        yield service


@pytest.fixture(scope="session")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RegistryService]:
    """A real OCI registry (Distribution 2.8) on a free loopback port; fails if it is missing."""
    if registry_binary() is None:
        pytest.fail("docker-registry is not installed (apt-get install docker-registry; .ci/run does)")
    service = RegistryService(tmp_path_factory.mktemp("registry"))
    service.start()
    try:
        yield service
    finally:
        service.stop()


@pytest.fixture(scope="session")
def slurm() -> Iterator[SlurmCluster]:
    """A real Slurm cluster on localhost (munged, slurmctld, slurmd with 2 fake GPUs); fails if
    slurm-wlm or munge is missing. One per machine at a time (a lock file)."""
    with slurm_cluster() as cluster:
        yield cluster
