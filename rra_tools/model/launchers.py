"""Launchers: one command per experiment, with parameters, seeds, resources and outputs."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

from pydantic import Field, StringConstraints

from ._base import Id, RelPath, RRAModel

__all__ = ["Launcher", "Output", "OutputFormat", "Parameter", "ParameterType", "Resources"]

ParamName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")]
EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


class ParameterType(str, Enum):
    """Types a launcher parameter may have."""

    INT = "int"
    FLOAT = "float"
    STR = "str"
    BOOL = "bool"
    PATH = "path"


class OutputFormat(str, Enum):
    """Formats a declared output may have."""

    JSON = "json"
    CSV = "csv"
    LOG = "log"
    TEXT = "text"
    BINARY = "binary"
    DIRECTORY = "directory"


class Parameter(RRAModel):
    """A typed launcher parameter, substituted into argv as ``{name}``."""

    type: ParameterType = Field(description="'int', 'float', 'str', 'bool' or 'path'.")
    default: int | float | str | bool = Field(description="Value used when none is given.")
    description: str | None = Field(default=None, description="What the parameter controls.")
    choices: list[int | float | str | bool] | None = Field(
        default=None, min_length=1, description="Allowed values, when restricted."
    )


class Resources(RRAModel):
    """What one run of the launcher needs and how long it takes."""

    gpus: int = Field(default=0, ge=0, le=4096, description="Accelerators one run needs.")
    gpu_memory_gib: float | None = Field(default=None, gt=0, description="Memory per accelerator, GiB.")
    cpus: int | None = Field(default=None, ge=1, description="CPU cores one run needs.")
    ram_gib: float | None = Field(default=None, gt=0, description="Main memory one run needs, GiB.")
    timeout_s: float = Field(gt=0, description="Wall-clock limit of one run, seconds.")
    expected_runtime_s: float = Field(gt=0, description="Typical wall-clock time of one run, seconds.")


class Output(RRAModel):
    """A file or directory a run produces."""

    id: Id
    path: RelPath = Field(
        description="Path template relative to the artifact root; may use {seed} and {parameter}."
    )
    format: OutputFormat = Field(description="'json', 'csv', 'log', 'text', 'binary' or 'directory'.")


class Launcher(RRAModel):
    """One command that runs one experiment step from a clean shell."""

    id: Id
    description: str | None = Field(default=None, description="What the launcher does.")
    argv: list[Annotated[str, StringConstraints(min_length=1)]] = Field(
        min_length=1,
        description="Command as an argument list (no shell); may use {seed} and {parameter} placeholders.",
    )
    cwd: RelPath = Field(default=".", description="Working directory relative to the artifact root.")
    env: dict[EnvName, str] = Field(
        default_factory=dict, description="Environment variables set for the run (nothing else leaks in)."
    )
    parameters: dict[ParamName, Parameter] = Field(
        default_factory=dict, description="Typed parameters by name."
    )
    stochastic: bool = Field(
        default=True, description="Whether results depend on a random seed; stochastic launchers declare seeds."
    )
    seeds: list[Annotated[int, Field(ge=0, le=2**63 - 1)]] = Field(
        default_factory=list, description="Seeds a full reproduction runs, in order."
    )
    resources: Resources = Field(description="Resources, timeout and expected runtime of one run.")
    depends_on: list[Id] = Field(default_factory=list, description="Launchers that must run first.")
    data: list[Id] = Field(default_factory=list, description="Data sources the launcher reads.")
    outputs: list[Output] = Field(default_factory=list, description="Files the launcher produces.")
