"""Claims: numbers (and, from 1.2, strings, sets and lists) printed in the paper, how to obtain
them, and reference observations."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import Field, StringConstraints, model_validator

from ._base import INT_MAX, Id, RelPath, RRAModel, added
from .launchers import REPEATS_MAX

__all__ = [
    "Aggregation",
    "Claim",
    "ClaimKind",
    "ClaimValue",
    "CsvExtract",
    "Direction",
    "Extract",
    "Fingerprint",
    "Metric",
    "Observation",
    "PaperLocation",
    "Provenance",
    "Reference",
    "RegexExtract",
    "Reported",
    "StabilityClass",
    "Stream",
]


class Direction(str, Enum):
    """Whether a larger metric value is better."""

    HIGHER = "higher"
    LOWER = "lower"


class Aggregation(str, Enum):
    """How per-seed values combine into the claimed value."""

    MEAN = "mean"
    MEDIAN = "median"
    MIN = "min"
    MAX = "max"
    SINGLE = "single"


class ClaimKind(str, Enum):
    """What kind of answer a claim is (spec/02-manifest.md#kinds); the matching rules are those of
    :mod:`rra_tools.answers`."""

    NUMBER = "number"
    STRING = "string"
    SET = "set"
    LIST = "list"


#: A reported or observed value: a number (kind number), a string (kind string), or a list of
#: numbers and strings (kinds set and list). Which one fits is the claim's kind (RRA514).
ClaimValue = Union[float, str, list[Union[float, str]]]


class StabilityClass(str, Enum):
    """Class of a claim derived from its reference observations."""

    STABLE = "stable"
    VARIABLE = "variable"


class Stream(str, Enum):
    """A standard stream of the launcher's process, captured by the tool that runs it."""

    STDOUT = "stdout"
    STDERR = "stderr"


class CodeOrigin(str, Enum):
    """Which code a reference run ran."""

    RAW = "raw"
    REFINED = "refined"


class PaperLocation(RRAModel):
    """Where in the paper the number is printed; at least one of the fields is given."""

    table: str | None = Field(default=None, description="Table label, e.g. '2'.")
    figure: str | None = Field(default=None, description="Figure label, e.g. '3b'.")
    section: str | None = Field(default=None, description="Section number, e.g. '5.1'.")
    row: str | None = Field(default=None, description="Row label in the table.")
    column: str | None = Field(default=None, description="Column label in the table.")
    page: int | None = Field(default=None, ge=1, description="Page number.")


class Metric(RRAModel):
    """The measured quantity."""

    name: Annotated[str, StringConstraints(min_length=1)] = Field(description="Name, e.g. 'accuracy'.")
    unit: str = Field(description="Unit as printed, e.g. '%', 's', '' for dimensionless.")
    direction: Direction = Field(description="'higher' or 'lower' is better.")


class CsvExtract(RRAModel):
    """A CSV cell: a column and the row selected by index or by matching other columns."""

    column: Annotated[str, StringConstraints(min_length=1)] = Field(description="Header of the column.")
    row_index: int | None = Field(default=None, description="Row number among data rows; -1 is the last.")
    where: dict[str, str] | None = Field(
        default=None, description="Select the one row whose columns equal these values."
    )


class RegexExtract(RRAModel):
    """A number matched by a regular expression in a log or text output."""

    pattern: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="Regular expression in the portable subset of spec/02-manifest.md#regular-expressions, "
        "with a capturing group around the number."
    )
    group: int = Field(default=1, ge=0, description="Capturing group holding the number.")
    occurrence: Literal["first", "last"] = Field(default="last", description="Which match counts.")


class Extract(RRAModel):
    """How to read the metric out of one declared output or a standard stream of the run; exactly one
    source and one method are given."""

    _rra_any_of: ClassVar[tuple[dict[str, Any], ...]] = ({"required": ["output"]}, {"required": ["stream"]})

    output: Id | None = Field(
        default=None, description="Id of an output declared by the claim's launcher; required unless "
        "'stream' is given.")
    stream: Stream | None = Field(
        default=None, json_schema_extra=added("1.1"),
        description="'stdout' or 'stderr': read the launcher's captured standard output or error instead "
        "of a declared output.",
    )
    json_pointer: Annotated[str, StringConstraints(pattern=r"^(/([^~/]|~[01])*)*$")] | None = Field(
        default=None, description="RFC 6901 JSON pointer into a JSON output."
    )
    csv: CsvExtract | None = Field(default=None, description="Column and row of a CSV output.")
    regex: RegexExtract | None = Field(default=None, description="Regular expression over a log.")
    scale: float = Field(default=1.0, description="Factor applied to the extracted value, e.g. 100 for %.")

    @model_validator(mode="after")
    def _one_source(self) -> Extract:
        if (self.output is None) == (self.stream is None):
            raise ValueError("extract needs exactly one of 'output' and 'stream'")
        return self


