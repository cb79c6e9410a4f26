"""Run records: one JSON document per launcher execution, the evidence levels and review read.

The fields the validator reads (``launcher``, ``seed``, ``exit_status``, ``status``,
``metrics``) keep the names and meanings of spec/04-levels.md#run-records; the rest is the
full record written by ``rra run``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, WithJsonSchema

from .vocab import RECORD_VERSION, Executor, LogStream, RunStatus
from ._base import Id, RRAModel, Sha256
from .launchers import REPEATS_MAX

__all__ = [
    "RECORD_VERSION",
    "ContainerInfo",
    "Executor",
    "GpuInfo",
    "LockMatch",
    "Host",
    "LogFile",
    "LogStream",
    "MissingOutput",
    "OutputFile",
    "RunRecord",
    "RunStatus",
]


Timestamp = Annotated[
    str,
    StringConstraints(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z$"),
    Field(description="A UTC time in ISO 8601, e.g. '2026-01-31T12:00:00.123456Z'."),
]


class GpuInfo(RRAModel):
    """One accelerator of the host."""

    index: int = Field(ge=0, description="Device index as CUDA numbers it.")
    model: str = Field(description="Model name, e.g. 'NVIDIA H100 80GB HBM3'.")
    driver: str | None = Field(default=None, description="Driver version.")
    cuda: str | None = Field(default=None, description="Highest CUDA version the driver supports.")
    memory_mib: int | None = Field(default=None, ge=0, description="Device memory, MiB.")


class LockMatch(RRAModel):
    """How the run's package set compares with the manifest's environment lock."""

    path: str = Field(description="The lock file, relative to the artifact root.")
    sha256: Sha256 = Field(description="SHA-256 of the lock file when the run started.")
    matches: bool = Field(
        description="True when every package of the lock is installed at its locked version "
        "(packages outside the lock are counted in 'extra', not held against the match)."
    )
    missing: list[str] = Field(
        default_factory=list,
        description="'name==version' of locked packages that are absent or installed at another "
        "version (then 'name==version (installed: other)').",
    )
    extra: int = Field(ge=0, description="Installed distributions the lock does not list.")


class Host(RRAModel):
    """Fingerprint of the machine and software the run took place on."""

    os: str = Field(description="Operating system and release, e.g. 'Linux 6.8.0'.")
    machine: str = Field(description="CPU architecture, e.g. 'x86_64'.")
    cpus: int = Field(ge=1, description="Logical CPUs of the host.")
    python: str = Field(description="Interpreter implementation and version, e.g. 'cpython 3.11.7'.")
    packages_digest: Sha256 = Field(
        description="SHA-256 over the sorted 'name==version' lines (one per line, '\\n'-terminated) "
        "of the installed distributions, names normalised as in PEP 503."
    )
    packages: int = Field(ge=0, description="Number of installed distributions in the digest.")
    gpus: list[GpuInfo] = Field(default_factory=list, description="Accelerators of the host.")
    environment: str = Field(
        default="current",
        description="Where the launcher's Python packages came from: 'current' (the interpreter "
        "running rra) or 'locked' (the environment 'rra env create' built from the lock); for a "
        "container run, 'image'.",
    )
    lock: LockMatch | None = Field(
        default=None, description="Comparison of the package set with the manifest's lock, when "
        "the manifest has a readable pip lock and the packages are visible to the executor."
    )


class OutputFile(RRAModel):
    """A declared output the run produced."""

    id: Id = Field(description="Id of the launcher's declared output.")
    path: str = Field(description="Path relative to the artifact root, placeholders resolved.")
    sha256: Sha256 = Field(
        description="SHA-256 of the file; for a directory, of its sorted '<sha256>  <relative path>' lines."
    )
    size: int = Field(ge=0, description="Size in bytes (a directory: the sum over its files).")
    mtime: Timestamp = Field(description="Last modification time, UTC.")


class MissingOutput(RRAModel):
    """A declared output the run did not produce."""

    id: Id
    path: str = Field(description="Path relative to the artifact root, placeholders resolved.")


class LogFile(RRAModel):
    """A captured standard stream."""

    stream: LogStream = Field(description="'stdout' or 'stderr'.")
    path: str = Field(description="Path relative to the record's directory.")
    sha256: Sha256
    size: int = Field(ge=0, description="Size in bytes.")


class ContainerInfo(RRAModel):
    """The engine and image a container run used, as the engine reported them."""

    engine: str = Field(description="Engine name and version from its /version, e.g. 'Podman Engine 4.3.1'.")
    image: str = Field(description="Image reference the run asked for (the manifest's environment.image "
                       "or the executor's override).")
    image_id: Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+:[0-9a-f]{32,}$")] = Field(
        description="Id of the image the container was created from, as the engine reports it "
        "(the digest of the image configuration, e.g. 'sha256:<64 hex>')."
    )
    repo_digests: list[str] = Field(
        default_factory=list, description="Registry digests the engine knows for that image, "
        "'repository@sha256:<64 hex>'."
    )
    network: str = Field(description="Network mode of the container; 'none' means no network.")


NullableInt = Annotated[int | None, WithJsonSchema({"type": ["integer", "null"]})]


class RunRecord(RRAModel):
    """One execution of one launcher: what ran, where, how it ended, and what it produced."""

    record_version: Literal["1.0", "1.1"] = Field(
        description="Version of the run-record format; 1.1 added 'repeat' and 'secrets'.")
    artifact_id: Id = Field(description="Id of the artifact (the manifest's 'id').")
    artifact_digest: Sha256 = Field(
        description="SHA-256 of the manifest's canonical JSON (sorted keys, no insignificant "
        "whitespace, UTF-8)."
    )
    launcher: Id = Field(description="Id of the launcher that ran.")
    argv: list[str] = Field(min_length=1, description="The command as run, placeholders resolved.")
    cwd: str = Field(description="Working directory relative to the artifact root.")
    parameters: dict[str, int | float | str | bool] = Field(
        default_factory=dict, description="Value of every launcher parameter in this run."
    )
    seed: NullableInt = Field(description="Seed of the run; null for a launcher that is not stochastic.")
    repeat: int | None = Field(
        default=None, ge=0, le=REPEATS_MAX - 1,
        description="Index of the run among the repeated runs of a launcher that is not stochastic "
        "(0 to repeats - 1); absent for a stochastic launcher.",
    )
    started: Timestamp = Field(description="When the process started, UTC.")
    ended: Timestamp = Field(description="When the run ended, UTC.")
    duration_s: float = Field(ge=0, description="Wall-clock seconds from start to end.")
    status: RunStatus = Field(
        description="'completed' (the process ended by itself), 'failed' (it could not start, was "
        "killed by a signal not sent by the executor, or a declared output is missing or unreadable), "
        "'timeout' (stopped at timeout_s) or 'interrupted' (stopped by the user or a signal)."
    )
    exit_status: NullableInt = Field(
        description="Exit status of the process; null when it did not start or was killed by a signal."
    )
    signal: int | None = Field(default=None, ge=1, description="Signal that ended the process, if any.")
    executor: Executor = Field(description="What ran the process: 'local' or 'container'.")
    container: ContainerInfo | None = Field(
        default=None, description="Engine and image of a run whose executor is 'container'."
    )
    timeout_s: float = Field(gt=0, description="Wall-clock limit the run had, seconds.")
    host: Host
    gpus: list[int] = Field(
        default_factory=list, description="Indices of the accelerators assigned (CUDA_VISIBLE_DEVICES)."
    )
    environment: dict[str, str] = Field(
        default_factory=dict,
        description="The process's complete environment; values of the launcher's secrets and of "
        "names containing TOKEN, KEY, SECRET, PASSWORD, PASSWD or CREDENTIAL are '[redacted]'.",
    )
    secrets: list[str] = Field(
        default_factory=list,
        description="Names of the launcher's secret variables and parameters whose values the run "
        "received; every occurrence of their values in argv, parameters, environment and the logs "
        "is replaced by '[redacted]'.",
    )
    outputs: list[OutputFile] = Field(default_factory=list, description="Declared outputs produced.")
    missing_outputs: list[MissingOutput] = Field(
        default_factory=list, description="Declared outputs not produced."
    )
    logs: list[LogFile] = Field(default_factory=list, description="Captured standard streams.")
    metrics: dict[str, float] = Field(
        default_factory=dict,
        description="Value obtained for each claim of the launcher (claim id -> number, after "
        "extraction and scale); a claim whose value could not be extracted is absent.",
    )
    stray_writes: list[str] = Field(
        default_factory=list,
        description="Files under the artifact root that the run created, changed or removed outside "
        "its declared outputs and the run-record directory (at most 100 listed; 'messages' gives "
        "the total). A run with stray writes has failed.",
    )
    messages: list[str] = Field(default_factory=list, description="What went wrong or deserves notice.")
