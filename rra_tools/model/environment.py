"""The locked software environment and the hardware the artifact needs."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

from pydantic import Field, StringConstraints

from ._base import RelPath, RRAModel, Sha256, added

__all__ = [
    "Accelerator",
    "AcceleratorVendor",
    "Cuda",
    "Environment",
    "Hardware",
    "Interpreter",
    "Lock",
    "LockFormat",
    "OwnPackage",
    "SystemPackage",
]

Version = Annotated[str, StringConstraints(pattern=r"^[0-9]+(\.[0-9]+){0,3}$")]


class LockFormat(str, Enum):
    """File formats a lock may have."""

    PYLOCK = "pylock"
    REQUIREMENTS_HASHES = "requirements-hashes"
    CONDA_LOCK = "conda-lock"


class AcceleratorVendor(str, Enum):
    """Vendors of accelerators."""

    NVIDIA = "nvidia"
    AMD = "amd"
    INTEL = "intel"
    APPLE = "apple"
    GOOGLE = "google"
    OTHER = "other"


class Interpreter(RRAModel):
    """The language runtime the launchers run under."""

    name: Annotated[str, StringConstraints(min_length=1)] = Field(
        default="cpython", description="Implementation, e.g. 'cpython'."
    )
    version: Version = Field(description="Version, major.minor or more precise, e.g. '3.11' or '3.11.7'.")


class Lock(RRAModel):
    """The lock file that pins every package with hashes."""

    path: RelPath = Field(description="Path of the lock file inside the artifact.")
    format: LockFormat = Field(description="Format: 'pylock' (PEP 751), 'requirements-hashes', 'conda-lock'.")
    sha256: Sha256 = Field(description="SHA-256 of the lock file.")


class OwnPackage(RRAModel):
    """The artifact's own Python package, installed from its tree into the locked environment."""

    path: RelPath = Field(
        description="Directory holding the package's pyproject.toml, setup.py or setup.cfg, relative to "
        "the artifact root ('.' for the root)."
    )
    name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")] = Field(
        description="Its distribution name (as in 'pip install NAME'), compared after PEP 503 normalisation."
    )


class SystemPackage(RRAModel):
    """An operating-system package the environment needs."""

    name: Annotated[str, StringConstraints(min_length=1)] = Field(description="Package name, e.g. 'libgl1'.")
    version: str | None = Field(default=None, description="Exact version, when pinned.")
    manager: Annotated[str, StringConstraints(min_length=1)] = Field(
        default="apt", description="Package manager: 'apt', 'dnf', 'apk', 'brew', ..."
    )


class Accelerator(RRAModel):
    """Accelerators a full run needs."""

    vendor: AcceleratorVendor = Field(description="Vendor of the accelerator.")
    model: Annotated[str, StringConstraints(min_length=1)] = Field(description="Model, e.g. 'A100-SXM4-80GB'.")
    count: int = Field(ge=1, le=4096, description="How many are needed on one machine.")
    memory_gib: float | None = Field(default=None, gt=0, description="Memory per device, GiB.")


class Hardware(RRAModel):
    """The machine a full run needs."""

    accelerators: list[Accelerator] = Field(default_factory=list, description="Accelerators needed.")
    cpu_cores: int | None = Field(default=None, ge=1, description="CPU cores.")
    ram_gib: float | None = Field(default=None, gt=0, description="Main memory, GiB.")
    disk_gib: float | None = Field(default=None, gt=0, description="Free disk, GiB.")


class Cuda(RRAModel):
    """Minimum CUDA toolkit and driver versions."""

    min_version: Version = Field(description="Minimum CUDA runtime version, e.g. '12.1'.")
    min_driver: Version | None = Field(default=None, description="Minimum driver version, e.g. '530.30.02'.")


class Environment(RRAModel):
    """Interpreter, locked packages, system packages, container image and hardware."""

    interpreter: Interpreter = Field(description="Language runtime.")
    lock: Lock | None = Field(default=None, description="Lock file pinning packages with hashes.")
    package: OwnPackage | None = Field(
        default=None, json_schema_extra=added("1.1"),
        description="The artifact's own Python package (launchers call its console scripts): the lock "
        "records its tree digest and 'rra env create' installs it from the tree, after the locked packages.",
    )
    system_packages: list[SystemPackage] = Field(default_factory=list, description="OS packages needed.")
    image: Annotated[str, StringConstraints(min_length=1)] | None = Field(
        default=None,
        description="Container image reference, pinned by digest: 'registry/repo@sha256:<64 hex>'.",
    )
    hardware: Hardware = Field(default_factory=Hardware, description="Hardware needed for a full run.")
    cuda: Cuda | None = Field(default=None, description="CUDA and driver minimums (GPU artifacts).")