class Reported(RRAModel):
    """The value printed in the paper."""

    value: ClaimValue = Field(
        description="The number as printed; from 1.2, the string, or the list of numbers and strings, of a claim "
        "of another kind.")
    precision: int = Field(ge=0, le=15, description="Digits printed after the decimal point (of the numbers of a "
                           "set or list; 0 for a string).")


class Fingerprint(RRAModel):
    """Hardware and software an observation was taken on."""

    hardware: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="Machine summary, e.g. 'x86_64, 2 cores' or '1x NVIDIA A100-SXM4-80GB'."
    )
    software: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="Software summary, e.g. 'cpython 3.11.7, lock sha256:ab12...'."
    )


class Provenance(RRAModel):
    """Who or what produced a reference observation, from which code, on which machine."""

    by: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="The person or tool that ran it, e.g. 'Jun Park' or 'ci: github-actions'."
    )
    code: CodeOrigin = Field(
        description="'raw': the upstream commit as published; 'refined': this artifact's code."
    )
    revision: Annotated[str, StringConstraints(min_length=1)] | None = Field(
        default=None, description="The commit id (raw) or artifact digest (refined) that ran."
    )
    machine: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="A name for the machine, distinct machines having distinct names, e.g. 'lab-a100-3'."
    )
    date: Annotated[str, StringConstraints(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")] | None = Field(
        default=None, description="Day of the run, YYYY-MM-DD."
    )


class Observation(RRAModel):
    """One independent run's value of the claim's metric."""

    # A stochastic launcher's runs are told apart by seed, a deterministic one's by repeat index.
    _rra_any_of: ClassVar[tuple[dict[str, Any], ...]] = ({"required": ["seed"]}, {"required": ["repeat"]})

    value: ClaimValue = Field(description="Obtained value, after extraction and scaling (a string or a list for "
                              "a claim of another kind than number).")
    seed: int | None = Field(
        default=None, ge=0, le=INT_MAX,
        description="Seed of the run (a stochastic launcher); required unless 'repeat' is given.")
    repeat: int | None = Field(
        default=None, ge=0, le=REPEATS_MAX - 1, json_schema_extra=added("1.1"),
        description="Index of the run among the repeats of a launcher that is not stochastic.",
    )
    fingerprint: Fingerprint
    run_record: RelPath | None = Field(default=None, description="Run record of the run, if kept.")
    provenance: Provenance | None = Field(
        default=None, json_schema_extra=added("1.1"),
        description="Who produced the observation, from which code, on which machine.",
    )

    @model_validator(mode="after")
    def _seed_or_repeat(self) -> Observation:
        if (self.seed is None) == (self.repeat is None):
            raise ValueError("an observation gives exactly one of 'seed' and 'repeat'")
        return self


class Reference(RRAModel):
    """Independent observations that define the claim's acceptance interval."""

    observations: list[Observation] = Field(
        min_length=1, description="At least 3 (5 recommended) independent observations."
    )
    stability: StabilityClass | None = Field(
        default=None, description="Declared class; when given it must equal the computed class."
    )


class Claim(RRAModel):
    """A number printed in the paper and how the artifact obtains it."""

    #: A claim without a kind (or of kind number) has numbers for values; one of another kind
    #: says so (the schema can say which values are numbers, RRA514 checks the other shapes).
    _rra_any_of: ClassVar[tuple[dict[str, Any], ...]] = (
        {"properties": {"kind": {"const": "number"},
                        "reported": {"properties": {"value": {"type": "number"}}},
                        "reference": {"properties": {"observations": {
                            "items": {"properties": {"value": {"type": "number"}}}}}}}},
        {"required": ["kind"], "properties": {"kind": {"enum": ["string", "set", "list"]}}},
    )

    id: Id
    kind: ClaimKind = Field(
        default=ClaimKind.NUMBER, json_schema_extra=added("1.2"),
        description="'number' (default), 'string', 'set' or 'list': what kind of answer the claim is, and so how a "
        "value is matched against it.")
    description: str | None = Field(default=None, description="What the number shows.")
    paper_location: PaperLocation = Field(description="Where the number is printed.")
    launcher: Id = Field(description="Launcher whose runs produce the number.")
    metric: Metric
    extract: Extract
    aggregate: Aggregation = Field(
        default=Aggregation.MEAN, description="Combination over seeds: mean, median, min, max, single."
    )
    reported: Reported
    reference: Reference
