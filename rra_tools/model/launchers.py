"""Launchers: one command per experiment, with parameters, seeds, resources and outputs."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, ClassVar

from pydantic import Field, StringConstraints, model_validator

from ._base import INT_MAX, Id, RelPath, RRAModel, added

__all__ = ["REPEATS_MAX", "Launcher", "Output", "OutputFormat", "Parameter", "ParameterType", "Resources"]

#: Most repeated runs a launcher that is not stochastic may declare.
REPEATS_MAX = 10_000

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

    # Every parameter has a default, except a secret one, whose value is never written down.
    _rra_any_of: ClassVar[tuple[dict[str, Any], ...]] = (
        {"required": ["default"]}, {"required": ["secret"], "properties": {"secret": {"const": True}}})

    type: ParameterType = Field(description="'int', 'float', 'str', 'bool' or 'path'.")
    default: int | float | str | bool | None = Field(
        default=None, description="Value used when none is given; required unless the parameter is secret.")
    description: str | None = Field(default=None, description="What the parameter controls.")
    choices: list[int | float | str | bool] | None = Field(
        default=None, min_length=1, description="Allowed values, when restricted."
    )
    secret: bool = Field(
        default=False, json_schema_extra=added("1.1"),
        description="The value is supplied at run time from the caller's environment variable of the "
        "parameter's name and is never stored: no default, and '[redacted]' in records and logs.",
    )

    @model_validator(mode="after")
    def _default_unless_secret(self) -> Parameter:
        if self.default is None and not self.secret:
            raise ValueError("a parameter that is not secret needs a default")
        return self


class Resources(RRAModel):
    """What one run of the launcher needs and how long it takes."""

    gpus: int = Field(default=0, ge=0, le=4096, description="Accelerators one run needs.")
    gpu_memory_gib: float | None = Field(default=None, gt=0, description="Memory per accelerator, GiB.")
    cpus: int | None = Field(default=None, ge=1, le=INT_MAX, description="CPU cores one run needs.")
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
    seeds: list[Annotated[int, Field(ge=0, le=INT_MAX)]] = Field(
        default_factory=list, description="Seeds a full reproduction runs, in order."
    )
    repeats: int = Field(
        default=1, ge=1, le=REPEATS_MAX, json_schema_extra=added("1.1"),
        description="Runs of a launcher that is not stochastic in a full reproduction: the same command, "
        "repeated to measure the variation a seed does not control; runs are numbered 0 to repeats - 1.",
    )
    secrets: list[EnvName] = Field(
        default_factory=list, json_schema_extra=added("1.1"),
        description="Environment variables supplied at run time from the caller's environment and never "
        "stored: their values are '[redacted]' in run records and logs.",
    )
    resources: Resources = Field(description="Resources, timeout and expected runtime of one run.")
    depends_on: list[Id] = Field(default_factory=list, description="Launchers that must run first.")
    data: list[Id] = Field(default_factory=list, description="Data sources the launcher reads.")
    outputs: list[Output] = Field(default_factory=list, description="Files the launcher produces.")
