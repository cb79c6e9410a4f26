"""Claims: numbers printed in the paper, how to obtain them, and reference observations."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from ._base import Id, RelPath, RRAModel

__all__ = [
    "Aggregation",
    "Claim",
    "CsvExtract",
    "Direction",
    "Extract",
    "Fingerprint",
    "Metric",
    "Observation",
    "PaperLocation",
    "Reference",
    "RegexExtract",
    "Reported",
    "StabilityClass",
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


class StabilityClass(str, Enum):
    """Class of a claim derived from its reference observations."""

    STABLE = "stable"
    VARIABLE = "variable"


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
        description="Python regular expression with one capturing group around the number."
    )
    group: int = Field(default=1, ge=0, description="Capturing group holding the number.")
    occurrence: Literal["first", "last"] = Field(default="last", description="Which match counts.")


class Extract(RRAModel):
    """How to read the metric out of one declared output; exactly one method is given."""

    output: Id = Field(description="Id of an output declared by the claim's launcher.")
    json_pointer: Annotated[str, StringConstraints(pattern=r"^(/([^~/]|~[01])*)*$")] | None = Field(
        default=None, description="RFC 6901 JSON pointer into a JSON output."
    )
    csv: CsvExtract | None = Field(default=None, description="Column and row of a CSV output.")
    regex: RegexExtract | None = Field(default=None, description="Regular expression over a log.")
    scale: float = Field(default=1.0, description="Factor applied to the extracted value, e.g. 100 for %.")


class Reported(RRAModel):
    """The value printed in the paper."""

    value: float = Field(description="The number as printed.")
    precision: int = Field(ge=0, le=15, description="Digits printed after the decimal point.")


class Fingerprint(RRAModel):
    """Hardware and software an observation was taken on."""

    hardware: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="Machine summary, e.g. 'x86_64, 2 cores' or '1x NVIDIA A100-SXM4-80GB'."
    )
    software: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="Software summary, e.g. 'cpython 3.11.7, lock sha256:ab12...'."
    )


class Observation(RRAModel):
    """One independent run's value of the claim's metric."""

    value: float = Field(description="Obtained value, after extraction and scaling.")
    seed: int = Field(ge=0, le=2**63 - 1, description="Seed of the run.")
    fingerprint: Fingerprint
    run_record: RelPath | None = Field(default=None, description="Run record of the run, if kept.")


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

    id: Id
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
