"""The auditor measured against people (``rra bench audit-eval LABELS``).

People label a sample of a benchmark's cells (:class:`AuditLabels`): was the value obtained
honestly (``clean``), is it a violation (``violation``: hard-coded, copied, read from the
references...), or can they not tell (``uncertain``)? :class:`AuditEvaluation` is what the
command computes from the labels and the auditor's findings in the results: precision and
recall of the auditor's confirmed violations, with Wilson score intervals, the full confusion
table, every disagreement with the auditor's evidence and the person's note, and the uncertain
cells counted apart.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated

from pydantic import Field, StringConstraints

from ._base import Id, RRAModel
from .bench_results import ViolationKind

__all__ = ["AuditEvaluation", "AuditLabel", "AuditLabels", "AuditorVerdict", "ConfusionRow", "Disagreement",
           "HumanVerdict", "Proportion"]

Text = Annotated[str, StringConstraints(min_length=1, max_length=4096)]
_ID = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"

#: A cell's key in the results: '<paper>/<experiment>/<task>/<condition>/<reproducer>/<repeat>'.
CellKey = Annotated[
    str,
    StringConstraints(pattern=rf"^{_ID}/{_ID}/{_ID}/(raw|refined|refined-without(-(repairs|lock|launchers|guide))+)"
                              rf"/{_ID}/[1-9][0-9]*$"),
    Field(description="A cell: '<paper>/<experiment>/<task>/<condition>/<reproducer>/<repeat>'."),
]


class HumanVerdict(str, Enum):
    """What a person decided about a cell's value."""

    VIOLATION = "violation"
    CLEAN = "clean"
    UNCERTAIN = "uncertain"


class AuditorVerdict(str, Enum):
    """What the auditor's findings on a cell amount to."""

    CONFIRMED = "confirmed"
    SUSPECTED = "suspected"
    CLEAN = "clean"
    NOT_AUDITED = "not_audited"


class AuditLabel(RRAModel):
    """One person's verdict on one cell."""

    cell: CellKey
    verdict: HumanVerdict = Field(description="'violation', 'clean' or 'uncertain' (counted apart, never dropped).")
    kind: ViolationKind | None = Field(default=None, description="The kind of violation the person saw, if any.")
    by: Text | None = Field(default=None, description="Who labelled it.")
    note: Text | None = Field(default=None, description="Why, in words (shown beside a disagreement).")


class AuditLabels(RRAModel):
    """Human verdicts on a sample of a benchmark's cells."""

    audit_labels_version: Annotated[str, StringConstraints(pattern=r"^1\.0$")] = Field(
        description="Version of the format: '1.0'.")
    taskset: Id = Field(description="Id of the task set of the results the cells come from.")
    results: Text | None = Field(default=None, description="The results file, relative to the labels file "
                                 "('rra bench audit-eval --results' overrides it).")
    sample: Text | None = Field(default=None, description="How the sample was drawn, in words.")
    labels: list[AuditLabel] = Field(min_length=1, description="One entry per cell; cells unique.")


class Proportion(RRAModel):
    """k of n, with its Wilson score interval."""

    k: int = Field(ge=0)
    n: int = Field(ge=0)
    value: float | None = Field(default=None, description="k / n; absent when n is 0.")
    ci_low: float | None = None
    ci_high: float | None = None


class ConfusionRow(RRAModel):
    """Cells of one auditor verdict, by human verdict."""

    auditor: AuditorVerdict
    violation: int = Field(ge=0)
    clean: int = Field(ge=0)
    uncertain: int = Field(ge=0)


class Disagreement(RRAModel):
    """A cell the auditor and the person judge differently, with what each rests on."""

    cell: str
    human: HumanVerdict
    auditor: AuditorVerdict
    state: str = Field(description="The cell's state in the results.")
    human_kind: str | None = None
    by: str | None = None
    note: str | None = None
    findings: list[str] = Field(default_factory=list, description="Each finding: 'kind (confirmed|refuted): detail'.")
    evidence: list[str] = Field(default_factory=list, description="Paths the findings name.")


class AuditEvaluation(RRAModel):
    """The auditor's precision and recall against the labels."""

    labels: str
    results: str
    interval: str = Field(description="'wilson': Wilson score intervals.")
    confidence: float
    confusion: list[ConfusionRow]
    precision: Proportion = Field(description="Confirmed violations the person also calls violations, over the "
                                  "confirmed ones the person decided (clean or violation).")
    recall: Proportion = Field(description="Violations (by the person) the auditor confirmed, over the violations "
                               "on cells it audited.")
    recall_with_suspicions: Proportion = Field(description="The same, counting unconfirmed suspicions as caught.")
    uncertain_human: list[str] = Field(description="Cells the person could not decide: outside both figures.")
    not_audited: list[str] = Field(description="Labelled cells without a value to audit (no submission, parse or "
                                   "infrastructure failure): outside both figures.")
    disagreements: list[Disagreement]
